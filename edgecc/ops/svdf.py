"""SVDF, TFLite Micro's integer path (EvalIntegerSvdfReference): int8 input, weights_feature and
output, int32 bias, weights_time and activation state both int8 or both int16.

TFLM, per invoke, with F filters (= units * rank), memory M and state S[b, f, 0..M-1]:
    shift S left by one element (the oldest column drops out)
    S[b, f, M-1] = (T)(state_zp + clamp_T(mbqm(sum_c wf[f, c] * (x[b, c] - in_zp), m1, s1)))
    y[b, u] = clamp8(out_zp + mbqm(bias[u] + sum_{r<rank, m<M} wt[f, m] * (S[b, f, m] - state_zp),
                                   m2, s2))       with f = u * rank + r
(the store into T wraps when state_zp + value leaves T's range, as in TFLM). The fused activation
is not applied on this path in TFLM, so it is not applied here either.

State: the activation state is a TFLite variable tensor; TFLM resets it once (int8 to its zero
point, int16 to 0) and keeps it across invokes, and so does edgecc: it lives in the arena's state
region (edgecc/plan/state.py), `name_reset()` writes the reset value, and every run shifts it and
writes the newest column in place (OpDef.updates: STATE).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, const, dtype_limits, in_type, out_type, register
from edgecc.numerics.fixed_point import mbqm, quantize_multiplier

INPUT, W_FEATURE, W_TIME, BIAS, STATE = range(5)


def _inp(n: Node, i: int) -> str | None:
    return n.inputs[i] if i < len(n.inputs) else None


def five_inputs(g: Graph, n: Node) -> bool:
    """the op must have five inputs (input, weights_feature, weights_time, bias, state)"""
    return len(n.inputs) == 5 and all(_inp(n, i) is not None for i in (0, 1, 2, 4))


def int8_input_output(g: Graph, n: Node) -> bool:
    """input and output must be int8 of rank 2 (float SVDF is not supported)"""
    x, y = in_type(g, n), out_type(g, n)
    return x.dtype == DType.INT8 and y.dtype == DType.INT8 and len(x.shape) == 2 \
        and x.q is not None and y.q is not None


def int8_constant_feature_weights(g: Graph, n: Node) -> bool:
    """weights_feature must be a constant int8 [filters, input] tensor, per tensor"""
    w = g.value(n.inputs[W_FEATURE])
    return (w.is_const and w.type.dtype == DType.INT8 and len(w.type.shape) == 2
            and w.type.q is not None and not w.type.q.per_channel)


def matching_time_weights_and_state(g: Graph, n: Node) -> bool:
    """weights_time and the activation state must both be int8 or both int16, quantized per
    tensor, and the state a variable tensor"""
    wt, st = g.value(n.inputs[W_TIME]), g.value(n.inputs[STATE])
    return (wt.is_const and st.variable and wt.type.dtype == st.type.dtype
            and wt.type.dtype in (DType.INT8, DType.INT16) and len(wt.type.shape) == 2
            and wt.type.q is not None and st.type.q is not None
            and not wt.type.q.per_channel)


def bias_int32_const(g: Graph, n: Node) -> bool:
    """bias, when present, must be a constant int32 tensor"""
    b = _inp(n, BIAS)
    return b is None or (g.value(b).is_const and g.type(b).dtype == DType.INT32)


def consistent_shapes(g: Graph, n: Node) -> bool:
    """rank must divide the filter count; weights, bias and state sized to match the input"""
    batch, inp, filters, units, memory, rank = _dims(g, n)
    ok = rank >= 1 and filters % rank == 0 and g.type(n.inputs[W_FEATURE]).shape[1] == inp
    ok = ok and g.type(n.inputs[W_TIME]).shape[0] == filters
    ok = ok and g.type(n.inputs[STATE]).numel == batch * filters * memory
    ok = ok and out_type(g, n).shape == (batch, units)
    b = _inp(n, BIAS)
    return ok and (b is None or g.type(b).numel == units)


def _dims(g: Graph, n: Node) -> tuple[int, int, int, int, int, int]:
    """(batch, input, filters, units, memory, rank)."""
    batch, inp = in_type(g, n).shape
    filters = g.type(n.inputs[W_FEATURE]).shape[0]
    memory = g.type(n.inputs[W_TIME]).shape[1]
    rank = int(n.attrs.get("rank", 1))
    return batch, inp, filters, filters // max(rank, 1), memory, rank


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    batch, _, _, units, _, _ = _dims(g, n)
    return [TensorType((batch, units), DType.INT8)]


def multipliers(g: Graph, n: Node) -> tuple[tuple[int, int], tuple[int, int]]:
    """PrepareSvdf: both effective scales are float32 expressions (left to right) cast to double."""
    f32 = np.float32
    x_s, wf_s = f32(in_type(g, n).q.scale[0]), f32(g.type(n.inputs[W_FEATURE]).q.scale[0])
    st_s, wt_s = f32(g.type(n.inputs[STATE]).q.scale[0]), f32(g.type(n.inputs[W_TIME]).q.scale[0])
    out_s = f32(out_type(g, n).q.scale[0])
    with np.errstate(over="ignore", under="ignore"):  # inf is refused by quantize_multiplier
        eff1 = float(f32(f32(x_s * wf_s) / st_s))
        eff2 = float(f32(f32(st_s * wt_s) / out_s))
    return quantize_multiplier(eff1), quantize_multiplier(eff2)


def _wrap(x: np.ndarray, dtype: DType) -> np.ndarray:
    """C's conversion of an int32 into the (narrower) state type: two's complement wrap."""
    return np.asarray(x, dtype=np.int64).astype(dtype.np).astype(np.int64)


def _bias(g: Graph, n: Node, units: int) -> np.ndarray:
    b = const(g, n, BIAS)
    return np.zeros(units, np.int64) if b is None else b.astype(np.int64).ravel()


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    batch, inp, filters, units, memory, rank = _dims(g, n)
    st = g.type(n.inputs[STATE])
    st_zp = st.q.zero_point[0]
    lo, hi = dtype_limits(st)
    (m1, s1), (m2, s2) = multipliers(g, n)
    # TFLM shifts the whole [B * F * M] buffer left by one element; the slot that moves across a
    # filter (or batch) boundary is the newest column, which the feature matmul overwrites.
    flat = ins[STATE].astype(np.int64).ravel().copy()
    flat[:-1] = flat[1:]
    state = flat.reshape(batch, filters, memory)
    x = ins[INPUT].astype(np.int64).reshape(batch, inp) - in_type(g, n).q.zero_point[0]
    wf = const(g, n, W_FEATURE).astype(np.int64)
    act = np.clip(mbqm(x @ wf.T, m1, s1), lo, hi)
    state[:, :, memory - 1] = _wrap(st_zp + act, st.dtype)
    wt = const(g, n, W_TIME).astype(np.int64)
    per_filter = np.einsum("bfm,fm->bf", state - st_zp, wt)
    acc = _bias(g, n, units)[None, :] + per_filter.reshape(batch, units, rank).sum(axis=2)
    y = np.clip(mbqm(acc, m2, s2) + out_type(g, n).q.zero_point[0], -128, 127)
    return [y.astype(np.int8).reshape(out_type(g, n).shape), flat.astype(st.dtype.np)]


def lower(g: Graph, n: Node, target) -> Kernel:
    batch, inp, filters, units, memory, rank = _dims(g, n)
    st = g.type(n.inputs[STATE])
    lo, hi = dtype_limits(st)
    (m1, s1), (m2, s2) = multipliers(g, n)
    wf = const(g, n, W_FEATURE).astype(np.int64)
    wt = const(g, n, W_TIME).astype(np.int64)
    st_zp = st.q.zero_point[0]
    in_zp = in_type(g, n).q.zero_point[0]
    shift = batch * filters * memory - 1  # elements memmove moves down by one
    return Kernel("svdf.c.j2",
                  params=dict(batch=batch, depth=inp, units=units, rank=rank, memory=memory,
                              m1=m1, s1=s1, m2=m2, s2=s2, state_zp=st_zp, state_min=lo,
                              state_max=hi, state_ctype=st.dtype.c, filters=filters,
                              newest=memory - 1, shift=shift,
                              out_zp=out_type(g, n).q.zero_point[0]),
                  consts=dict(wf=wf.astype(np.int8),
                              wf_bias=(-in_zp * wf.sum(axis=1)).astype(np.int32),
                              wt=wt.astype(st.dtype.np),
                              unit_bias=_bias(g, n, units).astype(np.int32)),
                  # the template's shift of the state: none when it is one element
                  derived=dict(shifts=[shift] if shift else []))


OP = register(OpDef(
    "SVDF", infer, reference, lower,
    [five_inputs, int8_input_output, int8_constant_feature_weights,
     matching_time_weights_and_state, bias_int32_const, consistent_shapes],
    dtypes="int8 x int8 (int8/int16 time weights and state) -> int8", updates=(STATE,)))
