"""Compile-time helpers shared by the SIMD (Cortex-M DSP, Helium MVE) kernels of the conv-like ops.

Owns: the accumulator range analysis of a layer, the "fast requantization" constants that let
the kernels requantize with a handful of instructions while staying bit-exact with TFLite Micro,
a numpy model of exactly what that C computes (for tests), the weight re-layouts (K padded,
channel blocks interleaved, bytes packed into aligned int32 words) and the pick of a kernel per
target. The op modules call these from their `lower`; the kernels themselves live in
runtime_c/dsp/ and runtime_c/mve/.

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

from edgecc.quant import mbqm

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


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


def _wrap32(x) -> np.ndarray:
    return ((np.asarray(x, dtype=np.int64) + (1 << 31)) % (1 << 32)) - (1 << 31)


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
            s = -1 if _wrap32(lo[c] << L) < 0 else 0
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
        t = _wrap32(_wrap32(q + n) + (acc >> 31))
    else:
        n = fr.n.astype(np.int64).reshape(shape)
        a = _wrap32(acc << fr.L)
        t = _wrap32(n + ((a * m + (1 << 31)) >> 32))
        t = _wrap32(t + (a >> 31))
    return np.clip(t >> e, fr.lo, fr.hi)


# ---------------------------------------------------------------------------------- layouts

def round_up(x: int, m: int) -> int:
    return -(-x // m) * m


def pad_cols(w_rows: np.ndarray, k_to: int) -> np.ndarray:
    """[rows, K] -> [rows, k_to] with zero columns appended."""
    w = np.asarray(w_rows)
    out = np.zeros((w.shape[0], k_to), dtype=w.dtype)
    out[:, :w.shape[1]] = w
    return out


def pack_words(b: np.ndarray) -> np.ndarray:
    """int8 bytes -> little-endian int32 words (zero-padded to a whole word), so the C array is
    word aligned for LDR/LDRD and the byte order in memory is unchanged."""
    raw = np.asarray(b, dtype=np.int8).ravel().tobytes()
    raw += b"\0" * (-len(raw) % 4)
    return np.frombuffer(raw, dtype="<i4").astype(np.int32)


def interleave_rows(w_rows: np.ndarray, group: int, chunk: int) -> np.ndarray:
    """[rows, K] (rows % group == 0, K % chunk == 0) -> for each block of `group` rows, for each
    chunk of K: the rows' chunks one after another. A kernel computing `group` rows together
    then walks one pointer: chunk j of row i of the block is at ((j * group) + i) * chunk."""
    w = np.asarray(w_rows)
    rows, k = w.shape
    return (w.reshape(rows // group, group, k // chunk, chunk)
             .transpose(0, 2, 1, 3).reshape(-1))


def fits_int32(a) -> bool:
    a = np.asarray(a, dtype=np.int64)
    return bool(a.size == 0 or (a.min() >= INT32_MIN and a.max() <= INT32_MAX))


def offset_bytes(w_rows: np.ndarray, bias: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weights and bias for the offset-byte FULLY_CONNECTED kernel (dsp/fully_connected.h):
    even-index weights stored + 128 (as unsigned bytes), and the bias scaled to the kernel's
    256 * acc with the weights' share of the input offsets folded in:
    256 * bias + 256 * 127 * (sum of odd-index weights), wrapped to int32 like the C sum."""
    w = np.asarray(w_rows, np.int64)
    stored = w.copy()
    stored[:, 0::2] += 128
    stored = np.where(stored > 127, stored - 256, stored)  # the same bytes, as int8
    b = 256 * np.asarray(bias, np.int64) + 256 * 127 * w[:, 1::2].sum(axis=1)
    return stored.astype(np.int8), _wrap32(b).astype(np.int32)


def doubled(bias: np.ndarray) -> np.ndarray:
    """2 * bias: the SIMD kernels accumulate 2 * acc (the requantization's 2^L with L = 1). It
    fits: the folded bias is itself a reachable accumulator (x = 0 everywhere), and
    fast_requant proved 2 * acc fits int32 for all of them."""
    return (np.asarray(bias, np.int64) * 2).astype(np.int32)


@dataclass
class MveBlocks:
    """Weights, biases and requantization records in the layout of mve/common.h's ec_mve_row."""

    kp: int
    w: np.ndarray      # int8 [ocp/4][kp/16][4][16]
    bias: np.ndarray   # int32 [ocp]
    rq: np.ndarray     # int32 per 4 channels: [m x4][N x4][-e x4]


def pad_to(a, n: int) -> np.ndarray:
    out = np.zeros(n, np.int64)
    out[:len(a)] = np.asarray(a, np.int64)
    return out


def mve_records(fr: FastRequant, ocp: int) -> np.ndarray:
    """Per 4 channels [m x4][N x4][-e x4] (the MVE sign convention, N_raw); padded channels
    get zeros."""
    parts = [pad_to(a, ocp).reshape(-1, 4) for a in (fr.m, fr.n_raw, -fr.e.astype(np.int64))]
    return np.concatenate(parts, axis=1).ravel().astype(np.int32)


def mve_blocks(w_rows: np.ndarray, folded: np.ndarray, fr: FastRequant) -> MveBlocks:
    """[oc, K] weights -> 4-channel blocks of 16-input chunks (K padded to 16, oc to 4)."""
    oc, k = np.asarray(w_rows).shape
    kp, ocp = round_up(max(k, 1), 16), round_up(oc, 4)
    w = np.zeros((ocp, kp), np.int64)
    w[:oc, :k] = w_rows
    return MveBlocks(kp, interleave_rows(w, 4, 16).astype(np.int8),
                     pad_to(folded, ocp).astype(np.int32), mve_records(fr, ocp))


def mve_blocks2(w_rows: np.ndarray, folded: np.ndarray, fr: FastRequant) -> MveBlocks:
    """[oc, K] -> blocks of 2 channels of 16-input chunks (mve/conv_2d.h, ..._2ch3px_s8):
    weights [blocks][K/16][2][16]; per channel the record [bias, m, N_raw, -e]."""
    oc, k = np.asarray(w_rows).shape
    kp, ocp = round_up(max(k, 1), 16), round_up(oc, 2)
    w = np.zeros((ocp, kp), np.int64)
    w[:oc, :k] = w_rows
    recs = np.stack([pad_to(a, ocp) for a in (folded, fr.m, fr.n_raw, -fr.e.astype(np.int64))],
                    axis=1)
    return MveBlocks(kp, interleave_rows(w, 2, 16).astype(np.int8), np.zeros(0, np.int32),
                     recs.ravel().astype(np.int32))


def has_isa(target, isa: str) -> bool:
    return isa in getattr(target, "features", frozenset())


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
