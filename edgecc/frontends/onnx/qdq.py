"""QDQ groups around the ops whose integer form is exact: data movement and elementwise tables.

Owns the handlers of:
- data movement on an int8 activation or its DequantizeLinear (moving bytes commutes with
  quantization, so the record keeps its kind and the QuantizeLinear after it is a no-op or a
  requantization table): Pad (constant: PAD with the quantized value; reflect: MIRROR_PAD; edge:
  GATHER), Slice and Split (STRIDED_SLICE), Gather (GATHER; also of a DequantizeLinear'd constant
  table by run-time indices, a token embedding), Expand (BROADCAST_TO), DepthToSpace,
  SpaceToDepth and Resize nearest (one GATHER by the flat index each output element reads,
  computed here), ReduceMax (REDUCE_MAX);
- elementwise groups DequantizeLinear -> f -> QuantizeLinear (Neg, Abs, a standalone Relu or
  Clip, LeakyRelu, PRelu, HardSigmoid, HardSwish, Tanh, Erf, Gelu ..., and Max / Min / Sub / Div
  / Pow by a constant): LOOKUP, the 256-entry table of f in float32 (edgecc/numerics/
  onnx_elementwise.py), one table per channel for a per-channel PRelu slope;
- ReduceMean (MEAN with onnxruntime's float32 scale) and MatMul of two activations
  (BATCH_MATMUL, onnxruntime's QLinearMatMul);
- the groups onnxruntime leaves in float32: LayerNormalization over the last axis, and Sub /
  Div / Max / Min of two activations, between DEQUANTIZE and the QuantizeLinear's QUANTIZE.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from edgecc.frontends.onnx import floats
from edgecc.frontends.onnx import nodes as nd
from edgecc.frontends.onnx.builder import Builder, Rec
from edgecc.ir import DType, QParams
from edgecc.numerics import QLINEAR
from edgecc.numerics.onnx_elementwise import UNARY, WITH_CONSTANT, function
from edgecc.numerics.qlinear import table_of

_MOVED = ("act", "dq")


def _moved(b: Builder, n, r: Rec) -> Rec:
    if r.kind not in _MOVED:
        raise b.unsupported(f"{n.op_type} of a {r.kind} value")
    t = b.type(r.value)
    if t.dtype != DType.FLOAT32 and t.q is None:
        raise b.unsupported(f"{n.op_type} of an unquantized {t.dtype.value[0]} activation")
    return r


def _ints(b: Builder, n, i: int, what: str, attr: str | None = None, a: dict | None = None):
    if len(n.input) > i and n.input[i]:
        return [int(v) for v in np.asarray(nd._need_const(b, n.input[i], what)).ravel()]
    if attr is not None and a is not None and attr in a:
        return [int(v) for v in a[attr]]
    return None


def _gather_map(b: Builder, r: Rec, fn) -> Rec:
    """The activation rearranged by fn, which maps an array of ONNX shape to the output array
    (numpy indexing): one GATHER of the flat input by the flat index of every output element."""
    p = b.plain(r)
    shape = b.onnx_shape(p)
    idx = np.asarray(fn(np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)))
    t = b.type(p.value)
    flat = b.reshape(p.value, (int(np.prod(shape)),))
    y = b.add_inferred("GATHER", [flat, b.const(idx, DType.INT32, label="index")], t.dtype, t.q,
                       dict(axis=0))
    return replace(p, value=y, perm=tuple(range(idx.ndim)))


# ---- data movement ---------------------------------------------------------------------------

def pad(b: Builder, n, a) -> list[Rec]:
    r = b.rec(n.input[0])
    mode = a.get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    pads = _ints(b, n, 1, "Pad's pads", "pads", a)
    value = a.get("value", 0.0)
    if len(n.input) > 2 and n.input[2]:
        c = b.rec(n.input[2])
        if c.kind == "qconst":
            value = float((np.float32(c.data.ravel()[0]) - np.float32(c.q.zero_point[0]))
                          * np.float32(c.q.scale[0]))
        else:
            value = float(np.asarray(nd._need_const(b, n.input[2], "Pad's value")).ravel()[0])
    if len(n.input) > 3 and n.input[3]:
        raise b.unsupported("Pad with axes is not supported")
    if r.kind == "const":
        rank = r.data.ndim
        pw = [(pads[i], pads[i + rank]) for i in range(rank)]
        kw = dict(constant_values=value) if mode == "constant" else {}
        return [Rec("const", data=np.pad(r.data, pw, mode=mode, **kw).astype(r.data.dtype))]
    r = _moved(b, n, r)
    rank = len(r.perm)
    if pads is None or len(pads) != 2 * rank or min(pads) < 0:
        raise b.unsupported("Pad needs 2 x rank non-negative constant pads")
    if mode == "edge":
        onnx = [(pads[i], pads[i + rank]) for i in range(rank)]
        return [_gather_map(b, r, lambda a_: np.pad(a_, onnx, mode="edge"))]
    ir = np.array([[pads[p], pads[p + rank]] for p in r.perm], np.int32)
    t = b.type(r.value)
    if mode == "reflect":
        shape = t.shape
        if any(lo >= d or hi >= d for (lo, hi), d in zip(ir.tolist(), shape)):
            raise b.unsupported("Pad reflect by as much as the axis' size")
        y = b.add_inferred("MIRROR_PAD", [r.value, b.const(ir, DType.INT32)], t.dtype, t.q,
                           dict(mode=0))
        return [replace(r, value=y)]
    if mode != "constant":
        raise b.unsupported(f"Pad mode {mode} is not supported")
    if t.dtype == DType.FLOAT32:
        v = b.const(np.array(value, np.float32), DType.FLOAT32)
    else:
        q = table_of(1.0, 0, t.q.scale[0], t.q.zero_point[0], lambda _: np.full(256, value,
                                                                                np.float32))[0]
        v = b.const(np.array(q, np.int8), DType.INT8, QParams(t.q.scale[:1], t.q.zero_point[:1]))
    y = b.add_inferred("PAD", [r.value, b.const(ir, DType.INT32), v], t.dtype, t.q)
    return [replace(r, value=y)]


def _slice(b: Builder, r: Rec, ranges: dict[int, tuple[int, int, int]]) -> Rec:
    """STRIDED_SLICE of r keeping, on each ONNX axis in `ranges`, python's range(start, stop,
    step) (already clamped by slice.indices)."""
    shape = b.type(r.value).shape
    begin, end, strides, end_mask = [], [], [], 0
    for i, p in enumerate(r.perm):
        s, e, st = ranges.get(p, (0, shape[i], 1))
        if e < 0:  # a negative step down to index 0 inclusive
            end_mask |= 1 << i
            e = 0
        begin.append(s)
        end.append(e)
        strides.append(st)
    t = b.type(r.value)
    ins = [r.value] + [b.const(np.array(v), DType.INT32) for v in (begin, end, strides)]
    y = b.add_inferred("STRIDED_SLICE", ins, t.dtype, t.q, dict(end_mask=end_mask))
    return replace(r, value=y)


def slice_(b: Builder, n, a) -> list[Rec]:
    r = b.rec(n.input[0])
    starts = _ints(b, n, 1, "Slice's starts", "starts", a)
    ends = _ints(b, n, 2, "Slice's ends", "ends", a)
    axes = _ints(b, n, 3, "Slice's axes", "axes", a)
    steps = _ints(b, n, 4, "Slice's steps")
    shape = r.data.shape if r.kind == "const" else b.onnx_shape(_moved(b, n, r))
    rank = len(shape)
    axes = list(range(len(starts))) if axes is None else [x % rank for x in axes]
    steps = steps or [1] * len(starts)
    if 0 in steps:
        raise b.unsupported("Slice with a zero step")
    ranges = {ax: slice(s, e, st).indices(shape[ax])
              for ax, s, e, st in zip(axes, starts, ends, steps)}
    if r.kind == "const":
        idx = tuple(slice(*ranges[i]) if i in ranges and ranges[i][1] >= 0 else
                    (slice(ranges[i][0], None, ranges[i][2]) if i in ranges else slice(None))
                    for i in range(rank))
        return [Rec("const", data=np.ascontiguousarray(r.data[idx]))]
    return [_slice(b, r, ranges)]


def split(b: Builder, n, a) -> list[Rec]:
    r = b.rec(n.input[0])
    shape = r.data.shape if r.kind == "const" else b.onnx_shape(_moved(b, n, r))
    axis = int(a.get("axis", 0)) % len(shape)
    sizes = _ints(b, n, 1, "Split's sizes", "split", a)
    if sizes is None:
        k = len(n.output)
        sizes = [-(-shape[axis] // k)] * (k - 1)
        sizes.append(shape[axis] - sum(sizes))
    outs, start = [], 0
    for s in sizes:
        rng = (start, start + s, 1)
        if r.kind == "const":
            outs.append(Rec("const", data=np.take(r.data, range(start, start + s), axis=axis)))
        else:
            outs.append(_slice(b, r, {axis: rng}))
        start += s
    return outs


def gather(b: Builder, n, a) -> list[Rec]:
    r, ix = b.rec(n.input[0]), b.rec(n.input[1])
    axis = int(a.get("axis", 0))
    if r.kind in ("const", "qconst") and ix.kind == "const":
        if r.kind == "qconst" and len(r.q.scale) > 1 and r.q.axis == axis % r.data.ndim:
            raise b.unsupported("Gather along the axis of a per-channel quantized table")
        return [replace(r, data=np.take(r.data, ix.data, axis=axis))]
    if r.kind == "qconst" and ix.kind == "act":  # a quantized table read by run-time indices
        if len(r.q.scale) != 1:
            raise b.unsupported("Gather of a per-channel quantized table")
        q = QParams(r.q.scale[:1], r.q.zero_point[:1])
        data = b.const(r.data, DType.INT8, q, label="table")
        y = b.add_inferred("GATHER", [data, ix.value], DType.INT8, q,
                           dict(axis=axis % r.data.ndim))
        return [Rec("dq", y, perm=tuple(range(len(b.type(y).shape))))]
    r = b.plain(_moved(b, n, r))
    indices = np.asarray(nd._need_const(b, n.input[1], "Gather's indices"), np.int64)
    rank = len(r.perm)
    axis %= rank
    size = b.type(r.value).shape[axis]
    indices = np.where(indices < 0, indices + size, indices)
    t = b.type(r.value)
    y = b.add_inferred("GATHER", [r.value, b.const(indices, DType.INT32)], t.dtype, t.q,
                       dict(axis=axis))
    return [replace(r, value=y, perm=tuple(range(len(b.type(y).shape))))]


def expand(b: Builder, n, a) -> list[Rec]:
    r = b.rec(n.input[0])
    want = _ints(b, n, 1, "Expand's shape")
    if r.kind == "const":
        return [Rec("const", data=r.data * np.ones(want, r.data.dtype))]
    r = b.plain(_moved(b, n, r))
    shape = b.type(r.value).shape
    out = np.broadcast_shapes(tuple(shape), tuple(want))
    x = b.reshape(r.value, (1,) * (len(out) - len(shape)) + tuple(shape))
    t = b.type(x)
    y = b.add_inferred("BROADCAST_TO", [x, b.const(np.array(out), DType.INT32)], t.dtype, t.q)
    return [replace(r, value=y, perm=tuple(range(len(out))))]


def depth_space(b: Builder, n, a) -> list[Rec]:
    r = _moved(b, n, b.rec(n.input[0]))
    bs = int(a["blocksize"])
    mode = a.get("mode", b"DCR")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)

    def d2s(x):
        nb, c, h, w = x.shape
        if mode == "DCR":
            y = x.reshape(nb, bs, bs, c // bs ** 2, h, w).transpose(0, 3, 4, 1, 5, 2)
        else:
            y = x.reshape(nb, c // bs ** 2, bs, bs, h, w).transpose(0, 1, 4, 2, 5, 3)
        return y.reshape(nb, c // bs ** 2, h * bs, w * bs)

    def s2d(x):
        nb, c, h, w = x.shape
        y = x.reshape(nb, c, h // bs, bs, w // bs, bs).transpose(0, 3, 5, 1, 2, 4)
        return y.reshape(nb, c * bs * bs, h // bs, w // bs)
    return [_gather_map(b, r, d2s if n.op_type == "DepthToSpace" else s2d)]


def _nearest_index(out: int, size: int, scale: float, ctm: str, mode: str) -> np.ndarray:
    """The input index each output index of a nearest Resize reads, in float32 as onnxruntime."""
    f = np.float32
    o = np.arange(out, dtype=np.float32)
    s = f(scale)
    x = {"asymmetric": lambda: o / s,
         "half_pixel": lambda: (o + f(0.5)) / s - f(0.5),
         "pytorch_half_pixel": lambda: (o + f(0.5)) / s - f(0.5) if out > 1 else o * 0,
         "tf_half_pixel_for_nn": lambda: (o + f(0.5)) / s,
         "align_corners": lambda: o * f(size - 1) / f(max(out - 1, 1))}[ctm]().astype(f)
    i = {"round_prefer_floor": lambda v: np.where(v - np.floor(v) == 0.5, np.floor(v),
                                                  np.round(v)),
         "round_prefer_ceil": lambda v: np.where(v - np.floor(v) == 0.5, np.ceil(v), np.round(v)),
         "floor": np.floor, "ceil": np.ceil}[mode](x)
    return np.clip(i.astype(np.int64), 0, size - 1)


def resize_nearest(b: Builder, n, a, r: Rec) -> Rec:
    r = _moved(b, n, r)
    shape = b.onnx_shape(r)
    ctm = a.get("coordinate_transformation_mode", b"half_pixel")
    nm = a.get("nearest_mode", b"round_prefer_floor")
    ctm, nm = (v.decode() if isinstance(v, bytes) else str(v) for v in (ctm, nm))
    sizes = nd._const(b, n.input[3]) if len(n.input) > 3 and n.input[3] else None
    if sizes is not None and np.asarray(sizes).size:
        out = [int(v) for v in np.asarray(sizes).ravel()]
        scales = [np.float32(o) / np.float32(d) for o, d in zip(out, shape)]
    else:
        scales = [np.float32(v) for v in np.asarray(nd._need_const(b, n.input[2],
                                                                   "Resize's scales")).ravel()]
        out = [int(np.floor(d * s)) for d, s in zip(shape, scales)]
    try:
        idx = [_nearest_index(o, d, s, ctm, nm) for o, d, s in zip(out, shape, scales)]
    except KeyError:
        raise b.unsupported(f"Resize nearest with {ctm} coordinates / {nm}") from None
    return _gather_map(b, r, lambda x: x[np.ix_(*idx)])


def _reduce_axes(b: Builder, n, a, rank: int) -> list[int]:
    axes = _ints(b, n, 1, f"{n.op_type}'s axes", "axes", a)
    if not axes:
        if int(a.get("noop_with_empty_axes", 0)):
            raise b.unsupported(f"{n.op_type} with noop_with_empty_axes")
        return list(range(rank))
    return sorted({x % rank for x in axes})


def _reduced(b: Builder, r: Rec, op: str, axes: list[int], keep: bool, yq, attrs: dict) -> Rec:
    ir_axes = [r.perm.index(x) for x in axes]
    dtype = b.type(r.value).dtype
    y = b.add_inferred(op, [r.value, b.const(np.array(ir_axes), DType.INT32)], dtype, yq,
                       dict(keep_dims=keep, **attrs))
    perm = r.perm
    if not keep:  # renumber the kept ONNX axes
        kept = sorted(p for p in r.perm if p not in axes)
        perm = tuple(kept.index(p) for p in r.perm if p not in axes)
    return replace(r, value=y, perm=perm)


def reduce(b: Builder, n, a) -> list[Rec]:
    r = b.rec(n.input[0])
    keep = bool(int(a.get("keepdims", 1)))
    if r.kind == "const":
        raise b.unsupported(f"{n.op_type} of a constant")
    if n.op_type == "ReduceMax":
        r = _moved(b, n, r)
        axes = _reduce_axes(b, n, a, len(r.perm))
        return [_reduced(b, r, "REDUCE_MAX", axes, keep, b.type(r.value).q, {})]
    x = nd._dq_act(b, r)
    return [Rec("pend", op="mean", info=dict(x=x, axes=_reduce_axes(b, n, a, len(x.perm)),
                                             keep=keep))]


def emit_mean(b: Builder, info: dict, yq: QParams) -> Rec:
    return replace(_reduced(b, info["x"], "MEAN", info["axes"], info["keep"], yq,
                            dict(numerics=QLINEAR)), kind="act")


# ---- elementwise tables ----------------------------------------------------------------------

def elementwise(b: Builder, n, a) -> list[Rec]:
    """A unary op, or a binary one with one constant operand, between DequantizeLinear and
    QuantizeLinear: a pending table group."""
    ins = [b.rec(x) for x in n.input if x]
    acts = [i for i, r in enumerate(ins) if r.kind == "dq"]
    if len(acts) == 2 and n.op_type in _FLOAT_BINARY:
        return [_float_binary(b, n, ins)]
    if len(acts) != 1:
        raise b.unsupported(f"{n.op_type} needs one DequantizeLinear'd activation (QDQ)")
    k = acts[0]
    x = nd._dq_act(b, ins[k])
    info = dict(x=x, op=n.op_type, attrs=a, swap=k == 1 and len(ins) > 1)
    if n.op_type == "Clip":
        info["op"] = "Identity"
        lo, hi = (nd._const(b, n.input[i]) if len(n.input) > i and n.input[i] else None
                  for i in (1, 2))
        lo = a.get("min") if lo is None and "min" in a else lo
        hi = a.get("max") if hi is None and "max" in a else hi
        info["clips"] = [(None if lo is None else float(np.asarray(lo)),
                          None if hi is None else float(np.asarray(hi)))]
    elif len(ins) > 1:
        c = ins[1 - k]
        if c.kind == "qconst":
            d = np.asarray(c.data)
            shape = [1] * d.ndim
            if len(c.q.scale) > 1:
                shape[c.q.axis] = len(c.q.scale)
            s = np.asarray(c.q.scale, np.float32).reshape(shape)
            z = np.asarray(c.q.zero_point, np.int64).reshape(shape)
            info["c"] = ((d.astype(np.int64) - z).astype(np.float32) * s).astype(np.float32)
        elif c.kind == "const":
            info["c"] = np.asarray(c.data, np.float32)
        else:
            raise b.unsupported(f"{n.op_type} of two activations is not supported")
    if function(info["op"], a, None if "c" not in info else 0.0) is None:
        raise b.unsupported(f"{n.op_type} in a QDQ group is not supported")
    return [Rec("pend", op="table", info=info)]


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


def emit_table(b: Builder, info: dict, yq: QParams) -> Rec:
    x: Rec = info["x"]
    xq = b.type(x.value).q
    c = info.get("c")
    clips = tuple(info.get("clips", ()))
    axis, consts = 0, [None]
    if c is not None:
        shape = b.onnx_shape(x)
        c = c.reshape((1,) * (len(shape) - c.ndim) + c.shape) if c.ndim <= len(shape) else c
        big = [i for i, d in enumerate(c.shape) if d > 1]
        if c.ndim != len(shape) or len(big) > 1:
            raise b.unsupported(f"{info['op']} by a constant varying along several axes")
        if big:
            ch = big[0]
            consts = list(np.broadcast_to(c.reshape(-1), (shape[ch],)))
            axis = list(x.perm).index(ch)
        else:
            consts = [float(c.ravel()[0])]
    tables = []
    for v in consts:
        fn = function(info["op"], info["attrs"], v, info.get("swap", False), clips)
        tables.append(table_of(xq.scale[0], xq.zero_point[0], yq.scale[0], yq.zero_point[0], fn))
    t = b.const(np.stack(tables), DType.INT8, label="table")
    y = b.add_inferred("LOOKUP", [x.value, t], DType.INT8, yq, dict(axis=axis))
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


# ---- MatMul of two activations ---------------------------------------------------------------

def emit_batch_matmul(b: Builder, info: dict, yq: QParams) -> Rec:
    """QLinearMatMul of two int8 activations (onnxruntime fuses it where int8 is allowed)."""
    x, w = b.plain(info["x"]), b.plain(info["w"])
    if b.type(x.value).q.per_channel or b.type(w.value).q.per_channel:
        raise b.unsupported("MatMul of per-channel quantized activations")
    a = dict(numerics=QLINEAR)
    if info.get("clips"):
        raise b.unsupported("a Relu/Clip fused into a MatMul of two activations")
    y = b.add_inferred("BATCH_MATMUL", [x.value, w.value], DType.INT8, yq, a)
    return Rec("act", y, perm=tuple(range(len(b.type(y).shape))))


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


def resize(b: Builder, n, a) -> list[Rec]:
    mode = a.get("mode", b"nearest")
    if (mode.decode() if isinstance(mode, bytes) else str(mode)) == "nearest":
        return [resize_nearest(b, n, a, b.rec(n.input[0]))]
    return floats.resize(b, n, a)


def matmul(b: Builder, n, a) -> list[Rec]:
    """MatMul of two DequantizeLinear'd activations (attention), else nodes.py's."""
    x, w = (b.rec(v) for v in n.input[:2])
    if n.op_type == "MatMul" and x.kind == "dq" and w.kind == "dq":
        return [Rec("pend", op="bmm", info=dict(x=nd._dq_act(b, x), w=nd._dq_act(b, w)))]
    return nd.matmul(b, n, a)


HANDLERS = {"Pad": pad, "Slice": slice_, "Split": split, "Gather": gather, "Expand": expand,
            "DepthToSpace": depth_space, "SpaceToDepth": depth_space,
            "ReduceMax": reduce, "ReduceMean": reduce, "Relu": relu_clip, "Clip": relu_clip,
            "Resize": resize, "MatMul": matmul, "LayerNormalization": layer_norm,
            **{op: elementwise for op in (*UNARY, *WITH_CONSTANT) if op not in
               ("Relu", "Sigmoid", "Identity", "Mul", "Add")}}
EMIT = {"table": emit_table, "mean": emit_mean, "bmm": emit_batch_matmul}

