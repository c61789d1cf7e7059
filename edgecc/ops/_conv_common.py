"""Quantization constants shared by the conv-like ops (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED).

Owns: per-channel or per-tensor (multiplier, shift) exactly as TFLite Micro prepares them, the fused
activation clamp range, and the numpy requantize epilogue (acc -> multiplier -> +zp -> clamp).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.ops import dtype_limits, in_type, out_type
from edgecc.quant import activation_range, mbqm, quantize_multiplier


def channel_multipliers(g: Graph, n: Node, channels: int) -> tuple[np.ndarray, np.ndarray]:
    """PopulateConvolutionQuantizationParams: effective scale in double per output channel."""
    in_s = np.float32(in_type(g, n, 0).q.scale[0])
    out_s = np.float32(out_type(g, n).q.scale[0])
    f_scales = in_type(g, n, 1).q.scale
    mults, shifts = [], []
    for c in range(channels):
        fs = np.float32(f_scales[c] if len(f_scales) > 1 else f_scales[0])
        eff = float(in_s) * float(fs) / float(out_s)
        m, s = quantize_multiplier(eff)
        mults.append(m)
        shifts.append(s)
    return np.array(mults, dtype=np.int64), np.array(shifts, dtype=np.int64)


def fc_multiplier(g: Graph, n: Node) -> tuple[int, int]:
    """GetQuantizedConvolutionMultipler: the input*filter product is taken in float32 first."""
    in_s = np.float32(in_type(g, n, 0).q.scale[0])
    f_s = np.float32(in_type(g, n, 1).q.scale[0])
    out_s = np.float32(out_type(g, n).q.scale[0])
    eff = float(np.float32(in_s * f_s)) / float(out_s)
    return quantize_multiplier(eff)


def act_range(g: Graph, n: Node) -> tuple[int, int]:
    t = out_type(g, n)
    lo, hi = dtype_limits(t)
    return activation_range(int(n.attrs.get("fused_activation_function", 0)), lo, hi,
                            t.q.scale[0], t.q.zero_point[0])


def requantize(acc: np.ndarray, mult, shift, out_zp: int, lo: int, hi: int, dtype) -> np.ndarray:
    out = mbqm(acc, mult, shift) + out_zp
    return np.clip(out, lo, hi).astype(dtype)
