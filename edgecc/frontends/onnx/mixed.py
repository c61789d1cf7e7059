"""Float32 regions of mixed ONNX models: where a quantized graph leaves int8 for float32.

Owns: the rule that a DequantizeLinear -> op group no QuantizeLinear closes runs in float32, as
onnxruntime runs it (`must_float`: the op's result is a graph output, or some reader of it is
neither a QuantizeLinear nor a fused Relu / Clip / bias Add), and `materialize`, which emits such
a pending group in float32: the activations DEQUANTIZE'd, the weights and bias dequantized in
float32 at import (x_q - zp) * scale exactly as onnxruntime's DequantizeLinear, then edgecc's
float32 kernels (emit.py with no output quantization) and a fused Relu / Clip as float clamps.
Also the handlers of the ops edgecc runs in float32 only, or on float32 activations: elementwise
arithmetic (Sub, Div, Max, Min, Pow by 2 or 0.5) and functions (Sigmoid with ONNX's formula,
Tanh, Exp, Log, Sqrt, Abs, Neg, LeakyRelu), Concat, Slice, Gather, Pad (constant), Expand,
reductions, ArgMax and MaxPool of float32 values; a DequantizeLinear'd input is read as its
float32 value (floats.as_float). `route` picks these handlers for a node that reads a float32
activation or is float-only, before the QDQ handlers of nodes.py.
"""
from __future__ import annotations

import numpy as np

from edgecc.frontends.onnx import emit, floats
from edgecc.frontends.onnx.builder import Builder, Rec
from edgecc.ir import DType, TensorType
from edgecc.numerics import QLINEAR


# ---- which groups run in float ----------------------------------------------------------------

def readers(graph) -> dict[str, list]:
    """ONNX tensor -> the nodes reading it."""
    out: dict[str, list] = {}
    for n in graph.node:
        for x in n.input:
            if x:
                out.setdefault(x, []).append(n)
    return out


def _closes(b: Builder, node, name: str) -> bool:
    """Whether `node`, reading the pending group `name`, keeps it an integer group: its
    QuantizeLinear, a Relu / Clip fused into it, or the bias Add of a MatMul (tf2onnx)."""
    if node.op_type in ("QuantizeLinear", "Relu", "Clip"):
        return True
    if node.op_type == "Add" and len(node.input) == 2 and node.input[0] == name:
        r = b.recs.get(node.input[1])
        return r is not None and r.kind == "qconst" and np.asarray(r.data).dtype == np.int32
    return False


def must_float(b: Builder, name: str, r: Rec) -> bool:
    """Whether the pending group `r` (ONNX tensor `name`) is one onnxruntime runs in float32."""
    if r.kind != "pend":
        return False
    if name in b.graph_outputs:
        return True
    return any(not _closes(b, n, name) for n in b.readers.get(name, []))


def _value(b: Builder, r: Rec) -> Rec:
    """A float32 activation, or a float32 constant, for any record a float op can read."""
    if r.kind == "const":
        return Rec("const", data=np.asarray(r.data, np.float32))
    if r.kind == "qconst":
        return Rec("const", data=floats.dequantized_rec(r))
    return floats.as_float(b, r)


def clamp(b: Builder, r: Rec, lo: float | None, hi: float | None) -> Rec:
    """Relu / Clip of a float32 activation: RELU, RELU6, or MAXIMUM / MINIMUM by constants."""
    t = b.type(r.value)
    op = {(0.0, None): "RELU", (0.0, 6.0): "RELU6"}.get((lo, hi))
    if op:
        return Rec("act", b.add(op, [r.value], TensorType(t.shape, DType.FLOAT32)), perm=r.perm)
    v = r.value
    for bound, name in ((lo, "MAXIMUM"), (hi, "MINIMUM")):
        if bound is not None:
            c = b.const(np.full((1,) * len(t.shape), bound, np.float32), DType.FLOAT32)
            v = b.add(name, [v, c], TensorType(t.shape, DType.FLOAT32))
    return Rec("act", v, perm=r.perm)


