/* edgecc Cortex-M DSP kernel: int8 DEPTHWISE_CONV_2D on channel planes
 * (conventions: dsp/common.h). */
#ifndef EDGECC_DSP_DEPTHWISE_CONV_2D_H
#define EDGECC_DSP_DEPTHWISE_CONV_2D_H
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include "common.h"
#include "../edgecc_rt.h" /* ec_onnx_rq: the ONNX epilogue */

/* ---------------------------------------------------------------------------------------
 * DEPTHWISE_CONV_2D on channel planes. Each input row is transposed once into k_h ring slots of
 * int16 planes, [slot][channel][wp] (column 0 = input column -pad_l; padding columns and
 * padding rows hold the input zero point, which the folded bias cancels exactly). A channel's
 * filter row then meets consecutive halfwords, so SMLAD takes two taps at once:
 *   3x3 stride 1, outputs j, j+1 from A = (x_j, x_j+1), B = (x_j+2, x_j+3) and the weight
 *     pairs W01 = (w0, w1), W12 = (w1, w2):  out_j += SMLAD(A, W01) + SMLABT(B, W12),
 *     out_j+1 += SMLATB(A, W01) + SMLAD(B, W12);
 *   3x3 stride 2, outputs j, j+2: out_j += SMLAD(A, W01) + SMLABT(B, W12),
 *     out_j+2 += SMLAD(B, W01) + SMLABT(C, W12) with C = (x_j+4, x_j+5);
 *   any other k_h x k_w (any stride, no dilation): one output at a time, taps in pairs
 *     (w0, w1), (w2, w3), ... (k_w padded to even with a zero weight).
 * Per channel the compiler stores one record: the weight words (scaled by 2^L: the accumulator
 * is what the requantization wants), then bias * 2^L, m, N, e; with onnxruntime's epilogue
 * (..._planes_onnx_s8, L = 0) the last three are the float32 scale's bits, the zero point, a flag.
 */
typedef struct {
    int32_t batches, in_h, in_w, in_c, out_h, out_w, out_c, dm;
    int32_t k_h, k_w, s_h, s_w, pad_t, pad_l;
    int32_t wp;         /* halfwords per plane row (even) */
    int32_t wpr;        /* weight words per filter row: 2 for the 3x3 kernels, ceil(k_w/2) else */
    int32_t kind;       /* 1: 3x3 stride 1, 2: 3x3 stride 2, 0: general */
    int32_t pad_val, lo, hi;
} ec_dsp_dw_geom;

#define EC_DSP_DW_MAX_KH 8
#define EC_DSP_INLINE static inline __attribute__((always_inline)) EC_DSP_NOSCHED

/* Input row (in_w x in_c NHWC bytes) -> the planes of one slot, columns pad_l .. pad_l+in_w-1. */
static inline EC_DSP_NOSCHED void ec_dsp_dw_load(const ec_dsp_dw_geom *g, const int8_t *row,
                                                 int16_t *slot) {
    const int32_t c_n = g->in_c, w_n = g->in_w, wp = g->wp;
    int32_t c, x;
    if ((c_n & 3) == 0) {
        for (c = 0; c < c_n; c += 4) {
            int16_t *d0 = slot + c * wp + g->pad_l;
            const int8_t *s = row + c;
            for (x = 0; x + 2 <= w_n; x += 2) {
                const int32_t p = ec_dsp_ld32(s), q = ec_dsp_ld32(s + c_n);
                const int32_t p02 = __sxtb16(p), p13 = ec_dsp_sxtb16_r8(p);
                const int32_t q02 = __sxtb16(q), q13 = ec_dsp_sxtb16_r8(q);
                ec_dsp_st32(d0 + x, (int32_t)(((uint32_t)p02 & 0xFFFFu) | ((uint32_t)q02 << 16)));
                ec_dsp_st32(d0 + wp + x, (int32_t)(((uint32_t)p13 & 0xFFFFu) | ((uint32_t)q13 << 16)));
                ec_dsp_st32(d0 + 2 * wp + x,
                        (int32_t)(((uint32_t)p02 >> 16) | ((uint32_t)q02 & 0xFFFF0000u)));
                ec_dsp_st32(d0 + 3 * wp + x,
                        (int32_t)(((uint32_t)p13 >> 16) | ((uint32_t)q13 & 0xFFFF0000u)));
                s += 2 * c_n;
            }
            if (x < w_n) {
                d0[x] = s[0];
                d0[wp + x] = s[1];
                d0[2 * wp + x] = s[2];
                d0[3 * wp + x] = s[3];
            }
        }
        return;
    }
    for (x = 0; x < w_n; ++x) {
        for (c = 0; c < c_n; ++c) slot[c * wp + g->pad_l + x] = row[x * c_n + c];
    }
}

