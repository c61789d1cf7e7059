/* edgecc Cortex-M DSP kernel: int8 DEPTHWISE_CONV_2D on channel planes
 * (conventions: dsp/common.h). */
#ifndef EDGECC_DSP_DEPTHWISE_CONV_2D_H
#define EDGECC_DSP_DEPTHWISE_CONV_2D_H
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include "common.h"

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
 * Per channel the compiler stores one record: the weight words (doubled: the accumulator is
 * 2 * acc, as the requantization wants), then 2 * bias, m, N, e.
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

/* One output row of one channel: rec = its record, p[fy] = its plane row of filter row fy. */
EC_DSP_INLINE void ec_dsp_dw_row(const ec_dsp_dw_geom *g, const int16_t *p0,
                                    const int16_t *p1, const int16_t *p2,
                                    const int16_t *const *p, const int32_t *rec, int8_t *y,
                                    int full) {
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
            *y = ec_dsp_rq_out(acc, rec + nw + 1, full, lo, hi);
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
            y[0] = ec_dsp_rq_out(a0, rec + 7, full, lo, hi);
            y[step] = ec_dsp_rq_out(a1, rec + 7, full, lo, hi);
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
            y[0] = ec_dsp_rq_out(a0, rec + 7, full, lo, hi);
            y[step] = ec_dsp_rq_out(a1, rec + 7, full, lo, hi);
            y += 2 * step;
        }
    }
    if (ox < out_w) { /* odd width: the last output alone */
        int32_t acc = rec[6];
        acc = __smlad(ec_dsp_ld32(p0), rec[0], acc); acc = __smlabt(ec_dsp_ld32(p0 + 2), rec[1], acc);
        acc = __smlad(ec_dsp_ld32(p1), rec[2], acc); acc = __smlabt(ec_dsp_ld32(p1 + 2), rec[3], acc);
        acc = __smlad(ec_dsp_ld32(p2), rec[4], acc); acc = __smlabt(ec_dsp_ld32(p2 + 2), rec[5], acc);
        *y = ec_dsp_rq_out(acc, rec + 7, full, lo, hi);
    }
}

/* All output rows, all channels (full: the clamp is a plain int8 saturation). */
EC_DSP_INLINE void ec_dsp_dw_rows(const ec_dsp_dw_geom *g, const int8_t *x, int8_t *y,
                                     const int32_t *recs, int16_t *planes, int full) {
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
                    ec_dsp_dw_row(g, rc[0], rc[0], rc[0], rc, rec, yr + oc, full);
                } else {
                    ec_dsp_dw_row(g, r[0] + off, r[1] + off, r[2] + off, r, rec, yr + oc, full);
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

/* ---------------------------------------------------------------------------------------
 * DEPTHWISE_CONV_2D read in place (depth multiplier 1, channels a multiple of 4): no scratch.
 * For each output pixel, 4 channels at a time: each in-image tap's 4 input bytes are split by
 * SXTB16 into (c0, c2) and (c1, c3), and SMLABB / SMLATT multiply them with the tap's weight
 * pairs (int16, stored [channel quad][tap][(w0, w2), (w1, w3)], pre-scaled by 2^L as the planes
 * kernel's are): 8 instructions per 4 MACs, whatever the filter size or stride. Taps in the
 * padding take the word of four zero points (the folded bias cancels them exactly). Output
 * pixels go in raster order, each reading only its own window: the kernel streams (1, 1).
 * bias: per channel bias * 2^L; rq: per channel (m, N, e).
 */
typedef struct {
    int32_t batches, in_h, in_w, c, out_h, out_w, k_h, k_w, s_h, s_w, pad_t, pad_l;
    int32_t pad_val, lo, hi;
} ec_dsp_dw_direct_geom;

/* One tap of one channel quad: v = its 4 input bytes; its 2 weight words at wq, wq += 2. */
#define EC_DSP_DWD_TAP(v, wq) do { \
        int32_t w02_, w13_; \
        const int32_t e_ = __sxtb16(v), o_ = ec_dsp_sxtb16_r8(v); \
        EC_DSP_LDRD_PI(wq, w02_, w13_); \
        a0 = __smlabb(e_, w02_, a0); a2 = __smlatt(e_, w02_, a2); \
        a1 = __smlabb(o_, w13_, a1); a3 = __smlatt(o_, w13_, a3); \
    } while (0)
/* n taps whose input is the zero-point word (e, o: its two SXTB16 halves). */
#define EC_DSP_DWD_PAD(n, wq) do { \
        int32_t k_; \
        for (k_ = 0; k_ < (n); ++k_) { \
            int32_t w02_, w13_; \
            EC_DSP_LDRD_PI(wq, w02_, w13_); \
            a0 = __smlabb(pe, w02_, a0); a2 = __smlatt(pe, w02_, a2); \
            a1 = __smlabb(po, w13_, a1); a3 = __smlatt(po, w13_, a3); \
        } \
    } while (0)

/* One output pixel, all channels: window rows fy0..fy1-1 and columns fx0..fx1-1 are in the
 * image (the others are padding); x0 = the window's top-left input pixel (channel 0). */