def materialize(b: Builder, r: Rec) -> Rec:
    """The pending DQ -> op group `r` computed in float32 (no QuantizeLinear closes it)."""
    info = {k: v for k, v in r.info.items() if k not in ("ort_float", "qlinear", "clips")}
    if r.op in ("conv", "fc"):
        info["x"] = floats.as_float(b, info["x"])
        info["w"] = Rec("const", data=floats.dequantized_rec(info["w"]))
        if info.get("bias") is not None:
            info["bias"] = Rec("const", data=floats.dequantized_rec(info["bias"]))
        out = (emit.conv if r.op == "conv" else emit.fully_connected)(b, info, None)
    elif r.op == "binary":
        out = _binary(b, info["xs"], info["ir_op"])
    elif r.op in ("pool", "softmax"):
        info["x"] = floats.as_float(b, info["x"])
        out = (emit.pool if r.op == "pool" else emit.softmax)(b, info, None)
    elif r.op == "lookup":
        out = unary(b, floats.as_float(b, info["x"]), info["ir_op"])
    elif r.op == "concat":
        out = _concat(b, info["xs"], info["axis"])
    else:
        raise b.unsupported(f"a float result of a quantized {r.op} is not supported")
    for lo, hi in r.info.get("clips", []):
        out = clamp(b, out, lo, hi)
    return out


# ---- float32 ops --------------------------------------------------------------------------------

UNARY = {"Sigmoid": "LOGISTIC", "Tanh": "TANH", "Exp": "EXP", "Log": "LOG", "Sqrt": "SQRT",
         "Abs": "ABS", "Neg": "NEG", "Floor": "FLOOR", "Ceil": "CEIL", "Round": "ROUND"}
BINARY = {"Add": "ADD", "Sub": "SUB", "Mul": "MUL", "Div": "DIV", "Max": "MAXIMUM",
          "Min": "MINIMUM"}


def unary(b: Builder, x: Rec, op: str, attrs: dict | None = None) -> Rec:
    """An elementwise float32 function; LOGISTIC with ONNX numerics is ONNX's 1 / (1 + exp(-x))
    without TFLite's cut-offs (edgecc/ops/_float_act.py)."""
    a = dict(attrs or {})
    if op == "LOGISTIC":
        a["numerics"] = QLINEAR
    t = b.type(x.value)
    return Rec("act", b.add(op, [x.value], TensorType(t.shape, DType.FLOAT32), a), perm=x.perm)


def _binary(b: Builder, xs: list[Rec], op: str) -> Rec:
    return emit.binary(b, dict(xs=[_value(b, r) for r in xs], ir_op=op), None)


def _concat(b: Builder, xs: list[Rec], axis: int) -> Rec:
    xs = [_value(b, r) for r in xs]
    acts = [r for r in xs if r.kind == "act"]
    perm = acts[0].perm
    rank = len(perm)
    vals = [b.with_perm(r, perm).value if r.kind == "act" else
            b.const(np.asarray(r.data, np.float32).transpose(perm), DType.FLOAT32)
            for r in xs]
    y = b.add_inferred("CONCATENATION", vals, DType.FLOAT32, None,
                       dict(axis=perm.index(int(axis) % rank), fused_activation_function=0))
    return Rec("act", y, perm=perm)


def _ins(b: Builder, n) -> list[Rec]:
    return [b.rec(x) for x in n.input if x]


def _const_ints(b: Builder, name: str, what: str) -> list[int] | None:
    if not name:
        return None
    r = b.rec(name)
    if r.kind != "const":
        raise b.unsupported(f"the {what} ('{name}') must be constant (or computed from static "
                            "shapes only)")
    return [int(v) for v in np.asarray(r.data).ravel()]


def _plain(b: Builder, n) -> tuple[Rec, tuple[int, ...]]:
    """Input 0 as a float32 activation in ONNX axis order, and its shape."""
    x = b.plain(floats.as_float(b, b.rec(n.input[0])))
    return x, b.type(x.value).shape


def h_unary(b: Builder, n, a) -> list[Rec]:
    x = floats.as_float(b, b.rec(n.input[0]))
    return [unary(b, x, UNARY[n.op_type])]


def h_leaky_relu(b: Builder, n, a) -> list[Rec]:
    x = floats.as_float(b, b.rec(n.input[0]))
    return [unary(b, x, "LEAKY_RELU", dict(alpha=float(a.get("alpha", 0.01))))]


def h_binary(b: Builder, n, a) -> list[Rec]:
    ins = _ins(b, n)
    if not any(r.kind in ("act", "dq") for r in ins):
        raise b.unsupported("both operands are constant")
    return [_binary(b, ins, BINARY[n.op_type])]


def h_pow(b: Builder, n, a) -> list[Rec]:
    e = b.rec(n.input[1])
    exp = np.asarray(e.data).ravel() if e.kind == "const" else None
    op = None if exp is None or exp.size != 1 else {2.0: "SQUARE", 0.5: "SQRT"}.get(float(exp[0]))
    if op is None:
        raise b.unsupported("Pow is supported in float32 with a constant exponent 2 or 0.5")
    return [unary(b, floats.as_float(b, b.rec(n.input[0])), op)]


