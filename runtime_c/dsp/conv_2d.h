/* edgecc Cortex-M DSP kernel: int8 CONV_2D as a matrix product (conventions: dsp/common.h). */
#ifndef EDGECC_DSP_CONV_2D_H
#define EDGECC_DSP_CONV_2D_H
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include "common.h"

/* ---------------------------------------------------------------------------------------
 * Convolution as a matrix product. Each output pixel's receptive field (kh x kw x in_c bytes,
 * zero-point padded, then zero-padded to kp, a multiple of 8) is sign-extended once into a
 * block of 4 pixels laid out [kp/4][4 pixels][(x0,x2),(x1,x3)]; every output channel then reads
 * its kp weight bytes once per block and feeds 4 pixels with them (4 accumulators).
 * 31 instructions per 32 MACs in the inner loop.
 * Access order (the planner relies on it: Kernel.streams = (1, 1, 4), edgecc/plan/stream.py):
 * blocks of 4 consecutive output pixels in raster order; a block's input is all read (into the
 * scratch) before any of its outputs is written, so the output may overlap the input it consumes.
 */
typedef struct {
    int32_t pixels;            /* batches * out_h * out_w */
    int32_t in_h, in_w, in_c;
    int32_t out_h, out_w, out_c;
    int32_t k_h, k_w, s_h, s_w, d_h, d_w, pad_t, pad_l;
    int32_t kp;                /* filter volume padded to a multiple of 8 */
    int32_t direct;            /* 1x1, no padding: a pixel's field is in_c contiguous bytes */
    int32_t pad_val;           /* input zero point: what a padded tap reads */
    int32_t lo, hi;            /* output clamp range */
} ec_dsp_conv_geom;

/* Scratch bytes ec_dsp_conv_2d_4px_s8 needs (the compiler computes the same number). */
#define EC_DSP_CONV_SCRATCH(kp, out_c) (8 * (kp) + (kp) + 4 * (out_c))

/* The receptive field of output pixel `pix` as kp contiguous int8 bytes: straight from the
 * input when the layer is `direct` and the read stays inside it, else gathered into `col`
 * (taps outside the input read the zero point). */
static inline EC_DSP_NOSCHED const int8_t *ec_dsp_field(const ec_dsp_conv_geom *g,
                                                        const int8_t *x, int32_t pix,
                                                        int8_t *col) {
    const int32_t hw = g->out_h * g->out_w, c = g->in_c;
    const int32_t b = pix / hw, rem = pix - b * hw;
    const int32_t oy = rem / g->out_w, ox = rem - oy * g->out_w;
    const int32_t iy0 = oy * g->s_h - g->pad_t, ix0 = ox * g->s_w - g->pad_l;
    const int32_t plane = g->in_h * g->in_w * c;
    const int8_t *xb = x + b * plane;
    int32_t fy, fx, k = 0;
    if (g->direct) {
        const int32_t off = (iy0 * g->in_w + ix0) * c;
        if ((b + 1) * plane - b * plane - off >= g->kp) return xb + off;
        ec_dsp_copy8(col, xb + off, c); /* bytes past the field meet zero weights: left as they are */
        return col;
    }
    for (fy = 0; fy < g->k_h; ++fy) {
        const int32_t iy = iy0 + fy * g->d_h;
        if (iy < 0 || iy >= g->in_h) {
            ec_dsp_fill8(col + k, g->pad_val, g->k_w * c);
            k += g->k_w * c;
        } else if (g->d_w == 1) { /* the row's taps are one run: pad, copy, pad */
            int32_t f0 = ix0 < 0 ? -ix0 : 0;
            int32_t f1 = g->in_w - ix0 < g->k_w ? g->in_w - ix0 : g->k_w;
            if (f1 < f0) f1 = f0;
            ec_dsp_fill8(col + k, g->pad_val, f0 * c);
            ec_dsp_copy8(col + k + f0 * c, xb + (iy * g->in_w + ix0 + f0) * c, (f1 - f0) * c);
            ec_dsp_fill8(col + k + f1 * c, g->pad_val, (g->k_w - f1) * c);
            k += g->k_w * c;
        } else {
            for (fx = 0; fx < g->k_w; ++fx, k += c) {
                const int32_t ix = ix0 + fx * g->d_w;
                if (ix < 0 || ix >= g->in_w) ec_dsp_fill8(col + k, g->pad_val, c);
                else ec_dsp_copy8(col + k, xb + (iy * g->in_w + ix) * c, c);
            }
        }
    }
    return col; /* bytes k..kp-1 meet zero weights: left as they are */
}

