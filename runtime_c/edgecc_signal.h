/* edgecc_signal.h: C twins of TFLite Micro's signal library kernels that need more than a loop
 * (edgecc/ops/signal_*.py), C99, static inline, bit-identical with the numpy references.
 *
 * The fixed-point real FFT (SignalRfft, int16): KISS FFT with FIXED_POINT=16 as TFLite Micro
 * builds it, numpy twin edgecc/ops/_signal_fft.py. Complex values are interleaved int16 pairs
 * (re, im); twiddles, super twiddles and the radix plan (radices 4 and 2, KISS FFT's recursion
 * unrolled into an input permutation and a list of stages) are constants Python computed. A product rounds as (p + 2^14) >> 15; each stage first scales its inputs by
 * 32767 / radix; sums wrap to int16 as the C stores do.
 * The filter bank's integer square root (SignalFilterBankSquareRoot) and logarithm
 * (SignalFilterBankLog): numpy twins in edgecc/ops/signal_filter_bank_square_root.py and
 * signal_filter_bank_log.py, whose docstrings state the arithmetic; PCAN's gain
 * (SignalPCAN, twin edgecc/ops/signal_pcan.py wide_dynamic).
 */
#ifndef EDGECC_SIGNAL_H
#define EDGECC_SIGNAL_H
#include <stdint.h>
#include <string.h>

static inline int16_t ec_sig_round(int32_t p) {
    return (int16_t)((p + 16384) >> 15);
}

/* c = c * k (k = 32767 / radix), rounded: the stage's scaling */
static inline void ec_sig_scale(int16_t *c, int32_t k) {
    c[0] = ec_sig_round((int32_t)c[0] * k);
    c[1] = ec_sig_round((int32_t)c[1] * k);
}

/* o = a * t (complex, rounded) */
static inline void ec_sig_mul(int16_t *o, const int16_t *a, const int16_t *t) {
    const int32_t ar = a[0], ai = a[1], tr = t[0], ti = t[1];
    o[0] = ec_sig_round(ar * tr - ai * ti);
    o[1] = ec_sig_round(ar * ti + ai * tr);
}

static inline void ec_sig_bfly2(int16_t *f, int fstride, const int16_t *tw, int m) {
    int k;
    for (k = 0; k < m; ++k) {
        int16_t *a = f + 2 * k, *b = f + 2 * (k + m), t[2];
        ec_sig_scale(a, 16383);
        ec_sig_scale(b, 16383);
        ec_sig_mul(t, b, tw + 2 * k * fstride);
        b[0] = (int16_t)(a[0] - t[0]);
        b[1] = (int16_t)(a[1] - t[1]);
        a[0] = (int16_t)(a[0] + t[0]);
        a[1] = (int16_t)(a[1] + t[1]);
    }
}

static inline void ec_sig_bfly4(int16_t *f, int fstride, const int16_t *tw, int m) {
    int k;
    for (k = 0; k < m; ++k) {
        int16_t *a0 = f + 2 * k, *a1 = a0 + 2 * m, *a2 = a1 + 2 * m, *a3 = a2 + 2 * m;
        int16_t s0[2], s1[2], s2[2], s3[2], s4[2], s5[2];
        ec_sig_scale(a0, 8191);
        ec_sig_scale(a1, 8191);
        ec_sig_scale(a2, 8191);
        ec_sig_scale(a3, 8191);
        ec_sig_mul(s0, a1, tw + 2 * k * fstride);
        ec_sig_mul(s1, a2, tw + 4 * k * fstride);
        ec_sig_mul(s2, a3, tw + 6 * k * fstride);
        s5[0] = (int16_t)(a0[0] - s1[0]);
        s5[1] = (int16_t)(a0[1] - s1[1]);
        a0[0] = (int16_t)(a0[0] + s1[0]);
        a0[1] = (int16_t)(a0[1] + s1[1]);
        s3[0] = (int16_t)(s0[0] + s2[0]);
        s3[1] = (int16_t)(s0[1] + s2[1]);
        s4[0] = (int16_t)(s0[0] - s2[0]);
        s4[1] = (int16_t)(s0[1] - s2[1]);
        a2[0] = (int16_t)(a0[0] - s3[0]);
        a2[1] = (int16_t)(a0[1] - s3[1]);
        a0[0] = (int16_t)(a0[0] + s3[0]);
        a0[1] = (int16_t)(a0[1] + s3[1]);
        a1[0] = (int16_t)(s5[0] + s4[1]);
        a1[1] = (int16_t)(s5[1] - s4[0]);
        a3[0] = (int16_t)(s5[0] - s4[1]);
        a3[1] = (int16_t)(s5[1] + s4[0]);
    }
}

/* kiss_fft without recursion: each output slot starts from input perm[i]; then the stages,
 * innermost first ({p, m, twiddle stride} each), run their radix-p butterflies on every
 * contiguous block of p m values, as kf_work does after its sub-transforms. */
