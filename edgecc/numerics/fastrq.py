"""The fast requantization shared by the SIMD kernels (Cortex-M DSP, Helium MVE, x86 AVX2/AVX-512).

Owns: the accumulator range analysis of a layer, the "fast requantization" constants that let
the kernels requantize with a handful of instructions while staying bit-exact with TFLite Micro,
a numpy model of exactly what that C computes (for tests), and `conv_requant`, the first step of
every conv-like SIMD lowering. Weight layouts are in edgecc/lower/layout.py; the kernel tables
that use both are edgecc/lower/{dsp,mve,x86,neon}.py.

Fast requantization. TFLite's MultiplyByQuantizedMultiplier(acc, m, shift) is
    r = SRDHM(acc << left, m);  out = RDBPOT(r, e) + zp;  clamp        (left/e = +/- shift)
The kernels compute instead, with a = acc << (left + 1) and N = 2^(e-1) + zp * 2^e:
    t = SMMLAR(a, m, N) + (a >> 31);  out = clamp(t >> e)
SMMLAR(a, m, N) = N + floor((a*m + 2^31) / 2^32) = N + floor(((a/2)*m + 2^30) / 2^31), which is
SRDHM for every m < 2^31 (TFLite's round-half-away nudge then truncation equals that floor).
floor((r + 2^(e-1) - [r < 0]) / 2^e) is RDBPOT for e >= 1, and [a < 0] can stand in for [r < 0]
because r = 0 is the only value where they differ and it rounds to 0 either way; adding zp * 2^e
before the floor adds exactly zp after it. All of that holds when nothing overflows int32, which
`fast_requant` proves per channel from the exact accumulator range (bias + the extreme of each
tap's w * (x - zp) over x in [-128, 127]). A channel whose accumulator is a constant (all-zero
weights, found in real models with absurd multipliers) gets m = 0 and N chosen so the kernel
prints the constant. When the proof fails for any other channel, the layer keeps the portable
kernel.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgecc.numerics.fixed_point import INT32_MAX, INT32_MIN, fits_int32, mbqm, wrap32


# ------------------------------------------------------------------------- accumulator ranges

def acc_range(w_rows: np.ndarray, bias: np.ndarray, in_zp: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact [lo, hi] of acc = bias + sum_k w[k] * (x[k] - zp) over all int8 inputs, per row.

    A padded tap reads x = zp (contributes 0), which lies inside every tap's range, so the range
    also covers the border pixels of a padded convolution.
    """
    w = np.asarray(w_rows, dtype=np.int64)
    a, b = -128 - in_zp, 127 - in_zp
    lo = np.minimum(w * a, w * b).sum(axis=1) + bias
    hi = np.maximum(w * a, w * b).sum(axis=1) + bias
    return lo.astype(np.int64), hi.astype(np.int64)


# ----------------------------------------------------------------------- fast requantization

@dataclass
class FastRequant:
    """Per-channel constants of the fast requantization (see the module docstring)."""

    m: np.ndarray   # int32 multiplier (0 for constant channels)
    n: np.ndarray   # int32 N = 2^(e-1) + zp * 2^e (or the constant channel's stand-in)
    e: np.ndarray   # right shift >= 1
    L: int          # left shift applied to the accumulator (TFLite's left shift + 1)
    lo: int         # clamp range of the output
    hi: int
    # N for kernels that take the sign term from acc itself rather than from acc << L (Helium:
    # VQRDMULH needs no doubling). Only constant channels differ: their huge biases can change
    # sign when doubled in int32.
    n_raw: np.ndarray | None = None

    @property
    def full_range(self) -> bool:
        """The clamp is a plain int8 saturation (SSAT #8)."""
        return self.lo == -128 and self.hi == 127

    @property
    def uniform(self) -> bool:
        """One (m, n, e) for every channel: per-tensor kernels may take them as literals."""
        return bool((self.m == self.m[0]).all() and (self.n == self.n[0]).all()
                    and (self.e == self.e[0]).all())

    def qmn(self) -> np.ndarray:
        """(m, n) interleaved as int32 pairs: one LDRD loads a channel's pair."""
        return np.stack([self.m, self.n], axis=1).ravel().astype(np.int32)


def _srdhm_floor(a: np.ndarray, m: np.ndarray) -> np.ndarray:
    return (np.asarray(a, np.int64) * np.asarray(m, np.int64) + (1 << 30)) >> 31


