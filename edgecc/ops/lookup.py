"""LOOKUP: y = table[c][x + 128], an int8 -> int8 function given as a constant table per channel.

Owns the op edgecc's ONNX import makes of a DequantizeLinear -> f -> QuantizeLinear group whose f
is elementwise (Neg, Abs, Relu, Clip, LeakyRelu, PRelu, HardSigmoid, HardSwish, Tanh, Erf, Gelu
...): the importer evaluates f on the 256 int8 values in float32 as onnxruntime does
(edgecc/numerics/qlinear.py `elementwise_table`) and hands the table over as input 1: [1, 256]
for one table, [C, 256] for one per channel along the IR axis `axis` of the input (PRelu's
per-channel slope). The C is one table read per element.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, const, in_type, out_type, register


def int8_tables(g: Graph, n: Node) -> bool:
    """input and output must be int8 and the table a constant int8 [1 or channels, 256]"""
    t = const(g, n, 1)
    if in_type(g, n).dtype != DType.INT8 or out_type(g, n).dtype != DType.INT8 or t is None:
        return False
    if t.ndim != 2 or t.shape[1] != 256 or t.dtype != np.int8:
        return False
    shape = in_type(g, n).shape
    axis = int(n.attrs.get("axis", 0))
    return t.shape[0] == 1 or (0 <= axis < len(shape) and shape[axis] == t.shape[0])


def _split(g: Graph, n: Node) -> tuple[int, int, int]:
    """(outer, channels, inner) element counts around the table axis."""
    shape = in_type(g, n).shape
    k = const(g, n, 1).shape[0]
    if k == 1:
        return 1, 1, int(np.prod(shape, dtype=np.int64))
    axis = int(n.attrs.get("axis", 0))
    return (int(np.prod(shape[:axis], dtype=np.int64)), k,
            int(np.prod(shape[axis + 1:], dtype=np.int64)))


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    outer, k, inner = _split(g, n)
    t = const(g, n, 1)
    x = np.asarray(ins[0]).astype(np.int64).reshape(outer, k, inner) + 128
    y = t[np.arange(k)[None, :, None], x]
    return [y.reshape(in_type(g, n).shape).astype(np.int8)]


def lower(g: Graph, n: Node, target) -> Kernel:
    outer, k, inner = _split(g, n)
    return Kernel("lookup.c.j2", params=dict(outer=outer, channels=k, inner=inner),
                  consts=dict(lut=const(g, n, 1).ravel()))


OP = register(OpDef("LOOKUP", infer, reference, lower, [int8_tables],
                    dtypes="int8 (a constant table per tensor or per channel)",
                    reference_oracle="onnxruntime (ONNX QDQ elementwise groups)",
                    inplace=((0, 0),)))