static inline void ec_sig_fft(int16_t *out, const int16_t *in, int n, const int16_t *perm,
                              const int16_t *stages, int n_stages, const int16_t *tw) {
    int i, s, b;
    for (i = 0; i < n; ++i) {
        out[2 * i] = in[2 * perm[i]];
        out[2 * i + 1] = in[2 * perm[i] + 1];
    }
    for (s = 0; s < n_stages; ++s) {
        const int p = stages[3 * s], m = stages[3 * s + 1], fstride = stages[3 * s + 2];
        for (b = 0; b < n; b += p * m) {
            if (p == 2) ec_sig_bfly2(out + 2 * b, fstride, tw, m);
            else ec_sig_bfly4(out + 2 * b, fstride, tw, m);
        }
    }
}

/* kiss_fftr: x (2 n samples, read as n complex) -> y (n + 1 complex); tmp: n complex */
static inline void ec_signal_rfft_s16(const int16_t *x, int16_t *tmp, int16_t *y, int n,
                                      const int16_t *perm, const int16_t *stages, int n_stages,
                                      const int16_t *tw, const int16_t *super_tw) {
    int16_t dc[2];
    int k;
    ec_sig_fft(tmp, x, n, perm, stages, n_stages, tw);
    dc[0] = tmp[0];
    dc[1] = tmp[1];
    ec_sig_scale(dc, 16383);
    y[0] = (int16_t)(dc[0] + dc[1]);
    y[2 * n] = (int16_t)(dc[0] - dc[1]);
    y[1] = y[2 * n + 1] = 0;
    for (k = 1; k <= n / 2; ++k) {
        int16_t pk[2], nk[2], f1[2], f2[2], t[2];
        pk[0] = tmp[2 * k];
        pk[1] = tmp[2 * k + 1];
        nk[0] = tmp[2 * (n - k)];
        nk[1] = (int16_t)(-tmp[2 * (n - k) + 1]);
        ec_sig_scale(pk, 16383);
        ec_sig_scale(nk, 16383);
        f1[0] = (int16_t)(pk[0] + nk[0]);
        f1[1] = (int16_t)(pk[1] + nk[1]);
        f2[0] = (int16_t)(pk[0] - nk[0]);
        f2[1] = (int16_t)(pk[1] - nk[1]);
        ec_sig_mul(t, f2, super_tw + 2 * (k - 1));
        y[2 * k] = (int16_t)((f1[0] + t[0]) >> 1);
        y[2 * k + 1] = (int16_t)((f1[1] + t[1]) >> 1);
        y[2 * (n - k)] = (int16_t)((f1[0] - t[0]) >> 1);
        y[2 * (n - k) + 1] = (int16_t)((t[1] - f1[1]) >> 1);
    }
}

/* the bit-by-bit root of a value below 2^width from its top pair of bits, rounded up when the
 * remainder exceeds the root (unless the root is already all ones) */
static inline uint32_t ec_signal_sqrt_w(uint64_t num, int width) {
    uint64_t res = 0, bit;
    int top = 0, it;
    uint64_t v = num;
    if (num == 0) return 0;
    while (v) { v >>= 1; ++top; }          /* the most significant bit's number, 1-based */
    top = (width - top) | 1;
    bit = (uint64_t)1 << (width - 1 - top);
    for (it = (width - 1 - top) / 2 + 1; it > 0; --it) {
        if (num >= res + bit) {
            num -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    if (num > res && res != (width == 32 ? 0xFFFFu : 0xFFFFFFFFu)) ++res;
    return (uint32_t)res;
}

static inline uint32_t ec_signal_sqrt64(uint64_t x) {
    return ec_signal_sqrt_w(x, (x >> 32) == 0 ? 32 : 64);
}

/* ln(x) * out_scale / 2^16 in the signal library's fixed point; x > 1; table: 130 entries */
static inline uint32_t ec_signal_log32(uint32_t x, uint32_t out_scale, const uint16_t *table) {
    int integer = -1;
    uint32_t v = x, seg, log2, loge;
    int32_t frac, c0, c1;
    while (v) { v >>= 1; ++integer; }
    frac = (int32_t)(x - ((uint32_t)1 << integer));
    frac = integer < 16 ? frac << (16 - integer) : frac >> (integer - 16);
    seg = (uint32_t)frac >> 9;
    c0 = table[seg];
    c1 = table[seg + 1];
    log2 = ((uint32_t)integer << 16) +
           (uint32_t)(frac + c0 + (((c1 - c0) * (frac - (int32_t)(512 * seg))) >> 16));
    loge = (uint32_t)(((uint64_t)45426 * log2 + 32768) >> 16);
    return (out_scale * loge + 32768u) >> 16;
}

/* PCAN's gain for noise estimate v: the table's piecewise quadratic on v's top 11 bits */
static inline int16_t ec_signal_pcan_gain(uint32_t v, const int16_t *lut) {
    int bits = 0, frac;
    uint32_t t = v;
    int32_t r;
    if (v <= 2) return lut[v];
    while (t) { t >>= 1; ++bits; }
    lut += 4 * bits - 6;
    frac = (int)((bits < 11 ? v << (11 - bits) : v >> (bits - 11)) & 0x3FFu);
    r = ((int32_t)lut[2] * frac) >> 5;
    r += (int32_t)((uint32_t)lut[1] << 5);
    r *= frac;
    r = (r + (1 << 14)) >> 15;
    r += lut[0];
    return (int16_t)r;
}

#endif /* EDGECC_SIGNAL_H */
