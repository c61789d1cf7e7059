"""Shared by the reductions (MEAN, SUM, REDUCE_MAX, REDUCE_MIN, ARG_MAX, ARG_MIN).

Owns: resolving the axis input as TFLite does (negative axes wrapped, duplicates dropped), the
output shape with and without keep_dims, and the loop plan the templates print: the kept dims
(outer loops, in output order, so the output is written sequentially) and the reduced dims (inner
loops, in input order, so every output accumulates its inputs in exactly the order TFLite's
row-major Reduce visits them, which keeps float sums bit-exact), each merged where contiguous.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.ops import in_type
from edgecc.ops._copy import row_major_strides
from edgecc.ops._loops import index, nest


def resolve_axes(g: Graph, n: Node) -> list[int] | None:
    """The reduced axes in first-appearance order, or None when the axis input is not constant."""
    v = n.inputs[1] if len(n.inputs) > 1 else None
    if v is None or not g.value(v).is_const:
        return None
    rank = len(in_type(g, n).shape)
    out: list[int] = []
    for a in g.value(v).data.ravel().tolist():
        a = int(a) + rank if int(a) < 0 else int(a)
        if a not in out:
            out.append(a)
    return out


def constant_axes(g: Graph, n: Node) -> bool:
    """axis must be a constant int32/int64 tensor of axes inside the input's rank"""
    axes = resolve_axes(g, n)
    rank = len(in_type(g, n).shape)
    return axes is not None and all(0 <= a < rank for a in axes)


def reduced_shape(shape, axes: list[int], keep_dims: bool) -> tuple[int, ...]:
    if keep_dims:
        return tuple(1 if d in axes else s for d, s in enumerate(shape))
    return tuple(s for d, s in enumerate(shape) if d not in axes)


def _merge(dims: list[int], strides: list[int]) -> tuple[list[int], list[int]]:
    out_d: list[int] = []
    out_s: list[int] = []
    for d, s in zip(dims, strides):
        if d == 1:
            continue
        if out_d and out_s[-1] == s * d:
            out_d[-1] *= d
            out_s[-1] = s
        else:
            out_d.append(d)
            out_s.append(s)
    return out_d, out_s


# kind -> the macros of templates/c/_reduce_kind.j2: the accumulator's start, one element, the store
_PARTS = {"qsum": ("start_qsum", "step_sum", "store_qsum"),
          "fsum": ("start_fsum", "step_sum", "store_fsum"),
          "max": ("start_extreme", "step_max", "store_acc"),
          "min": ("start_extreme", "step_min", "store_acc"),
          "argmax": ("start_arg", "step_arg", "store_arg"),
          "argmin": ("start_arg", "step_arg", "store_arg")}


def reduce_text(params: dict) -> dict:
    """Kernel.derived of a reduction (templates/c/_reduce.j2) from its params (loop_plan's and
    the kind's): the two nests, the offsets in them, the kind's macros, argmax/argmin's
    comparison, the quantized sum's requantization (ONNX numerics names its own in `rq`) and
    whether a float sum divides by the count (MEAN)."""
    kind = params["kind"]
    start, step, store = _PARTS[kind]
    if kind == "fsum" and params["divide"]:
        store = "store_fmean"
    return dict(o_nest=nest(params["odims"], "o"), o_at=index(params["ostr"], 0, "o"),
                r_nest=nest(params["rdims"], "r"), r_at=index(params["rstr"], 0, "r"),
                start=start, step=step, store=store, better="<" if kind == "argmin" else ">",
                rq_fn=params.get("rq", "ec_mbqm"))


def loop_plan(shape, axes: list[int], merge_reduced: bool = True) -> dict:
    """odims/ostr: kept dims and their input strides; rdims/rstr: reduced dims, input order."""
    st = row_major_strides(shape)
    kept = [d for d in range(len(shape)) if d not in axes]
    red = sorted(axes)
    od, os_ = _merge([shape[d] for d in kept], [st[d] for d in kept])
    if merge_reduced:
        rd, rs = _merge([shape[d] for d in red], [st[d] for d in red])
    else:
        rd, rs = [shape[d] for d in red], [st[d] for d in red]
    count = int(np.prod([shape[d] for d in red], dtype=np.int64)) if red else 1
    return dict(odims=od, ostr=os_, rdims=rd, rstr=rs, count=count)


def reduce_np(x: np.ndarray, axes: list[int], fn) -> np.ndarray:
    """fn over the reduced axes, which are moved last and flattened in input order."""
    kept = [d for d in range(x.ndim) if d not in axes]
    red = sorted(axes)
    moved = np.transpose(x, kept + red)
    flat = moved.reshape([x.shape[d] for d in kept] + [-1])
    return fn(flat)
