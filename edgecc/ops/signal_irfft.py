"""SignalIrfft (TFLite Micro's signal library), int16: the inverse real FFT of each row of
fft_length / 2 + 1 complex values (interleaved), as KISS FFT's fixed-point kiss_fftri computes it
(edgecc/ops/_signal_fft.py; C: runtime_c/edgecc_signal.h), fft_length samples out.

Input int16 [..., 2 (fft_length / 2 + 1) or more]; output int16 [..., fft_length]. Options:
fft_length (a power of two here: radices 4 and 2), T (int32 and float32 are not supported).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, in_type, register
from edgecc.ops._signal import last_dim, opt, signal_op, types_are
from edgecc.ops._signal_fft import irfft16, plan, supported_length, twiddles


def fft_length(g: Graph, n: Node) -> bool:
    """fft_length must be a power of two >= 4, the input's last axis at least fft_length + 2 (even), the output's fft_length"""
    f, size = opt(n, "fft_length"), last_dim(g, n)
    return (supported_length(f) and size >= f + 2 and size % 2 == 0
            and last_dim(g, n, out=True) == f and opt(n, "T", 7) == 7)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    shape = in_type(g, n).shape
    return [TensorType((*shape[:-1], opt(n, "fft_length")), DType.INT16)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    f = opt(n, "fft_length")
    x = ins[0].reshape(-1, last_dim(g, n))
    return [irfft16(x, f).reshape((*ins[0].shape[:-1], f))]


def lower(g: Graph, n: Node, target) -> Kernel:
    f, size = opt(n, "fft_length"), last_dim(g, n)
    tw, sup = twiddles(f, inverse=True)
    perm, stages = plan(f // 2)
    return Kernel("signal_irfft.c.j2",
                  params=dict(rows=in_type(g, n).numel // size, size=size, n=f // 2,
                              fft_length=f, n_stages=stages.size // 3),
                  consts=dict(perm=perm, stages=stages, tw=tw, super_tw=sup),
                  scratch=2 * f)  # kiss_fftri's tmpbuf: f / 2 complex int16


OP = register(signal_op("SignalIrfft", infer, reference, lower,
                        [types_are((DType.INT16,), (DType.INT16,)), fft_length],
                        dtypes="int16 (complex, interleaved) -> int16"))