EC_DSP_INLINE void ec_dsp_dw_direct_px(const ec_dsp_dw_direct_geom *g, const int8_t *x0,
                                       int32_t fy0, int32_t fy1, int32_t fx0, int32_t fx1,
                                       int8_t *yp, const int32_t *w, const int32_t *bias,
                                       const int32_t *rq, int full) {
    const int32_t cn = g->c, kh = g->k_h, kw = g->k_w, row = g->in_w * cn;
    const int32_t padw = (int32_t)(0x01010101u * (uint8_t)g->pad_val);
    const int32_t pe = __sxtb16(padw), po = ec_dsp_sxtb16_r8(padw);
    const int inside = fy0 == 0 && fx0 == 0 && fy1 == kh && fx1 == kw;
    int32_t c, fy, fx;
    for (c = 0; c < cn; c += 4) {
        int32_t a0 = bias[c], a1 = bias[c + 1], a2 = bias[c + 2], a3 = bias[c + 3];
        const int8_t *pr = x0 + c;
        if (inside && kw == 3) {
            for (fy = 0; fy < kh; ++fy, pr += row) {
                EC_DSP_DWD_TAP(ec_dsp_ld32(pr), w);
                EC_DSP_DWD_TAP(ec_dsp_ld32(pr + cn), w);
                EC_DSP_DWD_TAP(ec_dsp_ld32(pr + 2 * cn), w);
            }
        } else if (inside) {
            for (fy = 0; fy < kh; ++fy, pr += row) {
                const int8_t *p = pr;
                for (fx = 0; fx < kw; ++fx, p += cn) EC_DSP_DWD_TAP(ec_dsp_ld32(p), w);
            }
        } else {
            for (fy = 0; fy < kh; ++fy, pr += row) {
                if (fy < fy0 || fy >= fy1) {
                    EC_DSP_DWD_PAD(kw, w);
                } else {
                    const int8_t *p = pr + fx0 * cn;
                    EC_DSP_DWD_PAD(fx0, w);
                    for (fx = fx0; fx < fx1; ++fx, p += cn) EC_DSP_DWD_TAP(ec_dsp_ld32(p), w);
                    EC_DSP_DWD_PAD(kw - fx1, w);
                }
            }
        }
        yp[c] = ec_dsp_rq_out(a0, rq, full, g->lo, g->hi);
        yp[c + 1] = ec_dsp_rq_out(a1, rq + 3, full, g->lo, g->hi);
        yp[c + 2] = ec_dsp_rq_out(a2, rq + 6, full, g->lo, g->hi);
        yp[c + 3] = ec_dsp_rq_out(a3, rq + 9, full, g->lo, g->hi);
        rq += 12;
    }
}

EC_DSP_INLINE void ec_dsp_dw_direct_all(const ec_dsp_dw_direct_geom *g, const int8_t *x,
                                        int8_t *y, const int32_t *w, const int32_t *bias,
                                        const int32_t *rq, int full) {
    int32_t b, oy, ox;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + b * g->in_h * g->in_w * g->c;
        for (oy = 0; oy < g->out_h; ++oy) {
            const int32_t iy = oy * g->s_h - g->pad_t;
            const int32_t fy0 = iy < 0 ? -iy : 0;
            const int32_t fy1 = g->in_h - iy < g->k_h ? g->in_h - iy : g->k_h;
            for (ox = 0; ox < g->out_w; ++ox) {
                const int32_t ix = ox * g->s_w - g->pad_l;
                const int32_t fx0 = ix < 0 ? -ix : 0;
                const int32_t fx1 = g->in_w - ix < g->k_w ? g->in_w - ix : g->k_w;
                /* the window's top-left pixel, possibly outside: only in-image taps are read */
                const int8_t *x0 = xb + ((intptr_t)iy * g->in_w + ix) * g->c;
                ec_dsp_dw_direct_px(g, x0, fy0, fy1, fx0, fx1, y, w, bias, rq, full);
                y += g->c;
            }
        }
    }
}

EC_DSP_SHARED void ec_dsp_depthwise_conv_2d_direct_s8(const ec_dsp_dw_direct_geom *g,
                                                      const int8_t *x, int8_t *y,
                                                      const int32_t *w, const int32_t *bias,
                                                      const int32_t *rq) {
    if (g->lo == -128 && g->hi == 127) ec_dsp_dw_direct_all(g, x, y, w, bias, rq, 1);
    else ec_dsp_dw_direct_all(g, x, y, w, bias, rq, 0);
}

/* ---------------------------------------------------------------------------------------
 * DEPTHWISE_CONV_2D of one input channel (out_c = the depth multiplier, a multiple of 4; e.g.
 * micro_speech's 10x8 first layer): no scratch. A filter row's taps are consecutive input bytes,
 * so each input word (4 taps) is split once by SXTB16 into (t0, t2), (t1, t3) and meets 4
 * channels' weight pairs with 2 SMLADs each: 15 instructions per 16 MACs. Weights [channel
 * quad][filter row][4-tap group][channel][(w0, w2), (w1, w3)], int16 scaled by 2^L, taps past
 * k_w zero. A window that leaves the image (or whose last group would read past its row) is
 * first copied into a stack buffer padded with the zero point. Streams (1, 1).
 * bias: per channel bias * 2^L; rq: per channel (m, N, e).
 */