/* Sign-extend (and double) kp bytes into one pixel slot of the 4-pixel block xs. */
static inline void ec_dsp_extend(int32_t *xs, const int8_t *src, int32_t kp) {
    int32_t i;
    for (i = 0; i < kp; i += 4) {
        ec_dsp_ext2(ec_dsp_ld32(src + i), xs, xs + 1);
        xs += 8;
    }
}

/* 4 pixels x all output channels. y[p * out_c + oc] for p < 4. w: [out_c][kp] bytes, packed. */
static inline EC_DSP_NOSCHED void ec_dsp_mm4(const int32_t *xs, const int32_t *w,
                                              const int32_t *bias, const int32_t *qmn,
                                              const int8_t *qe, const ec_dsp_conv_geom *g,
                                              int8_t *y) {
    const int32_t *xend = xs + 2 * g->kp;
    const int32_t oc_n = g->out_c, lo = g->lo, hi = g->hi;
    const int full = lo == -128 && hi == 127;
    int32_t oc;
    for (oc = 0; oc < oc_n; ++oc) {
        int32_t a0 = bias[oc], a1 = a0, a2 = a0, a3 = a0;
        const int32_t *xp = xs;
        do {
            int32_t wa, wb, x0, x1, t0, t1;
            EC_DSP_LDRD_PI(w, wa, wb);
            t0 = __sxtb16(wa);
            t1 = ec_dsp_sxtb16_r8(wa);
            EC_DSP_LDRD_PI(xp, x0, x1); a0 = __smlad(x0, t0, a0); a0 = __smlad(x1, t1, a0);
            EC_DSP_LDRD_PI(xp, x0, x1); a1 = __smlad(x0, t0, a1); a1 = __smlad(x1, t1, a1);
            EC_DSP_LDRD_PI(xp, x0, x1); a2 = __smlad(x0, t0, a2); a2 = __smlad(x1, t1, a2);
            EC_DSP_LDRD_PI(xp, x0, x1); a3 = __smlad(x0, t0, a3); a3 = __smlad(x1, t1, a3);
            t0 = __sxtb16(wb);
            t1 = ec_dsp_sxtb16_r8(wb);
            EC_DSP_LDRD_PI(xp, x0, x1); a0 = __smlad(x0, t0, a0); a0 = __smlad(x1, t1, a0);
            EC_DSP_LDRD_PI(xp, x0, x1); a1 = __smlad(x0, t0, a1); a1 = __smlad(x1, t1, a1);
            EC_DSP_LDRD_PI(xp, x0, x1); a2 = __smlad(x0, t0, a2); a2 = __smlad(x1, t1, a2);
            EC_DSP_LDRD_PI(xp, x0, x1); a3 = __smlad(x0, t0, a3); a3 = __smlad(x1, t1, a3);
        } while (xp != xend);
        {
            const int32_t m = qmn[2 * oc], n = qmn[2 * oc + 1], e = qe[oc];
            a0 = ec_dsp_rq(a0, m, n, e);
            a1 = ec_dsp_rq(a1, m, n, e);
            a2 = ec_dsp_rq(a2, m, n, e);
            a3 = ec_dsp_rq(a3, m, n, e);
            if (full) {
                y[0] = (int8_t)__ssat(a0, 8);
                y[oc_n] = (int8_t)__ssat(a1, 8);
                y[2 * oc_n] = (int8_t)__ssat(a2, 8);
                y[3 * oc_n] = (int8_t)__ssat(a3, 8);
            } else {
                y[0] = ec_dsp_clamp8(a0, lo, hi);
                y[oc_n] = ec_dsp_clamp8(a1, lo, hi);
                y[2 * oc_n] = ec_dsp_clamp8(a2, lo, hi);
                y[3 * oc_n] = ec_dsp_clamp8(a3, lo, hi);
            }
            ++y;
        }
    }
}

