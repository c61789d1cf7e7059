/* edgecc Cortex-M DSP kernel: int8 ADD through tables (conventions: dsp/common.h). */
#ifndef EDGECC_DSP_ADD_H
#define EDGECC_DSP_ADD_H
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include "common.h"
#include "../edgecc_rt.h" /* ec_onnx_round: the ONNX epilogue */

/* ---------------------------------------------------------------------------------------
 * ADD of two int8 tensors of the same shape. TFLite rescales each input to a common scale
 * (x - zp) << 20 -> SRDHM -> RDBPOT; with int8 inputs that is a function of 256 values, so the
 * compiler tabulates 2 * r(x) for both inputs (exact by construction) and the kernel adds two
 * table entries and requantizes the doubled sum with the fast requantization (proven exact
 * over the range of sums).
 */
typedef struct {
    int32_t n;
    int32_t m, nn, e, lo, hi;
} ec_dsp_add_geom;

EC_DSP_SHARED void ec_dsp_add_lut_s8(const ec_dsp_add_geom *g, const int8_t *a, const int8_t *b,
                              int8_t *y, const int32_t *ta, const int32_t *tb) {
    const int32_t m = g->m, nn = g->nn, e = g->e, lo = g->lo, hi = g->hi;
    const int32_t *ta0 = ta + 128, *tb0 = tb + 128; /* index by the signed byte */
    int32_t i = 0, n = g->n;
    if (lo == -128 && hi == 127) {
        for (; i + 2 <= n; i += 2) {
            const int32_t s0 = ta0[a[i]] + tb0[b[i]], s1 = ta0[a[i + 1]] + tb0[b[i + 1]];
            y[i] = (int8_t)__ssat(ec_dsp_rq(s0, m, nn, e), 8);
            y[i + 1] = (int8_t)__ssat(ec_dsp_rq(s1, m, nn, e), 8);
        }
    }
    for (; i < n; ++i) y[i] = ec_dsp_clamp8(ec_dsp_rq(ta0[a[i]] + tb0[b[i]], m, nn, e), lo, hi);
}

/* ADD of two activations where the compiler proved the linear form on all 65536 pairs: s = a *
 * k[0] + b * k[1] + k[2] stands for ta0[a] + tb0[b] (no 2 KB of tables in flash), then the same
 * requantization. */
EC_DSP_SHARED void ec_dsp_add_lin2_s8(const ec_dsp_add_geom *g, const int8_t *a, const int8_t *b,
                                      int8_t *y, const int32_t *k) {
    const int32_t m = g->m, nn = g->nn, e = g->e, lo = g->lo, hi = g->hi;
    const int32_t ka = k[0], kb = k[1], kc = k[2];
    int32_t i = 0, n = g->n;
    if (lo == -128 && hi == 127) {
        for (; i + 2 <= n; i += 2) {
            const int32_t s0 = kc + a[i] * ka + b[i] * kb, s1 = kc + a[i + 1] * ka + b[i + 1] * kb;
            y[i] = (int8_t)__ssat(ec_dsp_rq(s0, m, nn, e), 8);
            y[i + 1] = (int8_t)__ssat(ec_dsp_rq(s1, m, nn, e), 8);
        }
    }
    for (; i < n; ++i) y[i] = ec_dsp_clamp8(ec_dsp_rq(kc + a[i] * ka + b[i] * kb, m, nn, e), lo, hi);
}

/* ADD of a and a constant row broadcast along all but the last dimension (c channels): the
 * row's table entries tr[0..c-1] stand for tb0[b]; a's term is a table read ta0[a] or, where
 * the compiler proved the linear form on every (value, channel) pair (lin, a constant at each
 * call site), a * ka: one multiply-add and no 1 KB table in flash. */
static inline __attribute__((always_inline)) void ec_dsp_add_row(
        const ec_dsp_add_geom *g, int32_t c, const int8_t *a, int8_t *y, const int32_t *ta,
        int32_t ka, const int32_t *tr, const int lin) {
    const int32_t m = g->m, nn = g->nn, e = g->e, lo = g->lo, hi = g->hi;
    const int32_t *ta0 = lin ? ta : ta + 128; /* index by the signed byte */
    int32_t i, j;
    for (i = 0; i < g->n; i += c) {
        for (j = 0; j < c; ++j) {
            const int32_t s = (lin ? a[i + j] * ka : ta0[a[i + j]]) + tr[j];
            y[i + j] = ec_dsp_clamp8(ec_dsp_rq(s, m, nn, e), lo, hi);
        }
    }
}

EC_DSP_SHARED void ec_dsp_add_lut_row_s8(const ec_dsp_add_geom *g, int32_t c, const int8_t *a,
                                         int8_t *y, const int32_t *ta, const int32_t *tr) {
    ec_dsp_add_row(g, c, a, y, ta, 0, tr, 0);
}

EC_DSP_SHARED void ec_dsp_add_lin_row_s8(const ec_dsp_add_geom *g, int32_t c, const int8_t *a,
                                         int8_t *y, int32_t ka, const int32_t *tr) {
    ec_dsp_add_row(g, c, a, y, 0, ka, tr, 1);
}

/* ---------------------------------------------------------------------------------------
 * ADD with ONNX numerics (onnxruntime's QLinearAdd, edgecc/ops/_onnx_elt.py): per element
 * v = fma(a, r_a, t) with t = fma(b, r_b, k) rounded to float32; t is a function of b's 256
 * values, tabulated by the compiler exactly as the portable kernel computes it (tb), and with a
 * hardware fused multiply-add (VFMA.F32) the second step is one instruction: the compiler
 * proved that the portable kernel's double sum is exact for all 65536 pairs, so its one
 * rounding to float is the FMA's. Without FMA hardware, the portable kernel's double form.
 * ra[0] = r_a; geometry: n, lo, hi (m, nn, e unused).
 */
EC_DSP_SHARED void ec_dsp_add_onnx_s8(const ec_dsp_add_geom *g, const int8_t *a, const int8_t *b,
                                      int8_t *y, const float *tb, const float *ra) {
    const float r = ra[0];
    const float *t0 = tb + 128; /* index by the signed byte */
    int32_t i;
    for (i = 0; i < g->n; ++i) {
#if defined(__ARM_FEATURE_FMA) && __ARM_FEATURE_FMA
        float v = __builtin_fmaf((float)a[i], r, t0[b[i]]);
#else
        float v = (float)((double)a[i] * (double)r + (double)t0[b[i]]);
#endif
        if (!(v > -32768.0f)) v = -32768.0f;
        if (v > 32767.0f) v = 32767.0f;
        y[i] = ec_dsp_clamp8(ec_onnx_round(v), g->lo, g->hi);
    }
}

#endif /* __ARM_FEATURE_DSP */
#endif /* EDGECC_DSP_ADD_H */
