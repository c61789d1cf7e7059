"""int8 -> int8 lookup tables for the ops whose output element depends only on its input element.

Owns: evaluating an op's numpy reference (TFLite's exact integer arithmetic) on all 256 int8
values at compile time, and the Kernel that applies the resulting table (templates/c/_lut.j2):
the generated C is one table lookup per element, bit-exact by construction with the reference,
which the tests compare with TFLite Micro (or LiteRT's reference kernels).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from edgecc.ir import DType, Graph, Node
from edgecc.ops import Kernel, in_type, out_type

INT8_VALUES = np.arange(-128, 128, dtype=np.int64)


def table(fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """fn evaluated on every int8 value -128..127 (index = value + 128)."""
    return np.asarray(fn(INT8_VALUES)).astype(np.int8)


def lut_kernel(template: str, g: Graph, n: Node, fn: Callable[[np.ndarray], np.ndarray]) -> Kernel:
    return Kernel(template, params=dict(count=in_type(g, n).numel), consts=dict(lut=table(fn)),
                  variant="lut")


def int8_in_out(g: Graph, n: Node) -> bool:
    """input and output must both be int8"""
    return in_type(g, n).dtype == DType.INT8 and out_type(g, n).dtype == DType.INT8
