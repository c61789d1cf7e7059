"""CAST: element-wise C++ static_cast between int8, uint8, int16, uint16, int32, uint32, int64,
float32 and bool.

Quantization is ignored (CAST converts raw values). To bool: x != 0; from bool: 0 or 1. Float to
integer truncates toward zero. Float to int8/int16/int32, which TFLite Micro runs (a plain
static_cast), goes through int32 first, as the C++ conversion does on the host TFLite Micro runs
on, so in-range values match everywhere (out-of-range floats are undefined in C++). Float to uint8,
uint16, uint32 and int64, which only LiteRT runs, saturate as LiteRT's reference kernel does: below the range to
the minimum, above it and NaN to the maximum.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register

SATURATED = (DType.UINT8, DType.UINT16, DType.UINT32, DType.INT64)  # float32 -> these saturate
TYPES = (DType.INT8, DType.UINT8, DType.INT16, DType.UINT16, DType.INT32, DType.UINT32,
         DType.INT64, DType.FLOAT32, DType.BOOL)


def supported_types(g: Graph, n: Node) -> bool:
    """input and output types must be int8, uint8, int16, uint16, int32, uint32, int64, float32 or bool"""
    return in_type(g, n).dtype in TYPES and out_type(g, n).dtype in TYPES


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    x, dst = ins[0], out_type(g, n).dtype
    if dst == DType.BOOL:
        return [x != 0]
    if x.dtype == np.float32 and dst in SATURATED:
        return [_saturated(x, dst)]
    if x.dtype == np.float32 and dst != DType.FLOAT32:
        t = np.trunc(x).astype(np.float64)
        wide = np.where((t >= -2.0 ** 31) & (t < 2.0 ** 31), t, -2.0 ** 31).astype(np.int64)
        return [wide.astype(dst.np)]  # int64 -> narrower wraps like the int32 -> intN conversion
    return [x.astype(np.int64).astype(dst.np) if x.dtype == bool else x.astype(dst.np)]


def _saturated(x: np.ndarray, dst: DType) -> np.ndarray:
    """trunc(x) clamped to dst's range, NaN to its maximum (LiteRT's float -> uint8 / int64)."""
    info = np.iinfo(dst.np)
    t = np.trunc(x.astype(np.float64))
    inside = ~np.isnan(t) & (t > info.min) & (t < float(info.max))
    y = np.where(inside, t, 0).astype(np.int64).astype(dst.np)
    return np.where(inside, y, np.where(t <= info.min, info.min, info.max)).astype(dst.np)


def _saturating_expr(dst: DType) -> str:
    """The C of _saturated: NaN and values at or above 2^bits - 1 (as float) to the maximum."""
    info = np.iinfo(dst.np)
    hi, lo = (f"{info.max}u", "0") if info.min == 0 else ("INT64_MAX", "INT64_MIN")
    return (f"(x[i] != x[i] || x[i] >= {float(info.max + 1)!r}f) ? ({dst.c}){hi} : "
            f"(x[i] <= {float(info.min)!r}f ? ({dst.c}){lo} : ({dst.c})x[i])")


def lower(g: Graph, n: Node, target) -> Kernel:
    src, dst = in_type(g, n).dtype, out_type(g, n).dtype
    if dst == DType.BOOL:
        expr = "(uint8_t)(x[i] != 0)"
    elif src == DType.FLOAT32 and dst in SATURATED:
        expr = _saturating_expr(dst)
    elif src == DType.FLOAT32 and dst != DType.FLOAT32:
        expr = f"({dst.c})(int32_t)x[i]"
    else:
        expr = f"({dst.c})x[i]"
    return Kernel("cast.c.j2", params=dict(src=src.c, dst=dst.c, expr=expr,
                                           count=in_type(g, n).numel))


OP = register(OpDef("CAST", infer, reference, lower, [supported_types],
                    dtypes="int8, uint8, int16, uint16, int32, uint32, int64, float32, bool "
                           "(any pair)",
                    reference_oracle="TFLite Micro (the pairs it runs); LiteRT BUILTIN_REF "
                                     "(the others)",
                    inplace=((0, 0),)))  # same-size casts only (the planner checks sizes)
