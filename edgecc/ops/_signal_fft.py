"""The fixed-point FFT of TFLite Micro's signal library: KISS FFT built with FIXED_POINT=16, as
SignalRfft (int16) calls it (kiss_fftr over a kiss_fft of half the length).

Owns the numpy twin of runtime_c/edgecc_signal.h's ec_signal_rfft_s16 and the constants both read:
the radix plan (kf_factor: 4s first, then 2s; other radices are not supported), the twiddles
floor(0.5 + 32767 cos/sin(phase)) computed in double (Python's math calls the same libm TFLite
Micro's cos/sin do on its host), and the real-FFT "super twiddles". Arithmetic, all int16 values
with int32 products: a product is rounded as (p + 2^14) >> 15; every stage first divides its inputs
by the radix (x * (32767 / radix), rounded the same way); sums wrap to int16 as C's stores do.
"""
from __future__ import annotations

import math

import numpy as np

HALF = 32767 // 2  # kiss_fftr's C_FIXDIV(c, 2) multiplier
RADIX_DIV = {2: 32767 // 2, 4: 32767 // 4}


def factors(n: int) -> list[int]:
    """kf_factor: [p0, m0, p1, m1, ...], radix p then the length left after it."""
    out, p, root = [], 4, math.floor(math.sqrt(n))
    while True:
        while n % p:
            p = 2 if p == 4 else (3 if p == 2 else p + 2)
            if p > root:
                p = n
        n //= p
        out += [p, n]
        if n <= 1:
            return out


def plan(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The recursion of kf_work unrolled for the C (which must not recurse): the input index
    each output slot starts from (int16 [n]), and the stages innermost first, each (radix p,
    length m, twiddle stride): its butterflies run on the n / (p m) contiguous blocks of p m."""
    fac = factors(n)
    perm: list[int] = []

    def leaves(f: int, fstride: int, k: int) -> None:
        p, m = fac[k], fac[k + 1]
        for j in range(p):
            if m == 1:
                perm.append(f + j * fstride)
            else:
                leaves(f + j * fstride, fstride * p, k + 2)
    leaves(0, 1, 0)
    stages, stride = [], 1
    for k in range(0, len(fac), 2):
        stages.append((fac[k], fac[k + 1], stride))
        stride *= fac[k]
    return np.array(perm, np.int16), np.array(stages[::-1], np.int16).ravel()


def supported_length(fft_length: int) -> bool:
    """fft_length a power of two >= 4: radices 4 and 2 only."""
    return fft_length >= 4 and fft_length & (fft_length - 1) == 0


def _cexp(phase: float) -> tuple[int, int]:
    return (math.floor(0.5 + 32767 * math.cos(phase)), math.floor(0.5 + 32767 * math.sin(phase)))


def twiddles(fft_length: int) -> tuple[np.ndarray, np.ndarray]:
    """(the complex FFT's twiddles, the real FFT's), each interleaved (re, im) int16."""
    n = fft_length // 2
    tw = [_cexp(-2 * math.pi * i / n) for i in range(n)]
    sup = [_cexp(-math.pi * ((i + 1) / n + 0.5)) for i in range(n // 2)]
    return np.array(tw, np.int16).ravel(), np.array(sup, np.int16).ravel()


def _w16(x):
    return ((x + 32768) & 0xFFFF) - 32768


def _round(x):
    return _w16((x + 16384) >> 15)


def _mul(ar, ai, tr: int, ti: int):
    return _round(ar * tr - ai * ti), _round(ar * ti + ai * tr)


def rfft16(x: np.ndarray, fft_length: int) -> np.ndarray:
    """kiss_fftr on each row of x (int16 [rows, fft_length], zero padded): [rows, n + 2]
    interleaved (re, im) int16, n = fft_length."""
    rows, n = x.shape[0], fft_length // 2
    tw, sup = (t.astype(np.int64).reshape(-1, 2) for t in twiddles(fft_length))
    fr, fi = x[:, 0::2].T.astype(np.int64), x[:, 1::2].T.astype(np.int64)
    re, im = np.zeros((n, rows), np.int64), np.zeros((n, rows), np.int64)

    def div(i: int, k: int) -> None:
        re[i], im[i] = _round(re[i] * k), _round(im[i] * k)

    def butterfly2(out: int, fstride: int, m: int) -> None:
        for k in range(m):
            a, b = out + k, out + k + m
            div(a, RADIX_DIV[2])
            div(b, RADIX_DIV[2])
            tr, ti = _mul(re[b], im[b], *tw[k * fstride])
            re[b], im[b] = _w16(re[a] - tr), _w16(im[a] - ti)
            re[a], im[a] = _w16(re[a] + tr), _w16(im[a] + ti)

    def butterfly4(out: int, fstride: int, m: int) -> None:
        for k in range(m):
            a0, a1, a2, a3 = (out + k + j * m for j in range(4))
            for a in (a0, a1, a2, a3):
                div(a, RADIX_DIV[4])
            s0 = _mul(re[a1], im[a1], *tw[k * fstride])
            s1 = _mul(re[a2], im[a2], *tw[2 * k * fstride])
            s2 = _mul(re[a3], im[a3], *tw[3 * k * fstride])
            s5 = _w16(re[a0] - s1[0]), _w16(im[a0] - s1[1])
            re[a0], im[a0] = _w16(re[a0] + s1[0]), _w16(im[a0] + s1[1])
            s3 = _w16(s0[0] + s2[0]), _w16(s0[1] + s2[1])
            s4 = _w16(s0[0] - s2[0]), _w16(s0[1] - s2[1])
            re[a2], im[a2] = _w16(re[a0] - s3[0]), _w16(im[a0] - s3[1])
            re[a0], im[a0] = _w16(re[a0] + s3[0]), _w16(im[a0] + s3[1])
            re[a1], im[a1] = _w16(s5[0] + s4[1]), _w16(s5[1] - s4[0])
            re[a3], im[a3] = _w16(s5[0] - s4[1]), _w16(s5[1] + s4[0])

    def work(out: int, f: int, fstride: int, fac: list[int]) -> None:
        p, m = fac[0], fac[1]
        for j in range(p):
            if m == 1:
                re[out + j], im[out + j] = fr[f + j * fstride], fi[f + j * fstride]
            else:
                work(out + j * m, f + j * fstride, fstride * p, fac[2:])
        (butterfly2 if p == 2 else butterfly4)(out, fstride, m)

    work(0, 0, 1, factors(n))
    yr, yi = np.zeros((n + 1, rows), np.int64), np.zeros((n + 1, rows), np.int64)
    dr, di = _round(re[0] * HALF), _round(im[0] * HALF)
    yr[0], yr[n] = _w16(dr + di), _w16(dr - di)
    for k in range(1, n // 2 + 1):
        pr, pi = _round(re[k] * HALF), _round(im[k] * HALF)
        nr, ni = _round(re[n - k] * HALF), _round(_w16(-im[n - k]) * HALF)
        f1r, f1i, f2r, f2i = _w16(pr + nr), _w16(pi + ni), _w16(pr - nr), _w16(pi - ni)
        tr, ti = _mul(f2r, f2i, *sup[k - 1])
        yr[k], yi[k] = _w16((f1r + tr) >> 1), _w16((f1i + ti) >> 1)
        yr[n - k], yi[n - k] = _w16((f1r - tr) >> 1), _w16((ti - f1i) >> 1)
    y = np.zeros((rows, 2 * (n + 1)), np.int16)
    y[:, 0::2], y[:, 1::2] = yr.T, yi.T
    return y
