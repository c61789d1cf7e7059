"""SignalFilterBankSpectralSubtraction (TFLite Micro's signal library): subtracts a running noise
estimate from each filter bank channel (stateful).

Input x uint32 [num_channels]; outputs y uint32 and the noise estimate uint32, both
[num_channels]. State: the noise estimate n (uint32, zeros after a reset). Per channel i (even
channels take smoothing / one_minus_smoothing, odd ones the alternate pair): s = x << smoothing_bits
(uint32), n = (s * smoothing + n * one_minus_smoothing) >> spectral_subtraction_bits (uint64
products, kept as uint32); e = min(n, s), and n = e too when `clamping`; floor = (x *
min_signal_remaining) >> spectral_subtraction_bits; y = max((s - e) >> smoothing_bits, floor).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, in_type, register
from edgecc.ops._signal import flag, opt, signal_op, types_are

STATE = 1
U32 = DType.UINT32
KEYS = ("smoothing", "one_minus_smoothing", "alternate_smoothing",
        "alternate_one_minus_smoothing", "min_signal_remaining")


def options_in_range(g: Graph, n: Node) -> bool:
    """input and outputs must be 1-D num_channels long, smoothing_bits and spectral_subtraction_bits 0..31, the smoothing constants 0..2^32-1"""
    ch = opt(n, "num_channels")
    return (all(g.type(v).shape == (ch,) for v in (n.inputs[0], *n.outputs))
            and all(0 <= opt(n, k) <= 31 for k in ("smoothing_bits", "spectral_subtraction_bits"))
            and all(0 <= opt(n, k) <= 0xFFFFFFFF for k in KEYS))


def state(attrs: dict, ins: list[TensorType]) -> tuple[tuple[int, ...], np.dtype] | None:
    ch = attrs.get("num_channels")
    return ((int(ch),), np.dtype(np.uint32)) if isinstance(ch, int) and ch > 0 else None


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    shape = (opt(n, "num_channels"),)
    return [TensorType(shape, U32), TensorType(shape, U32)]


def _pairs(n: Node, ch: int) -> tuple[np.ndarray, np.ndarray]:
    even = np.arange(ch) % 2 == 0
    sm = np.where(even, opt(n, "smoothing"), opt(n, "alternate_smoothing")).astype(np.uint64)
    om = np.where(even, opt(n, "one_minus_smoothing"),
                  opt(n, "alternate_one_minus_smoothing")).astype(np.uint64)
    return sm, om


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    ch, sb, bits = opt(n, "num_channels"), opt(n, "smoothing_bits"), opt(n, "spectral_subtraction_bits")
    x = ins[0].astype(np.uint64)
    m32 = np.uint64(0xFFFFFFFF)
    sm, om = _pairs(n, ch)
    with np.errstate(over="ignore"):
        s = (x << np.uint64(sb)) & m32
        est = ((s * sm + ins[STATE].astype(np.uint64) * om) >> np.uint64(bits)) & m32
        e = np.minimum(est, s)
        if flag(n, "clamping"):
            est = e
        floor = ((x * np.uint64(opt(n, "min_signal_remaining"))) >> np.uint64(bits)) & m32
        y = np.maximum((s - e) >> np.uint64(sb), floor)
    est = est.astype(np.uint32)
    return [y.astype(np.uint32), est.copy(), est]


def lower(g: Graph, n: Node, target) -> Kernel:
    ch = opt(n, "num_channels")
    sm, om = _pairs(n, ch)
    return Kernel("signal_filter_bank_spectral_subtraction.c.j2",
                  params=dict(channels=ch, sb=opt(n, "smoothing_bits"),
                              bits=opt(n, "spectral_subtraction_bits"),
                              min_remaining=opt(n, "min_signal_remaining"),
                              clamp=int(flag(n, "clamping")), bytes=4 * ch),
                  consts=dict(sm=sm.astype(np.uint32), om=om.astype(np.uint32)))


OP = register(signal_op("SignalFilterBankSpectralSubtraction", infer, reference, lower,
                        [types_are((U32,), (U32, U32)), options_in_range],
                        dtypes="uint32 -> uint32, uint32 noise estimate", state=state,
                        updates=(STATE,)))
