"""UNIDIRECTIONAL_SEQUENCE_LSTM, TFLite Micro's integer 8x8->16 path (int8 activations and
weights, int32 biases, int16 cell state, int16 gates).

Every time step, for each gate (input i, forget f, cell g, output o):
    pre  = sat16(FC(x_t) + FC(h_{t-1}))   two int8 FCs requantized into Q3.12 (int16)
    gate = sigmoid16(pre)   (tanh16 for the cell gate)                         -> Q0.15
and then
    c_t = sat16(Mul(f, c_{t-1}) + Mul(i, g)), clipped to +-quantized cell_clip when cell_clip > 0
    h_t = Mul(tanh16(c_t), o)  requantized to the hidden state's int8 scale and zero point
    y_t = h_t
with Mul = MulElementwise (product, MultiplyByQuantizedMultiplier, + zp, clamp). Only the input
FC adds the gate bias. Batch-major input [B, T, I] runs each batch's sequence in turn, time-major
[T, B, I] runs all batches per step, as TFLM's EvalLstm does.

State: the hidden and cell states are TFLite variable tensors. TFLM resets them once (int8 to its
zero point, others to 0) and keeps them across invokes; so does edgecc: they live in the arena's
state region (edgecc/plan/state.py), `name_reset()` writes the reset values, and every sequence
starts from the state the previous run left: h_{t-1} at t = 0 is the stored hidden state, later
the previous step's output row; the cell state is updated in place; after the last step the final
hidden rows are stored back (OpDef.updates: HIDDEN, CELL).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, const, in_type, out_type, register
from edgecc.ops import _lstm_math as lm
from edgecc.numerics.fixed_point import mbqm

GATES = ("i", "f", "g", "o")  # input, forget, cell, output: TFLite's order of inputs 1-4, 5-8, 12-15
X_WEIGHTS = dict(zip(GATES, (1, 2, 3, 4)))
H_WEIGHTS = dict(zip(GATES, (5, 6, 7, 8)))
BIASES = dict(zip(GATES, (12, 13, 14, 15)))
HIDDEN, CELL = 18, 19
UNSUPPORTED_VARIANTS = (9, 10, 11, 16, 17, 20, 21, 22, 23)  # peephole, projection, layer norm
TANH = 4


def _inp(n: Node, i: int) -> str | None:
    return n.inputs[i] if i < len(n.inputs) else None


def twenty_four_inputs(g: Graph, n: Node) -> bool:
    """the op must have the 24 inputs of the current TFLite schema"""
    return len(n.inputs) == 24


def int8_sequence(g: Graph, n: Node) -> bool:
    """input and output must be int8 of rank 3 (only the 8x8->16 integer LSTM is supported)"""
    x, y = in_type(g, n), out_type(g, n)
    return x.dtype == DType.INT8 and y.dtype == DType.INT8 and len(x.shape) == 3 \
        and x.q is not None and y.q is not None


def standard_lstm(g: Graph, n: Node) -> bool:
    """peephole, projection and layer-norm LSTM variants are not supported (TFLM neither)"""
    return all(_inp(n, i) is None for i in UNSUPPORTED_VARIANTS)


def int8_constant_weights(g: Graph, n: Node) -> bool:
    """all eight gate weight matrices must be constant int8, per tensor, zero point 0 (no CIFG)"""
    for i in (*X_WEIGHTS.values(), *H_WEIGHTS.values()):
        v = _inp(n, i)
        if v is None:
            return False
        w = g.value(v)
        if not (w.is_const and w.type.dtype == DType.INT8 and len(w.type.shape) == 2
                and w.type.q is not None and not w.type.q.per_channel
                and w.type.q.zero_point[0] == 0):
            return False
    return True


def int32_constant_biases(g: Graph, n: Node) -> bool:
    """all four gate biases must be constant int32 tensors"""
    for i in BIASES.values():
        v = _inp(n, i)
        if v is None or not g.value(v).is_const or g.type(v).dtype != DType.INT32:
            return False
    return True


def variable_states(g: Graph, n: Node) -> bool:
    """hidden state must be an int8 and cell state an int16 variable tensor"""
    h, c = _inp(n, HIDDEN), _inp(n, CELL)
    if h is None or c is None:
        return False
    hv, cv = g.value(h), g.value(c)
    return (hv.variable and cv.variable and hv.type.dtype == DType.INT8
            and cv.type.dtype == DType.INT16 and hv.type.q is not None and cv.type.q is not None)


def power_of_two_cell_scale(g: Graph, n: Node) -> bool:
    """the cell state's scale must be a power of two no larger than 1"""
    power, exact = lm.checked_log2(g.type(n.inputs[CELL]).q.scale[0])
    return exact and power <= 0  # larger scales overflow the int16 tanh's rescaling


