/* edgecc Helium (MVE) kernel: int8 ADD through the DSP kernel's tables
 * (conventions: mve/common.h). */
#ifndef EDGECC_MVE_ADD_H
#define EDGECC_MVE_ADD_H
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include "common.h"
#include "../dsp/add.h" /* ec_dsp_add_geom: the tables are the DSP kernel's */

/* ---------------------------------------------------------------------------------------
 * ADD of two int8 tensors of the same shape: dsp/add.h's tables (2 * each input's rescaled
 * value) read by word gathers, 4 elements per vector, the doubled sum requantized with the
 * DSP form of the constants (VRMULH(2s, m) = SMMULR(2s, m)). The element i of y is written
 * after a[i], b[i] are read (in-place safe).
 */
EC_MVE_INLINE int32x4_t ec_mve_add4(int32x4_t va, int32x4_t vb, const int32_t *ta0,
                                    const int32_t *tb0, int32x4_t m, int32_t nn, int32_t ne,
                                    int full, int32x4_t lo, int32x4_t hi) {
    const int32x4_t s2 = vaddq_s32(
        vldrwq_gather_shifted_offset_s32(ta0, vreinterpretq_u32_s32(va)),
        vldrwq_gather_shifted_offset_s32(tb0, vreinterpretq_u32_s32(vb)));
    int32x4_t t = vaddq_s32(vaddq_n_s32(vrmulhq_s32(s2, m), nn), vshrq_n_s32(s2, 31));
    t = vshlq_r_s32(t, ne);
    return full ? ec_mve_sat8(t) : vmaxq_s32(vminq_s32(t, hi), lo);
}

EC_MVE_INLINE void ec_mve_add_run(const ec_dsp_add_geom *g, const int8_t *a, const int8_t *b,
                                  int8_t *y, const int32_t *ta, const int32_t *tb, int full) {
    const int32x4_t m = vdupq_n_s32(g->m), lo = vdupq_n_s32(g->lo), hi = vdupq_n_s32(g->hi);
    const int32_t nn = g->nn, ne = -g->e, n4 = g->n & ~3;
    const int32_t *ta0 = ta + 128, *tb0 = tb + 128; /* indexed by the signed byte */
    int32_t i;
    for (i = 0; i < n4; i += 4, a += 4, b += 4, y += 4) {
        vstrbq_s32(y, ec_mve_add4(vldrbq_s32(a), vldrbq_s32(b), ta0, tb0, m, nn, ne, full, lo,
                                  hi));
    }
    if (i < g->n) {
        const mve_pred16_t p = vctp32q((uint32_t)(g->n - i));
        vstrbq_p_s32(y, ec_mve_add4(vldrbq_z_s32(a, p), vldrbq_z_s32(b, p), ta0, tb0, m, nn, ne,
                                    full, lo, hi), p);
    }
}

EC_MVE_SHARED void ec_mve_add_lut_s8(const ec_dsp_add_geom *g, const int8_t *a, const int8_t *b,
                              int8_t *y, const int32_t *ta, const int32_t *tb) {
    if (g->lo == -128 && g->hi == 127) ec_mve_add_run(g, a, b, y, ta, tb, 1);
    else ec_mve_add_run(g, a, b, y, ta, tb, 0);
}

#if (__ARM_FEATURE_MVE & 2)
/* ---------------------------------------------------------------------------------------
 * ADD with ONNX numerics (onnxruntime's QLinearAdd, edgecc/ops/_onnx_elt.py): n elements of
 * two same-shape int8 tensors, 4 per vector: t = fma(b, rb, k), v = fma(a, ra, t) in float32
 * (VFMA: one rounding each, as onnxruntime's fused multiply-adds), VCVTN (round half to even,
 * saturating, as the C twin's clamp to +-2^15 then rounding), clamped to [lo, hi]. Element i
 * is written after a[i], b[i] are read (in-place safe).
 */
EC_MVE_SHARED void ec_mve_add_onnx_s8(const int8_t *a, const int8_t *b, int8_t *y, int32_t n,
                                      float ra, float rb, float k, int32_t lo, int32_t hi) {
    const float32x4_t vk = vdupq_n_f32(k);
    const int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
    int32_t i;
    for (i = 0; i < n; i += 4) {
        const mve_pred16_t p = vctp32q((uint32_t)(n - i));
        const float32x4_t fa = vcvtq_f32_s32(vldrbq_z_s32(a + i, p));
        const float32x4_t fb = vcvtq_f32_s32(vldrbq_z_s32(b + i, p));
        const float32x4_t v = vfmaq_n_f32(vfmaq_n_f32(vk, fb, rb), fa, ra);
        vstrbq_p_s32(y + i, vmaxq_s32(vminq_s32(vcvtnq_s32_f32(v), vhi), vlo), p);
    }
}
#endif

#endif /* __ARM_FEATURE_MVE */
#endif /* EDGECC_MVE_ADD_H */
