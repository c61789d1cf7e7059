/* edgecc AArch64 NEON kernel: int8 FULLY_CONNECTED (conventions: neon/common.h). */
#ifndef EDGECC_NEON_FULLY_CONNECTED_H
#define EDGECC_NEON_FULLY_CONNECTED_H
#if defined(__ARM_NEON) && defined(__aarch64__)
#include "common.h"

/* ------------------------------------------------------------------------- FULLY_CONNECTED */

/* y[b][u] for every batch row, read in place (a last partial quad from a 4-byte copy): 16 units
 * at a time over the quads (8 for the rest). `onnx`: the epilogue. */
EC_NEON_BODY void ec_neon_fully_connected_quads(int batches, int depth, int kp, int units, int ocp,
                                                const int8_t *x, int8_t *y, const int8_t *w,
                                                const int32_t *bias, const ec_neon_rq *q,
                                                int onnx) {
    const int kq = kp / 4, full = depth / 4;
    int bt;
    for (bt = 0; bt < batches; ++bt, x += depth, y += units) {
        int8_t tail[4] = {0, 0, 0, 0};
        int c = 0;
        memcpy(tail, x + 4 * full, (size_t)(depth - 4 * full));
        for (; c < ocp; c += 16) {
            const int two = c + 8 < ocp;
            const int8_t *w0 = w + (size_t)c * kp, *w1 = two ? w0 + 8 * kp : w0;
            int k;
#if EC_NEON_DOT
            int32x4_t a0 = vld1q_s32(bias + c), a1 = vld1q_s32(bias + c + 4);
            int32x4_t a2 = vld1q_s32(bias + c + 8), a3 = vld1q_s32(bias + c + 12);
            for (k = 0; k < kq; ++k) {
                const int8x16_t u = ec_neon_dup4(k < full ? x + 4 * k : tail);
                a0 = vdotq_s32(a0, vld1q_s8(w0 + 32 * k), u);
                a1 = vdotq_s32(a1, vld1q_s8(w0 + 32 * k + 16), u);
                a2 = vdotq_s32(a2, vld1q_s8(w1 + 32 * k), u);
                a3 = vdotq_s32(a3, vld1q_s8(w1 + 32 * k + 16), u);
            }
#else
            int32x4_t l0 = vdupq_n_s32(0), h0 = l0, l1 = l0, h1 = l0, l2 = l0, h2 = l0, l3 = l0, h3 = l0;
            int32x4_t a0, a1, a2, a3;
            for (k = 0; k < kq; ++k) {
                const int8x16_t u = ec_neon_dup4(k < full ? x + 4 * k : tail);
                ec_neon_mac2(&l0, &h0, vld1q_s8(w0 + 32 * k), u);
                ec_neon_mac2(&l1, &h1, vld1q_s8(w0 + 32 * k + 16), u);
                ec_neon_mac2(&l2, &h2, vld1q_s8(w1 + 32 * k), u);
                ec_neon_mac2(&l3, &h3, vld1q_s8(w1 + 32 * k + 16), u);
            }
            a0 = vaddq_s32(vld1q_s32(bias + c), vpaddq_s32(l0, h0));
            a1 = vaddq_s32(vld1q_s32(bias + c + 4), vpaddq_s32(l1, h1));
            a2 = vaddq_s32(vld1q_s32(bias + c + 8), vpaddq_s32(l2, h2));
            a3 = vaddq_s32(vld1q_s32(bias + c + 12), vpaddq_s32(l3, h3));
#endif
            if (two)
                ec_neon_out16(y + c, a0, a1, a2, a3, q, c, units - c, onnx);
            else
                ec_neon_out8(y + c, a0, a1, q, c, units - c, onnx);
        }
    }
}

/* TFLite's epilogue (ec_neon_rq's mult, left, right) */
EC_NEON_SHARED void ec_neon_fully_connected_quads_s8(int batches, int depth, int kp, int units,
                                                     int ocp, const int8_t *x, int8_t *y,
                                                     const int8_t *w, const int32_t *bias,
                                                     const ec_neon_rq *q) {
    ec_neon_fully_connected_quads(batches, depth, kp, units, ocp, x, y, w, bias, q, 0);
}

/* onnxruntime's epilogue (ec_neon_rq's scale) */
EC_NEON_SHARED void ec_neon_fully_connected_quads_onnx_s8(int batches, int depth, int kp,
                                                          int units, int ocp, const int8_t *x,
                                                          int8_t *y, const int8_t *w,
                                                          const int32_t *bias,
                                                          const ec_neon_rq *q) {
    ec_neon_fully_connected_quads(batches, depth, kp, units, ocp, x, y, w, bias, q, 1);
}

#endif /* __ARM_NEON && __aarch64__ */
#endif /* EDGECC_NEON_FULLY_CONNECTED_H */
