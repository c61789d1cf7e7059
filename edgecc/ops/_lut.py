"""int8 -> int8 lookup tables for the ops whose output element depends only on its input element.

Owns: evaluating an op's numpy reference (TFLite's exact integer arithmetic) on all 256 int8
values at compile time, and the Kernel that applies the resulting table (templates/c/_lut.j2):
the generated C is one table lookup per element, bit-exact by construction with the reference,
which the tests compare with TFLite Micro (or LiteRT's reference kernels).
"""
from __future__ import annotations

import ctypes
import ctypes.util
from typing import Callable

import numpy as np

from edgecc.ir import DType, Graph, Node
from edgecc.ops import Kernel, in_type, out_type
from edgecc.ops._arith import scale32, zp

INT8_VALUES = np.arange(-128, 128, dtype=np.int64)


def table(fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """fn evaluated on every int8 value -128..127 (index = value + 128)."""
    return np.asarray(fn(INT8_VALUES)).astype(np.int8)


def lut_kernel(template: str, g: Graph, n: Node, fn: Callable[[np.ndarray], np.ndarray]) -> Kernel:
    return table_kernel(template, g, n, table(fn))


def table_kernel(template: str, g: Graph, n: Node, lut: np.ndarray) -> Kernel:
    """The Kernel applying a 256-entry int8 table (index = value + 128) to every element."""
    return Kernel(template, params=dict(count=in_type(g, n).numel), consts=dict(lut=lut),
                  variant="lut")


def int8_in_out(g: Graph, n: Node) -> bool:
    """input and output must both be int8"""
    return in_type(g, n).dtype == DType.INT8 and out_type(g, n).dtype == DType.INT8


# ---- tables TFLite builds from a float function (PopulateLookupTable / LUTPopulate) -------------

_LIBM = None


def libm():
    """The host C library's math functions (expf, erf, tanh...): TFLite's float tables call them,
    so the compile-time table is computed with the very same functions."""
    global _LIBM
    if _LIBM is None:
        lib = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        for name in ("expf", "tanhf", "erff"):
            getattr(lib, name).restype = ctypes.c_float
            getattr(lib, name).argtypes = [ctypes.c_float]
        for name in ("exp", "tanh", "erf"):
            getattr(lib, name).restype = ctypes.c_double
            getattr(lib, name).argtypes = [ctypes.c_double]
        _LIBM = lib
    return _LIBM


def roundf(x: np.float32) -> np.float32:
    """std::round on a float: half away from zero."""
    x = float(x)
    r = np.floor(abs(x) + 0.5)
    # floor(|x| + 0.5) is exact for |x| < 2**23; beyond, x is already an integer
    r = abs(x) if abs(x) >= 2.0 ** 23 else r
    return np.float32(r if x >= 0 else -r)


def node_float_table(g: Graph, n: Node, transform: Callable[[np.float32], float]) -> np.ndarray:
    """float_table with the node's own input and output quantization (per tensor)."""
    x, y = in_type(g, n), out_type(g, n)
    return float_table(scale32(x), zp(x), scale32(y), zp(y), transform)


def float_table(in_scale: float, in_zp: int, out_scale: float, out_zp: int,
                transform: Callable[[np.float32], float]) -> np.ndarray:
    """TFLite's int8 LUTPopulate: dequantize (float), transform, * (1 / out_scale), round, + zp."""
    f32 = np.float32
    inverse_scale = f32(1) / f32(out_scale)
    out = np.empty(256, np.int8)
    for k, val in enumerate(range(-128, 128)):
        dequantized = f32(in_scale) * f32(val - in_zp)
        transformed = f32(transform(dequantized))
        rescaled = roundf(f32(transformed * inverse_scale))
        v = f32(rescaled + f32(out_zp))
        # static_cast<int32_t>: out-of-range floats give INT32_MIN on x86 (cvttss2si)
        q = int(v) if np.isfinite(v) and -2.0 ** 31 <= float(v) < 2.0 ** 31 else -(1 << 31)
        out[k] = max(min(127, q), -128)
    return out