def h_clip(b: Builder, n, a) -> list[Rec]:
    x = floats.as_float(b, b.rec(n.input[0]))
    if n.op_type == "Relu":
        return [clamp(b, x, 0.0, None)]
    lo = a.get("min") if len(n.input) < 2 or not n.input[1] else b.rec(n.input[1]).data
    hi = a.get("max") if len(n.input) < 3 or not n.input[2] else b.rec(n.input[2]).data
    return [clamp(b, x, None if lo is None else float(np.asarray(lo)),
                  None if hi is None else float(np.asarray(hi)))]


def h_concat(b: Builder, n, a) -> list[Rec]:
    return [_concat(b, _ins(b, n), a.get("axis", 0))]


def h_softmax(b: Builder, n, a) -> list[Rec]:
    return [floats.softmax(b, a, floats.as_float(b, b.rec(n.input[0])))]


def h_max_pool(b: Builder, n, a) -> list[Rec]:
    kind = "max" if n.op_type == "MaxPool" else "gmax"
    return [floats.pool(b, a, kind, floats.as_float(b, b.rec(n.input[0])))]


def h_slice(b: Builder, n, a) -> list[Rec]:
    x, shape = _plain(b, n)
    rank = len(shape)
    starts = _const_ints(b, n.input[1], "starts")
    ends = _const_ints(b, n.input[2], "ends")
    axes = _const_ints(b, n.input[3] if len(n.input) > 3 else "", "axes") or list(range(len(starts)))
    steps = _const_ints(b, n.input[4] if len(n.input) > 4 else "", "steps") or [1] * len(starts)
    begin, size = [0] * rank, list(shape)
    for s, e, ax, st in zip(starts, ends, axes, steps):
        ax %= rank
        idx = range(shape[ax])[slice(s, e, st)]  # ONNX's clamping is Python's
        if st != 1:
            raise b.unsupported("Slice with steps other than 1 is not supported in float32")
        begin[ax], size[ax] = (idx.start if len(idx) else 0), len(idx)
    bv = b.const(np.array(begin), DType.INT32)
    sv = b.const(np.array(size), DType.INT32)
    y = b.add("SLICE", [x.value, bv, sv], TensorType(tuple(size), DType.FLOAT32))
    return [Rec("act", y, perm=tuple(range(rank)))]


def h_gather(b: Builder, n, a) -> list[Rec]:
    x, shape = _plain(b, n)
    idx = b.rec(n.input[1])
    if idx.kind != "const":
        raise b.unsupported("Gather of float32 values needs constant indices")
    axis = int(a.get("axis", 0)) % len(shape)
    ind = np.asarray(idx.data, np.int64)
    ind = np.where(ind < 0, ind + shape[axis], ind)
    iv = b.const(ind.astype(np.int32), DType.INT32)
    y = b.add_inferred("GATHER", [x.value, iv], DType.FLOAT32, None,
                       dict(axis=axis, batch_dims=0))
    return [Rec("act", y, perm=tuple(range(len(b.type(y).shape))))]


def h_pad(b: Builder, n, a) -> list[Rec]:
    mode = a.get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    x, shape = _plain(b, n)
    pads = _const_ints(b, n.input[1], "pads") if len(n.input) > 1 and n.input[1] else \
        [int(v) for v in a.get("pads", [])]
    value = b.rec(n.input[2]).data if len(n.input) > 2 and n.input[2] else a.get("value", 0.0)
    if mode != "constant" or len(n.input) > 3 and n.input[3] or any(p < 0 for p in pads):
        raise b.unsupported("Pad is supported in float32 in constant mode with non-negative "
                            "pads on every axis")
    rank = len(shape)
    pv = b.const(np.array([[pads[i], pads[i + rank]] for i in range(rank)]), DType.INT32)
    cv = b.const(np.asarray(value, np.float32).reshape(()), DType.FLOAT32)
    y = b.add_inferred("PADV2", [x.value, pv, cv], DType.FLOAT32, None)
    return [Rec("act", y, perm=tuple(range(rank)))]


def h_expand(b: Builder, n, a) -> list[Rec]:
    x, shape = _plain(b, n)
    want = _const_ints(b, n.input[1], "shape")
    out = tuple(np.broadcast_shapes(tuple(shape), tuple(want)))
    xv = b.reshape(x.value, (1,) * (len(out) - len(shape)) + tuple(shape))
    sv = b.const(np.array(out), DType.INT32)
    y = b.add("BROADCAST_TO", [xv, sv], TensorType(out, DType.FLOAT32))
    return [Rec("act", y, perm=tuple(range(len(out))))]


