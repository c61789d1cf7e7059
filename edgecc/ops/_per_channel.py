"""Per-channel quantization of activations (ONNX QuantizeLinear / DequantizeLinear with `axis`),
shared by QUANTIZE and DEQUANTIZE.

Owns: whether a tensor's quantization is per channel, its scales and zero points broadcast along
its axis (numpy), and the C indexing: element i of a row-major tensor belongs to channel
(i / inner) % channels, inner being the product of the dimensions after the axis.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import TensorType


def per_channel_on_axis(t: TensorType) -> bool:
    """Whether t is quantized per channel with one scale and zero point per index of its axis."""
    q = t.q
    return q is not None and q.per_channel and 0 <= q.axis < len(t.shape) and \
        len(q.scale) == t.shape[q.axis] and len(q.zero_point) == len(q.scale)


def broadcast_q(t: TensorType) -> tuple[np.ndarray, np.ndarray]:
    """(float32 scales, int64 zero points) shaped to broadcast against a tensor of type t."""
    q = t.q
    shape = [1] * len(t.shape)
    shape[q.axis] = len(q.scale)
    return (np.asarray(q.scale, np.float32).reshape(shape),
            np.asarray(q.zero_point, np.int64).reshape(shape))


def c_channels(t: TensorType) -> dict:
    """The template parameters of the per-element channel index: channels and inner."""
    return dict(channels=len(t.q.scale), inner=int(np.prod(t.shape[t.q.axis + 1:], dtype=np.int64)))


def xor_edge(a: TensorType, b: TensorType) -> bool:
    """uint8 <-> int8 with the same scales and every zero point moved by the same 128 (per
    channel too): the same real values, y = x -+ 128 (the bytes xor 0x80)."""
    if a.q is None or b.q is None or a.q.scale != b.q.scale:
        return False
    diffs = {zb - za for za, zb in zip(a.q.zero_point, b.q.zero_point)}
    return len(a.q.zero_point) == len(b.q.zero_point) and diffs in ({128}, {-128})
