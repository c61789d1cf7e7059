/* edgecc Cortex-M DSP kernels: int8 DEPTHWISE_CONV_2D read in place, no scratch: channel quads
 * (depth multiplier 1) and one input channel (conventions: dsp/common.h; the epilogues:
 * dsp/depthwise_conv_2d.h). */
#ifndef EDGECC_DSP_DEPTHWISE_CONV_2D_DIRECT_H
#define EDGECC_DSP_DEPTHWISE_CONV_2D_DIRECT_H
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include "depthwise_conv_2d.h"

/* ---------------------------------------------------------------------------------------
 * DEPTHWISE_CONV_2D read in place (depth multiplier 1, channels a multiple of 4): no scratch.
 * For each output pixel, 4 channels at a time: each in-image tap's 4 input bytes are split by
 * SXTB16 into (c0, c2) and (c1, c3), and SMLABB / SMLATT multiply them with the tap's weight
 * pairs (int16, stored [channel quad][tap][(w0, w2), (w1, w3)], pre-scaled by 2^L as the planes
 * kernel's are): 9 instructions per 4 MACs with the tap's pointer load, whatever the filter
 * size or stride. Taps in the padding read zrow, a row of c zero points (the folded bias cancels
 * them exactly), so border pixels run the same loop. Output
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
#define EC_DSP_DWD_MAX_TAPS 64 /* k_h * k_w: the per-pixel tap pointers on the stack */

/* The requantized outputs of 4 consecutive channels (TFLite: records 3 words apart at rq;
 * ONNX: the quad's 12-word record) into yp[0..3]. Modes 0 (TFLite's clamp to [lo, hi]),
 * EC_DSP_ONNX(_FULL) and EC_DSP_LINE pack the 4 outputs, each saturated to int8 (SSAT), in a word;
 * the clamping modes then take the bytewise max with lo4 and min with hi4 (lo, hi in every byte)
 * by SSUB8 + SEL; one word store writes them. Mode 1 stores a byte each. */
EC_DSP_INLINE void ec_dsp_rq_quad(int32_t a0, int32_t a1, int32_t a2, int32_t a3,
                                  const int32_t *rq, int mode, int32_t lo, int32_t hi,
                                  uint32_t lo4, uint32_t hi4, int8_t *yp) {
    if (mode != 1) {
        uint32_t v, r;
        int32_t t1, t2, t3;
        if (mode == 0) {
            v = (uint32_t)ec_dsp_rq_out(a0, rq, 1, lo, hi); /* BFI rewrites bits 8.. */
            t1 = ec_dsp_rq_out(a1, rq + 3, 1, lo, hi);
            t2 = ec_dsp_rq_out(a2, rq + 6, 1, lo, hi);
            t3 = ec_dsp_rq_out(a3, rq + 9, 1, lo, hi);
        } else if (mode == EC_DSP_LINE && rq[8] != EC_DSP_NO_LINE) {
            v = (uint32_t)__ssat(ec_dsp_line(a0, rq[0], rq[4], rq[8]), 8);
            t1 = __ssat(ec_dsp_line(a1, rq[1], rq[5], rq[9]), 8);
            t2 = __ssat(ec_dsp_line(a2, rq[2], rq[6], rq[10]), 8);
            t3 = __ssat(ec_dsp_line(a3, rq[3], rq[7], rq[11]), 8);
        } else { /* (a line kernel's quad without lines: its flags read 0, the float clamp kept) */
            float s[4];
            const int32_t zp = rq[4];
            memcpy(s, rq, sizeof s);
            v = (uint32_t)__ssat(ec_dsp_onnx_val(a0, s[0], zp, rq[8]), 8);
            t1 = __ssat(ec_dsp_onnx_val(a1, s[1], zp, rq[9]), 8);
            t2 = __ssat(ec_dsp_onnx_val(a2, s[2], zp, rq[10]), 8);
            t3 = __ssat(ec_dsp_onnx_val(a3, s[3], zp, rq[11]), 8);
        }
        __asm__("bfi %0, %1, #8, #8" : "+r"(v) : "r"(t1));
        __asm__("bfi %0, %1, #16, #8" : "+r"(v) : "r"(t2));
        __asm__("bfi %0, %1, #24, #8" : "+r"(v) : "r"(t3));
        if (mode != EC_DSP_ONNX_FULL) {
            __asm__("ssub8 %0, %1, %2\n\tsel %0, %1, %2" : "=&r"(r) : "r"(v), "r"(lo4) : "cc");
            __asm__("ssub8 %0, %2, %1\n\tsel %0, %1, %2" : "=&r"(v) : "r"(r), "r"(hi4) : "cc");
        }
        ec_dsp_st32(yp, (int32_t)v);
        return;
    }
    yp[0] = ec_dsp_rq_mode(a0, rq, mode, lo, hi);
    yp[1] = ec_dsp_rq_mode(a1, rq + 3, mode, lo, hi);
    yp[2] = ec_dsp_rq_mode(a2, rq + 6, mode, lo, hi);
    yp[3] = ec_dsp_rq_mode(a3, rq + 9, mode, lo, hi);
}

