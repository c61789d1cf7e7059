"""Fusion rules: activations into their producer, padding into the following window op.

Owns:
- fuse_activation: a standalone RELU / RELU6 / RELU_N1_TO_1, or a MINIMUM / MAXIMUM with a
  constant bound, after a CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED / ADD becomes that
  producer's fused activation. Those producers end with clamp(requantized, act_min, act_max),
  where the range comes from the fused-activation code and the OUTPUT quantization. The fused node
  writes the activation's output tensor, so the activation's input and output must have identical
  quantization (a standalone RELU with different parameters is a requantize + clamp, which no
  fused clamp reproduces). Then the rule proves, for EVERY value the producer can write, that
  activation(clamp(v, producer range)) == clamp(v, range of some fused code), and picks that code.
- fuse_pad: PAD / PADV2 before a CONV_2D / DEPTHWISE_CONV_2D / MAX_POOL_2D / AVERAGE_POOL_2D
  becomes the op's `explicit_padding` = (top, bottom, left, right) attribute, when exact:
  conv: the pad value equals the input zero point (a tap reading it adds (zp - zp) * w = 0, which
  is what the conv does for an out-of-image tap); MAX_POOL: the pad value is the type's minimum
  (never above a real tap; a window of pad only is refused by the pool's own constraints);
  AVERAGE_POOL: TFLite Micro divides by the number of in-image taps, so padding inside a window
  changes the divisor; it is fused only when no window reaches the padding.
Every refusal says which of these conditions failed.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node, same_quant
from edgecc.ops import dtype_limits, failed_constraints, get_op
from edgecc.ops.pad import pad_value, paddings
from edgecc.passes.exhaustive import all_values, eval_elementwise
from edgecc.passes.rewrite import Ctx, Match, Rewrite, Rule, fused_name, single_use_internal
from edgecc.numerics.fixed_point import ACTIVATION_NAMES, activation_range

ACTIVATION_PRODUCERS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD")
ACTIVATIONS = ("RELU", "RELU6", "RELU_N1_TO_1", "MINIMUM", "MAXIMUM")
# Window ops whose infer/reference/lowering honour attrs["explicit_padding"] (ops/_conv_common.py
# window(), ops/pool_2d.py _geometry()).
EXPLICIT_PADDING_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "MAX_POOL_2D", "AVERAGE_POOL_2D")


def _with_attrs(n: Node, inputs, outputs, **attrs) -> Node:
    a = dict(n.attrs)
    a.update(attrs)
    return Node(n.op, list(inputs), list(outputs), a, n.name, n.index, n.numerics)


def _constraints_reason(g: Graph, n: Node) -> str | None:
    bad = failed_constraints(g, n)
    return f"the fused {n.op} would break its constraints: {'; '.join(bad)}" if bad else None


# ---- activations ----------------------------------------------------------------------------

def _activation_operand(ctx: Ctx, n: Node) -> int | None:
    """Which input of n is the tensor being clamped (the other, for MIN/MAX, is the bound)."""
    if n.op in ("MINIMUM", "MAXIMUM"):
        consts = [ctx.g.value(v).is_const for v in n.inputs]
        if consts == [False, True]:
            return 0
        if consts == [True, False]:
            return 1
        return None
    return 0


def _act_pattern(ctx: Ctx, n: Node) -> Match | None:
    k = _activation_operand(ctx, n)
    if k is None:
        return None
    p = ctx.producer.get(n.inputs[k])
    if p is None or p.op not in ACTIVATION_PRODUCERS:
        return None
    return Match({"node": n, "producer": p}, {"operand": k})


def _act_check(ctx: Ctx, m: Match) -> str | None:
    n, p, k = m["node"], m["producer"], m.info["operand"]
    g = ctx.g
    x = n.inputs[k]
    reason = single_use_internal(ctx, x)
    if reason:
        return reason
    a, y = g.type(x), g.type(n.outputs[0])
    if tuple(a.shape) != tuple(y.shape):
        return f"{n.op} broadcasts {list(a.shape)} to {list(y.shape)}"
    if not same_quant(a, y) or a.q is None:
        return (f"{n.op} input {a} and output {y} differ: a standalone {n.op} with different "
                f"parameters requantizes, which no fused clamp reproduces")
    if a.q.per_channel:
        return "per-channel activation quantization"
    if n.op in ("MINIMUM", "MAXIMUM"):
        bound = g.value(n.inputs[1 - k]).data
        if np.unique(bound).size != 1:
            return f"{n.op} bound is not a single value ({np.unique(bound).size} distinct)"
    xs = all_values(a)
    if xs is None:
        return f"{a.dtype.value[0]} values cannot be enumerated"
    lo, hi = dtype_limits(a)
    scale, zp = a.q.scale[0], a.q.zero_point[0]
    p_act = int(p.attrs.get("fused_activation_function", 0))
    try:
        r1 = activation_range(p_act, lo, hi, scale, zp)
    except ValueError:
        return f"producer's fused activation {p_act} is not understood"
    # Every value the producer can write, then the standalone activation on it.
    written = np.clip(xs.astype(np.int64), *r1)
    want = eval_elementwise(g, n, written.astype(xs.dtype), operand=k).astype(np.int64)
    codes = [p_act] + [c for c in (0, 1, 3, 2) if c != p_act]
    tried = []
    for c in codes:
        rc = activation_range(c, lo, hi, scale, zp)
        tried.append(f"{ACTIVATION_NAMES[c]} [{rc[0]}, {rc[1]}]")
        if np.array_equal(np.clip(xs.astype(np.int64), *rc), want):
            fused = _with_attrs(p, p.inputs, n.outputs, fused_activation_function=c)
            reason = _constraints_reason(g, fused)
            if reason:
                return reason
            m.info.update(code=c, fused=fused, range=rc)
            return None
    got = (int(want.min()), int(want.max()))
    return (f"{p.name}'s {ACTIVATION_NAMES.get(p_act, p_act)} then {n.op} clamps to "
            f"[{got[0]}, {got[1]}] for {a.q}; no fused activation gives that: "
            + ", ".join(tried))


def _act_rewrite(ctx: Ctx, m: Match) -> Rewrite:
    n, p = m["node"], m["producer"]
    fused = m.info["fused"]
    fused.name = fused_name(p, n)
    c, rc = m.info["code"], m.info["range"]
    how = (f"a no-op after its fused {ACTIVATION_NAMES[c]}"
           if c == int(p.attrs.get("fused_activation_function", 0))
           else f"fused {ACTIVATION_NAMES[c]}")
    return Rewrite(remove=[p, n], add=[fused],
                   why=f"{n.name} ({n.op}) folded into {p.name} ({p.op}) as {how}: clamp "
                       f"[{rc[0]}, {rc[1]}] in the output's parameters gives identical bytes "
                       f"for all {a_count(ctx, n)} values")


def a_count(ctx: Ctx, n: Node) -> int:
    t = ctx.g.type(n.outputs[0])
    return int(np.iinfo(t.dtype.np).max) - int(np.iinfo(t.dtype.np).min) + 1


FUSE_ACTIVATION = Rule("fuse_activation", ACTIVATIONS, _act_pattern, _act_check, _act_rewrite)


# ---- padding ------------------------------------------------------------------------------

def _pad_pattern(ctx: Ctx, n: Node) -> Match | None:
    if not n.inputs or n.inputs[0] is None:
        return None
    p = ctx.producer.get(n.inputs[0])
    if p is None or p.op not in ("PAD", "PADV2"):
        return None
    return Match({"node": n, "pad": p})


def _pad_amounts(ctx: Ctx, pad: Node) -> list[tuple[int, int]]:
    return paddings(ctx.g, pad)


def _pad_value(ctx: Ctx, pad: Node) -> int:
    return pad_value(ctx.g, pad)


def _existing_padding(g: Graph, n: Node) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) the op applies today, on its current input."""
    if n.attrs.get("explicit_padding") is not None:
        return tuple(int(v) for v in n.attrs["explicit_padding"])  # type: ignore[return-value]
    _, h, w, _ = g.type(n.inputs[0]).shape
    _, oh, ow, _ = g.type(n.outputs[0]).shape
    a = n.attrs
    if n.op in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        kh, kw = (g.type(n.inputs[1]).shape[1:3])
        dh, dw = int(a.get("dilation_h_factor", 1)), int(a.get("dilation_w_factor", 1))
    else:
        kh, kw = int(a["filter_height"]), int(a["filter_width"])
        dh = dw = 1
    sh, sw = int(a.get("stride_h", 1)), int(a.get("stride_w", 1))

    def one(size: int, k: int, s: int, d: int, out: int) -> tuple[int, int]:
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        lead = total // 2 if int(a.get("padding", 0)) == 0 else 0
        return lead, max(total - lead, 0) if int(a.get("padding", 0)) == 0 else 0

    t, b = one(h, kh, sh, dh, oh)
    l, r = one(w, kw, sw, dw, ow)
    return t, b, l, r