def tanh_cell_activation(g: Graph, n: Node) -> bool:
    """the cell gate activation must be TANH"""
    return int(n.attrs.get("fused_activation_function", TANH)) == TANH


def consistent_shapes(g: Graph, n: Node) -> bool:
    """weights must be [units, input] and [units, units], biases and states sized to match"""
    _, _, inp, units = _dims(g, n)
    ok = all(g.type(n.inputs[i]).shape == (units, inp) for i in X_WEIGHTS.values())
    ok = ok and all(g.type(n.inputs[i]).shape == (units, units) for i in H_WEIGHTS.values())
    ok = ok and all(g.type(n.inputs[i]).numel == units for i in BIASES.values())
    batch = _dims(g, n)[0]
    return ok and all(g.type(n.inputs[i]).numel == batch * units for i in (HIDDEN, CELL))


def _dims(g: Graph, n: Node) -> tuple[int, int, int, int]:
    """(batch, steps, input depth, units)."""
    a, b, inp = in_type(g, n).shape
    units = g.type(n.inputs[H_WEIGHTS["f"]]).shape[1]
    return (b, a, inp, units) if n.attrs.get("time_major") else (a, b, inp, units)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    x = in_type(g, n)
    units = g.type(n.inputs[H_WEIGHTS["f"]]).shape[1]
    return [TensorType((*x.shape[:2], units), DType.INT8)]


@dataclass
class LstmConsts:
    """Everything TFLM's Prepare computes, for the reference and the C kernel alike."""

    x_zp: int
    h_zp: int
    x_mult: dict[str, tuple[int, int]]
    h_mult: dict[str, tuple[int, int]]
    forget_mul: tuple[int, int]
    input_mul: tuple[int, int]
    hidden_mul: tuple[int, int]
    cell_tanh: tuple[int, int]
    cell_clip: int | None  # None: no clipping (cell_clip <= 0)


def lstm_consts(g: Graph, n: Node) -> LstmConsts:
    xq, hq, cq = in_type(g, n).q, g.type(n.inputs[HIDDEN]).q, g.type(n.inputs[CELL]).q
    x_mult = {k: lm.gate_fc_multiplier(xq.scale[0], g.type(n.inputs[i]).q.scale[0])
              for k, i in X_WEIGHTS.items()}
    h_mult = {k: lm.gate_fc_multiplier(hq.scale[0], g.type(n.inputs[i]).q.scale[0])
              for k, i in H_WEIGHTS.items()}
    c_s = cq.scale[0]
    power, _ = lm.checked_log2(c_s)
    clip = float(np.float32(n.attrs.get("cell_clip", 0.0)))
    return LstmConsts(
        x_zp=xq.zero_point[0], h_zp=hq.zero_point[0], x_mult=x_mult, h_mult=h_mult,
        forget_mul=lm.inter_gate_multiplier(lm.GATE_OUTPUT_SCALE, c_s, c_s),
        input_mul=lm.inter_gate_multiplier(lm.GATE_OUTPUT_SCALE, lm.GATE_OUTPUT_SCALE, c_s),
        hidden_mul=lm.inter_gate_multiplier(lm.GATE_OUTPUT_SCALE, lm.GATE_OUTPUT_SCALE,
                                            hq.scale[0]),
        cell_tanh=lm.tanh_params(power),
        cell_clip=lm.quantized_cell_clip(clip, c_s) if clip > 0 else None)


def _step(k: LstmConsts, w: dict, x: np.ndarray, h: np.ndarray, c: np.ndarray):
    """One time step for a [n, I] block of inputs; returns the new (h, c)."""
    def pre(gate: str) -> np.ndarray:
        wx, wh, bias = w[gate]
        fx = lm.sat16(mbqm((x - k.x_zp) @ wx.T + bias, *k.x_mult[gate]))
        fh = lm.sat16(mbqm((h - k.h_zp) @ wh.T, *k.h_mult[gate]))
        return lm.sat16(fx + fh)

    f = lm.sigmoid16(pre("f"))
    i = lm.sigmoid16(pre("i"))
    gg = lm.tanh16(pre("g"), *lm.tanh_params(-12))  # Q3.12 input: no rescaling
    c = lm.mul_elementwise(f, c, *k.forget_mul, 0, lm.INT16_MIN, lm.INT16_MAX)
    c = lm.sat16(c + lm.mul_elementwise(i, gg, *k.input_mul, 0, lm.INT16_MIN, lm.INT16_MAX))
    if k.cell_clip is not None:
        c = np.clip(c, -k.cell_clip, k.cell_clip)
    o = lm.sigmoid16(pre("o"))
    h = lm.mul_elementwise(lm.tanh16(c, *k.cell_tanh), o, *k.hidden_mul, k.h_zp, -128, 127)
    return h, c