static inline void ec_dsp_fill16(int16_t *d, int32_t v, int32_t n) { /* n even, d aligned */
    const int32_t word = (int32_t)(((uint32_t)v & 0xFFFFu) * 0x00010001u);
    int32_t i;
    for (i = 0; i < n; i += 2) ec_dsp_st32(d + i, word);
}

/* ec_dsp_rq, clamped, with (m, N, e) from q[0..2]. */
EC_DSP_INLINE int8_t ec_dsp_rq_out(int32_t a, const int32_t *q, int full, int32_t lo,
                                      int32_t hi) {
    int32_t t;
    __asm__("smmlar %0, %1, %2, %3" : "=r"(t) : "r"(a), "r"(q[0]), "r"(q[1]));
    t = (t + (a >> 31)) >> q[2];
    return full ? (int8_t)__ssat(t, 8) : ec_dsp_clamp8(t, lo, hi);
}

/* The epilogue by mode (a constant at each call site): 0 TFLite's clamp, 1 TFLite's full-range
 * saturation (m, N, e); EC_DSP_ONNX / EC_DSP_ONNX_FULL onnxruntime's float32 epilogue with the
 * clamp to [lo, hi] / the plain int8 saturation (ec_dsp_onnx_val: the float32 scale, the output
 * zero point and a flag per channel; the planes kernel keeps them in each channel's record, the
 * in-place kernel per channel quad: 4 scales, the zero point 4 times, 4 flags). */
#define EC_DSP_ONNX 2
#define EC_DSP_ONNX_FULL 3
/* The in-place kernel's EC_DSP_LINE: onnxruntime's epilogue as integer lines proven equal to it
 * on every accumulator (ec_dsp_line; per channel quad: the 4 multipliers, the 4 constants' low
 * words, their high words), or for a quad marked EC_DSP_NO_LINE (common.h) the float32 one;
 * then the clamp to [lo, hi]. */
#define EC_DSP_LINE 4

/* One output by mode, its record's epilogue words at q: (m, N, e) or, for the ONNX modes,
 * (the float32 scale's bits, the output zero point, the flag). */
EC_DSP_INLINE int8_t ec_dsp_rq_mode(int32_t a, const int32_t *q, int mode, int32_t lo,
                                    int32_t hi) {
    if (mode >= EC_DSP_ONNX) {
        float s;
        int32_t v;
        memcpy(&s, q, 4);
        v = __ssat(ec_dsp_onnx_val(a, s, q[1], q[2]), 8);
        return mode == EC_DSP_ONNX_FULL ? (int8_t)v : ec_dsp_clamp8(v, lo, hi);
    }
    return ec_dsp_rq_out(a, q, mode, lo, hi);
}

