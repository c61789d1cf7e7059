"""Dead-channel elimination: drop the channels of an activation that no consumer really reads.

Owns: per activation, the set of channels (its last axis) that something reads, and rewriting
producers and consumers to those channels only. Pruned models (vww_96_int8's later layers are
64-99% zero weights, whole filters and whole input columns) carry channels that only ever meet
zero weights: computing them is wasted time and RAM on every target.

What reads a channel j of a tensor t:
- a CONV_2D (one group) or FULLY_CONNECTED (2-D input) reading t as its input reads j only if
  some weight of column j, over the output channels it still computes, is nonzero;
- a DEPTHWISE_CONV_2D with depth multiplier 1 reads j only if it still computes output channel j
  (its input and output keep the same channels);
- anything else (any other op, a graph output, a weight or bias operand) reads every channel.
A tensor is pruned only when its producer is one of those three ops (it then simply computes
fewer output channels) and every consumer is one of them too; otherwise it keeps every channel.
The kept count is rounded up to a multiple of 8 (the SIMD kernels' channel blocks), taking back
the lowest dropped channels, which are computed and then ignored.

Exact, bit for bit: a dropped input channel contributed (x - zp) * 0 = 0 to every sum that is
kept, and a dropped output channel is read by nobody. Nothing at the model's API changes (graph
inputs and outputs keep all their channels). A pruned Value records the source channels it holds
(`Value.channels`) so that `verify` can compare it with TFLite Micro's full tensor.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node, QParams, TensorType, Value

PRUNABLE = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")
CHANNEL_STEP = 8  # kept channels are rounded up to a multiple of this (see _round_up)


def _const(g: Graph, name: str | None) -> np.ndarray | None:
    if name is None:
        return None
    v = g.values[name]
    return v.data if v.is_const else None


def _channels(g: Graph, t: str) -> int:
    shape = g.type(t).shape
    return int(shape[-1]) if shape else 1


def _shape_ok(g: Graph, n: Node) -> bool:
    """The layouts this pass understands: NHWC conv / depthwise (multiplier 1, one group) with a
    constant filter, and fully connected on a 2-D [batch, depth] input."""
    w = _const(g, n.inputs[1]) if len(n.inputs) > 1 else None
    if w is None or (len(n.inputs) > 2 and n.inputs[2] is not None
                     and _const(g, n.inputs[2]) is None):
        return False
    x, y = g.type(n.inputs[0]).shape, g.type(n.outputs[0]).shape
    if n.op == "CONV_2D":
        return len(x) == 4 and w.ndim == 4 and x[3] == w.shape[3] and y[3] == w.shape[0]
    if n.op == "DEPTHWISE_CONV_2D":
        return len(x) == 4 and w.ndim == 4 and x[3] == w.shape[3] == y[3]
    if n.op == "FULLY_CONNECTED":
        return (len(x) == 2 and len(y) == 2 and w.ndim == 2 and x[1] == w.shape[1]
                and y[1] == w.shape[0] and len(n.outputs) == 1)
    return False


def _reads(g: Graph, n: Node, live_out: np.ndarray) -> np.ndarray:
    """Input channels node n reads when it computes the output channels live_out (bool mask)."""
    w = _const(g, n.inputs[1])
    if n.op == "DEPTHWISE_CONV_2D":
        return live_out.copy()
    rows = w.reshape(w.shape[0], -1, w.shape[-1]) if n.op == "CONV_2D" else w[:, None, :]
    return (rows[live_out] != 0).any(axis=(0, 1))


def _round_up(mask: np.ndarray, step: int) -> np.ndarray:
    """The mask with the lowest dropped channels taken back until its count is a multiple of
    `step` (or every channel): SIMD kernels work in blocks of 8 channels, and a kept channel
    that nobody reads costs a little, where a kernel falling back to portable C costs a lot."""
    want = min(len(mask), -(-int(mask.sum()) // step) * step)
    out = mask.copy()
    for i in np.flatnonzero(~mask)[:want - int(mask.sum())]:
        out[i] = True
    return out


def live_channels(g: Graph, step: int = CHANNEL_STEP) -> dict[str, np.ndarray]:
    """Per prunable activation, the bool mask of the channels it keeps: those something reads,
    rounded up to a multiple of `step`; a depthwise layer's input and output keep the same."""
    prod = g.producer()
    cons = g.consumers()
    ok = {id(n) for n in g.nodes if n.op in PRUNABLE and _shape_ok(g, n)}
    prunable = set()
    for t, v in g.values.items():
        p = prod.get(t)
        if (v.is_const or t in g.inputs or t in g.outputs or p is None or id(p) not in ok
                or not cons.get(t)):
            continue
        if all(id(c) in ok and c.inputs[0] == t and t not in c.inputs[1:] for c in cons[t]):
            prunable.add(t)
    live = {t: np.zeros(_channels(g, t), bool) for t in prunable}

    def mask(t: str) -> np.ndarray:
        return live[t] if t in live else np.ones(_channels(g, t), bool)
    nodes = [n for n in reversed(g.nodes) if id(n) in ok]  # consumers before producers
    changed = True
    while changed:  # the masks only grow: a fixed point is reached
        changed = False
        for n in nodes:
            t, out = n.inputs[0], n.outputs[0]
            if n.op == "DEPTHWISE_CONV_2D" and (t in live) != (out in live):
                grown = {t, out} & set(live)  # one side is read whole: both must be whole
                m = {x: np.ones_like(live[x]) for x in grown}
            elif n.op == "DEPTHWISE_CONV_2D" and t in live:
                both = live[t] | live[out]
                m = {t: both, out: both}
            elif t in live:
                m = {t: live[t] | _reads(g, n, mask(out))}
            else:
                continue
            for x, v in m.items():
                v = _round_up(v, step)
                if not np.array_equal(v, live[x]):
                    live[x], changed = v, True
    return live


