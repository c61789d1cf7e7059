/* edgecc AArch64 NEON kernel: int8 CONV_2D (conventions: neon/common.h). */
#ifndef EDGECC_NEON_CONV_2D_H
#define EDGECC_NEON_CONV_2D_H
#if defined(__ARM_NEON) && defined(__aarch64__)
#include "common.h"

/* ---------------------------------------------------------------------------------- CONV_2D */

/* Convolution as blocks of 4 output pixels x 16 output channels (SDOT) or x 8 (SMULL), over the
 * quads; pixels read in place or gathered at the borders (ec_vec_block). `onnx`: the epilogue.
 * A block reads all its input before it writes (edgecc/lower/neon/conv.py's streaming declaration):
 * with more than one channel block, its 4 pixels' outputs are staged in buf after the gathered
 * pixels (kp + out_c <= EC_VEC_MAX_KP), then copied out. */
EC_NEON_BODY void ec_neon_conv_2d_4px(const ec_vec_conv_geom *g, const int8_t *x, int8_t *y,
                                      const int8_t *w, const int32_t *bias, const ec_neon_rq *q,
                                      int onnx) {
    const int kp = g->kp, qs = g->seg_p / 4;
    int8_t buf[4 * EC_VEC_MAX_KP];
    ptrdiff_t soff[EC_VEC_MAX_SEGS], goff[EC_VEC_MAX_SEGS];
    ec_vec_pos pos = {0, 0, 0};
    int p0, s;
    const int staged = g->ocp > (EC_NEON_DOT ? 16 : 8) && kp + g->out_c <= EC_VEC_MAX_KP;
    ec_vec_segments(g, soff, goff);
    for (p0 = 0; p0 < g->pixels; p0 += 4) {
        const int np = g->pixels - p0 < 4 ? g->pixels - p0 : 4;
        int8_t *const yb = staged ? buf + 4 * kp : y + (size_t)p0 * g->out_c;  /* its pixels */
        const int8_t *base[4];
        const ptrdiff_t *off[4];
        int c, i;
        ec_vec_block(g, x, &pos, np, buf, soff, goff, base, off);
#if EC_NEON_DOT
        for (c = 0; c < g->ocp; c += 16) {
            const int8_t *w0 = w + (size_t)c * kp;
            const int two = c + 8 < g->ocp;  /* a second block of 8 channels */
            const int8_t *w1 = two ? w0 + 8 * kp : w0;
            int32x4_t a[4][4];
            int k;
            for (i = 0; i < 4; ++i) {
                a[i][0] = vld1q_s32(bias + c);
                a[i][1] = vld1q_s32(bias + c + 4);
                a[i][2] = vld1q_s32(bias + c + 8);
                a[i][3] = vld1q_s32(bias + c + 12);
            }
            for (s = 0; s < g->segs; ++s) {
                const int8_t *f0 = base[0] + off[0][s], *f1 = base[1] + off[1][s];
                const int8_t *f2 = base[2] + off[2][s], *f3 = base[3] + off[3][s];
                for (k = 0; k < qs; ++k, w0 += 32, w1 += 32) {
                    const int8x16_t v0 = vld1q_s8(w0), v1 = vld1q_s8(w0 + 16);
                    const int8x16_t v2 = vld1q_s8(w1), v3 = vld1q_s8(w1 + 16);
                    int8x16_t u = ec_neon_dup4(f0 + 4 * k);
                    a[0][0] = vdotq_s32(a[0][0], v0, u);
                    a[0][1] = vdotq_s32(a[0][1], v1, u);
                    a[0][2] = vdotq_s32(a[0][2], v2, u);
                    a[0][3] = vdotq_s32(a[0][3], v3, u);
                    u = ec_neon_dup4(f1 + 4 * k);
                    a[1][0] = vdotq_s32(a[1][0], v0, u);
                    a[1][1] = vdotq_s32(a[1][1], v1, u);
                    a[1][2] = vdotq_s32(a[1][2], v2, u);
                    a[1][3] = vdotq_s32(a[1][3], v3, u);
                    u = ec_neon_dup4(f2 + 4 * k);
                    a[2][0] = vdotq_s32(a[2][0], v0, u);
                    a[2][1] = vdotq_s32(a[2][1], v1, u);
                    a[2][2] = vdotq_s32(a[2][2], v2, u);
                    a[2][3] = vdotq_s32(a[2][3], v3, u);
                    u = ec_neon_dup4(f3 + 4 * k);
                    a[3][0] = vdotq_s32(a[3][0], v0, u);
                    a[3][1] = vdotq_s32(a[3][1], v1, u);
                    a[3][2] = vdotq_s32(a[3][2], v2, u);
                    a[3][3] = vdotq_s32(a[3][3], v3, u);
                }
            }
            for (i = 0; i < np; ++i) {
                int8_t *yp = yb + (size_t)i * g->out_c + c;
                if (two)
                    ec_neon_out16(yp, a[i][0], a[i][1], a[i][2], a[i][3], q, c, g->out_c - c, onnx);
                else
                    ec_neon_out8(yp, a[i][0], a[i][1], q, c, g->out_c - c, onnx);
            }
        }
#else
        for (c = 0; c < g->ocp; c += 8) {
            const int8_t *w0 = w + (size_t)c * kp;
            int32x4_t lo[4][2], hi[4][2];
            int k;
            for (i = 0; i < 4; ++i)
                lo[i][0] = lo[i][1] = hi[i][0] = hi[i][1] = vdupq_n_s32(0);
            for (s = 0; s < g->segs; ++s) {
                const int8_t *f[4];
                for (i = 0; i < 4; ++i) f[i] = base[i] + off[i][s];
                for (k = 0; k < qs; ++k, w0 += 32) {
                    const int8x16_t v0 = vld1q_s8(w0), v1 = vld1q_s8(w0 + 16);
                    for (i = 0; i < 4; ++i) {
                        const int8x16_t u = ec_neon_dup4(f[i] + 4 * k);
                        ec_neon_mac2(&lo[i][0], &hi[i][0], v0, u);
                        ec_neon_mac2(&lo[i][1], &hi[i][1], v1, u);
                    }
                }
            }
            for (i = 0; i < np; ++i) {
                const int32x4_t r0 = vaddq_s32(vld1q_s32(bias + c), vpaddq_s32(lo[i][0], hi[i][0]));
                const int32x4_t r1 = vaddq_s32(vld1q_s32(bias + c + 4), vpaddq_s32(lo[i][1], hi[i][1]));
                ec_neon_out8(yb + (size_t)i * g->out_c + c, r0, r1, q, c, g->out_c - c, onnx);
            }
        }
#endif
        if (staged) memcpy(y + (size_t)p0 * g->out_c, yb, (size_t)np * g->out_c);
    }
}

/* TFLite's epilogue (ec_neon_rq's mult, left, right) */
EC_NEON_SHARED void ec_neon_conv_2d_4px_s8(const ec_vec_conv_geom *g, const int8_t *x, int8_t *y,
                                           const int8_t *w, const int32_t *bias,
                                           const ec_neon_rq *q) {
    ec_neon_conv_2d_4px(g, x, y, w, bias, q, 0);
}

/* onnxruntime's epilogue (ec_neon_rq's scale) */
EC_NEON_SHARED void ec_neon_conv_2d_4px_onnx_s8(const ec_vec_conv_geom *g, const int8_t *x,
                                                int8_t *y, const int8_t *w, const int32_t *bias,
                                                const ec_neon_rq *q) {
    ec_neon_conv_2d_4px(g, x, y, w, bias, q, 1);
}

#endif /* __ARM_NEON && __aarch64__ */
#endif /* EDGECC_NEON_CONV_2D_H */