/* One output row of one channel: rec = its record, p[fy] = its plane row of filter row fy. */
EC_DSP_INLINE void ec_dsp_dw_row(const ec_dsp_dw_geom *g, const int16_t *p0,
                                    const int16_t *p1, const int16_t *p2,
                                    const int16_t *const *p, const int32_t *rec, int8_t *y,
                                    int mode) {
    const int32_t step = g->out_c, out_w = g->out_w, lo = g->lo, hi = g->hi;
    int32_t ox = 0;
    if (g->kind == 0) {
        const int32_t kh = g->k_h, wpr = g->wpr, sw = g->s_w, nw = kh * wpr;
        for (; ox < out_w; ++ox) {
            int32_t acc = rec[nw], fy, t;
            const int32_t *wk = rec;
            for (fy = 0; fy < kh; ++fy) {
                const int16_t *r = p[fy] + ox * sw;
                for (t = 0; t < wpr; ++t) acc = __smlad(ec_dsp_ld32(r + 2 * t), *wk++, acc);
            }
            *y = ec_dsp_rq_mode(acc, rec + nw + 1, mode, lo, hi);
            y += step;
        }
        return;
    }
    if (g->kind == 1) {
        for (; ox + 2 <= out_w; ox += 2) {
            int32_t a0 = rec[6], a1 = a0, A, B;
            A = ec_dsp_ld32(p0); B = ec_dsp_ld32(p0 + 2); p0 += 2;
            a0 = __smlad(A, rec[0], a0); a0 = __smlabt(B, rec[1], a0);
            a1 = __smlatb(A, rec[0], a1); a1 = __smlad(B, rec[1], a1);
            A = ec_dsp_ld32(p1); B = ec_dsp_ld32(p1 + 2); p1 += 2;
            a0 = __smlad(A, rec[2], a0); a0 = __smlabt(B, rec[3], a0);
            a1 = __smlatb(A, rec[2], a1); a1 = __smlad(B, rec[3], a1);
            A = ec_dsp_ld32(p2); B = ec_dsp_ld32(p2 + 2); p2 += 2;
            a0 = __smlad(A, rec[4], a0); a0 = __smlabt(B, rec[5], a0);
            a1 = __smlatb(A, rec[4], a1); a1 = __smlad(B, rec[5], a1);
            y[0] = ec_dsp_rq_mode(a0, rec + 7, mode, lo, hi);
            y[step] = ec_dsp_rq_mode(a1, rec + 7, mode, lo, hi);
            y += 2 * step;
        }
    } else {
        for (; ox + 2 <= out_w; ox += 2) {
            int32_t a0 = rec[6], a1 = a0, A, B, C;
            A = ec_dsp_ld32(p0); B = ec_dsp_ld32(p0 + 2); C = ec_dsp_ld32(p0 + 4); p0 += 4;
            a0 = __smlad(A, rec[0], a0); a0 = __smlabt(B, rec[1], a0);
            a1 = __smlad(B, rec[0], a1); a1 = __smlabt(C, rec[1], a1);
            A = ec_dsp_ld32(p1); B = ec_dsp_ld32(p1 + 2); C = ec_dsp_ld32(p1 + 4); p1 += 4;
            a0 = __smlad(A, rec[2], a0); a0 = __smlabt(B, rec[3], a0);
            a1 = __smlad(B, rec[2], a1); a1 = __smlabt(C, rec[3], a1);
            A = ec_dsp_ld32(p2); B = ec_dsp_ld32(p2 + 2); C = ec_dsp_ld32(p2 + 4); p2 += 4;
            a0 = __smlad(A, rec[4], a0); a0 = __smlabt(B, rec[5], a0);
            a1 = __smlad(B, rec[4], a1); a1 = __smlabt(C, rec[5], a1);
            y[0] = ec_dsp_rq_mode(a0, rec + 7, mode, lo, hi);
            y[step] = ec_dsp_rq_mode(a1, rec + 7, mode, lo, hi);
            y += 2 * step;
        }
    }
    if (ox < out_w) { /* odd width: the last output alone */
        int32_t acc = rec[6];
        acc = __smlad(ec_dsp_ld32(p0), rec[0], acc); acc = __smlabt(ec_dsp_ld32(p0 + 2), rec[1], acc);
        acc = __smlad(ec_dsp_ld32(p1), rec[2], acc); acc = __smlabt(ec_dsp_ld32(p1 + 2), rec[3], acc);
        acc = __smlad(ec_dsp_ld32(p2), rec[4], acc); acc = __smlabt(ec_dsp_ld32(p2 + 2), rec[5], acc);
        *y = ec_dsp_rq_mode(acc, rec + 7, mode, lo, hi);
    }
}

