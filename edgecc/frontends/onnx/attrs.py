"""Every supported ONNX node's attributes and input dtypes checked against the operator spec, in
one table, before any handler reads them.

Owns: RULES (op type -> the checks that apply to it) and `check_nodes`, which runs them on a
shape-inferred model and raises one ModelFormatError line naming the file and the node (index,
type, name). The checks are what onnx.checker and shape inference leave to the runtime and
onnxruntime refuses: `group` positive and dividing the channels as the weights say, `auto_pad`
one of its four values and never together with `pads`, strides / dilations / kernel sizes
positive and pads non-negative (one per spatial axis), axes inside the rank, a zero point of
its data input's dtype, and graph input dims of 0 (never compiled as 1).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import onnx

from edgecc.errors import ModelFormatError
from edgecc.frontends.onnx.naming import type_name, where

AUTO_PAD = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


class _Bad(Exception):
    """A rule's finding: the message after the node's name."""


def _attrs(n: onnx.NodeProto) -> dict:
    return {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}


@dataclass
class Facts:
    """What is known of the values when the rules run: shapes (None where unknown) and ONNX
    element types, of the graph inputs and initializers before shape inference, of every value
    after it."""
    path: Path
    graph: onnx.GraphProto
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    dtypes: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, path: Path, g: onnx.GraphProto) -> "Facts":
        f = cls(path, g)
        for t in g.initializer:
            f.shapes[t.name] = tuple(int(d) for d in t.dims)
            f.dtypes[t.name] = int(t.data_type)
        for vi in [*g.input, *g.value_info, *g.output]:
            tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
            if tt is None or vi.name in f.dtypes:
                continue
            f.dtypes[vi.name] = int(tt.elem_type)
            if tt.HasField("shape"):
                dims = tt.shape.dim
                if all(d.HasField("dim_value") for d in dims):
                    f.shapes[vi.name] = tuple(int(d.dim_value) for d in dims)
        for n in g.node:
            if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
                t = n.attribute[0].t
                f.shapes[n.output[0]] = tuple(int(d) for d in t.dims)
                f.dtypes[n.output[0]] = int(t.data_type)
        return f


def _rank(m: Facts, name: str) -> int | None:
    s = m.shapes.get(name)
    return None if s is None else len(s)


def _shape(m: Facts, name: str) -> tuple[int, ...] | None:
    return m.shapes.get(name)


def _dtype(m: Facts, name: str) -> int | None:
    return m.dtypes.get(name)


def _input(n: onnx.NodeProto, i: int) -> str:
    return n.input[i] if i < len(n.input) else ""


# ---- the rules: each takes (model, node, attrs) and raises _Bad(why) ----------------------

def _spatial(m: Facts, n, a: dict, weights: int | None) -> int | None:
    """Spatial rank of a window op: from the weights (conv) or the data input (pool)."""
    r = _rank(m, _input(n, weights if weights is not None else 0))
    return None if r is None else r - 2


def _ints(a: dict, key: str, count: int | None, lo: int, what: str) -> None:
    if key not in a:
        return
    v = [int(x) for x in a[key]]
    if count is not None and len(v) != count:
        raise _Bad(f"attribute {key} {v} must have {count} values, one per {what}")
    if any(x < lo for x in v):
        raise _Bad(f"attribute {key} {v} must be {'positive' if lo == 1 else 'non-negative'}")


def window(weights: int | None) -> Callable:
    """strides, dilations, kernel_shape (positive, one per spatial axis), pads (non-negative,
    two per axis), auto_pad (one of AUTO_PAD, not with explicit pads)."""
    def rule(m: Facts, n, a: dict) -> None:
        r = _spatial(m, n, a, weights)
        if r is not None and r < 1:
            raise _Bad(f"needs at least one spatial axis (input rank {r + 2})")
        for key in ("strides", "dilations", "kernel_shape"):
            _ints(a, key, r, 1, "spatial axis")
        _ints(a, "pads", None if r is None else 2 * r, 0, "spatial axis begin and end")
        auto = a.get("auto_pad", b"NOTSET")
        auto = auto.decode("utf-8", "replace") if isinstance(auto, bytes) else str(auto)
        if auto not in AUTO_PAD:
            raise _Bad(f"attribute auto_pad '{auto[:40]}' must be one of {', '.join(AUTO_PAD)}")
        if auto != "NOTSET" and "pads" in a:
            raise _Bad(f"attribute auto_pad {auto} cannot be used together with pads")
        if weights is not None and "kernel_shape" in a:
            w = _shape(m, _input(n, weights))
            if w is not None and list(w[2:]) != [int(x) for x in a["kernel_shape"]]:
                raise _Bad(f"attribute kernel_shape {list(a['kernel_shape'])} differs from the "
                           f"weights' {list(w[2:])}")
        if weights is None and "kernel_shape" not in a and n.op_type != "GlobalAveragePool":
            raise _Bad("attribute kernel_shape is required")
    return rule


def groups(x: int, w: int, transpose: bool = False) -> Callable:
    """`group` >= 1, dividing the input channels, and the weights' shape agreeing with it: Conv
    weights are (M, C / group, k...), ConvTranspose weights (C, M / group, k...)."""
    def rule(m: Facts, n, a: dict) -> None:
        g = int(a.get("group", 1))
        if g < 1:
            raise _Bad(f"attribute group {g} must be positive")
        xs, ws = _shape(m, _input(n, x)), _shape(m, _input(n, w))
        if xs is None or ws is None or len(xs) < 2 or len(ws) < 2:
            return
        c = xs[1]
        if c % g:
            raise _Bad(f"attribute group {g} does not divide the {c} input channels")
        if transpose:
            if ws[0] != c:
                raise _Bad(f"weights {list(ws)} must have {c} input channels")
        elif ws[1] * g != c or ws[0] % g:
            raise _Bad(f"attribute group {g} does not match weights {list(ws)} over {c} input "
                       "channels")
    return rule


def axis(data: int = 0, default: int | None = None, inclusive: bool = False) -> Callable:
    """`axis` inside [-rank, rank) of input `data` ([-rank, rank] for Flatten)."""
    def rule(m: Facts, n, a: dict) -> None:
        if "axis" not in a:
            return
        r = _rank(m, _input(n, data))
        if r is None:
            return
        ax = int(a["axis"])
        hi = r if inclusive else r - 1
        if not -r <= ax <= hi:
            raise _Bad(f"attribute axis {ax} is outside [{-r}, {hi}] for rank {r}")
    return rule


def concat_axis(m: Facts, n, a: dict) -> None:
    """Concat / QLinearConcat: `axis` (required) inside the inputs' rank."""
    first = 2 if n.op_type == "QLinearConcat" else 0
    if "axis" not in a:
        raise _Bad("attribute axis is required")
    axis(first)(m, n, a)


