"""ELU, int8 -> int8: TFLite Micro's float-built 256-entry table (PopulateLookupTable).

Every int8 value is dequantized in float, transformed by x < 0 ? expf(x) - 1 : x, multiplied by
1 / s_out, rounded half away from zero and offset by zp_out, exactly as TFLM fills its table at
Prepare; expf is the host C library's, the function TFLM itself calls.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops import _arith as ew
from edgecc.ops._lut import float_table, int8_in_out, libm


def _elu(x: np.float32) -> np.float32:
    return np.float32(np.float32(libm().expf(float(x))) - np.float32(1)) if x < 0 else x


def table(g: Graph, n: Node) -> np.ndarray:
    x, y = in_type(g, n), out_type(g, n)
    return float_table(ew.scale32(x), ew.zp(x), ew.scale32(y), ew.zp(y), _elu)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    return [table(g, n)[ins[0].astype(np.int64) + 128]]


def lower(g: Graph, n: Node, target) -> Kernel:
    return Kernel("elu.c.j2", params=dict(count=in_type(g, n).numel), consts=dict(lut=table(g, n)),
                  variant="lut")


OP = register(OpDef("ELU", infer, reference, lower, [int8_in_out, ew.per_tensor_quantized],
                    dtypes="int8 (table)", inplace=((0, 0),)))
