"""ZEROS_LIKE: y = zeros of x's shape and element type (int32, int64, float32 in TFLite Micro; any
type here): one memset, the input is never read."""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.ops import Kernel, OpDef, out_type, register
from edgecc.ops._copy import same_dtype
from edgecc.ops._elementwise import same_as_input


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    return [np.zeros_like(ins[0])]


def lower(g: Graph, n: Node, target) -> Kernel:
    t = out_type(g, n)
    return Kernel("zeros_like.c.j2", params=dict(bytes=t.numel * t.dtype.size))


OP = register(OpDef("ZEROS_LIKE", same_as_input, reference, lower, [same_dtype],
                    dtypes="any (zero fill)"))
