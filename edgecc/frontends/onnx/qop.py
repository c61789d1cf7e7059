"""QOperator ops (QLinearConv, QGemm, QLinearMatMul, QLinearAdd, QLinearMul, QLinear*Pool,
QLinearSoftmax) and data movement.

Owns: rewriting each QOperator node as the DQ -> op -> Q group it stands for (the same records the
QDQ path builds, then closed at once with the node's output quantization), and the data-movement
ops: Transpose composes the layout permutation (no code), Reshape / Flatten / Squeeze / Unsqueeze
reinterpret bytes in ONNX order to the shape ONNX inference gives, Identity passes through; on
constants they are evaluated with numpy.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from edgecc.frontends.onnx import emit
from edgecc.frontends.onnx import nodes as nd
from edgecc.frontends.onnx.builder import NHWC, Builder, Rec, inverse, is_identity
from edgecc.ir import DType


def _q(b: Builder, n, s: int, zp: int):
    return nd.out_q(b, n.input[s], n.input[zp] if len(n.input) > zp else "")


def _dq(b: Builder, n, x: int, axis: int = 1) -> Rec:
    return nd.dq_rec(b, n.input[x], n.input[x + 1], n.input[x + 2], axis)


def _bias(b: Builder, n, i: int) -> Rec | None:
    if len(n.input) <= i or not n.input[i]:
        return None
    data = nd._need_const(b, n.input[i], "the bias")
    if data.dtype != np.int32:
        raise b.unsupported("the bias must be int32")
    return Rec("qconst", data=data, q=None)


def qlinear_conv(b: Builder, n, a) -> list[Rec]:
    info = dict(x=nd._dq_act(b, _dq(b, n, 0)), w=_dq(b, n, 3, axis=0), attrs=a)
    bias = _bias(b, n, 8)
    if bias is not None:
        info["bias"] = bias
    return [emit.conv(b, info, _q(b, n, 6, 7))]


def qgemm(b: Builder, n, a) -> list[Rec]:
    if len(n.input) < 8 or not n.input[7]:
        raise b.unsupported("QGemm with a float output is not supported")
    if a.get("transA", 0) or float(a.get("alpha", 1.0)) != 1.0:
        raise b.unsupported("QGemm with transA or alpha other than the defaults")
    trans_b = bool(a.get("transB", 0))
    info = dict(x=nd._dq_act(b, _dq(b, n, 0)), w=_dq(b, n, 3, axis=0 if trans_b else 1),
                trans_b=trans_b)
    bias = _bias(b, n, 6)
    if bias is not None:
        info["bias"] = bias
    return [emit.fully_connected(b, info, _q(b, n, 7, 8))]


def qlinear_matmul(b: Builder, n, a) -> list[Rec]:
    info = dict(x=nd._dq_act(b, _dq(b, n, 0)), w=_dq(b, n, 3, axis=1), trans_b=False)
    return [emit.fully_connected(b, info, _q(b, n, 6, 7))]


def qlinear_binary(b: Builder, n, a) -> list[Rec]:
    info = dict(xs=[_dq(b, n, 0), _dq(b, n, 3)], ir_op=n.op_type[len("QLinear"):].upper())
    return [emit.binary(b, info, _q(b, n, 6, 7))]


def qlinear_pool(b: Builder, n, a) -> list[Rec]:
    if int(a.get("channels_last", 0)):
        raise b.unsupported("channels_last=1 is not supported")
    kind = "global" if n.op_type == "QLinearGlobalAveragePool" else "avg"
    zp = nd._const(b, n.input[4]) if len(n.input) > 4 and n.input[4] else None
    info = dict(x=nd._dq_act(b, _dq(b, n, 0)), attrs=a, kind=kind, qlinear=True,
                zp_offset=0 if zp is not None and np.asarray(zp).dtype == np.int8 else 128)
    return [emit.pool(b, info, _q(b, n, 3, 4))]


def qlinear_concat(b: Builder, n, a) -> list[Rec]:
    """QLinearConcat(y_scale, y_zp, (x, x_scale, x_zp)...)."""
    xs = [nd._dq_act(b, _dq(b, n, i)) for i in range(2, len(n.input) - 2, 3)]
    return [emit.concat(b, dict(xs=xs, axis=a.get("axis", 0)), _q(b, n, 0, 1))]


def qlinear_sigmoid(b: Builder, n, a) -> list[Rec]:
    info = dict(x=nd._dq_act(b, _dq(b, n, 0)), ir_op="LOGISTIC")
    return [emit.lookup(b, info, _q(b, n, 3, 4))]


def qlinear_softmax(b: Builder, n, a) -> list[Rec]:
    info = dict(x=nd._dq_act(b, _dq(b, n, 0)), attrs=a, opset=int(a.get("opset", b.opset)),
                qlinear=True)
    return [emit.softmax(b, info, _q(b, n, 3, 4))]


# ---- data movement ---------------------------------------------------------------------------

def transpose(b: Builder, n, a) -> list[Rec]:
    r = b.rec(n.input[0])
    t = tuple(int(v) for v in a.get("perm", []))
    if r.kind == "const":
        return [Rec("const", data=np.transpose(r.data, t or None))]
    if r.kind not in ("act", "dq"):
        raise b.unsupported(f"Transpose of a {r.kind} value")
    t = t or tuple(reversed(range(len(r.perm))))
    ti = inverse(t)
    return [replace(r, perm=tuple(ti[p] for p in r.perm))]


def _new_shape(b: Builder, n, a, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The output shape of Reshape / Flatten / Squeeze / Unsqueeze from the input's shape (ONNX
    inference leaves it out after contrib ops)."""
    axes = a.get("axes")
    if axes is None and len(n.input) > 1 and n.input[1] and n.op_type != "Reshape":
        axes = nd._need_const(b, n.input[1], "axes").tolist()
    if n.op_type == "Reshape":
        want = [int(v) for v in nd._need_const(b, n.input[1], "the shape").ravel()]
        want = [shape[i] if v == 0 and not a.get("allowzero", 0) else v for i, v in enumerate(want)]
        if -1 in want:
            known = int(np.prod([v for v in want if v != -1]))
            want[want.index(-1)] = int(np.prod(shape)) // max(known, 1)
        return tuple(want)
    if n.op_type == "Flatten":
        ax = int(a.get("axis", 1)) % (len(shape) + 1)
        return (int(np.prod(shape[:ax])), int(np.prod(shape[ax:])))
    if n.op_type == "Squeeze":
        drop = {int(x) % len(shape) for x in axes} if axes is not None else \
            {i for i, d in enumerate(shape) if d == 1}
        return tuple(d for i, d in enumerate(shape) if i not in drop)
    rank = len(shape) + len(axes)  # Unsqueeze
    ins = {int(x) % rank for x in axes}
    it = iter(shape)
    return tuple(1 if i in ins else next(it) for i in range(rank))