/* The whole convolution. scratch: EC_DSP_CONV_SCRATCH(kp, out_c) bytes, word aligned. */
/* Output pixel pix's receptive field, sign-extended and doubled into one slot of the block xs.
 * With in_c a multiple of 4 the taps are extended straight from the input (padded taps get the
 * zero point's words); otherwise the field is gathered into col first. */
static inline EC_DSP_NOSCHED void ec_dsp_gather(const ec_dsp_conv_geom *g, const int8_t *x,
                                                int32_t pix, int32_t *xs, int8_t *col) {
    const int32_t c = g->in_c;
    if (g->direct || (c & 3) != 0) {
        ec_dsp_extend(xs, ec_dsp_field(g, x, pix, col), g->kp);
        return;
    }
    {
        const int32_t hw = g->out_h * g->out_w;
        const int32_t b = pix / hw, rem = pix - b * hw;
        const int32_t oy = rem / g->out_w, ox = rem - oy * g->out_w;
        const int32_t iy0 = oy * g->s_h - g->pad_t, ix0 = ox * g->s_w - g->pad_l;
        const int8_t *xb = x + b * g->in_h * g->in_w * c;
        const int32_t run = g->k_w * c;
        int32_t ze, zo, fy, fx, i;
        ec_dsp_ext2((int32_t)(0x01010101u * (uint8_t)g->pad_val), &ze, &zo);
        for (fy = 0; fy < g->k_h; ++fy) {
            const int32_t iy = iy0 + fy * g->d_h;
            if (iy < 0 || iy >= g->in_h) {
                for (i = 0; i < run; i += 4, xs += 8) { xs[0] = ze; xs[1] = zo; }
            } else if (g->d_w == 1 && ix0 >= 0 && ix0 + g->k_w <= g->in_w) {
                ec_dsp_extend(xs, xb + (iy * g->in_w + ix0) * c, run);
                xs += 2 * run;
            } else {
                for (fx = 0; fx < g->k_w; ++fx) {
                    const int32_t ix = ix0 + fx * g->d_w;
                    if (ix < 0 || ix >= g->in_w) {
                        for (i = 0; i < c; i += 4, xs += 8) { xs[0] = ze; xs[1] = zo; }
                    } else {
                        ec_dsp_extend(xs, xb + (iy * g->in_w + ix) * c, c);
                        xs += 2 * c;
                    }
                }
            }
        }
        /* groups past the filter volume meet zero weights: left as they are */
    }
}

/* The whole convolution. scratch: EC_DSP_CONV_SCRATCH(kp, out_c) bytes, word aligned. */
EC_DSP_SHARED void ec_dsp_conv_2d_4px_s8(const ec_dsp_conv_geom *g, const int8_t *x, int8_t *y,
                               const int32_t *w, const int32_t *bias, const int32_t *qmn,
                               const int8_t *qe, uint8_t *scratch) {
    int32_t *xs = (int32_t *)(void *)scratch;
    int8_t *col = (int8_t *)(scratch + 8 * g->kp);
    int8_t *trash = col + g->kp;
    int32_t pix, p;
    for (pix = 0; pix < g->pixels; pix += 4) {
        const int32_t np = g->pixels - pix < 4 ? g->pixels - pix : 4;
        for (p = 0; p < np; ++p) ec_dsp_gather(g, x, pix + p, xs + 2 * p, col);
        if (np == 4) {
            ec_dsp_mm4(xs, w, bias, qmn, qe, g, y + pix * g->out_c);
        } else { /* the last, partial block: slots >= np hold stale pixels; drop their outputs */
            ec_dsp_mm4(xs, w, bias, qmn, qe, g, trash);
            memcpy(y + pix * g->out_c, trash, (size_t)(np * g->out_c));
        }
    }
}

#endif /* __ARM_FEATURE_DSP */
#endif /* EDGECC_DSP_CONV_2D_H */