typedef struct {
    int32_t batches, in_h, in_w, out_h, out_w, c, k_h, k_w, groups, s_h, s_w, pad_t, pad_l;
    int32_t pad_val, lo, hi;
} ec_dsp_dw1_geom;

#define EC_DSP_DW1_MAX_WIN 256 /* bytes of a padded window (k_h * 4 * groups) on the stack */

/* The 4 channels of quad wq over a window whose rows start stride bytes apart at r. */
EC_DSP_INLINE void ec_dsp_dw1_quad(const ec_dsp_dw1_geom *g, const int8_t *r, int32_t stride,
                                   const int32_t *wq, const int32_t *bias, const int32_t *rq,
                                   int8_t *yp, int full) {
    int32_t a0 = bias[0], a1 = bias[1], a2 = bias[2], a3 = bias[3];
    int32_t fy, k;
    for (fy = 0; fy < g->k_h; ++fy, r += stride) {
        for (k = 0; k < g->groups; ++k) {
            const int32_t v = ec_dsp_ld32(r + 4 * k);
            const int32_t e = __sxtb16(v), o = ec_dsp_sxtb16_r8(v);
            int32_t p, q;
            EC_DSP_LDRD_PI(wq, p, q); a0 = __smlad(e, p, a0); a0 = __smlad(o, q, a0);
            EC_DSP_LDRD_PI(wq, p, q); a1 = __smlad(e, p, a1); a1 = __smlad(o, q, a1);
            EC_DSP_LDRD_PI(wq, p, q); a2 = __smlad(e, p, a2); a2 = __smlad(o, q, a2);
            EC_DSP_LDRD_PI(wq, p, q); a3 = __smlad(e, p, a3); a3 = __smlad(o, q, a3);
        }
    }
    yp[0] = ec_dsp_rq_out(a0, rq, full, g->lo, g->hi);
    yp[1] = ec_dsp_rq_out(a1, rq + 3, full, g->lo, g->hi);
    yp[2] = ec_dsp_rq_out(a2, rq + 6, full, g->lo, g->hi);
    yp[3] = ec_dsp_rq_out(a3, rq + 9, full, g->lo, g->hi);
}

EC_DSP_INLINE void ec_dsp_dw1_all(const ec_dsp_dw1_geom *g, const int8_t *x, int8_t *y,
                                  const int32_t *w, const int32_t *bias, const int32_t *rq,
                                  int full) {
    const int32_t kw4 = 4 * g->groups, qw = g->k_h * kw4 * 2; /* weight words per quad */
    int8_t win[EC_DSP_DW1_MAX_WIN] __attribute__((aligned(4)));
    int32_t b, oy, ox, c, fy, fx;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + b * g->in_h * g->in_w;
        for (oy = 0; oy < g->out_h; ++oy) {
            const int32_t iy = oy * g->s_h - g->pad_t;
            for (ox = 0; ox < g->out_w; ++ox, y += g->c) {
                const int32_t ix = ox * g->s_w - g->pad_l;
                const int8_t *r;
                int32_t stride;
                if (iy >= 0 && iy + g->k_h <= g->in_h && ix >= 0 && ix + kw4 <= g->in_w) {
                    r = xb + iy * g->in_w + ix;
                    stride = g->in_w;
                } else { /* the window's in-image bytes over the zero point */
                    const int32_t fx0 = ix < 0 ? -ix : 0;
                    const int32_t fx1 = g->in_w - ix < g->k_w ? g->in_w - ix : g->k_w;
                    const int32_t fy0 = iy < 0 ? -iy : 0;
                    const int32_t fy1 = g->in_h - iy < g->k_h ? g->in_h - iy : g->k_h;
                    ec_dsp_fill8(win, g->pad_val, g->k_h * kw4);
                    for (fy = fy0; fy < fy1; ++fy) {
                        const int8_t *src = xb + (iy + fy) * g->in_w + ix;
                        int8_t *dst = win + fy * kw4;
                        for (fx = fx0; fx < fx1; ++fx) dst[fx] = src[fx];
                    }
                    r = win;
                    stride = kw4;
                }
                for (c = 0; c < g->c; c += 4) {
                    ec_dsp_dw1_quad(g, r, stride, w + (c / 4) * qw, bias + c, rq + 3 * c, y + c,
                                    full);
                }
            }
        }
    }
}

EC_DSP_SHARED void ec_dsp_depthwise_conv_2d_one_s8(const ec_dsp_dw1_geom *g, const int8_t *x,
                                                   int8_t *y, const int32_t *w,
                                                   const int32_t *bias, const int32_t *rq) {
    if (g->lo == -128 && g->hi == 127) ec_dsp_dw1_all(g, x, y, w, bias, rq, 1);
    else ec_dsp_dw1_all(g, x, y, w, bias, rq, 0);
}

#endif /* __ARM_FEATURE_DSP */
#endif /* EDGECC_DSP_DEPTHWISE_CONV_2D_H */