def zero_points(*pairs: tuple[int, int]) -> Callable:
    """Each (data input, zero point input): the zero point has the data input's dtype."""
    def rule(m: Facts, n, a: dict) -> None:
        for x, zp in pairs:
            if not _input(n, zp) or not _input(n, x):
                continue
            dx, dz = _dtype(m, _input(n, x)), _dtype(m, _input(n, zp))
            if dx is not None and dz is not None and dx != dz:
                raise _Bad(f"zero point input {zp} is {type_name(dz)} but input {x} is "
                           f"{type_name(dx)}")
    return rule


def flag(*keys: str) -> Callable:
    """Boolean attributes: 0 or 1."""
    def rule(m: Facts, n, a: dict) -> None:
        for k in keys:
            if k in a and int(a[k]) not in (0, 1):
                raise _Bad(f"attribute {k} {int(a[k])} must be 0 or 1")
    return rule


def output_padding(m: Facts, n, a: dict) -> None:
    """ConvTranspose: output_padding non-negative and below max(stride, dilation) per axis."""
    op = [int(x) for x in a.get("output_padding", [])]
    s = [int(x) for x in a.get("strides", [1] * len(op))]
    d = [int(x) for x in a.get("dilations", [1] * len(op))]
    for i, p in enumerate(op):
        lim = max(s[i] if i < len(s) else 1, d[i] if i < len(d) else 1)
        if not 0 <= p < lim:
            raise _Bad(f"attribute output_padding {op} must be in [0, max(stride, dilation))")


