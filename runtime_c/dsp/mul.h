/* edgecc Cortex-M DSP kernel: int8 MUL with ONNX numerics (conventions: dsp/common.h). */
#ifndef EDGECC_DSP_MUL_H
#define EDGECC_DSP_MUL_H
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include "common.h"

/* ---------------------------------------------------------------------------------------
 * MUL with ONNX numerics (onnxruntime's QLinearMul, edgecc/ops/_onnx_elt.py): per element
 * y = clamp(round_half_even(float32((a - za) * (b - zb)) * r) + zc, lo, hi); the integer
 * product is exact in float32 (|p| <= 2^16), then one float32 product and ec_dsp_onnx_val's
 * rounding, as the portable kernel computes it. b has a's shape (c = 0) or is one row of c
 * values broadcast along all but the last dimension (a squeeze-and-excitation scale).
 */
static inline __attribute__((always_inline)) int8_t ec_dsp_mul_onnx_one(int32_t p, float r,
                                                                      int32_t zc, int32_t lo,
                                                                      int32_t hi) {
    return ec_dsp_clamp8(__ssat(ec_dsp_onnx_val(p, r, zc, 0), 8), lo, hi);
}

EC_DSP_SHARED void ec_dsp_mul_onnx_s8(int32_t n, int32_t c, const int8_t *a, const int8_t *b,
                                      int8_t *y, const float *r, int32_t za, int32_t zb,
                                      int32_t zc, int32_t lo, int32_t hi) {
    const float s = r[0];
    int32_t i, j;
    if (c == 0) {
        for (i = 0; i < n; ++i) y[i] = ec_dsp_mul_onnx_one((a[i] - za) * (b[i] - zb), s, zc, lo, hi);
        return;
    }
    for (i = 0; i < n; i += c) {
        for (j = 0; j < c; ++j) {
            y[i + j] = ec_dsp_mul_onnx_one((a[i + j] - za) * (b[j] - zb), s, zc, lo, hi);
        }
    }
}

#endif /* __ARM_FEATURE_DSP */
#endif /* EDGECC_DSP_MUL_H */
