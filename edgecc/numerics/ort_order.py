"""onnxruntime's float32 arithmetic for the QDQ groups it leaves unfused (DequantizeLinear ->
Conv / Gemm / Add / AveragePool -> QuantizeLinear), in numpy, bit for bit.

Owns: the order and rounding of every float32 operation onnxruntime 1.32's CPU provider performs
for those nodes on an x86-64 AVX-512 machine (frontends/onnx/ortfuse.py `float_groups` says
which groups), checked value for value against onnxruntime's intermediate tensors
(tests/test_onnx_float.py). This is the reference a float-emulating C kernel must reproduce.

- DequantizeLinear: float32(q - zp) * scale, one rounding (weights and the int32 bias too).
- Conv (MlasConv, ExpandThenGemmSegmented): im2col rows in (channel, ky, kx) order; per output
  value the K products are summed in slices of `stride_k` taps, each slice a chain of fused
  multiply-adds starting from +0 (the SGEMM kernel's accumulators), each later slice added to
  the running result with one float32 addition (beta 1); then + bias (MlasActivation).
  stride_k follows MlasConvOperation's rule for the thread segment the output column falls in:
  the output columns (oh * ow) are split among min(threads, complexity / 65536 + 1) segments
  of ceil(N / t) rounded up to 16; a segment of n columns with n >= K halves 128 while the half
  still covers K, else doubles it while the N stride (128, halving, > 16) still covers n. So
  the result depends on onnxruntime's intra-op thread count (default: the physical cores).
- Gemm with one row (MatMul + bias Add fused, MlasSgemmKernelM1Avx): the K products in groups
  of 4 (then 2, then 1), each group summed left to right with separate multiplies and adds,
  each group added to the running sum starting from 0; the bias added last.
- Add: one float32 addition. AveragePool (NCHWc kernel): the window summed row by row, left to
  right, then divided by the count of taps.
- QuantizeLinear: round_half_even(v / scale) + zp, saturated.
"""
from __future__ import annotations

import os

import numpy as np

F32, F64 = np.float32, np.float64
SGEMM_STRIDE = 128           # MLAS_SGEMM_STRIDEN == MLAS_SGEMM_STRIDEK
THREAD_COMPLEXITY = 64 * 1024  # MLAS_SGEMM_THREAD_COMPLEXITY
THREAD_ALIGN = 16            # MLAS_SGEMM_STRIDEN_THREAD_ALIGN
MAX_THREADS = 16             # MLAS_MAXIMUM_THREAD_COUNT


def default_threads() -> int:
    """onnxruntime's default intra-op thread count on this machine: the physical cores (here:
    os.cpu_count(), one thread per core on this project's machines). CompileOptions.ort_threads
    overrides it (the CLI's $EDGECC_ORT_THREADS)."""
    return max(os.cpu_count() or 1, 1)


def fma32(a, b, c) -> np.ndarray:
    """float32 fma(a, b, c) rounded once, elementwise: a * b is exact in float64; the float64
    sum's rounding error decides the one case double rounding gets wrong (a float32 tie)."""
    a, b, c = (np.asarray(v, F32).astype(F64) for v in (a, b, c))
    p = a * b
    s = p + c
    bb = s - p
    err = (p - (s - bb)) + (c - bb)
    r = s.astype(F32)
    rd = r.astype(F64)
    away = np.nextafter(r, np.where(s > rd, F32(np.inf), F32(-np.inf))).astype(F64)
    tie = (err != 0) & (s != rd) & (2 * (s - rd) == away - rd)
    if tie.any():
        r = np.where(tie, np.nextafter(s, np.copysign(np.inf, err)), s).astype(F32)
    return r


def dequantize(q, zp, scale) -> np.ndarray:
    return (np.asarray(q, np.int64) - np.asarray(zp, np.int64)).astype(F32) * \
        np.asarray(scale, F32)


def quantize(v, scale, zp, lo: int = -128, hi: int = 127) -> np.ndarray:
    r = (np.asarray(v, F32) / F32(scale)).astype(F32)
    r = np.clip(r, F32(-2.0 ** 22), F32(2.0 ** 22))
    return np.clip(np.rint(r).astype(np.int64) + int(zp), lo, hi)


