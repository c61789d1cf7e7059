/* edgecc Cortex-M DSP: the sums and the exact path of the near-tie check of the QDQ groups
 * onnxruntime runs in float32 (runtime_c/edgecc_ort_near.h, edgecc/ops/_ort_near.py), shared by
 * dsp/conv_2d_near.h and dsp/fc_near.h (conventions: dsp/common.h). */
#ifndef EDGECC_DSP_NEAR_H
#define EDGECC_DSP_NEAR_H
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include "common.h"
#include "../edgecc_ort_near.h"

/* ec_ortn_tap_abs_c of c % 4 == 0 bytes, 4 per USADA8 (x ^ 0x80 is x + 128 as unsigned). */
static inline int32_t ec_dsp_tap_abs(const int8_t *px, int32_t c, int32_t zx) {
    const uint32_t zu = 0x01010101u * (uint8_t)(zx + 128);
    uint32_t s = 0;
    int32_t ci;
    for (ci = 0; ci < c; ci += 4) s = __usada8((uint32_t)ec_dsp_ld32(px + ci) ^ 0x80808080u, zu, s);
    return (int32_t)s;
}

/* |v - z| of the two int16 halves of v (z: both halves), by the GE flags of SSUB16. */
static inline int32_t ec_dsp_abs16(int32_t v, int32_t z) {
    const int32_t n = __ssub16(z, v), d = __ssub16(v, z);
    return __sel(d, n);
}

/* Sums over one pixel slot of a conv block (runtime_c/dsp/conv_2d.h: n groups of 4 taps, two
 * words of doubled halfwords (x0,x2), (x1,x3) each, `step` words apart): the field's
 * sum of |x - zx| (every tap of the n groups counts: the caller keeps the ones past the filter
 * at the zero point), and the exact bound T = sum |x - zx| |w| against a channel's kp weight
 * bytes w (zero past the filter). z2: 2 zx in both halves. */
static inline int32_t ec_dsp_xs_abs(const int32_t *xs, int32_t n, int32_t step, int32_t z2) {
    int32_t s = 0, i;
    for (i = 0; i < n; ++i, xs += step) {
        s = __smlad(ec_dsp_abs16(xs[0], z2), 0x00010001, s);
        s = __smlad(ec_dsp_abs16(xs[1], z2), 0x00010001, s);
    }
    return s >> 1;
}

static inline uint32_t ec_dsp_xs_dot(const int32_t *xs, const int8_t *w, int32_t n, int32_t step,
                                     int32_t z2) {
    int32_t t = 0, i;
    for (i = 0; i < n; ++i, xs += step) {
        const int32_t v = ec_dsp_ld32(w + 4 * i);
        t = __smlad(ec_dsp_abs16(xs[0], z2), ec_dsp_abs16(__sxtb16(v), 0), t);
        t = __smlad(ec_dsp_abs16(xs[1], z2), ec_dsp_abs16(ec_dsp_sxtb16_r8(v), 0), t);
    }
    return (uint32_t)t >> 1;
}

/* |f| (VABS with an FPU) */
static inline float ec_dsp_fabs(float f) {
#if defined(__GNUC__)
    return __builtin_fabsf(f);
#else
    return f < 0.0f ? -f : f;
#endif
}

/* Output (pix, o) whose estimate e the cheap bound found near a rounding boundary: the exact
 * bound T (ec_dsp_xs_dot over its slot xs of a conv block, groups `step` words apart) decides,
 * then onnxruntime's order (ec_ortn_conv_redo); rounded half to even, before the zero point. */
static EC_ORTN_COLD int32_t ec_dsp_near_exact(const ec_ortn_conv *nr, const int8_t *x,
                                              const int8_t *wc, const int32_t *xs, int32_t step,
                                              int32_t pix, int32_t o, float e, float kt,
                                              float kb) {
    const uint32_t t = ec_dsp_xs_dot(xs, wc, (nr->ksize + 3) / 4, step,
                                     (int32_t)(0x00010001u * (uint16_t)(2 * nr->in_zp)));
    int32_t r;
    if (!ec_ortn_near(e, (float)t * kt + kb, &r)) return r;
    return ec_ortn_conv_redo(nr, x, wc, pix, o);
}

#endif /* __ARM_FEATURE_DSP */
#endif /* EDGECC_DSP_NEAR_H */