/* All output rows, all channels; mode: the epilogue (ec_dsp_rq_mode). */
EC_DSP_INLINE void ec_dsp_dw_rows(const ec_dsp_dw_geom *g, const int8_t *x, int8_t *y,
                                     const int32_t *recs, int16_t *planes, int mode) {
    const int32_t slot_n = g->in_c * g->wp, kh = g->k_h, wp = g->wp, dm = g->dm;
    const int32_t rec_n = kh * g->wpr + 4;
    int32_t held[EC_DSP_DW_MAX_KH];
    const int16_t *r[EC_DSP_DW_MAX_KH];
    int32_t b, oy, fy, oc;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + b * g->in_h * g->in_w * g->in_c;
        ec_dsp_fill16(planes, g->pad_val, kh * slot_n);
        for (fy = 0; fy < kh; ++fy) held[fy] = INT32_MIN; /* filled with padding, no row yet */
        for (oy = 0; oy < g->out_h; ++oy) {
            int8_t *yr = y + (b * g->out_h + oy) * g->out_w * g->out_c;
            const int32_t *rec = recs;
            for (fy = 0; fy < kh; ++fy) {
                const int32_t row = oy * g->s_h - g->pad_t + fy;
                const int32_t s = (oy * g->s_h + fy) % kh;
                int16_t *slot = planes + s * slot_n;
                if (held[s] != row) {
                    if (row < 0 || row >= g->in_h) ec_dsp_fill16(slot, g->pad_val, slot_n);
                    else ec_dsp_dw_load(g, xb + row * g->in_w * g->in_c, slot);
                    held[s] = row;
                }
                r[fy] = slot;
            }
            for (oc = 0; oc < g->out_c; ++oc, rec += rec_n) {
                const int32_t off = (dm == 1 ? oc : oc / dm) * wp;
                if (g->kind == 0) {
                    const int16_t *rc[EC_DSP_DW_MAX_KH];
                    for (fy = 0; fy < kh; ++fy) rc[fy] = r[fy] + off;
                    ec_dsp_dw_row(g, rc[0], rc[0], rc[0], rc, rec, yr + oc, mode);
                } else {
                    ec_dsp_dw_row(g, r[0] + off, r[1] + off, r[2] + off, r, rec, yr + oc, mode);
                }
            }
        }
    }
}

/* The whole depthwise convolution; scratch: k_h * in_c * wp int16, word aligned. */
EC_DSP_SHARED void ec_dsp_depthwise_conv_2d_planes_s8(const ec_dsp_dw_geom *g, const int8_t *x, int8_t *y,
                             const int32_t *recs, uint8_t *scratch) {
    int16_t *planes = (int16_t *)(void *)scratch;
    if (g->lo == -128 && g->hi == 127) ec_dsp_dw_rows(g, x, y, recs, planes, 1);
    else ec_dsp_dw_rows(g, x, y, recs, planes, 0);
}

/* The same with onnxruntime's epilogue: each record's last 3 words are the float32 scale's
 * bits, the output zero point and the flag (weights and bias unscaled). */
EC_DSP_SHARED void ec_dsp_depthwise_conv_2d_planes_onnx_s8(const ec_dsp_dw_geom *g,
                                                           const int8_t *x, int8_t *y,
                                                           const int32_t *recs,
                                                           uint8_t *scratch) {
    int16_t *planes = (int16_t *)(void *)scratch;
    if (g->lo == -128 && g->hi == 127) ec_dsp_dw_rows(g, x, y, recs, planes, EC_DSP_ONNX_FULL);
    else ec_dsp_dw_rows(g, x, y, recs, planes, EC_DSP_ONNX);
}

#endif /* __ARM_FEATURE_DSP */
#endif /* EDGECC_DSP_DEPTHWISE_CONV_2D_H */
