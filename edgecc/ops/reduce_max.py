"""REDUCE_MAX and REDUCE_MIN over any constant set of axes, keep_dims either way.

Raw values, no requantization: TFLite requires the input and output quantization to be equal.
TFLite starts from the type's lowest (highest) value and keeps `in > current ? in : current`
(`in < current` for MIN), so a NaN never replaces a number and ties keep the earlier value; the C
uses the same comparison. Types: int8, int16, int32, float32.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops import _arith as ew
from edgecc.ops._reduce import (constant_axes, loop_plan, reduce_np, reduce_text,
                                reduced_shape, resolve_axes)


def supported_type(g: Graph, n: Node) -> bool:
    """input and output must have the same type: int8, int16, int32 or float32"""
    a, b = in_type(g, n).dtype, out_type(g, n).dtype
    return a == b and a in (DType.INT8, DType.INT16, DType.INT32, DType.FLOAT32)


def same_quantization(g: Graph, n: Node) -> bool:
    """int8/int16 input and output must have the same scale and zero point"""
    a, b = in_type(g, n), out_type(g, n)
    if a.dtype not in (DType.INT8, DType.INT16):
        return True
    return ew.scale32(a) == ew.scale32(b) and ew.zp(a) == ew.zp(b)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    shape = reduced_shape(in_type(g, n).shape, resolve_axes(g, n), bool(n.attrs.get("keep_dims")))
    return [TensorType(shape, out_type(g, n).dtype)]


def _init(dt: DType, is_max: bool):
    if dt == DType.FLOAT32:
        f = np.finfo(np.float32)
        return np.float32(f.min if is_max else f.max)
    info = np.iinfo(dt.np)
    return dt.np.type(info.min if is_max else info.max)


def _fold(flat: np.ndarray, is_max: bool, init) -> np.ndarray:
    acc = np.full(flat.shape[:-1], init, flat.dtype)
    for k in range(flat.shape[-1]):
        v = flat[..., k]
        acc = np.where(v > acc, v, acc) if is_max else np.where(v < acc, v, acc)
    return acc


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    is_max = n.op == "REDUCE_MAX"
    init = _init(in_type(g, n).dtype, is_max)
    out = reduce_np(ins[0], resolve_axes(g, n), lambda f: _fold(f, is_max, init))
    return [np.asarray(out).reshape(out_type(g, n).shape)]


def lower(g: Graph, n: Node, target) -> Kernel:
    x = in_type(g, n)
    is_max = n.op == "REDUCE_MAX"
    init = _init(x.dtype, is_max)
    if x.dtype == DType.FLOAT32:
        init_c = ew.c_float(init)
    elif x.dtype == DType.INT32 and is_max:
        init_c = "INT32_MIN"
    else:
        init_c = str(int(init))
    params = dict(loop_plan(x.shape, resolve_axes(g, n)), ctype=x.dtype.c, octype=x.dtype.c,
                  kind="max" if is_max else "min", init=init_c)
    return Kernel("reduce_max.c.j2", params=params, derived=reduce_text(params))


for _name in ("REDUCE_MAX", "REDUCE_MIN"):
    register(OpDef(_name, infer, reference, lower,
                   [supported_type, same_quantization, constant_axes],
                   dtypes="int8, int16, int32, float32 (raw values)",
                   reference_oracle="TFLite Micro (int8, float32); LiteRT BUILTIN_REF (int16, int32)"))