def tile(b: Builder, n, a) -> list[Rec]:
    """Tile of an activation or its DequantizeLinear (repeating commutes with quantization):
    TILE in the IR's layout, the repeats permuted alike."""
    r = b.rec(n.input[0])
    reps = nd._need_const(b, n.input[1], "the repeats").astype(np.int64).ravel()
    if r.kind == "const":
        return [Rec("const", data=np.tile(r.data, reps))]
    if r.kind not in ("act", "dq"):
        raise b.unsupported(f"Tile of a {r.kind} value")
    if len(reps) != len(r.perm) or np.any(reps < 1):
        raise b.unsupported("Tile needs one positive repeat per axis")
    t = b.type(r.value)
    mult = b.const(np.array([reps[p] for p in r.perm]), DType.INT32)
    y = b.add_inferred("TILE", [r.value, mult], t.dtype, t.q)
    return [replace(r, value=y)]


def reshape_like(b: Builder, n, a) -> list[Rec]:
    r = b.rec(n.input[0])
    if r.kind == "pend":  # DQ -> op -> Flatten -> Q: reshaped once the group is emitted
        return [replace(r, info=dict(r.info, post=[*r.info.get("post", []),
                                                   (reshape_like, n, a)]))]
    if r.kind == "const":  # shapes computed from constants: numpy does it
        return [Rec("const", data=r.data.reshape(_new_shape(b, n, a, r.data.shape)))]
    if r.kind not in ("act", "dq"):
        raise b.unsupported(f"{n.op_type} of a {r.kind} value")
    if n.op_type in ("Squeeze", "Unsqueeze") and not is_identity(r.perm):
        return [_squeeze_in_layout(b, n, a, r)]
    p = b.plain(r)
    shape = _new_shape(b, n, a, b.type(p.value).shape)
    y = b.reshape(p.value, shape)
    return [replace(p, value=y, perm=tuple(range(len(shape))))]


def _squeeze_in_layout(b: Builder, n, a, r: Rec) -> Rec:
    """Squeeze / Unsqueeze of a permuted activation without moving bytes: size-1 axes leave or
    join the IR shape, the other axes keep their IR order (NHWC when the result is 4-D and
    that order allows it)."""
    old = b.onnx_shape(r)
    new = _new_shape(b, n, a, old)
    if n.op_type == "Squeeze":
        dropped = _dropped(old, b, n, a)
        kept = [i for i in range(len(old)) if i not in dropped]
        renum = {o: k for k, o in enumerate(kept)}
        perm = tuple(renum[p] for p in r.perm if p in renum)
    else:
        added = sorted({int(x) % len(new) for x in _axes(b, n, a)})
        src = [i for i in range(len(new)) if i not in added]  # new axis of each old axis
        mapped = [src[p] for p in r.perm]
        perm = None
        if len(new) == 4 and [p for p in NHWC if p not in added] == mapped:
            perm = NHWC
        perm = perm or _after_predecessors(mapped, added)
    y = b.reshape(r.value, tuple(new[p] for p in perm))
    return replace(r, value=y, perm=perm)


def _after_predecessors(mapped: list[int], added: list[int]) -> tuple[int, ...]:
    """IR order for Unsqueeze'd axes: each new axis right after the ONNX axis before it, so that
    a later Tile and Transpose (tf2onnx's UpSampling2D: Unsqueeze, Tile, Transpose, Reshape)
    find the bytes already in their order."""
    perm = list(mapped)
    for a in sorted(added):
        perm.insert(perm.index(a - 1) + 1 if a else 0, a)
    return tuple(perm)


def _axes(b: Builder, n, a) -> list[int]:
    axes = a.get("axes")
    if axes is None and len(n.input) > 1 and n.input[1]:
        axes = nd._need_const(b, n.input[1], "axes").tolist()
    return list(axes or [])


def _dropped(old: tuple[int, ...], b: Builder, n, a) -> set[int]:
    axes = _axes(b, n, a)
    if axes:
        return {int(x) % len(old) for x in axes}
    return {i for i, d in enumerate(old) if d == 1}


def identity(b: Builder, n, a) -> list[Rec]:
    return [b.rec(n.input[0])]


def constant(b: Builder, n, a) -> list[Rec]:
    return [b.rec(n.output[0])]  # read.py put its value among the constants
