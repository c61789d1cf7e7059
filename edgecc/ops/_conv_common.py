"""Quantization constants shared by the conv-like ops (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED).

Owns: per-channel or per-tensor (multiplier, shift) exactly as TFLite Micro prepares them, the fused
activation clamp range, the numpy requantize epilogue (acc -> multiplier -> +zp -> clamp), and the
2-D sliding-window geometry of CONV_2D / DEPTHWISE_CONV_2D (output size, leading pads, the interior
where every filter tap reads a real input pixel, and the numpy tap iterator used by the references).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.ops import (const, conv_out_size, conv_pad, dtype_limits, get_op, in_type,
                        out_type)
from edgecc.numerics.fixed_point import (INT32_MIN, activation_range, fits_int32, mbqm,
                                         quantize_multiplier)
from edgecc.numerics.qlinear import onnx_requantize, onnx_scales


def channel_multipliers(g: Graph, n: Node, channels: int) -> tuple[np.ndarray, np.ndarray]:
    """PopulateConvolutionQuantizationParams: effective scale in double per output channel.
    ONNX numerics: float32 scales and zero shifts (edgecc/numerics/qlinear.py)."""
    if n.numerics.qlinear:
        return onnx_scales(g, n, channels), np.zeros(channels, np.int64)
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


def rq_array(m: np.ndarray) -> np.ndarray:
    """The per-channel multiplier constant as the C kernel reads it: float32 scales for QLinear
    numerics (channel_multipliers), int32 multipliers otherwise."""
    m = np.asarray(m)
    return m.astype(np.float32) if m.dtype.kind == "f" else m.astype(np.int32)


def mbqm_function(mults: np.ndarray) -> str:
    """The C requantizer for these multipliers: ec_mbqm_pos skips the saturation case that only
    a multiplier of INT32_MIN can reach (QuantizeMultiplier never makes one). float32
    multipliers are ONNX numerics' scales: ec_onnx_rq."""
    if np.asarray(mults).dtype.kind == "f":
        return "ec_onnx_rq"
    return "ec_mbqm_pos" if bool(np.all(np.asarray(mults) > INT32_MIN)) else "ec_mbqm"


def fc_multiplier(g: Graph, n: Node) -> tuple[int, int]:
    """GetQuantizedConvolutionMultipler: the input*filter product is taken in float32 first."""
    in_s = np.float32(in_type(g, n, 0).q.scale[0])
    f_s = np.float32(in_type(g, n, 1).q.scale[0])
    out_s = np.float32(out_type(g, n).q.scale[0])
    eff = float(np.float32(in_s * f_s)) / float(out_s)
    return quantize_multiplier(eff)


def fc_unit_multipliers(g: Graph, n: Node, units: int) -> tuple[np.ndarray, np.ndarray]:
    """FULLY_CONNECTED's (multiplier, shift) per output unit. TFLM's CalculateOpDataFullyConnected:
    per-channel weights (one scale per unit) take the per-channel formula, the effective scale in
    double from the float32 scales (channel_multipliers); per-tensor weights fc_multiplier's
    float32 product, the same for every unit. ONNX numerics: onnxruntime's float32 scales
    (channel_multipliers)."""
    if in_type(g, n, 1).q.per_channel or n.numerics.qlinear:
        return channel_multipliers(g, n, units)
    m, s = fc_multiplier(g, n)
    return np.full(units, m, np.int64), np.full(units, s, np.int64)


def act_range(g: Graph, n: Node) -> tuple[int, int]:
    if "clamp" in n.attrs:  # set by the ONNX frontend from a fused Relu/Clip
        lo, hi = n.attrs["clamp"]
        return int(lo), int(hi)
    t = out_type(g, n)
    lo, hi = dtype_limits(t)
    return activation_range(int(n.attrs.get("fused_activation_function", 0)), lo, hi,
                            t.q.scale[0], t.q.zero_point[0])


def requantize(acc: np.ndarray, mult, shift, out_zp: int, lo: int, hi: int, dtype) -> np.ndarray:
    if np.asarray(mult).dtype.kind == "f":  # ONNX numerics (channel_multipliers)
        return onnx_requantize(acc, mult, out_zp, lo, hi, dtype)
    out = mbqm(acc, mult, shift) + out_zp
    return np.clip(out, lo, hi).astype(dtype)


