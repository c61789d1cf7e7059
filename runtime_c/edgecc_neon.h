/* edgecc AArch64 NEON kernels: int8 CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED.
 *
 * The compiler (edgecc/ops/_vec.py) prepares what these functions read: conv and fully-connected
 * weights as "quads" (for each block of 8 output channels, for each group of 4 consecutive taps,
 * the 8 channels' 4 weight bytes: two 16-byte vectors of 4 channels x 4 taps), depthwise weights
 * tap by tap, the bias with -input_zp * sum(w) folded in, and TFLite's per-channel multiplier
 * and shifts.
 *
 * Dot products run on the int8 values themselves. With the dot-product extension
 * (__ARM_FEATURE_DOTPROD: -march=armv8.2-a+dotprod), SDOT adds four int8 x int8 products per
 * 32-bit lane: one lane per output channel, the pixel's 4 input bytes duplicated to every lane.
 * Without it, SMULL makes exact int16 products and SADALP adds them pairwise into int32 lanes
 * (channel c's taps 0-1 and 2-3 in two lanes, added at the end with ADDP). Depthwise
 * convolution multiplies 16 channels per tap with SMULL and widens with SADDW; two taps share
 * one int16 sum (SMLAL) when the compiler checked that no weight is -128 (then |sum| <= 32512).
 * A tap outside the input reads x = input_zp (a constant zero-point row for the depthwise
 * kernel, the gathered border pixels of the conv kernel, runtime_c/edgecc_vec.h): it adds
 * exactly what the folded bias subtracted, i.e. nothing, as in TFLite Micro.
 *
 * Requantization is TFLite's MultiplyByQuantizedMultiplier exactly: SQRDMULH is
 * SaturatingRoundingDoublingHighMul, and RoundingDivideByPOT is gemmlowp's NEON form (a -1
 * fix-up for negative values, then SRSHL), both bit-exact with the reference for every input.
 *
 * Only compiled for AArch64 NEON; elsewhere this header is empty. C99, no state, no allocation,
 * no arena scratch (conv border pixels are gathered on the stack, 4 * kp bytes at most 8 KiB).
 */
#ifndef EDGECC_NEON_H
#define EDGECC_NEON_H
#if defined(__ARM_NEON) && defined(__aarch64__)
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <arm_neon.h>
#include "edgecc_vec.h"

#if defined(__ARM_FEATURE_DOTPROD)
#define EC_NEON_DOT 1
#else
#define EC_NEON_DOT 0
#endif

/* Kernels shared by every layer of a kind: one copy of the code however many layers call it. */
#define EC_NEON_SHARED static __attribute__((noinline, unused))

/* Per-channel requantization constants (padded to a multiple of 16) and the output clamp. */
typedef struct {
    const int32_t *mult;   /* TFLite multiplier */
    const int32_t *left;   /* left shift (TFLite shift > 0) */
    const int32_t *right;  /* right shift (TFLite shift < 0) */
    int32_t out_zp, act_min, act_max;
} ec_neon_rq;

/* TFLite's MultiplyByQuantizedMultiplier + out_zp for channels c..c+3. */
static inline int32x4_t ec_neon_requant4(int32x4_t acc, const ec_neon_rq *q, int c) {
    const int32x4_t neg_e = vnegq_s32(vld1q_s32(q->right + c));
    int32x4_t x = vqrdmulhq_s32(vshlq_s32(acc, vld1q_s32(q->left + c)), vld1q_s32(q->mult + c));
    /* ties away from zero: SRSHL rounds half up, so negative values first move down by one */
    const int32x4_t fixup = vshrq_n_s32(vandq_s32(x, neg_e), 31);
    x = vrshlq_s32(vqaddq_s32(x, fixup), neg_e);
    return vaddq_s32(x, vdupq_n_s32(q->out_zp));
}

/* Requantize 16 channels c..c+15 (a0..a3, 4 each), saturate to int8, clamp, store n (1..16). */
static inline void ec_neon_out16(int8_t *y, int32x4_t a0, int32x4_t a1, int32x4_t a2,
                                 int32x4_t a3, const ec_neon_rq *q, int c, int n) {
    const int16x8_t lo = vcombine_s16(vqmovn_s32(ec_neon_requant4(a0, q, c)),
                                      vqmovn_s32(ec_neon_requant4(a1, q, c + 4)));
    const int16x8_t hi = vcombine_s16(vqmovn_s32(ec_neon_requant4(a2, q, c + 8)),
                                      vqmovn_s32(ec_neon_requant4(a3, q, c + 12)));
    int8x16_t v = vcombine_s8(vqmovn_s16(lo), vqmovn_s16(hi));
    v = vminq_s8(vmaxq_s8(v, vdupq_n_s8((int8_t)q->act_min)), vdupq_n_s8((int8_t)q->act_max));
    if (n >= 16) {
        vst1q_s8(y, v);
    } else {
        int8_t t[16];
        vst1q_s8(t, v);
        memcpy(y, t, (size_t)n);
    }
}