def _weights(g: Graph, n: Node) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    return {k: (const(g, n, X_WEIGHTS[k]).astype(np.int64), const(g, n, H_WEIGHTS[k]).astype(np.int64),
                const(g, n, BIASES[k]).astype(np.int64).ravel()) for k in GATES}


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    batch, steps, _, units = _dims(g, n)
    k = lstm_consts(g, n)
    w = _weights(g, n)
    x = ins[0].astype(np.int64)
    h = ins[HIDDEN].astype(np.int64).reshape(batch, units)
    c = ins[CELL].astype(np.int64).reshape(batch, units)
    out = np.zeros((*x.shape[:2], units), np.int64)
    if n.attrs.get("time_major"):
        for t in range(steps):
            h, c = _step(k, w, x[t], h, c)
            out[t] = h
    else:
        for b in range(batch):
            hb, cb = h[b:b + 1], c[b:b + 1]
            for t in range(steps):
                hb, cb = _step(k, w, x[b, t:t + 1], hb, cb)
                out[b, t] = hb[0]
            h[b], c[b] = hb[0], cb[0]
    return [out.astype(np.int8), h.astype(np.int8), c.astype(np.int16)]


def lower(g: Graph, n: Node, target) -> Kernel:
    batch, steps, inp, units = _dims(g, n)
    k = lstm_consts(g, n)
    w = _weights(g, n)
    time_major = bool(n.attrs.get("time_major"))
    # Loop nest: outer sequences x steps x rows computed per step; state row = b * inner + r.
    outer, inner = (1, batch) if time_major else (batch, 1)
    x_row, y_row = inp, units
    if time_major:
        x_st, y_st, x_sb, y_sb = batch * inp, batch * units, 0, 0
    else:
        x_st, y_st, x_sb, y_sb = inp, units, steps * inp, steps * units
    params = dict(outer=outer, inner=inner, steps=steps, depth=inp, units=units, last_t=steps - 1,
                  x_sb=x_sb, x_st=x_st, x_row=x_row, y_sb=y_sb, y_st=y_st, y_row=y_row,
                  clip_on=k.cell_clip is not None,
                  clip=k.cell_clip or 0,
                  fm_mult=k.forget_mul[0], fm_shift=k.forget_mul[1],
                  im_mult=k.input_mul[0], im_shift=k.input_mul[1],
                  hm_mult=k.hidden_mul[0], hm_shift=k.hidden_mul[1], h_zp=k.h_zp,
                  g_tanh_mult=lm.tanh_params(-12)[0], g_tanh_shift=lm.tanh_params(-12)[1],
                  c_tanh_mult=k.cell_tanh[0], c_tanh_shift=k.cell_tanh[1])
    # Weights interleaved by gate, [units][depth][4 gates], so one pass over x (or h) feeds all
    # four gates of a unit; biases [units][4]. The zero points are folded into the biases:
    # sum((x - zp) * w) = sum(x * w) - zp * sum(w).
    wx = np.stack([w[gt][0] for gt in GATES], axis=-1)  # [units, depth, 4]
    wh = np.stack([w[gt][1] for gt in GATES], axis=-1)
    bx = np.stack([w[gt][2] - k.x_zp * w[gt][0].sum(axis=1) for gt in GATES], axis=-1)
    bh = np.stack([-k.h_zp * w[gt][1].sum(axis=1) for gt in GATES], axis=-1)
    consts = {"sigmoid_table": lm.SIGMOID_TABLE.astype(np.uint16),
              "wx": wx.astype(np.int8), "wh": wh.astype(np.int8),
              "bx": bx.astype(np.int32), "bh": bh.astype(np.int32)}
    params["gates"] = [dict(name=gt, index=j, x_mult=k.x_mult[gt][0], x_shift=k.x_mult[gt][1],
                            h_mult=k.h_mult[gt][0], h_shift=k.h_mult[gt][1])
                       for j, gt in enumerate(GATES)]
    # one unit's interleaved weights (4 gates x depth or units); the cell clip, when there is one
    derived = dict(wx_unit=4 * inp, wh_unit=4 * units,
                   clips=[params["clip"]] if params["clip_on"] else [])
    return Kernel("unidirectional_sequence_lstm.c.j2", params=params, consts=consts, derived=derived)


OP = register(OpDef(
    "UNIDIRECTIONAL_SEQUENCE_LSTM", infer, reference, lower,
    [twenty_four_inputs, int8_sequence, standard_lstm, int8_constant_weights,
     int32_constant_biases, variable_states, power_of_two_cell_scale, tanh_cell_activation,
     consistent_shapes],
    dtypes="int8 x int8 -> int8 (int32 bias, int16 cell state)", updates=(HIDDEN, CELL)))
