"""SignalRfft (TFLite Micro's signal library), int16: the real FFT of each row of the input's
last axis, zero padded to fft_length, as KISS FFT's fixed-point kiss_fftr computes it
(edgecc/ops/_signal_fft.py; C: runtime_c/edgecc_signal.h).

Input x int16 [..., n <= fft_length]; output int16 [..., fft_length + 2]: fft_length / 2 + 1
complex values, interleaved (re, im). Options: fft_length (a power of two here: radices 4 and 2),
T (the element type; int32 and float32 are not supported).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, in_type, register
from edgecc.ops._signal import last_dim, opt, signal_op, types_are
from edgecc.ops._signal_fft import plan, rfft16, supported_length, twiddles


def fft_length(g: Graph, n: Node) -> bool:
    """fft_length must be a power of two >= 4, at least the input's last axis, and the output's last axis fft_length + 2"""
    f = opt(n, "fft_length")
    return (supported_length(f) and last_dim(g, n) <= f and last_dim(g, n, out=True) == f + 2
            and opt(n, "T", 7) == 7)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    shape = in_type(g, n).shape
    return [TensorType((*shape[:-1], opt(n, "fft_length") + 2), DType.INT16)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    f, size = opt(n, "fft_length"), last_dim(g, n)
    x = ins[0].reshape(-1, size)
    pad = np.zeros((x.shape[0], f), np.int16)
    pad[:, :size] = x
    return [rfft16(pad, f).reshape((*ins[0].shape[:-1], f + 2))]


def lower(g: Graph, n: Node, target) -> Kernel:
    f, size = opt(n, "fft_length"), last_dim(g, n)
    tw, sup = twiddles(f)
    perm, stages = plan(f // 2)
    return Kernel("signal_rfft.c.j2",
                  params=dict(rows=in_type(g, n).numel // size, size=size, n=f // 2,
                              size_bytes=2 * size, pad_bytes=2 * (f - size), fft_length=f,
                              out_len=f + 2, n_stages=stages.size // 3),
                  consts=dict(perm=perm, stages=stages, tw=tw, super_tw=sup),
                  scratch=4 * f)  # the zero-padded row and kiss_fftr's tmpbuf, f int16 each


OP = register(signal_op("SignalRfft", infer, reference, lower,
                        [types_are((DType.INT16,), (DType.INT16,)), fft_length],
                        dtypes="int16 -> int16 (complex, interleaved)"))
