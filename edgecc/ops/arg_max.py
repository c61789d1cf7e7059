"""ARG_MAX and ARG_MIN along one constant axis; int32 or int64 output; int8/int16/int32/float32 input.

TFLite's ArgMinMax keeps the first index on ties (strict `>` / `<` against the best so far,
starting from element 0), so a NaN is never chosen unless it comes first.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops._reduce import loop_plan, reduce_np, reduce_text, reduced_shape, resolve_axes


def supported_types(g: Graph, n: Node) -> bool:
    """input must be int8, int16, int32 or float32 and the output int32 or int64"""
    return (in_type(g, n).dtype in (DType.INT8, DType.INT16, DType.INT32, DType.FLOAT32)
            and out_type(g, n).dtype in (DType.INT32, DType.INT64))


def one_constant_axis(g: Graph, n: Node) -> bool:
    """axis must be one constant value inside the input's rank"""
    axes = resolve_axes(g, n)
    return (axes is not None and len(axes) == 1 and g.value(n.inputs[1]).data.size == 1
            and 0 <= axes[0] < len(in_type(g, n).shape))


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(reduced_shape(in_type(g, n).shape, resolve_axes(g, n), False),
                       out_type(g, n).dtype)]


def _arg(flat: np.ndarray, is_max: bool) -> np.ndarray:
    best = flat[..., 0].copy()
    idx = np.zeros(flat.shape[:-1], np.int64)
    for k in range(1, flat.shape[-1]):
        v = flat[..., k]
        better = v > best if is_max else v < best
        best = np.where(better, v, best)
        idx = np.where(better, k, idx)
    return idx


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    out = reduce_np(ins[0], resolve_axes(g, n), lambda f: _arg(f, n.op == "ARG_MAX"))
    return [out.astype(out_type(g, n).dtype.np).reshape(out_type(g, n).shape)]


def lower(g: Graph, n: Node, target) -> Kernel:
    x = in_type(g, n)
    params = dict(loop_plan(x.shape, resolve_axes(g, n), merge_reduced=False), ctype=x.dtype.c,
                  octype=out_type(g, n).dtype.c, kind=n.op.replace("_", "").lower())
    return Kernel("arg_max.c.j2", params=params, derived=reduce_text(params))


for _name in ("ARG_MAX", "ARG_MIN"):
    register(OpDef(_name, infer, reference, lower, [supported_types, one_constant_axis],
                   dtypes="int8, int16, int32, float32 -> int32/int64",
                   reference_oracle="TFLite Micro (int8, float32 -> int32); LiteRT BUILTIN_REF (others)"))