/* lo or hi in every byte of a word (ec_dsp_rq_quad's lo4, hi4). */
static inline uint32_t ec_dsp_bytes4(int32_t v) { return ((uint32_t)v & 0xFFu) * 0x01010101u; }

/* One output pixel, all channels: tp[t] = tap t's input pixel (channel 0), or zrow (c bytes of
 * the zero point) where the tap is padding, so every tap is one load whatever the border. */
EC_DSP_INLINE void ec_dsp_dw_direct_px(const ec_dsp_dw_direct_geom *g,
                                       const int8_t *const *tp, int8_t *yp, const int32_t *w,
                                       const int32_t *bias, const int32_t *rq, int mode,
                                       uint32_t lo4, uint32_t hi4, int nine) {
    const int32_t cn = g->c, taps = g->k_h * g->k_w;
    int32_t c, t;
    for (c = 0; c < cn; c += 4, rq += 12) {
        int32_t a0 = bias[c], a1 = bias[c + 1], a2 = bias[c + 2], a3 = bias[c + 3];
        if (nine) {
            EC_DSP_DWD_TAP(ec_dsp_ld32(tp[0] + c), w); EC_DSP_DWD_TAP(ec_dsp_ld32(tp[1] + c), w);
            EC_DSP_DWD_TAP(ec_dsp_ld32(tp[2] + c), w); EC_DSP_DWD_TAP(ec_dsp_ld32(tp[3] + c), w);
            EC_DSP_DWD_TAP(ec_dsp_ld32(tp[4] + c), w); EC_DSP_DWD_TAP(ec_dsp_ld32(tp[5] + c), w);
            EC_DSP_DWD_TAP(ec_dsp_ld32(tp[6] + c), w); EC_DSP_DWD_TAP(ec_dsp_ld32(tp[7] + c), w);
            EC_DSP_DWD_TAP(ec_dsp_ld32(tp[8] + c), w);
        } else {
            for (t = 0; t < taps; ++t) EC_DSP_DWD_TAP(ec_dsp_ld32(tp[t] + c), w);
        }
        ec_dsp_rq_quad(a0, a1, a2, a3, rq, mode, g->lo, g->hi, lo4, hi4, yp + c);
    }
}

