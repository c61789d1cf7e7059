/* edgecc AArch64 NEON kernel: int8 DEPTHWISE_CONV_2D (conventions: neon/common.h). */
#ifndef EDGECC_NEON_DEPTHWISE_CONV_2D_H
#define EDGECC_NEON_DEPTHWISE_CONV_2D_H
#if defined(__ARM_NEON) && defined(__aarch64__)
#include "common.h"

/* ----------------------------------------------------------------------- DEPTHWISE_CONV_2D */

typedef struct {
    int32_t batches, in_h, in_w, chans, out_h, out_w;
    int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_t, pad_l;
    int32_t pairs;                  /* (k_h * k_w + 1) / 2 tap pairs */
    int32_t pair_sum;               /* no weight is -128: two products share an int16 sum */
} ec_neon_dw_geom;

#define EC_NEON_DW_MAX_TAPS 64

/* 8 channels of taps a and b (weights wa, wb) added to acc (4 + 4 lanes). */
static inline void ec_neon_dw8(int32x4_t *a0, int32x4_t *a1, int8x8_t xa, int8x8_t wa,
                               int8x8_t xb, int8x8_t wb, int pair_sum) {
    int16x8_t p = vmull_s8(xa, wa);
    if (pair_sum) {
        p = vmlal_s8(p, xb, wb);
    } else {
        const int16x8_t p2 = vmull_s8(xb, wb);
        *a0 = vaddw_s16(*a0, vget_low_s16(p2));
        *a1 = vaddw_high_s16(*a1, p2);
    }
    *a0 = vaddw_s16(*a0, vget_low_s16(p));
    *a1 = vaddw_high_s16(*a1, p);
}

/* Depth multiplier 1, channels a multiple of 8. Weights: tap by tap, all channels of a tap
 * together (an odd tap count gets a zero tap). Each output pixel collects its taps' input
 * pointers (zrow, a constant row of input_zp bytes, for a tap outside the input), then runs 16
 * channels (8 for the last block) over the tap pairs. `onnx`: the epilogue. */
EC_NEON_BODY void ec_neon_depthwise_conv_2d_taps(const ec_neon_dw_geom *g, const int8_t *x,
                                                 int8_t *y, const int8_t *w, const int32_t *bias,
                                                 const ec_neon_rq *q, const int8_t *zrow,
                                                 int onnx) {
    const int C = g->chans;
    const int8_t *tp[EC_NEON_DW_MAX_TAPS + 1];
    ptrdiff_t off[EC_NEON_DW_MAX_TAPS];
    int b, oy, ox;
    ec_vec_dw_offsets(g->k_h, g->k_w, g->dil_h, g->dil_w, g->in_w, C, off);
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + (size_t)b * g->in_h * g->in_w * C;
        for (oy = 0; oy < g->out_h; ++oy) {
            const int iy0 = oy * g->stride_h - g->pad_t;
            for (ox = 0; ox < g->out_w; ++ox) {
                const int ix0 = ox * g->stride_w - g->pad_l;
                int8_t *yp = y + (((size_t)b * g->out_h + oy) * g->out_w + ox) * C;
                int c;
                ec_vec_dw_taps(xb, g->in_h, g->in_w, C, g->k_h, g->k_w, g->dil_h, g->dil_w, iy0,
                               ix0, off, zrow, tp);
                for (c = 0; c + 16 <= C; c += 16) {
                    int32x4_t a0 = vld1q_s32(bias + c), a1 = vld1q_s32(bias + c + 4);
                    int32x4_t a2 = vld1q_s32(bias + c + 8), a3 = vld1q_s32(bias + c + 12);
                    const int8_t *wp = w + c;
                    int k;
                    for (k = 0; k < g->pairs; ++k, wp += 2 * C) {
                        const int8x16_t xa = vld1q_s8(tp[2 * k] + c), xb2 = vld1q_s8(tp[2 * k + 1] + c);
                        const int8x16_t wa = vld1q_s8(wp), wb = vld1q_s8(wp + C);
                        ec_neon_dw8(&a0, &a1, vget_low_s8(xa), vget_low_s8(wa), vget_low_s8(xb2),
                                    vget_low_s8(wb), g->pair_sum);
                        ec_neon_dw8(&a2, &a3, vget_high_s8(xa), vget_high_s8(wa), vget_high_s8(xb2),
                                    vget_high_s8(wb), g->pair_sum);
                    }
                    ec_neon_out16(yp + c, a0, a1, a2, a3, q, c, 16, onnx);
                }
                if (c < C) {  /* 8 channels left */
                    int32x4_t a0 = vld1q_s32(bias + c), a1 = vld1q_s32(bias + c + 4);
                    const int8_t *wp = w + c;
                    int k;
                    for (k = 0; k < g->pairs; ++k, wp += 2 * C)
                        ec_neon_dw8(&a0, &a1, vld1_s8(tp[2 * k] + c), vld1_s8(wp),
                                    vld1_s8(tp[2 * k + 1] + c), vld1_s8(wp + C), g->pair_sum);
                    ec_neon_out8(yp + c, a0, a1, q, c, 8, onnx);
                }
            }
        }
    }
}

/* TFLite's epilogue (ec_neon_rq's mult, left, right) */
EC_NEON_SHARED void ec_neon_depthwise_conv_2d_taps_s8(const ec_neon_dw_geom *g, const int8_t *x,
                                                      int8_t *y, const int8_t *w,
                                                      const int32_t *bias, const ec_neon_rq *q,
                                                      const int8_t *zrow) {
    ec_neon_depthwise_conv_2d_taps(g, x, y, w, bias, q, zrow, 0);
}

/* onnxruntime's epilogue (ec_neon_rq's scale) */
EC_NEON_SHARED void ec_neon_depthwise_conv_2d_taps_onnx_s8(const ec_neon_dw_geom *g,
                                                           const int8_t *x, int8_t *y,
                                                           const int8_t *w, const int32_t *bias,
                                                           const ec_neon_rq *q,
                                                           const int8_t *zrow) {
    ec_neon_depthwise_conv_2d_taps(g, x, y, w, bias, q, zrow, 1);
}

#endif /* __ARM_NEON && __aarch64__ */
#endif /* EDGECC_NEON_DEPTHWISE_CONV_2D_H */
