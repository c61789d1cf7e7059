"""QDQ groups of elementwise ops: int8 tables, and the groups onnxruntime leaves in float32.

Owns the handlers of DequantizeLinear -> f -> QuantizeLinear groups whose f is elementwise
(Neg, Abs, a standalone Relu or Clip, LeakyRelu, PRelu, HardSigmoid, HardSwish, Tanh, Erf,
Gelu ..., Max / Min / Sub / Div / Pow by a constant, and chains of them): LOOKUP, the
256-entry table of f in float32 (edgecc/numerics/onnx_elementwise.py), one per channel for a
per-channel constant (PRelu's slope); com.microsoft QLinearLeakyRelu; and the groups onnxruntime
runs in float32: LayerNormalization over the last axis, Sub / Div / Max / Min of two
activations, between DEQUANTIZE and the QuantizeLinear's QUANTIZE.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from edgecc.frontends.onnx import floats
from edgecc.frontends.onnx import nodes as nd
from edgecc.frontends.onnx.builder import Builder, Rec
from edgecc.ir import DType, QParams
from edgecc.numerics.onnx_elementwise import function
from edgecc.numerics.qlinear import table_of


def relu_clip(b: Builder, n, a) -> list[Rec]:
    """Relu / Clip: a table of its own right after a DequantizeLinear, else fused (nodes.py).
    Relu(DequantizeLinear(q)) is DequantizeLinear(max(q, zp)) exactly, so a Relu keeps the
    record a DequantizeLinear (a QOperator model's Relu -> MaxPool between QLinear ops)."""
    r = b.rec(n.input[0])
    if r.kind == "dq" and n.op_type == "Relu" and not b.type(r.value).q.per_channel:
        t = b.type(r.value)
        lut = np.maximum(np.arange(-128, 128), t.q.zero_point[0]).astype(np.int8)[None]
        y = b.add_inferred("LOOKUP", [r.value, b.const(lut, DType.INT8, label="table")],
                           DType.INT8, t.q, dict(axis=0))
        return [replace(r, value=y)]
    if r.kind == "dq":
        return elementwise(b, n, a)
    return nd.relu_clip(b, n, a)


_FLOAT_BINARY = {"Sub": "SUB", "Div": "DIV", "Max": "MAXIMUM", "Min": "MINIMUM"}


def _float_binary(b: Builder, n, ins: list[Rec]) -> Rec:
    """Sub / Div / Max / Min of two DequantizeLinear'd activations as onnxruntime runs them
    (not fused): both dequantized in float32, the op in float32 (one IEEE operation, exact),
    then the QuantizeLinear after it quantizes the float32 result."""
    xs = [floats.as_float(b, r) for r in ins]
    ranks = [len(r.perm) for r in xs]
    if ranks[0] != ranks[1]:  # numpy broadcasting: leading 1s, in ONNX order
        xs = [b.plain(r) for r in xs]
        rank = max(ranks)
        xs = [replace(r, value=b.reshape(r.value, (1,) * (rank - len(r.perm))
                                          + tuple(b.type(r.value).shape)),
                      perm=tuple(range(rank))) for r in xs]
    vals = [xs[0].value, b.with_perm(xs[1], xs[0].perm).value]
    y = b.add_inferred(_FLOAT_BINARY[n.op_type], vals, DType.FLOAT32, None,
                       dict(fused_activation_function=0))
    return Rec("act", y, perm=xs[0].perm)


def _const_operand(b: Builder, n, c: Rec) -> np.ndarray:
    """A constant operand in float32: a float constant or a DequantizeLinear'd one."""
    if c.kind == "qconst":
        return floats.dequantized_rec(c)
    if c.kind == "const":
        return np.asarray(c.data, np.float32)
    raise b.unsupported(f"{n.op_type} of two activations is not supported")


def elementwise(b: Builder, n, a) -> list[Rec]:
    """A unary op, or a binary one with one constant operand, between DequantizeLinear and
    QuantizeLinear: a pending table group. A chain of them (DQ -> Div -> Erf -> Q) is one
    group, its steps composed in float32 as onnxruntime runs them one after another."""
    ins = [b.rec(x) for x in n.input if x]
    acts = [i for i, r in enumerate(ins) if r.kind == "dq"]
    if len(acts) == 2 and n.op_type in _FLOAT_BINARY:
        return [_float_binary(b, n, ins)]
    chained = [i for i, r in enumerate(ins) if r.kind == "pend" and r.op == "table"]
    if len(acts) + len(chained) != 1:
        raise b.unsupported(f"{n.op_type} needs one DequantizeLinear'd activation (QDQ)")
    k = (acts or chained)[0]
    step = dict(op=n.op_type, attrs=a, swap=k == 1 and len(ins) > 1, clips=[])
    if n.op_type == "Clip":
        step["op"] = "Identity"
        lo, hi = (nd._const(b, n.input[i]) if len(n.input) > i and n.input[i] else None
                  for i in (1, 2))
        lo = a.get("min") if lo is None and "min" in a else lo
        hi = a.get("max") if hi is None and "max" in a else hi
        step["clips"] = [(None if lo is None else float(np.asarray(lo)),
                          None if hi is None else float(np.asarray(hi)))]
    elif len(ins) > 1:
        step["c"] = _const_operand(b, n, ins[1 - k])
    if function(step["op"], a, None if "c" not in step else 0.0) is None:
        raise b.unsupported(f"{n.op_type} in a QDQ group is not supported")
    if chained:  # the clips fused so far belong to the step before this one
        info = dict(ins[k].info)
        steps = [*info["steps"]]
        steps[-1] = dict(steps[-1], clips=[*steps[-1]["clips"], *info.pop("clips", [])])
        return [replace(ins[k], info=dict(info, steps=[*steps, step]))]
    return [Rec("pend", op="table", info=dict(x=nd._dq_act(b, ins[k]), steps=[step]))]


def _channel_axis(b: Builder, x: Rec, steps: list[dict]) -> tuple[int | None, int]:
    """(the ONNX axis the steps' constants vary along, or None; its size), each constant
    rank-aligned to x."""
    shape = b.onnx_shape(x)
    axis = None
    for st in steps:
        c = st.get("c")
        if c is None:
            continue
        if c.ndim > len(shape):
            raise b.unsupported(f"{st['op']} by a constant of a higher rank")
        c = c.reshape((1,) * (len(shape) - c.ndim) + c.shape)
        st["c"] = c
        big = [i for i, d in enumerate(c.shape) if d > 1]
        if len(big) > 1 or (big and axis is not None and big[0] != axis):
            raise b.unsupported(f"{st['op']} by a constant varying along several axes")
        axis = big[0] if big else axis
    return axis, (1 if axis is None else shape[axis])


def emit_table(b: Builder, info: dict, yq: QParams) -> Rec:
    """LOOKUP of the composed steps: one table, or one per channel along the axis their
    constants vary on."""
    x: Rec = info["x"]
    xq = b.type(x.value).q
    steps = [dict(st) for st in info["steps"]]
    steps[-1]["clips"] = [*steps[-1]["clips"], *info.get("clips", [])]
    axis, channels = _channel_axis(b, x, steps)
    tables = []
    for ch in range(channels):
        fns = []
        for st in steps:
            c = st.get("c")
            cv = None if c is None else float(np.broadcast_to(c.reshape(-1), (channels,))[ch]
                                               if c.size > 1 else c.ravel()[0])
            fns.append(function(st["op"], st["attrs"], cv, st["swap"], tuple(st["clips"])))

        def fn(v, fns=fns):
            for f in fns:
                v = f(v)
            return v
        tables.append(table_of(xq.scale[0], xq.zero_point[0], yq.scale[0], yq.zero_point[0], fn))
    t = b.const(np.stack(tables), DType.INT8, label="table")
    ir_axis = 0 if axis is None else list(x.perm).index(axis)
    y = b.add_inferred("LOOKUP", [x.value, t], DType.INT8, yq, dict(axis=ir_axis))
    return Rec("act", y, perm=x.perm)


# ---- LayerNormalization in float32 -----------------------------------------------------------

def layer_norm(b: Builder, n, a) -> list[Rec]:
    """LayerNormalization over the last axis in float32 (onnxruntime computes it in float between
    DequantizeLinear and QuantizeLinear): mean, centred values, mean of their squares,
    1/sqrt(var + epsilon), scale and bias; its sums run in another order than onnxruntime's,
    so a quantized result may land one step away."""
    if len(n.output) > 1 and any(n.output[1:]):
        raise b.unsupported("LayerNormalization's Mean / InvStdDev outputs are not supported")
    x = b.plain(floats.as_float(b, b.rec(n.input[0])))
    shape = b.type(x.value).shape
    if int(a.get("axis", -1)) % len(shape) != len(shape) - 1:
        raise b.unsupported("LayerNormalization over more than the last axis")
    f32 = DType.FLOAT32

    def op(name, *ins, **attrs):
        vals = [v if isinstance(v, str) else b.const(np.asarray(v, np.float32), f32) for v in ins]
        return b.add_inferred(name, vals, f32, None, attrs or None)
    last = np.array([len(shape) - 1])
    mean = b.add_inferred("MEAN", [x.value, b.const(last, DType.INT32)], f32, None,
                          dict(keep_dims=True))
    d = op("SUB", x.value, mean, fused_activation_function=0)
    sq = op("MUL", d, d, fused_activation_function=0)
    var = b.add_inferred("MEAN", [sq, b.const(last, DType.INT32)], f32, None,
                         dict(keep_dims=True))
    rs = op("RSQRT", op("ADD", var, np.float32(a.get("epsilon", 1e-5)),
                        fused_activation_function=0))
    y = op("MUL", d, rs, fused_activation_function=0)
    for i, name in ((1, "MUL"), (2, "ADD")):
        if len(n.input) > i and n.input[i]:
            y = op(name, y, floats.dequantized(b, n.input[i], "scale and bias"),
                   fused_activation_function=0)
    return [Rec("act", y, perm=x.perm)]


def qlinear_leaky_relu(b: Builder, n, a) -> list[Rec]:
    """com.microsoft QLinearLeakyRelu(X, X_scale, X_zp, Y_scale, Y_zp): onnxruntime's table of
    the float LeakyRelu, the same as the QDQ group's."""
    zp = n.input[2] if len(n.input) > 2 else ""
    x = nd._dq_act(b, nd.dq_rec(b, n.input[0], n.input[1], zp))
    yq = nd.out_q(b, n.input[3], n.input[4] if len(n.input) > 4 else "")
    step = dict(op="LeakyRelu", attrs=a, swap=False, clips=[])
    return [emit_table(b, dict(x=x, steps=[step]), yq)]