def _stride_k(n: int, k: int) -> int:
    sn, sk = SGEMM_STRIDE, SGEMM_STRIDE
    if n >= k:
        while sk // 2 >= k:
            sk //= 2
    else:
        while sn > 16 and sn // 2 >= n:
            sk, sn = sk * 2, sn // 2
    return sk


def conv_segments(out_size: int, k: int, filters: int, threads: int) -> list[tuple[int, int, int]]:
    """(first column, column count, stride_k) of each thread segment of MlasConv's output."""
    t = min(int(filters * out_size * k / THREAD_COMPLEXITY) + 1, MAX_THREADS, threads)
    step = -(-out_size // t)
    if t > 1:
        step = (step + THREAD_ALIGN - 1) & ~(THREAD_ALIGN - 1)
    segs = []
    for start in range(0, out_size, step):
        n = min(step, out_size - start)
        segs.append((start, n, _stride_k(n, k)))
    return segs


def conv2d_nchw(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, strides, pads,
                threads: int) -> np.ndarray:
    """One-group 2-D convolution of float32 x [1, C, H, W] with w [M, C, kh, kw] (pads: top,
    left, bottom, right) as MlasConv computes it; [1, M, oh, ow]."""
    _, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    sh, sw = strides
    xp = np.zeros((c, h + pads[0] + pads[2], wd + pads[1] + pads[3]), F32)
    xp[:, pads[0]:pads[0] + h, pads[1]:pads[1] + wd] = x[0]
    oh, ow = (xp.shape[1] - kh) // sh + 1, (xp.shape[2] - kw) // sw + 1
    cols = np.array([xp[ci, ky:ky + sh * oh:sh, kx:kx + sw * ow:sw].ravel()
                     for ci in range(c) for ky in range(kh) for kx in range(kw)], F32)
    return gemm_columns(np.asarray(w, F32).reshape(m, -1), cols, bias, threads).reshape(
        1, m, oh, ow)


def gemm_columns(wk: np.ndarray, cols: np.ndarray, bias: np.ndarray | None,
                 threads: int) -> np.ndarray:
    """wk [M, K] @ cols [K, N] (+ bias per row) in MlasConv's order (the im2col columns)."""
    m, kk = wk.shape
    out = np.zeros((m, cols.shape[1]), F32)
    for start, n, sk in conv_segments(cols.shape[1], kk, m, threads):
        cs = slice(start, start + n)
        for k0 in range(0, kk, sk):
            acc = np.zeros((m, n), F32)
            for k in range(k0, min(k0 + sk, kk)):
                acc = fma32(wk[:, k:k + 1], cols[k][None, cs], acc)
            out[:, cs] = acc if k0 == 0 else (out[:, cs] + acc).astype(F32)
    if bias is not None:
        out = (out + np.asarray(bias, F32)[:, None]).astype(F32)
    return out


def gemm_row(a: np.ndarray, b: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """a [K] @ b [K, N] (+ bias) as MlasSgemmKernelM1Avx (then the bias) computes it."""
    a, b = np.asarray(a, F32).ravel(), np.asarray(b, F32)
    c = np.zeros(b.shape[1], F32)
    k = 0
    for size in (4, 2, 1):
        while len(a) - k >= size:
            g = (a[k] * b[k]).astype(F32)
            for j in range(1, size):
                g = (g + (a[k + j] * b[k + j]).astype(F32)).astype(F32)
            c = (c + g).astype(F32)
            k += size
            if size < 4:
                break
    return c if bias is None else (c + np.asarray(bias, F32)).astype(F32)


def avg_pool_window(x: np.ndarray) -> np.ndarray:
    """The average over the last two axes of x (one window), summed row by row."""
    acc = np.zeros(x.shape[:-2], F32)
    for ky in range(x.shape[-2]):
        for kx in range(x.shape[-1]):
            acc = (acc + x[..., ky, kx]).astype(F32)
    return (acc / F32(x.shape[-2] * x.shape[-1])).astype(F32)