def fast_requant(lo: np.ndarray, hi: np.ndarray, mult: np.ndarray, shift: np.ndarray,
                 out_zp: int, act_lo: int, act_hi: int) -> tuple[FastRequant | None, str]:
    """Constants for the fast requantization of channels whose accumulators lie in [lo, hi], or
    (None, why not)."""
    lo, hi = np.asarray(lo, np.int64), np.asarray(hi, np.int64)
    mult, shift = np.asarray(mult, np.int64), np.asarray(shift, np.int64)
    oc = len(lo)
    const = lo == hi
    live = ~const
    if not live.any():
        left = 0
    else:
        lefts = np.maximum(shift[live], 0)
        if not (lefts == lefts[0]).all():
            return None, "per-channel left shifts differ"
        left = int(lefts[0])
    L = left + 1  # always 1 when a channel is live: its right shift e >= 1 means left == 0
    m_out = np.zeros(oc, np.int64)
    n_out = np.zeros(oc, np.int64)
    e_out = np.ones(oc, np.int64)
    n_raw = np.zeros(oc, np.int64)
    for c in range(oc):
        if const[c]:
            # The kernel computes t = N + (a >> 31) and prints t >> 1: pick N for the constant.
            o = int(np.clip(mbqm(np.array([lo[c]]), mult[c], shift[c])[0] + out_zp, act_lo, act_hi))
            s = -1 if wrap32(lo[c] << L) < 0 else 0
            n_out[c] = 2 * o - s
            n_raw[c] = 2 * o - (-1 if lo[c] < 0 else 0)
            continue
        e = int(max(-shift[c], 0))
        m = int(mult[c])
        if e < 1:
            return None, f"channel {c}: no right shift (scale >= 0.5)"
        if not 0 <= m <= INT32_MAX:
            return None, f"channel {c}: multiplier out of range"
        amax = max(abs(int(lo[c])), abs(int(hi[c])))
        if amax << L > INT32_MAX:
            return None, f"channel {c}: accumulator range {amax} too wide for the shifted product"
        r_lo = int(_srdhm_floor(int(lo[c]) << left, m))
        r_hi = int(_srdhm_floor(int(hi[c]) << left, m))
        n = (1 << (e - 1)) + out_zp * (1 << e)
        if r_lo + n - 1 < INT32_MIN or r_hi + n > INT32_MAX or not INT32_MIN <= n <= INT32_MAX:
            return None, f"channel {c}: rounding constant overflows"
        m_out[c], n_out[c], e_out[c] = m, n, e
        n_raw[c] = n
    if not fits_int32(n_out) or not fits_int32(n_raw):
        return None, "constant channel out of range"
    return FastRequant(m_out.astype(np.int32), n_out.astype(np.int32), e_out.astype(np.int8),
                       L, int(act_lo), int(act_hi), n_raw.astype(np.int32)), ""


def emulate_fast(acc: np.ndarray, fr: FastRequant, channel_axis: int = -1,
                 helium: bool = False) -> np.ndarray:
    """What the C fast requantization computes for int32 accumulators `acc` (numpy model):
    the DSP form t = SMMLAR(acc << L, m, N) + ((acc << L) >> 31), or with helium the MVE form
    t = VQRDMULH(acc, m) + N_raw + (acc >> 31); then clamp(t >> e)."""
    acc = np.asarray(acc, np.int64)
    shape = [1] * acc.ndim
    shape[channel_axis] = -1
    m = fr.m.astype(np.int64).reshape(shape)
    e = fr.e.astype(np.int64).reshape(shape)
    if helium:
        n = fr.n_raw.astype(np.int64).reshape(shape)
        prod = acc * m
        sat = (acc == INT32_MIN) & (m == INT32_MIN)
        q = np.where(sat, INT32_MAX, (2 * prod + (1 << 31)) >> 32)  # VQRDMULH
        t = wrap32(wrap32(q + n) + (acc >> 31))
    else:
        n = fr.n.astype(np.int64).reshape(shape)
        a = wrap32(acc << fr.L)
        t = wrap32(n + ((a * m + (1 << 31)) >> 32))
        t = wrap32(t + (a >> 31))
    return np.clip(t >> e, fr.lo, fr.hi)


@dataclass
class ConvRequant:
    """What every conv-like SIMD lowering needs first: the bias with the input zero point
    folded in, and the fast requantization constants (or why there are none)."""

    folded: np.ndarray
    fr: FastRequant | None
    why: str


def conv_requant(w_rows: np.ndarray, bias: np.ndarray, in_zp: int, mult: np.ndarray,
                 shift: np.ndarray, out_zp: int, act_lo: int, act_hi: int) -> ConvRequant:
    """w_rows: [out channels, taps] int; bias: [out channels] int."""
    w_rows = np.asarray(w_rows, np.int64)
    bias = np.asarray(bias, np.int64)
    folded = bias - in_zp * w_rows.sum(axis=1)
    if folded.size and (folded.min() < INT32_MIN or folded.max() > INT32_MAX):
        return ConvRequant(folded, None, "bias with the input zero point folded in overflows int32")
    lo, hi = acc_range(w_rows, bias, in_zp)
    fr, why = fast_requant(lo, hi, mult, shift, out_zp, act_lo, act_hi)
    if fr is not None and fr.L != 1:  # the kernels hard-wire the doubling
        fr, why = None, "requantization left shift is not 1"
    return ConvRequant(folded.astype(np.int32), fr, why)