def _slice_q(q: QParams | None, keep: np.ndarray, axis: int) -> QParams | None:
    if q is None or not q.per_channel or q.axis != axis:
        return q
    return QParams(tuple(np.asarray(q.scale)[keep].tolist()),
                   tuple(np.asarray(q.zero_point)[keep].tolist()), q.axis)


def _new_const(g: Graph, old: str, data: np.ndarray, q: QParams | None, shared: bool) -> str:
    """The sliced constant: replaces `old` in place unless another node also reads it."""
    name = old
    if shared:
        k = 0
        while f"{old}_ch{k}" in g.values:
            k += 1
        name = f"{old}_ch{k}"
    v = g.values[old]
    g.values[name] = Value(name, TensorType(tuple(data.shape), v.type.dtype, q), data, v.label)
    return name


def prune_dead_channels(g: Graph, step: int = CHANNEL_STEP) -> tuple[Graph, list[str]]:
    """(graph with dead channels dropped, one note per pruned tensor)."""
    live = {t: m for t, m in live_channels(g, step).items() if not m.all()}
    if not live:
        return g, []
    out = g.copy()
    uses: dict[str, int] = {}
    for n in g.nodes:
        for i in n.inputs:
            if i is not None:
                uses[i] = uses.get(i, 0) + 1
    notes = []
    for t, keep in live.items():
        v = out.values[t]
        src = np.asarray(v.channels if v.channels is not None else range(len(keep)))
        ty = v.type
        out.values[t] = Value(t, TensorType(ty.shape[:-1] + (int(keep.sum()),), ty.dtype, ty.q),
                              None, v.label, tuple(int(c) for c in src[keep]))
        notes.append(f"{t} '{v.label}': {int(keep.sum())} of {len(keep)} channels kept (the "
                     f"others meet only zero weights)")
    for n in out.nodes:
        if n.op not in PRUNABLE:
            continue
        k_in = live.get(n.inputs[0])
        k_out = live.get(n.outputs[0])
        if k_in is None and k_out is None:
            continue
        w_name = n.inputs[1]
        w = g.values[w_name].data
        wq = g.values[w_name].type.q
        if n.op == "DEPTHWISE_CONV_2D":
            keep = k_out if k_out is not None else k_in
            w2 = w[..., keep]
            q2 = _slice_q(wq, keep, 3)
            b_keep = keep
        else:
            ko = k_out if k_out is not None else np.ones(w.shape[0], bool)
            ki = k_in if k_in is not None else np.ones(w.shape[-1], bool)
            w2 = w[ko][..., ki]
            q2 = _slice_q(wq, ko, 0)
            b_keep = ko
        n.inputs[1] = _new_const(out, w_name, np.ascontiguousarray(w2), q2, uses[w_name] > 1)
        if len(n.inputs) > 2 and n.inputs[2] is not None and not b_keep.all():
            b_name = n.inputs[2]
            b = g.values[b_name]
            n.inputs[2] = _new_const(out, b_name, np.ascontiguousarray(b.data[..., b_keep]),
                                     _slice_q(b.type.q, b_keep, 0), uses[b_name] > 1)
    return out, notes