/* The same for 8 channels c..c+7, storing n (1..8). */
static inline void ec_neon_out8(int8_t *y, int32x4_t a0, int32x4_t a1, const ec_neon_rq *q,
                                int c, int n) {
    const int16x8_t h = vcombine_s16(vqmovn_s32(ec_neon_requant4(a0, q, c)),
                                     vqmovn_s32(ec_neon_requant4(a1, q, c + 4)));
    int8x8_t v = vqmovn_s16(h);
    v = vmin_s8(vmax_s8(v, vdup_n_s8((int8_t)q->act_min)), vdup_n_s8((int8_t)q->act_max));
    if (n >= 8) {
        vst1_s8(y, v);
    } else {
        int8_t t[8];
        vst1_s8(t, v);
        memcpy(y, t, (size_t)n);
    }
}

/* A pixel's 4 input bytes in every 32-bit lane. */
static inline int8x16_t ec_neon_dup4(const int8_t *f) {
    int32_t v;
    memcpy(&v, f, 4);
    return vreinterpretq_s8_s32(vdupq_n_s32(v));
}

#if EC_NEON_DOT
#define EC_NEON_MAC(acc, w, x) vdotq_s32((acc), (w), (x))
#else
/* 4 channels x 4 taps (w) against 4 input bytes (x, duplicated): lanes (c0 taps 0-1, c0 taps
 * 2-3, c1 ...) in lo (c0, c1) and hi (c2, c3); ADDP puts the channels back together. */
static inline void ec_neon_mac2(int32x4_t *lo, int32x4_t *hi, int8x16_t w, int8x16_t x) {
    *lo = vpadalq_s16(*lo, vmull_s8(vget_low_s8(w), vget_low_s8(x)));
    *hi = vpadalq_s16(*hi, vmull_high_s8(w, x));
}
#endif

/* ---------------------------------------------------------------------------------- CONV_2D */

/* Convolution as blocks of 4 output pixels x 16 output channels (SDOT) or x 8 (SMULL), over the
 * quads; pixels read in place or gathered at the borders (ec_vec_block). */
EC_NEON_SHARED void ec_neon_conv(const ec_vec_conv_geom *g, const int8_t *x, int8_t *y,
                                 const int8_t *w, const int32_t *bias, const ec_neon_rq *q) {
    const int kp = g->kp, qs = g->seg_p / 4;
    int8_t buf[4 * EC_VEC_MAX_KP];
    ptrdiff_t soff[EC_VEC_MAX_SEGS], goff[EC_VEC_MAX_SEGS];
    ec_vec_pos pos = {0, 0, 0};
    int p0, s;
    ec_vec_segments(g, soff, goff);
    for (p0 = 0; p0 < g->pixels; p0 += 4) {
        const int np = g->pixels - p0 < 4 ? g->pixels - p0 : 4;
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
                int8_t *yp = y + (size_t)(p0 + i) * g->out_c + c;
                if (two)
                    ec_neon_out16(yp, a[i][0], a[i][1], a[i][2], a[i][3], q, c, g->out_c - c);
                else
                    ec_neon_out8(yp, a[i][0], a[i][1], q, c, g->out_c - c);
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
                ec_neon_out8(y + (size_t)(p0 + i) * g->out_c + c, r0, r1, q, c, g->out_c - c);
            }
        }
#endif
    }
}

/* ------------------------------------------------------------------------- FULLY_CONNECTED */

/* y[b][u] for every batch row, read in place (a last partial quad from a 4-byte copy): 16 units
 * at a time over the quads (8 for the rest). */
EC_NEON_SHARED void ec_neon_fc(int batches, int depth, int kp, int units, int ocp,
                               const int8_t *x, int8_t *y, const int8_t *w, const int32_t *bias,
                               const ec_neon_rq *q) {
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
                ec_neon_out16(y + c, a0, a1, a2, a3, q, c, units - c);
            else
                ec_neon_out8(y + c, a0, a1, q, c, units - c);
        }
    }
}

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
 * channels (8 for the last block) over the tap pairs. */
EC_NEON_SHARED void ec_neon_dw(const ec_neon_dw_geom *g, const int8_t *x, int8_t *y,
                               const int8_t *w, const int32_t *bias, const ec_neon_rq *q,
                               const int8_t *zrow) {
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
                    ec_neon_out16(yp + c, a0, a1, a2, a3, q, c, 16);
                }
                if (c < C) {  /* 8 channels left */
                    int32x4_t a0 = vld1q_s32(bias + c), a1 = vld1q_s32(bias + c + 4);
                    const int8_t *wp = w + c;
                    int k;
                    for (k = 0; k < g->pairs; ++k, wp += 2 * C)
                        ec_neon_dw8(&a0, &a1, vld1_s8(tp[2 * k] + c), vld1_s8(wp),
                                    vld1_s8(tp[2 * k + 1] + c), vld1_s8(wp + C), g->pair_sum);
                    ec_neon_out8(yp + c, a0, a1, q, c, 8);
                }
            }
        }
    }
}

#endif /* __ARM_NEON && __aarch64__ */
#endif /* EDGECC_NEON_H */