@dataclass(frozen=True)
class Window:
    """Geometry of a 2-D window sliding over an NHWC input (TFLite's ComputePaddingHeightWidth).

    Output pixel (oy, ox) reads input rows oy*stride_h - pad_t + fy*dil_h for fy < k_h (columns
    alike); taps outside the input contribute nothing (TFLite treats them as (x - zp) = 0).
    """

    in_h: int
    in_w: int
    k_h: int
    k_w: int
    stride_h: int
    stride_w: int
    dil_h: int
    dil_w: int
    out_h: int
    out_w: int
    pad_t: int
    pad_l: int

    @staticmethod
    def _interior_1d(size: int, k: int, stride: int, dil: int, pad: int, out: int) -> tuple[int, int]:
        # out index o is interior when o*stride - pad >= 0 and o*stride - pad + (k-1)*dil <= size-1.
        lo = -(-pad // stride)
        hi = (size - 1 - (k - 1) * dil + pad) // stride + 1 if size - (k - 1) * dil + pad > 0 else 0
        lo, hi = min(max(lo, 0), out), min(max(hi, 0), out)
        return (lo, hi) if hi > lo else (0, 0)

    def interior(self) -> tuple[int, int, int, int]:
        """[y0, y1) x [x0, x1): output pixels whose taps all lie inside the input (may be empty)."""
        y0, y1 = self._interior_1d(self.in_h, self.k_h, self.stride_h, self.dil_h, self.pad_t,
                                   self.out_h)
        x0, x1 = self._interior_1d(self.in_w, self.k_w, self.stride_w, self.dil_w, self.pad_l,
                                   self.out_w)
        if y1 == y0 or x1 == x0:
            return 0, 0, 0, 0
        return y0, y1, x0, x1

    def taps(self, xz: np.ndarray) -> Iterator[tuple[int, int, np.ndarray]]:
        """For each tap (fy, fx): the [B, out_h, out_w, C] slice of the input each output reads.

        `xz` is the input with its zero point already subtracted, so padding with 0 reproduces
        TFLite's skipped out-of-image taps exactly.
        """
        b, h, w, c = xz.shape
        need_h = (self.out_h - 1) * self.stride_h + (self.k_h - 1) * self.dil_h + 1
        need_w = (self.out_w - 1) * self.stride_w + (self.k_w - 1) * self.dil_w + 1
        pad_b = max(need_h - h - self.pad_t, 0)
        pad_r = max(need_w - w - self.pad_l, 0)
        xp = np.pad(xz, ((0, 0), (self.pad_t, pad_b), (self.pad_l, pad_r), (0, 0)))
        for fy in range(self.k_h):
            for fx in range(self.k_w):
                y0, x0 = fy * self.dil_h, fx * self.dil_w
                yield fy, fx, xp[:, y0:y0 + (self.out_h - 1) * self.stride_h + 1:self.stride_h,
                                 x0:x0 + (self.out_w - 1) * self.stride_w + 1:self.stride_w, :]


def window(n: Node, in_hw: tuple[int, int], k_hw: tuple[int, int]) -> Window:
    """The window of a CONV_2D / DEPTHWISE_CONV_2D node from its options (padding 0 = SAME), or
    from attrs["explicit_padding"] = (top, bottom, left, right) when a fused PAD put it there."""
    a = n.attrs
    pad = int(a.get("padding", 0))
    sh, sw = int(a.get("stride_h", 1)), int(a.get("stride_w", 1))
    dh, dw = int(a.get("dilation_h_factor", 1)), int(a.get("dilation_w_factor", 1))
    (h, w), (kh, kw) = in_hw, k_hw
    explicit = a.get("explicit_padding")  # (top, bottom, left, right), set by passes/fuse.py
    if explicit is not None:
        t, b, l, r = (int(v) for v in explicit)
        oh = (h + t + b - (kh - 1) * dh - 1) // sh + 1
        ow = (w + l + r - (kw - 1) * dw - 1) // sw + 1
        return Window(h, w, kh, kw, sh, sw, dh, dw, oh, ow, t, l)
    oh, ow = conv_out_size(pad, h, kh, sh, dh), conv_out_size(pad, w, kw, sw, dw)
    return Window(h, w, kh, kw, sh, sw, dh, dw, oh, ow,
                  conv_pad(pad, h, kh, sh, dh, oh), conv_pad(pad, w, kw, sw, dw, ow))


def valid_window_options(g: Graph, n: Node) -> bool:
    """strides and dilation factors must be >= 1 and padding SAME or VALID"""
    a = n.attrs
    if any(int(a.get(k, 1)) < 1 for k in ("stride_h", "stride_w", "dilation_h_factor",
                                           "dilation_w_factor")):
        return False
    return int(a.get("padding", 0)) in (0, 1)


def conv_groups(g: Graph, n: Node) -> int:
    """TFLite's grouped convolution: input channels / filter input channels."""
    return in_type(g, n).shape[3] // in_type(g, n, 1).shape[3]


def supported_activation(g: Graph, n: Node) -> bool:
    """fused activation must be NONE, RELU, RELU_N1_TO_1 or RELU6"""
    return int(n.attrs.get("fused_activation_function", 0)) in (0, 1, 2, 3)


def conv_window(g: Graph, n: Node) -> "Window":
    """The window geometry of a CONV_2D / DEPTHWISE_CONV_2D node (weights are [*, kh, kw, *])."""
    x, w = in_type(g, n), in_type(g, n, 1)
    return window(n, (x.shape[1], x.shape[2]), (w.shape[1], w.shape[2]))


def bias_or_zeros(g: Graph, n: Node, channels: int) -> np.ndarray:
    """The constant bias (input 2) as int64, or zeros when the model omits it."""
    b = const(g, n, 2)
    return np.zeros(channels, np.int64) if b is None else b.astype(np.int64).ravel()


def output_shape_matches(g: Graph, n: Node) -> bool:
    """output shape must be [batch, out_h, out_w, out_ch] as the padding and strides give it"""
    if not valid_window_options(g, n):
        return True  # reported by valid_window_options; no shape to compare with
    t = get_op(n.op).infer(g, n)[0]
    return tuple(t.shape) == tuple(out_type(g, n).shape)


def folded_bias(win: "Window", bias: np.ndarray, w_rows: np.ndarray, in_zp: int
                ) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """bias - in_zp * sum(w) per channel (valid where every tap is inside the image), and the
    interior rectangle (y0, y1, x0, x1) of output pixels that may use it. When the folded bias does
    not fit int32 the interior is empty, so the accumulator stays identical to TFLM's."""
    folded = bias - in_zp * w_rows.sum(axis=1)
    interior = win.interior()
    if not fits_int32(folded):
        interior = (0, 0, 0, 0)
    return folded, interior


def pool_geometry(g: Graph, n: Node) -> dict:
    """AVERAGE/MAX/L2_POOL_2D window geometry (explicit padding from passes/fuse.py, else the
    padding mode's), shared by the integer and float pools and the pool kernels."""
    batches, in_h, in_w, depth = in_type(g, n).shape
    a = n.attrs
    pad_mode = int(a.get("padding", 0))
    fh, fw = int(a["filter_height"]), int(a["filter_width"])
    sh, sw = int(a["stride_h"]), int(a["stride_w"])
    explicit = a.get("explicit_padding")  # (top, bottom, left, right), set by passes/fuse.py
    if explicit is not None:
        t, b, l, r = (int(v) for v in explicit)
        return dict(batches=batches, in_h=in_h, in_w=in_w, depth=depth, fh=fh, fw=fw, stride_h=sh,
                    stride_w=sw, out_h=(in_h + t + b - fh) // sh + 1,
                    out_w=(in_w + l + r - fw) // sw + 1, pad_h=t, pad_w=l)
    out_h = conv_out_size(pad_mode, in_h, fh, sh, 1)
    out_w = conv_out_size(pad_mode, in_w, fw, sw, 1)
    return dict(batches=batches, in_h=in_h, in_w=in_w, depth=depth, fh=fh, fw=fw, stride_h=sh,
                stride_w=sw, out_h=out_h, out_w=out_w,
                pad_h=conv_pad(pad_mode, in_h, fh, sh, 1, out_h),
                pad_w=conv_pad(pad_mode, in_w, fw, sw, 1, out_w))


OC_BLOCK = 4  # output channels computed together: each input byte loaded once feeds 4 MACs


def pack_weights(w: np.ndarray, groups: int = 1, block: int = OC_BLOCK) -> np.ndarray:
    """[oc, K] -> per group: blocks of `block` channels interleaved ([K][block] each), then the
    group's remaining channels row-major.

    Channel oc's block (or row) then starts at byte oc*K, and the interior loop walks one weight
    pointer forward: within a block, w[k*block + j] is channel j's tap k.
    """
    out = []
    for wg in np.split(w, groups):
        main = wg.shape[0] - wg.shape[0] % block
        out.append(wg[:main].reshape(main // block, block, wg.shape[1]).transpose(0, 2, 1).ravel())
        out.append(wg[main:].ravel())
    return np.concatenate(out)
