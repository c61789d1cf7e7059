"""Folding ONNX shape subgraphs at import, where they depend only on static shapes.

Owns: evaluating, with numpy, the nodes exporters emit to compute shapes (Shape, Size, Gather,
Cast, Slice, Concat, Unsqueeze, Squeeze, Reshape, ConstantOfShape, Range, Expand, Equal, Where,
integer arithmetic ...) whenever every input is a constant or, for Shape / Size, a tensor whose
shape is static (ONNX inference gives it; symbolic dimensions are 1 as everywhere in edgecc).
Their outputs join the model's constants, so Reshape, Tile, Resize, Expand ... then read
constants; shapes are re-inferred with the folded values until nothing more folds. A node is
folded when every output it has is a constant (`folded`); the converter skips it. A shape input
that stays computed at run time is refused in one line naming the node, the input and the value
it depends on (`refuse_dynamic`).
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from edgecc.errors import UnsupportedModel

# the inputs of an op that must be constant (shapes, sizes, indices of data movement)
SHAPE_INPUTS = {"Reshape": (1,), "Tile": (1,), "Expand": (1,), "Resize": (1, 2, 3),
                "Upsample": (1,), "ConstantOfShape": (0,), "Slice": (1, 2, 3, 4),
                "Pad": (1, 2), "Squeeze": (1,), "Unsqueeze": (1,), "Range": (0, 1, 2),
                "ReduceMean": (1,), "ReduceSum": (1,), "ReduceMax": (1,), "ReduceMin": (1,),
                "Split": (1,), "TopK": (1,), "OneHot": (1,)}
_MAX_ROUNDS = 8


def _attrs(n) -> dict:
    return {a.name: helper.get_attribute_value(a) for a in n.attribute}


def _ins(n, consts, i: int):
    return consts[n.input[i]] if len(n.input) > i and n.input[i] else None


def _axes(n, a: dict, consts) -> list[int] | None:
    v = a.get("axes")
    if v is None and len(n.input) > 1 and n.input[1]:
        v = consts[n.input[1]].ravel().tolist()
    return None if v is None else [int(x) for x in v]


def _slice(x, n, consts):
    starts, ends = _ins(n, consts, 1).ravel(), _ins(n, consts, 2).ravel()
    axes = _ins(n, consts, 3)
    steps = _ins(n, consts, 4)
    axes = range(len(starts)) if axes is None else axes.ravel()
    steps = [1] * len(starts) if steps is None else steps.ravel()
    sl = [slice(None)] * x.ndim
    for s, e, ax, st in zip(starts, ends, axes, steps):
        sl[int(ax) % x.ndim] = slice(int(s), int(e), int(st))  # ONNX clamps as Python does
    return x[tuple(sl)]


def _reshape(x, shape, allowzero: bool):
    want = [int(v) for v in shape.ravel()]
    want = [x.shape[i] if v == 0 and not allowzero else v for i, v in enumerate(want)]
    return x.reshape(want)


def _unsqueeze(x, axes):
    rank = x.ndim + len(axes)
    for ax in sorted(int(a) % rank for a in axes):
        x = np.expand_dims(x, ax)
    return x


def _div(a, b):
    if np.issubdtype(np.result_type(a, b), np.integer):  # ONNX: truncation toward zero
        q = np.abs(a) // np.abs(b)
        return (np.sign(a) * np.sign(b) * q).astype(np.result_type(a, b))
    return (a / b).astype(np.result_type(a, b))


def _constant_of_shape(n, a, x):
    v = a.get("value")
    fill = numpy_helper.to_array(v).ravel() if v is not None else np.zeros(1, np.float32)
    return np.full([int(d) for d in x.ravel()], fill[0], fill.dtype)


def _shape(n, a, shape):
    s = np.array(shape, np.int64)
    return s[int(a.get("start", 0)): a.get("end")]


# op -> f(node, attrs, inputs...) of constants; Shape / Size take the input's static shape
EVAL = {
    "Shape": _shape,
    "Size": lambda n, a, shape: np.array(int(np.prod(shape)), np.int64),
    "Gather": lambda n, a, x, i: np.take(x, i.astype(np.int64), axis=int(a.get("axis", 0))),
    "Cast": lambda n, a, x: x.astype(helper.tensor_dtype_to_np_dtype(int(a["to"]))),
    "Concat": lambda n, a, *xs: np.concatenate(xs, axis=int(a["axis"])),
    "Unsqueeze": lambda n, a, x, *r: _unsqueeze(x, a.get("axes", r[0].ravel() if r else [])),
    "Squeeze": lambda n, a, x, *r: np.squeeze(x, axis=tuple(int(v) for v in (
        a.get("axes", r[0].ravel() if r else [i for i, d in enumerate(x.shape) if d == 1])))),
    "Reshape": lambda n, a, x, s: _reshape(x, s, bool(a.get("allowzero", 0))),
    "ConstantOfShape": _constant_of_shape,
    "Range": lambda n, a, s, l, d: np.arange(s, l, d, dtype=np.asarray(s).dtype),
    "Expand": lambda n, a, x, s: np.array(np.broadcast_to(
        x, np.broadcast_shapes(x.shape, tuple(int(v) for v in s.ravel())))),
    "Equal": lambda n, a, x, y: np.equal(x, y), "Less": lambda n, a, x, y: np.less(x, y),
    "Greater": lambda n, a, x, y: np.greater(x, y), "Not": lambda n, a, x: np.logical_not(x),
    "Where": lambda n, a, c, x, y: np.where(c, x, y),
    "Add": lambda n, a, x, y: (x + y).astype(np.result_type(x, y)),
    "Sub": lambda n, a, x, y: (x - y).astype(np.result_type(x, y)),
    "Mul": lambda n, a, x, y: (x * y).astype(np.result_type(x, y)),
    "Div": lambda n, a, x, y: _div(x, y),
    "Max": lambda n, a, *xs: np.maximum.reduce(xs), "Min": lambda n, a, *xs: np.minimum.reduce(xs),
    "Neg": lambda n, a, x: -x, "Abs": lambda n, a, x: np.abs(x),
    "ReduceProd": lambda n, a, x, *r: np.prod(x, axis=None if not (a.get("axes") or r) else tuple(
        a.get("axes", r[0].ravel() if r else [])), keepdims=bool(a.get("keepdims", 1))),
    "Identity": lambda n, a, x: x,
    "Slice": None,  # _slice: its optional inputs
}
_SHAPE_OF = ("Shape", "Size")


def _folds(n, consts: dict, shapes: dict) -> bool:
    if n.domain not in ("", "ai.onnx") or n.op_type not in EVAL or not n.output:
        return False
    if n.op_type in _SHAPE_OF:
        return n.input[0] in shapes
    ins = [x for x in n.input if x]
    # Slice / Gather / Cast ... of the model's real data (weights, or activations) fold only
    # when every input is a constant; a small integer tensor is what a shape subgraph computes
    return bool(ins) and all(x in consts for x in ins)


def _evaluate(n, consts: dict, shapes: dict) -> np.ndarray:
    a = _attrs(n)
    if n.op_type in _SHAPE_OF:
        return EVAL[n.op_type](n, a, shapes[n.input[0]])
    if n.op_type == "Slice":
        return _slice(consts[n.input[0]], n, consts)
    args = [consts[x] if x else None for x in n.input]
    while args and args[-1] is None:
        args.pop()
    return EVAL[n.op_type](n, a, *args)


def fold(m) -> None:
    """Fold m's (read.OnnxModel) static shape computations into m.consts, re-inferring shapes
    with them; then refuse a shape input that stays dynamic."""
    path = m.path
    for _ in range(_MAX_ROUNDS):
        new = {}
        for n in m.graph.node:
            if all(o in m.consts for o in n.output if o) or not _folds(n, {**m.consts, **new},
                                                                         m.shapes):
                continue
            try:
                y = _evaluate(n, {**m.consts, **new}, m.shapes)
            except Exception:  # noqa: BLE001 - a node numpy cannot evaluate stays a node
                continue
            new[n.output[0]] = np.asarray(y)
        if not new:
            break
        m.consts.update(new)
        _reinfer(m, path)
    refuse_dynamic(m)


def folded(n, consts: dict) -> bool:
    """Whether node n was folded at import (every output a constant)."""
    outs = [o for o in n.output if o]
    return bool(outs) and all(o in consts for o in outs)


def _reinfer(m, path) -> None:
    """Shapes and element types again, with the folded values as initializers."""
    g = onnx.GraphProto()
    g.CopyFrom(m.graph)
    del g.node[:]
    g.node.extend(n for n in m.graph.node if not folded(n, m.consts))
    have = {t.name for t in g.initializer}
    g.initializer.extend(numpy_helper.from_array(v, k) for k, v in m.consts.items()
                         if k not in have and k not in {i.name for i in g.input})
    del g.value_info[:]
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", m.opset)])
    try:
        g = onnx.shape_inference.infer_shapes(model).graph
    except Exception:  # noqa: BLE001 - keep the shapes inferred so far
        return
    for vi in [*g.value_info, *g.output]:
        t = vi.type.tensor_type
        if vi.type.HasField("tensor_type") and t.HasField("shape"):
            m.shapes[vi.name] = tuple(int(d.dim_value) if d.HasField("dim_value") and
                                      d.dim_value > 0 else 1 for d in t.shape.dim)
            m.dtypes.setdefault(vi.name, int(t.elem_type))


def _root(name: str, producer: dict, consts: dict, inputs: set, seen=None) -> str | None:
    """What a non-constant shape value depends on at run time: a graph input's values, a shape
    that is not static, or a node computed from one of them; None when it depends on neither
    (constants through ops the handlers evaluate themselves, as DequantizeLinear)."""
    seen = set() if seen is None else seen
    if name in inputs:
        return f"the values of graph input '{name}'"
    i, n = producer.get(name, (None, None))
    if n is None or name in seen:
        return None
    seen.add(name)
    if n.op_type in _SHAPE_OF:
        return f"the shape of '{n.input[0]}', which is not static (node {i} {n.op_type})"
    for x in n.input:
        if x and x not in consts:
            why = _root(x, producer, consts, inputs, seen)
            if why:
                return why if n.op_type in EVAL else f"{why}, through node {i} ({n.op_type})"
    return None


def refuse_dynamic(m) -> None:
    """One line for the first shape input that depends on run-time values after folding."""
    producer = {o: (i, n) for i, n in enumerate(m.graph.node) for o in n.output}
    inputs = {i.name for i in m.graph.input if i.name not in m.consts}
    for i, n in enumerate(m.graph.node):
        if folded(n, m.consts) or n.domain not in ("", "ai.onnx"):
            continue
        for k in SHAPE_INPUTS.get(n.op_type, ()):
            x = n.input[k] if len(n.input) > k else ""
            why = _root(x, producer, m.consts, inputs) if x and x not in m.consts else None
            if why:
                who = f"node {i} ({n.op_type}" + (f" '{n.name}')" if n.name else ")")
                raise UnsupportedModel(f"{m.path}: {who}: input {k} '{x}' is not static: it "
                                       f"depends on {why}")
