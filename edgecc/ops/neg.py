"""NEG: y = -x for float32 (TFLite Micro), int32 and int8 (LiteRT's reference kernels).

TFLite Micro only implements float32. LiteRT negates int8 and int32 as raw integers, ignoring any
quantization (so int8 -(-128) wraps to -128, as the C++ conversion does); edgecc does the same, the
int8 case through a 256-entry table.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops._lut import lut_kernel


def supported_type(g: Graph, n: Node) -> bool:
    """input and output must have the same type: int8, int32 or float32"""
    a, b = in_type(g, n).dtype, out_type(g, n).dtype
    return a == b and a in (DType.INT8, DType.INT32, DType.FLOAT32)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    x = ins[0]
    if x.dtype == np.float32:
        return [-x]
    return [(-x.astype(np.int64)).astype(x.dtype)]  # two's-complement wrap, as the C++ cast


def lower(g: Graph, n: Node, target) -> Kernel:
    dt = in_type(g, n).dtype
    if dt == DType.INT8:
        k = lut_kernel("neg.c.j2", g, n, lambda q: (-q).astype(np.int8))
        k.params["kind"] = "int8"
        return k
    return Kernel("neg.c.j2", params=dict(kind=dt.name.lower(), ctype=dt.c,
                                          count=in_type(g, n).numel))


OP = register(OpDef("NEG", infer, reference, lower, [supported_type],
                    dtypes="float32; int8 (table), int32",
                    reference_oracle="TFLite Micro (float32); LiteRT BUILTIN_REF (int8, int32)",
                    inplace=((0, 0),)))
