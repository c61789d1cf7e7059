/* edgecc Cortex-M DSP: the byte sums of the near-tie path of the QDQ groups onnxruntime runs
 * in float32 (runtime_c/edgecc_ort_near.h, edgecc/ops/_ort_near.py), shared by dsp/conv_2d.h
 * and dsp/fc_near.h (conventions: dsp/common.h). */
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

/* |v| of 4 signed bytes as unsigned bytes (v ^ 0x80 is v + 128; the GE flags of the second
 * USUB8 pick the non-negative difference). */
static inline uint32_t ec_dsp_absdiff8(uint32_t u, uint32_t z) {
    const uint32_t b = __usub8(z, u), a = __usub8(u, z);
    return __sel(a, b);
}

/* ec_ortn_tap_dot_c of c % 4 == 0 bytes: |x - zx| and |w| as unsigned bytes, then SMLAD on
 * their zero-extended halves (products <= 255 * 128). */
static inline uint32_t ec_dsp_tap_dot(const int8_t *px, const int8_t *wp, int32_t c, int32_t zx) {
    const uint32_t zu = 0x01010101u * (uint8_t)(zx + 128);
    uint32_t t = 0;
    int32_t ci;
    for (ci = 0; ci < c; ci += 4) {
        const uint32_t dx = ec_dsp_absdiff8((uint32_t)ec_dsp_ld32(px + ci) ^ 0x80808080u, zu);
        const uint32_t dw = ec_dsp_absdiff8((uint32_t)ec_dsp_ld32(wp + ci) ^ 0x80808080u,
                                            0x80808080u);
        t = (uint32_t)__smlad((int32_t)__uxtb16(dx), (int32_t)__uxtb16(dw), (int32_t)t);
        t = (uint32_t)__smlad((int32_t)__uxtb16(dx >> 8), (int32_t)__uxtb16(dw >> 8), (int32_t)t);
    }
    return t;
}

/* |f| (VABS with an FPU) */
static inline float ec_dsp_fabs(float f) {
#if defined(__GNUC__)
    return __builtin_fabsf(f);
#else
    return f < 0.0f ? -f : f;
#endif
}

#endif /* __ARM_FEATURE_DSP */
#endif /* EDGECC_DSP_NEAR_H */
