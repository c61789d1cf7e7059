/* edgecc Cortex-M DSP kernel: a one-row Gemm group onnxruntime runs in float32 (default
 * --onnx-numerics x86, edgecc/ops/_ort_near.py; conventions: dsp/common.h). */
#ifndef EDGECC_DSP_FC_NEAR_H
#define EDGECC_DSP_FC_NEAR_H
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include "common.h"
#include "near.h" /* ec_dsp_tap_abs; ec_ortn_fc_byte: the estimate, its near-tie test and path */

/* y[u] for every unit: the exact accumulators 4 units at a time (the input's 4 bytes extended
 * once, SMLAD against each unit's weight word; the zero point folded into L->fold), then
 * ec_ortn_fc_byte. w: [units][depth] int8, units and depth multiples of 4. Plain C with ACLE
 * intrinsics: the same code at every optimization level. */
EC_DSP_SHARED void ec_dsp_fc_near_s8(const ec_ortn_fc *L, const int8_t *x, int8_t *y,
                                     const int8_t *w) {
    const int32_t depth = L->depth, units = L->units;
    const float fa = (float)ec_dsp_tap_abs(x, depth, L->in_zp); /* sum |x - zx| */
    const int32_t z2 = (int32_t)(0x00010001u * (uint16_t)L->in_zp);
    int32_t u, i, sq = 0;
    float xn;
    for (i = 0; i < depth; i += 4) { /* sum (x - zx)^2: halves of x - zx by SSUB16, SMLAD */
        const int32_t xv = ec_dsp_ld32(x + i);
        const int32_t de = __ssub16(__sxtb16(xv), z2), dd = __ssub16(ec_dsp_sxtb16_r8(xv), z2);
        sq = __smlad(de, de, sq);
        sq = __smlad(dd, dd, sq);
    }
    xn = ec_ortn_row_norm(sq);
    for (u = 0; u < units; u += 4) {
        const int8_t *w0 = w + u * depth, *w1 = w0 + depth, *w2 = w1 + depth, *w3 = w2 + depth;
        int32_t a0 = L->fold[u], a1 = L->fold[u + 1], a2 = L->fold[u + 2], a3 = L->fold[u + 3];
        for (i = 0; i < depth; i += 4) {
            const int32_t xv = ec_dsp_ld32(x + i), xe = __sxtb16(xv), xo = ec_dsp_sxtb16_r8(xv);
            int32_t v = ec_dsp_ld32(w0 + i);
            a0 = __smlad(xe, __sxtb16(v), a0);
            a0 = __smlad(xo, ec_dsp_sxtb16_r8(v), a0);
            v = ec_dsp_ld32(w1 + i);
            a1 = __smlad(xe, __sxtb16(v), a1);
            a1 = __smlad(xo, ec_dsp_sxtb16_r8(v), a1);
            v = ec_dsp_ld32(w2 + i);
            a2 = __smlad(xe, __sxtb16(v), a2);
            a2 = __smlad(xo, ec_dsp_sxtb16_r8(v), a2);
            v = ec_dsp_ld32(w3 + i);
            a3 = __smlad(xe, __sxtb16(v), a3);
            a3 = __smlad(xo, ec_dsp_sxtb16_r8(v), a3);
        }
        y[u] = ec_ortn_fc_byte(L, x, w0, u, a0, fa, xn);
        y[u + 1] = ec_ortn_fc_byte(L, x, w1, u + 1, a1, fa, xn);
        y[u + 2] = ec_ortn_fc_byte(L, x, w2, u + 2, a2, fa, xn);
        y[u + 3] = ec_ortn_fc_byte(L, x, w3, u + 3, a3, fa, xn);
    }
}

#endif /* __ARM_FEATURE_DSP */
#endif /* EDGECC_DSP_FC_NEAR_H */