def perm(m: Facts, n, a: dict) -> None:
    """Transpose: `perm` a permutation of the input's axes."""
    r = _rank(m, _input(n, 0))
    if "perm" in a and r is not None and sorted(int(x) for x in a["perm"]) != list(range(r)):
        raise _Bad(f"attribute perm {list(a['perm'])} is not a permutation of {r} axes")


_CONV = [window(1), groups(0, 1)]
RULES: dict[str, list[Callable]] = {
    "Conv": _CONV,
    "ConvInteger": [window(1), groups(0, 1), zero_points((0, 2), (1, 3))],
    "QLinearConv": [window(3), groups(0, 3), zero_points((0, 2), (3, 5))],
    "ConvTranspose": [window(1), groups(0, 1, transpose=True), output_padding],
    "AveragePool": [window(None), flag("ceil_mode", "count_include_pad")],
    "MaxPool": [window(None), flag("ceil_mode"), flag("storage_order")],
    "QLinearAveragePool": [window(None), flag("ceil_mode", "count_include_pad"),
                           zero_points((0, 2), (0, 4))],
    "Softmax": [axis(0)],
    "QLinearSoftmax": [axis(0), zero_points((0, 2), (0, 4))],
    "Concat": [concat_axis],
    "QLinearConcat": [concat_axis],
    "Flatten": [axis(0, inclusive=True)],
    "Gemm": [flag("transA", "transB")],
    "QGemm": [flag("transA", "transB"), zero_points((0, 2), (3, 5))],
    "QLinearMatMul": [zero_points((0, 2), (3, 5))],
    "MatMulInteger": [zero_points((0, 2), (1, 3))],
    "QLinearAdd": [zero_points((0, 2), (3, 5), (0, 7))],
    "QLinearMul": [zero_points((0, 2), (3, 5), (0, 7))],
    "QLinearSigmoid": [zero_points((0, 2), (0, 4))],
    "QLinearGlobalAveragePool": [zero_points((0, 2), (0, 4))],
    "DequantizeLinear": [axis(0), zero_points((0, 2))],
    "QuantizeLinear": [axis(0)],
    "Transpose": [perm],
}


def _zero_dims(m: Facts) -> None:
    """A graph input dim of 0 (or below) is refused; only unknown / symbolic ones become 1."""
    inits = {t.name for t in m.graph.initializer}
    for vi in m.graph.input:
        if vi.name in inits or not vi.type.HasField("tensor_type"):
            continue
        dims = vi.type.tensor_type.shape.dim
        bad = [int(d.dim_value) for d in dims if d.HasField("dim_value") and d.dim_value <= 0]
        if bad:
            shape = [int(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?")
                     for d in dims]
            raise ModelFormatError(f"{m.path}: graph input '{vi.name}' has a dimension of "
                                   f"{bad[0]} (shape {shape}): a tensor with no elements")


def check_nodes(m: Facts) -> None:
    """Every node's attributes by RULES; the first failure as one ModelFormatError line. Run
    before shape inference (which would otherwise fail first, without naming the node) and
    again after it, when every value's shape is known."""
    _zero_dims(m)
    for i, n in enumerate(m.graph.node):
        rules = RULES.get(n.op_type) if n.domain in ("", "ai.onnx", "com.microsoft") else None
        if not rules:
            continue
        a = _attrs(n)
        for rule in rules:
            try:
                rule(m, n, a)
            except _Bad as e:
                raise ModelFormatError(f"{m.path}: {where(i, n)}: {e}") from None
            except (TypeError, ValueError, IndexError) as e:  # an attribute of the wrong kind
                raise ModelFormatError(f"{m.path}: {where(i, n)}: malformed attribute "
                                       f"({' '.join(str(e).split())[:120]})") from None
