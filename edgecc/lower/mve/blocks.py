"""Helium weight blocks and requantization records (runtime_c/mve/common.h: ec_mve_row).

Owns: the 4-channel (and 2-channel) blocks of 16-input chunks the VMLADAVA kernels walk, with
their per-channel requantization records in the MVE sign convention; used by the convolution,
depthwise and fully connected kernels alike.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgecc.numerics.fastrq import FastRequant
from edgecc.lower.layout import interleave_rows, pad_to, round_up


@dataclass
class MveBlocks:
    """Weights, biases and requantization records in the layout of mve/common.h's ec_mve_row."""

    kp: int
    w: np.ndarray      # int8 [ocp/4][kp/16][4][16]
    bias: np.ndarray   # int32 [ocp]
    rq: np.ndarray     # int32 per 4 channels: [m x4][N x4][-e x4]


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
    """[oc, K] -> blocks of 2 channels of 16-input chunks (mve/conv_2d.h, ec_mve_conv_2d_2ch3px_s8):
    weights [blocks][K/16][2][16]; per channel the record [bias, m, N_raw, -e]."""
    oc, k = np.asarray(w_rows).shape
    kp, ocp = round_up(max(k, 1), 16), round_up(oc, 2)
    w = np.zeros((ocp, kp), np.int64)
    w[:oc, :k] = w_rows
    recs = np.stack([pad_to(a, ocp) for a in (folded, fr.m, fr.n_raw, -fr.e.astype(np.int64))],
                    axis=1)
    return MveBlocks(kp, interleave_rows(w, 2, 16).astype(np.int8), np.zeros(0, np.int32),
                     recs.ravel().astype(np.int32))