REDUCE = {"ReduceMean": "MEAN", "ReduceSum": "SUM", "ReduceMax": "REDUCE_MAX",
          "ReduceMin": "REDUCE_MIN"}


def h_reduce(b: Builder, n, a) -> list[Rec]:
    x, shape = _plain(b, n)
    axes = a.get("axes")
    if axes is None and len(n.input) > 1 and n.input[1]:
        axes = _const_ints(b, n.input[1], "axes")
    axes = sorted({int(v) % len(shape) for v in (axes if axes else range(len(shape)))})
    keep = bool(a.get("keepdims", 1))
    av = b.const(np.array(axes), DType.INT32)
    y = b.add_inferred(REDUCE[n.op_type], [x.value, av], DType.FLOAT32, None,
                       dict(keep_dims=keep))
    return [Rec("act", y, perm=tuple(range(len(b.type(y).shape))))]


def h_argmax(b: Builder, n, a) -> list[Rec]:
    x, shape = _plain(b, n)
    if int(a.get("select_last_index", 0)):
        raise b.unsupported("ArgMax with select_last_index=1 is not supported")
    axis = int(a.get("axis", 0)) % len(shape)
    keep = bool(a.get("keepdims", 1))
    out = tuple(1 if i == axis else d for i, d in enumerate(shape))
    y = b.add("ARG_MAX", [x.value, b.const(np.array([axis]), DType.INT32)],
              TensorType(tuple(d for i, d in enumerate(shape) if i != axis), DType.INT64))
    if keep:
        y = b.reshape(y, out)
    return [Rec("act", y, perm=tuple(range(len(b.type(y).shape))))]


def h_cast(b: Builder, n, a) -> list[Rec]:
    r = b.rec(n.input[0])
    if int(a.get("to", 0)) != 1 or not floats.is_float(b, r):
        raise b.unsupported("Cast is supported between float32 values, or on static shapes")
    return [r]


FLOAT_HANDLERS = {
    **{op: h_unary for op in UNARY}, **{op: h_binary for op in BINARY},
    "LeakyRelu": h_leaky_relu, "Pow": h_pow, "Relu": h_clip, "Clip": h_clip,
    "Concat": h_concat, "Softmax": h_softmax, "MaxPool": h_max_pool, "GlobalMaxPool": h_max_pool,
    "Slice": h_slice, "Gather": h_gather, "Pad": h_pad, "Expand": h_expand,
    **{op: h_reduce for op in REDUCE}, "ArgMax": h_argmax, "Cast": h_cast,
}
# ops edgecc runs only in float32 (a DequantizeLinear'd input is read as float32)
FLOAT_ONLY = {*UNARY, "Sub", "Div", "Max", "Min", "LeakyRelu", "Pow", *REDUCE, "ArgMax"} - {
    "Sigmoid"}


def _only_quantized(b: Builder, n) -> bool:
    """Whether every reader of n's outputs is a QuantizeLinear (and none is a graph output)."""
    return not any(o in b.graph_outputs for o in n.output) and all(
        r.op_type == "QuantizeLinear" for o in n.output for r in b.readers.get(o, []))


def route(b: Builder, n, qdq_handler: bool):
    """The float32 handler of node n, or None for the QDQ handlers (qdq_handler: the op has
    one): a node reading a float32 activation, or a float constant in arithmetic; a float-only
    op (or Relu / Clip) of a DequantizeLinear'd value, unless a QDQ handler takes it into a
    group its QuantizeLinear closes."""
    h = FLOAT_HANDLERS.get(n.op_type)
    if h is None:
        return None
    ins = [b.recs.get(x) for x in n.input if x]
    data = ins[:1] if n.op_type in ("Slice", "Gather", "Pad", "Expand") else ins
    if any(r is not None and floats.is_float(b, r) for r in data):
        return h
    if n.op_type in BINARY and any(r is not None and r.kind == "const" and np.asarray(
            r.data).dtype == np.float32 for r in ins):  # by a float constant: no QDQ group
        return h
    if (n.op_type in FLOAT_ONLY or n.op_type in ("Relu", "Clip")) and \
            any(r is not None and r.kind == "dq" for r in ins) and \
            not (qdq_handler and _only_quantized(b, n)):
        return h
    return None
