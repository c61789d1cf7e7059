"""L2_NORMALIZATION over the last axis, float32 (TFLite's reference kernel, as TFLite Micro runs it).

Per row: s = sum of x*x in order from 0.0f; n = max(sqrt(s), 1e-6f) (std::max: n < eps ? eps : n);
y = x / n. sqrt is correctly rounded in the reference and in C (runtime_c/edgecc_math.h), so the
generated C is bit-exact. The fused activation must be NONE (TFLite requires it).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.ops import Kernel, OpDef, register
from edgecc.ops._arith import c_float
from edgecc.ops._elementwise import same_as_input
from edgecc.ops._float import F32, float_in_out, rows, same_shape, seq_sum
from edgecc.ops._float_act import nonempty_rows

EPSILON = F32(1e-6)


def no_activation(g: Graph, n: Node) -> bool:
    """fused activation must be NONE"""
    return int(n.attrs.get("fused_activation_function", 0)) == 0


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    r, d = rows(g, n)
    x = np.asarray(ins[0], F32).reshape(r, d)
    norm = np.sqrt(seq_sum((x * x).astype(F32), axis=1))
    norm = np.where(norm < EPSILON, EPSILON, norm)[:, None]
    return [(x / norm).astype(F32).reshape(np.shape(ins[0]))]


def lower(g: Graph, n: Node, target) -> Kernel:
    r, d = rows(g, n)
    return Kernel("l2_normalization.c.j2", params=dict(rows=r, depth=d, eps=c_float(EPSILON)),
                  variant="float32")


OP = register(OpDef("L2_NORMALIZATION", same_as_input, reference, lower,
                    [float_in_out, same_shape, nonempty_rows, no_activation], dtypes="float32"))
