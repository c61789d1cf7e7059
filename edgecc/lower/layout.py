"""Weight, constant and geometry layouts shared by the SIMD kernels (edgecc/lower/<isa>/).

Owns: rounding sizes up, padding and interleaving weight rows into the blocks the kernels walk,
packing bytes into aligned int32 words, the quads of the x86 / NEON dot-product kernels, int32
wrap-around of constant arrays (Helium's channel blocks are edgecc/lower/mve/blocks.py), and
`record`, the named tuple a kernel's geometry C struct is handed as. Nothing here decides
whether a kernel applies.

Geometry records: each kernel module declares the records of its C structs beside its kernel
(`record(c_struct, fields)`: a namedtuple whose `c_struct` names the C typedef and whose fields
are the struct's, in order). A lowering builds its geometry as a record (a wrong field count
fails there), the template prints it as the struct's initializer (`{{ p.geom | join(", ") }}`),
and tests/test_geom_records.py checks every record against its struct in the C headers, so the
order is stated once and checked.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from edgecc.ops._conv_common import fits_int32  # noqa: F401  (the layouts' int32 check)
from edgecc.numerics.fixed_point import wrap32


_RECORDS: dict[tuple[str, str], type] = {}


def record(c_struct: str, fields: str) -> type:
    """A namedtuple class for C struct `c_struct` with these space-separated fields (one class
    per struct and fields; its values pickle through `record`, since the class is no module
    attribute of its own name: the compile cache stores lowered kernels)."""
    key = (c_struct, " ".join(fields.split()))
    if key in _RECORDS:
        return _RECORDS[key]
    name = "".join(p.capitalize() for p in c_struct.removeprefix("ec_").split("_"))
    cls = namedtuple(name, key[1])
    cls.c_struct = c_struct
    cls.__reduce__ = lambda self: (_rebuild, (key, tuple(self)))
    _RECORDS[key] = cls
    return cls


def _rebuild(key: tuple[str, str], values: tuple) -> tuple:
    return record(*key)(*values)


def int32_array(a) -> np.ndarray:
    """int64 -> an int32 array modulo 2^32 (the kernels' accumulators wrap the same way)."""
    return wrap32(a).astype(np.int32)


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


def interleave_fc8(w_rows: np.ndarray, eight: bool = True) -> np.ndarray:
    """[up, dp] weight bytes (up % 4 == 0, dp % 8 == 0) in the DSP offset-byte FULLY_CONNECTED
    kernels' order (dsp/fully_connected.h): 8-unit blocks [4 inputs][8 units][4 bytes] while 8
    units remain (unless not eight), then a 4-unit block [8 inputs][4 units][8 bytes]."""
    w = np.asarray(w_rows)
    n8 = w.shape[0] // 8 * 8 if eight else 0
    return np.concatenate([interleave_rows(w[:n8], 8, 4), interleave_rows(w[n8:], 4, 8)])


def offset_bytes(w_rows: np.ndarray, bias: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weights and bias for the offset-byte FULLY_CONNECTED kernel (dsp/fully_connected.h, ec_dsp_fully_connected_4u_ub_s8):
    even-index weights stored + 128 (as unsigned bytes), and the bias scaled to the kernel's
    256 * acc with the weights' share of the input offsets folded in:
    256 * bias + 256 * 127 * (sum of odd-index weights), wrapped to int32 like the C sum."""
    w = np.asarray(w_rows, np.int64)
    stored = w.copy()
    stored[:, 0::2] += 128
    stored = np.where(stored > 127, stored - 256, stored)  # the same bytes, as int8
    b = 256 * np.asarray(bias, np.int64) + 256 * 127 * w[:, 1::2].sum(axis=1)
    return stored.astype(np.int8), wrap32(b).astype(np.int32)


def doubled(bias: np.ndarray) -> np.ndarray:
    """2 * bias: the SIMD kernels accumulate 2 * acc (the requantization's 2^L with L = 1). It
    fits: the folded bias is itself a reachable accumulator (x = 0 everywhere), and
    fast_requant proved 2 * acc fits int32 for all of them."""
    return (np.asarray(bias, np.int64) * 2).astype(np.int32)


def pad_to(a, n: int) -> np.ndarray:
    out = np.zeros(n, np.int64)
    out[:len(a)] = np.asarray(a, np.int64)
    return out


def pack_quads(w_rows: np.ndarray) -> tuple[np.ndarray, int, int]:
    """[oc, K] int8 -> (quads as int8, ocp, kp): see the module docstring."""
    oc, k = w_rows.shape
    ocp, kp = round_up(oc, 8), round_up(k, 4)
    w = np.zeros((ocp, kp), np.int8)
    w[:oc, :k] = w_rows
    return (w.reshape(ocp // 8, 8, kp // 4, 4).transpose(0, 2, 1, 3).ravel().astype(np.int8),
            ocp, kp)


def pack_quads16(w_rows: np.ndarray) -> tuple[np.ndarray, int, int]:
    """[oc, K] int8 -> (quads as int8, ocp, kp) in the x86 convolution's layout: as pack_quads,
    but for each block of 16 channels (the last block has 8 when ocp % 16 == 8), for each group
    of 4 taps, the block's channels' 4 weights: a 64-byte step that fills one ZMM register, or
    two YMM halves (channels c..c+7 first). Block c starts at byte c * kp either way."""
    oc, k = w_rows.shape
    ocp, kp = round_up(oc, 8), round_up(k, 4)
    w = np.zeros((ocp, kp), np.int8)
    w[:oc, :k] = w_rows
    full = ocp // 16 * 16
    parts = [w[:full].reshape(full // 16, 16, kp // 4, 4).transpose(0, 2, 1, 3).ravel()]
    if full < ocp:
        parts.append(w[full:].reshape(1, 8, kp // 4, 4).transpose(0, 2, 1, 3).ravel())
    return np.concatenate(parts).astype(np.int8), ocp, kp
