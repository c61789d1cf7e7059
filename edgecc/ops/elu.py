"""ELU, int8 -> int8: TFLite Micro's float-built 256-entry table (PopulateLookupTable).

Every int8 value is dequantized in float, transformed by x < 0 ? expf(x) - 1 : x, multiplied by
1 / s_out, rounded half away from zero and offset by zp_out, exactly as TFLM fills its table at
Prepare; expf is the host C library's, the function TFLM itself calls.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.ops import Kernel, OpDef, register
from edgecc.ops import _arith as ew
from edgecc.ops._elementwise import same_as_input as infer
from edgecc.ops._lut import int8_in_out, libm, node_float_table, table_kernel
from edgecc.ops import _float_act
from edgecc.ops._float import twin


def _elu(x: np.float32) -> np.float32:
    return np.float32(np.float32(libm().expf(float(x))) - np.float32(1)) if x < 0 else x


def table(g: Graph, n: Node) -> np.ndarray:
    return node_float_table(g, n, _elu)


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    return [table(g, n)[ins[0].astype(np.int64) + 128]]


def lower(g: Graph, n: Node, target) -> Kernel:
    return table_kernel("elu.c.j2", g, n, table(g, n))


OP = register(OpDef("ELU", infer, reference, lower, [int8_in_out, ew.per_tensor_quantized],
                    dtypes="int8 (table)", inplace=((0, 0),)))
twin(OP, _float_act.ELU)  # float32: edgecc/ops/_float_act.py