EC_DSP_INLINE void ec_dsp_dw_direct_all(const ec_dsp_dw_direct_geom *g, const int8_t *x,
                                        int8_t *y, const int32_t *w, const int32_t *bias,
                                        const int32_t *rq, const int8_t *zrow, int mode) {
    const int8_t *tp[EC_DSP_DWD_MAX_TAPS];
    const uint32_t lo4 = ec_dsp_bytes4(g->lo), hi4 = ec_dsp_bytes4(g->hi);
    const int nine = g->k_h * g->k_w == 9; /* 3x3: the taps unrolled, the test out of the loop */
    const int32_t cn = g->c, in_w = g->in_w, in_h = g->in_h, k_h = g->k_h, k_w = g->k_w;
    int32_t b, oy, ox, fy, fx;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + b * in_h * in_w * cn;
        for (oy = 0; oy < g->out_h; ++oy) {
            const int32_t iy = oy * g->s_h - g->pad_t;
            for (ox = 0; ox < g->out_w; ++ox, y += cn) {
                const int32_t ix = ox * g->s_w - g->pad_l;
                const int inside = ix >= 0 && ix + k_w <= in_w; /* every column in the image */
                const int8_t **p = tp;
                for (fy = 0; fy < k_h; ++fy) { /* the window's pointers, a row at a time */
                    const int32_t ry = iy + fy;
                    int32_t off = (ry * in_w + ix) * cn; /* tap (fy, fx)'s byte offset in xb */
                    if (ry < 0 || ry >= in_h) {
                        for (fx = 0; fx < k_w; ++fx) *p++ = zrow;
                    } else if (inside) {
                        for (fx = 0; fx < k_w; ++fx, off += cn) *p++ = xb + off;
                    } else {
                        for (fx = 0; fx < k_w; ++fx, off += cn) {
                            *p++ = (uint32_t)(ix + fx) < (uint32_t)in_w ? xb + off : zrow;
                        }
                    }
                }
                if (nine) ec_dsp_dw_direct_px(g, tp, y, w, bias, rq, mode, lo4, hi4, 1);
                else ec_dsp_dw_direct_px(g, tp, y, w, bias, rq, mode, lo4, hi4, 0);
            }
        }
    }
}

/* The in-place kernel's entries: each a copy of the loop with its epilogue mode. */
#define EC_DSP_DWD_ENTRY(name)                                                                    \
    EC_DSP_SHARED void name(const ec_dsp_dw_direct_geom *g, const int8_t *x, int8_t *y,          \
                            const int32_t *w, const int32_t *bias, const int32_t *rq,            \
                            const int8_t *zrow)

EC_DSP_DWD_ENTRY(ec_dsp_depthwise_conv_2d_direct_s8) {
    if (g->lo == -128 && g->hi == 127) ec_dsp_dw_direct_all(g, x, y, w, bias, rq, zrow, 1);
    else ec_dsp_dw_direct_all(g, x, y, w, bias, rq, zrow, 0);
}

/* The same with onnxruntime's epilogue (rq: per channel quad the 4 float32 scales' bits, the
 * output zero point 4 times, 4 flags; weights and bias unscaled). */
EC_DSP_DWD_ENTRY(ec_dsp_depthwise_conv_2d_direct_onnx_s8) {
    if (g->lo == -128 && g->hi == 127) ec_dsp_dw_direct_all(g, x, y, w, bias, rq, zrow, EC_DSP_ONNX_FULL);
    else ec_dsp_dw_direct_all(g, x, y, w, bias, rq, zrow, EC_DSP_ONNX);
}

/* The same with onnxruntime's epilogue as proven integer lines (rq: per channel quad the 4
 * multipliers, the 4 constants' low words, their high words; a quad with a channel that has no
 * line holds the float32 record with EC_DSP_NO_LINE as its first flag; weights and bias
 * unscaled). One copy of the code, clamping (flash): every ONNX layer of a model takes it. */
EC_DSP_DWD_ENTRY(ec_dsp_depthwise_conv_2d_direct_line_s8) {
    ec_dsp_dw_direct_all(g, x, y, w, bias, rq, zrow, EC_DSP_LINE);
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
                                   int8_t *yp, int mode) {
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
    yp[0] = ec_dsp_rq_mode(a0, rq, mode, g->lo, g->hi);
    yp[1] = ec_dsp_rq_mode(a1, rq + 3, mode, g->lo, g->hi);
    yp[2] = ec_dsp_rq_mode(a2, rq + 6, mode, g->lo, g->hi);
    yp[3] = ec_dsp_rq_mode(a3, rq + 9, mode, g->lo, g->hi);
}

EC_DSP_INLINE void ec_dsp_dw1_all(const ec_dsp_dw1_geom *g, const int8_t *x, int8_t *y,
                                  const int32_t *w, const int32_t *bias, const int32_t *rq,
                                  int mode) {
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
                                    mode);
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
#endif /* EDGECC_DSP_DEPTHWISE_CONV_2D_DIRECT_H */
