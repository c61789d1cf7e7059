"""Rewrite a real model into what a naive converter would emit, for the pass tests.

`unfuse(path)` re-serializes a TFLite model (through the edgecc IR and the model writer) with
  - every fused activation split out into a standalone RELU / RELU6 (same quantization on both
    sides, so TFLite Micro computes the very same bytes), and
  - every SAME-padded CONV_2D / DEPTHWISE_CONV_2D with a non-zero pad turned into an explicit PAD
    (zero point) followed by a VALID conv (again the same bytes in TFLite Micro),
so TFLite Micro's outputs are unchanged while edgecc's passes have real work: fusing it all back.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from edgecc.frontends.tflite import load_tflite
from edgecc.ir import Graph, Node
from edgecc.ops import conv_out_size
from edgecc.tflite_writer import ModelBuilder

_ACT_OPS = {1: "RELU", 3: "RELU6"}


def _same_pads(g: Graph, n: Node) -> tuple[int, int, int, int] | None:
    a = n.attrs
    if int(a.get("padding", 1)) != 0:
        return None
    _, h, w, _ = g.type(n.inputs[0]).shape
    kh, kw = g.type(n.inputs[1]).shape[1:3]
    sh, sw = int(a.get("stride_h", 1)), int(a.get("stride_w", 1))
    dh, dw = int(a.get("dilation_h_factor", 1)), int(a.get("dilation_w_factor", 1))
    pads = []
    for size, k, s, d in ((h, kh, sh, dh), (w, kw, sw, dw)):
        out = conv_out_size(0, size, k, s, d)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        pads += [total // 2, total - total // 2]
    return tuple(pads) if any(pads) else None  # type: ignore[return-value]


def unfuse(path: str | Path) -> tuple[bytes, dict[str, int]]:
    """(new model bytes, {"activations": split out, "pads": made explicit})."""
    g = load_tflite(path)
    mb = ModelBuilder()
    idx: dict[str, int] = {}

    def q_args(t):
        if t.q is None:
            return {}
        return dict(scale=list(t.q.scale), zero_point=list(t.q.zero_point), axis=t.q.axis)

    for name, v in g.values.items():
        t = v.type
        if v.is_const:
            idx[name] = mb.const(v.label or name, v.data, **q_args(t))
        else:
            idx[name] = mb.tensor(v.label or name, t.shape, t.dtype.value[0], **q_args(t))
    counts = {"activations": 0, "pads": 0}
    for n in g.nodes:
        attrs = {k: v for k, v in n.attrs.items() if k != "version"}
        ins = [idx[i] if i is not None else -1 for i in n.inputs]
        outs = [idx[o] for o in n.outputs]
        if n.op in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            pads = _same_pads(g, n)
            if pads is not None:
                x = g.type(n.inputs[0])
                t, b, l, r = pads
                shape = (x.shape[0], x.shape[1] + t + b, x.shape[2] + l + r, x.shape[3])
                padded = mb.tensor(f"{n.name}_padded", shape, x.dtype.value[0], **q_args(x))
                pv = mb.const(f"{n.name}_pads", np.array([[0, 0], [t, b], [l, r], [0, 0]],
                                                         dtype=np.int32))
                mb.op("PAD", [ins[0], pv], [padded])
                ins[0] = padded
                attrs["padding"] = 1
                counts["pads"] += 1
        act = int(attrs.get("fused_activation_function", 0) or 0)
        if act in _ACT_OPS:
            y = g.type(n.outputs[0])
            pre = mb.tensor(f"{n.name}_pre_act", y.shape, y.dtype.value[0], **q_args(y))
            attrs["fused_activation_function"] = 0
            mb.op(n.op, ins, [pre], _writable(attrs), version=int(n.attrs.get("version", 1)))
            mb.op(_ACT_OPS[act], [pre], outs)
            counts["activations"] += 1
        else:
            mb.op(n.op, ins, outs, _writable(attrs), version=int(n.attrs.get("version", 1)))
    return mb.finish([idx[i] for i in g.inputs], [idx[o] for o in g.outputs]), counts


def _writable(attrs: dict) -> dict:
    """Options the writer can serialize back: scalars and int vectors."""
    out = {}
    for k, v in attrs.items():
        if isinstance(v, (bool, int, float)) or (isinstance(v, list) and all(
                isinstance(x, int) for x in v)):
            out[k] = v
    return out
