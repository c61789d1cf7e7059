"""L2_NORMALIZATION over the last axis: float32 and int8 (TFLite's reference kernels, as TFLite
Micro runs them).

float32, per row: s = sum of x*x in order from 0.0f; n = max(sqrt(s), 1e-6f) (std::max:
n < eps ? eps : n); y = x / n. sqrt is correctly rounded in the reference and in C
(runtime_c/edgecc_math.h), so the generated C is bit-exact.
int8 (reference_integer_ops::L2Normalization), per row: v = q - zp_in, acc = sum of v*v (int32),
(m, s) = GetInvSqrtQuantizedMultiplierExp(acc) (edgecc/ops/rsqrt.py; ec_inv_sqrt_mult_exp in C),
y = clamp(MBQM(v, m, s + 7), -128, 127): the output is in 1/128 steps with zero point 0, which
TFLite requires. The fused activation must be NONE (TFLite requires it too).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops._arith import c_float, scale32, zp
from edgecc.ops._elementwise import same_as_input
from edgecc.ops._float import F32, rows, same_shape, seq_sum
from edgecc.ops._float_act import nonempty_rows
from edgecc.ops.rsqrt import inv_sqrt_multiplier_exp
from edgecc.numerics.fixed_point import mbqm

EPSILON = F32(1e-6)
OUTPUT_SHIFT = 7  # int8 output in 1/128 steps


def supported_type(g: Graph, n: Node) -> bool:
    """input and output must both be float32, or both int8 with the output quantized as scale
    1/128, zero point 0"""
    a, b = in_type(g, n), out_type(g, n)
    if a.dtype != b.dtype:
        return False
    if a.dtype == DType.INT8:
        return (a.q is not None and b.q is not None and not a.q.per_channel
                and scale32(b) == F32(1 / 128) and zp(b) == 0)
    return a.dtype == DType.FLOAT32


def no_activation(g: Graph, n: Node) -> bool:
    """fused activation must be NONE"""
    return int(n.attrs.get("fused_activation_function", 0)) == 0


def _int8(g: Graph, n: Node, x: np.ndarray) -> np.ndarray:
    r, d = rows(g, n)
    v = np.asarray(x, np.int64).reshape(r, d) - zp(in_type(g, n))
    out = np.empty((r, d), np.int8)
    for i, row in enumerate(v):
        m, s = inv_sqrt_multiplier_exp(int(np.sum(row * row)))
        out[i] = np.clip(mbqm(row, m, s + OUTPUT_SHIFT), -128, 127)
    return out


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    if in_type(g, n).dtype == DType.INT8:
        return [_int8(g, n, ins[0]).reshape(np.shape(ins[0]))]
    r, d = rows(g, n)
    x = np.asarray(ins[0], F32).reshape(r, d)
    norm = np.sqrt(seq_sum((x * x).astype(F32), axis=1))
    norm = np.where(norm < EPSILON, EPSILON, norm)[:, None]
    return [(x / norm).astype(F32).reshape(np.shape(ins[0]))]


def lower(g: Graph, n: Node, target) -> Kernel:
    r, d = rows(g, n)
    int8 = in_type(g, n).dtype == DType.INT8
    return Kernel("l2_normalization_s8.c.j2" if int8 else "l2_normalization.c.j2",
                  params=dict(rows=r, depth=d, eps=c_float(EPSILON),
                              in_zp=zp(in_type(g, n)), out_shift=OUTPUT_SHIFT),
                  variant="int8" if int8 else "float32")


OP = register(OpDef("L2_NORMALIZATION", same_as_input, reference, lower,
                    [supported_type, same_shape, nonempty_rows, no_activation],
                    dtypes="float32, int8 (output 1/128, zero point 0)"))