def _avg_pool_windows_avoid(pads: list[tuple[int, int]], n: Node, ctx: Ctx,
                            existing: tuple[int, int, int, int]) -> str | None:
    """None when no AVERAGE_POOL window reaches a padded row/column (then the divisor is equal)."""
    _, h, w, _ = ctx.g.type(n.inputs[0]).shape  # the padded input
    _, oh, ow, _ = ctx.g.type(n.outputs[0]).shape
    a = n.attrs
    for (before, after), size, k, s, out, lead, axis in (
            (pads[1], h, int(a["filter_height"]), int(a["stride_h"]), oh, existing[0], "row"),
            (pads[2], w, int(a["filter_width"]), int(a["stride_w"]), ow, existing[2], "column")):
        for o in range(out):
            start = o * s - lead
            lo, hi = max(start, 0), min(start + k, size)
            if lo < before or hi > size - after:
                return (f"AVERAGE_POOL_2D divides by the number of in-image taps (TFLite Micro): "
                        f"output {axis} {o} averages over padded {axis}s, so folding the padding "
                        f"into the pool would change its divisor")
    return None


def _pad_check(ctx: Ctx, m: Match) -> str | None:
    n, pad = m["node"], m["pad"]
    g = ctx.g
    if n.op not in EXPLICIT_PADDING_OPS:
        return f"{n.op} has no explicit padding"
    reason = single_use_internal(ctx, pad.outputs[0])
    if reason:
        return reason
    src, mid = g.type(pad.inputs[0]), g.type(pad.outputs[0])
    if len(src.shape) != 4:
        return f"PAD of a rank-{len(src.shape)} tensor"
    pads = _pad_amounts(ctx, pad)
    if pads[0] != (0, 0) or pads[3] != (0, 0):
        return f"pads batch or channels ({pads[0]}, {pads[3]}), not only height and width"
    if not same_quant(src, mid) or src.q is None:
        return (f"PAD input {src} and output {mid} differ; the fused op would read the input's "
                f"parameters")
    value = _pad_value(ctx, pad)
    lo, _ = dtype_limits(mid)
    zp = int(mid.q.zero_point[0])
    existing = _existing_padding(g, n)
    if n.op in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        if value != zp:
            return (f"pad value {value} is not the input zero point {zp}: the conv skips "
                    f"out-of-image taps, which equals padding with {zp} only")
    elif n.op == "MAX_POOL_2D":
        if value != lo:
            return (f"pad value {value} is not the type minimum {lo}: a padded tap could win the "
                    f"max")
    else:
        reason = _avg_pool_windows_avoid(pads, n, ctx, existing)
        if reason:
            return reason
    explicit = (existing[0] + pads[1][0], existing[1] + pads[1][1],
                existing[2] + pads[2][0], existing[3] + pads[2][1])
    fused = _with_attrs(n, [pad.inputs[0], *n.inputs[1:]], n.outputs,
                        explicit_padding=list(explicit), padding=1)
    reason = _constraints_reason(g, fused)
    if reason:
        return reason
    shape = get_op(n.op).infer(g, fused)[0].shape
    if tuple(shape) != tuple(g.type(n.outputs[0]).shape):
        return f"explicit padding {explicit} would give output {list(shape)}"
    m.info.update(fused=fused, explicit=explicit, value=value)
    return None


def _pad_rewrite(ctx: Ctx, m: Match) -> Rewrite:
    n, pad = m["node"], m["pad"]
    fused = m.info["fused"]
    fused.name = fused_name(pad, n)
    t, b, l, r = m.info["explicit"]
    why = {"CONV_2D": "pad value == input zero point", "DEPTHWISE_CONV_2D":
           "pad value == input zero point", "MAX_POOL_2D": "pad value == type minimum",
           "AVERAGE_POOL_2D": "no window reaches the padding"}[n.op]
    return Rewrite(remove=[pad, n], add=[fused],
                   why=f"{pad.name} ({pad.op}) folded into {n.name} ({n.op}) as explicit padding "
                       f"top={t} bottom={b} left={l} right={r}: {why} ({m.info['value']})")


FUSE_PAD = Rule("fuse_pad", EXPLICIT_PADDING_OPS, _pad_pattern, _pad_check, _pad_rewrite)

RULES = [FUSE_ACTIVATION, FUSE_PAD]
