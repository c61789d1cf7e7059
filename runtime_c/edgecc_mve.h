/* edgecc Helium (MVE) kernels for Cortex-M55 and other Armv8.1-M cores with MVE.
 *
 * The workhorse is VMLADAVA.S8: 16 int8 x int8 products summed into a scalar accumulator in one
 * instruction. Convolutions and fully connected layers compute 4 output channels of one pixel
 * (or one input row) at a time: per 16 inputs, one activation load, four weight loads and four
 * VMLADAVAs. Weights are re-laid out by the compiler (edgecc/ops/_simd.py) as
 * [channel block of 4][16-input chunk][4 channels][16 bytes] with the filter volume padded to a
 * multiple of 16 by zeros, so one pointer walks them and no load needs a predicate. The input
 * zero point is folded into the bias. The four sums are requantized together in int32 lanes
 * with the compiler's per-channel constants (m, N, -e), proven exact like the DSP kernels':
 *     out = clamp((VQRDMULH(acc, m) + N + (acc >> 31)) >> e)
 * Only compiled where MVE exists; on other targets this header is empty.
 */
#ifndef EDGECC_MVE_H
#define EDGECC_MVE_H
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <stdint.h>
#include <string.h>
#include <arm_mve.h>
#include "edgecc_dsp.h" /* every MVE core has the DSP extension too: shared helpers */

/* gcc's pre-allocation scheduler hoists every vector load of a kernel's loop and then spills
 * them to the stack; the kernels are written in a register-friendly order, so keep it. */
#if defined(__GNUC__) && !defined(__clang__)
#define EC_MVE_NOSCHED __attribute__((optimize("no-schedule-insns")))
#else
#define EC_MVE_NOSCHED
#endif
#define EC_MVE_SHARED static __attribute__((noinline, unused)) EC_MVE_NOSCHED
#define EC_MVE_INLINE static inline __attribute__((always_inline)) EC_MVE_NOSCHED

/* (a0, a1, a2, a3) as a vector: two VMOVs of two general-purpose registers into two lanes
 * each (compilers build it lane by lane otherwise). "VMOV Qd[2], Qd[0], Rt, Rt2" puts Rt in
 * lane 0 and Rt2 in lane 2. */
EC_MVE_INLINE int32x4_t ec_mve_vec4(int32_t a0, int32_t a1, int32_t a2, int32_t a3) {
    int32x4_t v;
    __asm__("vmov %q0[2], %q0[0], %1, %2\n\t"
            "vmov %q0[3], %q0[1], %3, %4" : "=&w"(v) : "r"(a0), "r"(a2), "r"(a1), "r"(a3));
    return v;
}

/* v = the 16 bytes at p; p += 16 (post-increment: compilers rebase to offsets, and VLDRB's
 * offsets end at 127, which costs an add per load beyond). */
#define EC_MVE_LD16_PI(v, p) \
    __asm__("vldrb.u8 %q0, [%1], #16" : "=w"(v), "+r"(p) : "m"(*(const int8_t (*)[16])(p)))

/* a0..a3 += n chunks of x (16 bytes each, x advances) against 4 weight rows (w advances 64
 * bytes per chunk). Assembly: compilers otherwise rebase the post-incremented loads and spend
 * an add per load. "Te": an even register, as VMLAVA's accumulator must be. */
#define EC_MVE_MAC4(xp, wp, chunks, a0, a1, a2, a3) do { \
        int8x16_t xv_, wv_; \
        int32_t n_ = (chunks); \
        __asm__("1:\n\t" \
                "vldrb.u8 %q[xv], [%[x]], #16\n\t" \
                "vldrb.u8 %q[wv], [%[w]], #16\n\t" \
                "vmlava.s8 %[r0], %q[xv], %q[wv]\n\t" \
                "vldrb.u8 %q[wv], [%[w]], #16\n\t" \
                "vmlava.s8 %[r1], %q[xv], %q[wv]\n\t" \
                "vldrb.u8 %q[wv], [%[w]], #16\n\t" \
                "vmlava.s8 %[r2], %q[xv], %q[wv]\n\t" \
                "vldrb.u8 %q[wv], [%[w]], #16\n\t" \
                "vmlava.s8 %[r3], %q[xv], %q[wv]\n\t" \
                "subs %[cnt], %[cnt], #1\n\t" \
                "bne 1b\n\t" \
                : [r0] "+Te"(a0), [r1] "+Te"(a1), [r2] "+Te"(a2), [r3] "+Te"(a3), \
                  [xv] "=&w"(xv_), [wv] "=&w"(wv_), [x] "+r"(xp), [w] "+r"(wp), [cnt] "+r"(n_) \
                : "m"(*(const int8_t (*)[16])(xp)), "m"(*(const int8_t (*)[64])(wp)) : "cc"); \
    } while (0)

/* Clamp to int8 without constant vectors: saturate t << 24, shift back. */
EC_MVE_INLINE int32x4_t ec_mve_sat8(int32x4_t t) {
    return vshrq_n_s32(vqshlq_n_s32(t, 24), 24);
}

/* ---------------------------------------------------------------------------------------
 * Matrix product core: one row x (kp bytes, kp a multiple of 16) against blocks of 4 weight
 * rows; y[0..out_c) = requantized sums. bias: per channel (padded to 4); rq: per 4 channels
 * [m x4][N x4][-e x4] (per_channel = 0: one record for every block, per-tensor layers). With at most 4 chunks the
 * row stays in registers across all blocks (nc = 1..4, a constant at each call site); nc = 0
 * reloads it per block.
 */
EC_MVE_INLINE int32x4_t ec_mve_rq4(int32x4_t acc, const int32_t *bias, const int32_t *rq,
                                   int full, int32x4_t lo, int32x4_t hi) {
    int32x4_t t = vaddq_s32(acc, vldrwq_s32(bias));
    t = vaddq_s32(vaddq_s32(vqrdmulhq_s32(t, vldrwq_s32(rq)), vldrwq_s32(rq + 4)),
                  vshrq_n_s32(t, 31));
    t = vshlq_s32(t, vldrwq_s32(rq + 8));
    return full ? ec_mve_sat8(t) : vmaxq_s32(vminq_s32(t, hi), lo);
}

EC_MVE_INLINE void ec_mve_row(const int8_t *x, int32_t kp, int nc, const int8_t *w,
                              const int32_t *bias, const int32_t *rq, int per_channel,
                              int32_t out_c, int full, int32x4_t lo, int32x4_t hi, int8_t *y) {
    const int8x16_t z = vdupq_n_s8(0);
    const int8x16_t x0 = nc >= 1 ? vldrbq_s8(x) : z, x1 = nc >= 2 ? vldrbq_s8(x + 16) : z;
    const int8x16_t x2 = nc >= 3 ? vldrbq_s8(x + 32) : z, x3 = nc >= 4 ? vldrbq_s8(x + 48) : z;
    int32_t oc;
    for (oc = 0; oc < out_c; oc += 4, y += 4, bias += 4) {
        int32_t a0, a1, a2, a3;
        int32x4_t t;
        if (nc > 0) { /* w walks forward 16 bytes per load: post-increment addressing */
            int8x16_t wv;
            EC_MVE_LD16_PI(wv, w); a0 = vmladavq_s8(x0, wv);
            EC_MVE_LD16_PI(wv, w); a1 = vmladavq_s8(x0, wv);
            EC_MVE_LD16_PI(wv, w); a2 = vmladavq_s8(x0, wv);
            EC_MVE_LD16_PI(wv, w); a3 = vmladavq_s8(x0, wv);
            if (nc >= 2) {
                EC_MVE_LD16_PI(wv, w); a0 = vmladavaq_s8(a0, x1, wv);
                EC_MVE_LD16_PI(wv, w); a1 = vmladavaq_s8(a1, x1, wv);
                EC_MVE_LD16_PI(wv, w); a2 = vmladavaq_s8(a2, x1, wv);
                EC_MVE_LD16_PI(wv, w); a3 = vmladavaq_s8(a3, x1, wv);
            }
            if (nc >= 3) {
                EC_MVE_LD16_PI(wv, w); a0 = vmladavaq_s8(a0, x2, wv);
                EC_MVE_LD16_PI(wv, w); a1 = vmladavaq_s8(a1, x2, wv);
                EC_MVE_LD16_PI(wv, w); a2 = vmladavaq_s8(a2, x2, wv);
                EC_MVE_LD16_PI(wv, w); a3 = vmladavaq_s8(a3, x2, wv);
            }
            if (nc >= 4) {
                EC_MVE_LD16_PI(wv, w); a0 = vmladavaq_s8(a0, x3, wv);
                EC_MVE_LD16_PI(wv, w); a1 = vmladavaq_s8(a1, x3, wv);
                EC_MVE_LD16_PI(wv, w); a2 = vmladavaq_s8(a2, x3, wv);
                EC_MVE_LD16_PI(wv, w); a3 = vmladavaq_s8(a3, x3, wv);
            }
        } else {
            const int8_t *xp = x;
            a0 = a1 = a2 = a3 = 0;
            EC_MVE_MAC4(xp, w, kp / 16, a0, a1, a2, a3);
        }
        t = ec_mve_rq4(ec_mve_vec4(a0, a1, a2, a3), bias, rq, full, lo, hi);
        if (per_channel) rq += 12;
        if (out_c - oc >= 4) vstrbq_s32(y, t);
        else vstrbq_p_s32(y, t, vctp32q((uint32_t)(out_c - oc)));
    }
}

/* ec_mve_row with the chunk count and the clamp as constants of the call. */
/* n rows x (x, x + xstep, ...) -> y, y + ystep, ...: the chunk count and the clamp become
 * constants of each loop (a switch outside it). */
EC_MVE_INLINE void ec_mve_run(const int8_t *x, int32_t xstep, int32_t n, int32_t kp,
                              const int8_t *w, const int32_t *bias, const int32_t *rq,
                              int per_channel, int32_t out_c, int32x4_t lo, int32x4_t hi,
                              int8_t *y, int32_t ystep) {
    const int full = vgetq_lane_s32(lo, 0) == -128 && vgetq_lane_s32(hi, 0) == 127;
    int32_t i;
#define EC_MVE_RUN(nc, f) \
    for (i = 0; i < n; ++i, x += xstep, y += ystep) \
        ec_mve_row(x, kp, nc, w, bias, rq, per_channel, out_c, f, lo, hi, y)
    if (!full) {
        EC_MVE_RUN(0, 0);
        return;
    }
    switch (kp) {
    case 16: EC_MVE_RUN(1, 1); break;
    case 32: EC_MVE_RUN(2, 1); break;
    case 48: EC_MVE_RUN(3, 1); break;
    case 64: EC_MVE_RUN(4, 1); break;
    default: EC_MVE_RUN(0, 1); break;
    }
#undef EC_MVE_RUN
}

EC_MVE_INLINE void ec_mve_row_any(const int8_t *x, int32_t kp, const int8_t *w,
                                  const int32_t *bias, const int32_t *rq, int per_channel,
                                  int32_t out_c, int32x4_t lo, int32x4_t hi, int8_t *y) {
    ec_mve_run(x, 0, 1, kp, w, bias, rq, per_channel, out_c, lo, hi, y, 0);
}

/* ---------------------------------------------------------------------------------------
 * CONV_2D. The weights' input order is the filter's rows, each row's k_w * in_c bytes padded
 * to rowp (rows mode) or not (rowp = k_w * in_c: flat), the whole padded to kp = 16 * chunks.
 * Interior output pixels (every tap inside the input) read their receptive field in place:
 *   mode 0 (flat): one run of kp bytes (unpadded 1x1 layers: the pixel itself),
 *   mode 1 (rows): k_h runs of rowp bytes, one per filter row,
 *   mode 2 (gather): at most 64 bytes by byte gathers with compile-time offsets (few input
 *           channels: the first layers),
 *   mode 3: always copied (as border pixels are): taps outside the input read the zero point.
 * Fields of at most 64 bytes then stay in registers across all output channel blocks.
 */
typedef struct {
    int32_t pixels, in_h, in_w, in_c, out_h, out_w, out_c;
    int32_t k_h, k_w, s_h, s_w, d_h, d_w, pad_t, pad_l;
    int32_t kp, mode, rowp, pad_val, lo, hi;
    int32_t y0, y1, x0, x1;    /* interior output pixels: [y0, y1) x [x0, x1) */
} ec_mve_conv_geom;

/* The field of output (b, oy, ox) copied into col in the weights' order (zero-point padding):
 * per filter row, the zero point everywhere, then the taps inside the input in one run. */
EC_MVE_INLINE void ec_mve_col(const ec_mve_conv_geom *g, const int8_t *xb, int32_t oy,
                              int32_t ox, int8_t *col) {
    const int32_t c = g->in_c, run = g->k_w * c;
    const int32_t iy0 = oy * g->s_h - g->pad_t, ix0 = ox * g->s_w - g->pad_l;
    const int8x16_t zp = vdupq_n_s8((int8_t)g->pad_val);
    int32_t fy, fx, i;
    int32_t f0 = 0, f1 = g->k_w; /* the taps inside the input, dilation 1 */
    if (g->d_w == 1) {
        if (ix0 < 0) f0 = -ix0;
        if (g->in_w - ix0 < f1) f1 = g->in_w - ix0;
        if (f1 < f0) f1 = f0;
    }
    for (fy = 0; fy < g->k_h; ++fy, col += g->rowp) {
        const int32_t iy = iy0 + fy * g->d_h;
        for (i = 0; i < run; i += 16) vst1q_s8(col + i, zp);
        if (iy < 0 || iy >= g->in_h) continue;
        if (g->d_w == 1) {
            const int8_t *src = xb + (iy * g->in_w + ix0 + f0) * c;
            const int32_t n = (f1 - f0) * c;
            for (i = 0; i < n; i += 16) {
                const mve_pred16_t p = vctp8q((uint32_t)(n - i));
                vstrbq_p_s8(col + f0 * c + i, vldrbq_z_s8(src + i, p), p);
            }
            continue;
        }
        for (fx = 0; fx < g->k_w; ++fx) {
            const int32_t ix = ix0 + fx * g->d_w;
            const int8_t *src = xb + (iy * g->in_w + ix) * c;
            if (ix < 0 || ix >= g->in_w) continue;
            for (i = 0; i < c; i += 16) {
                const mve_pred16_t p = vctp8q((uint32_t)(c - i));
                vstrbq_p_s8(col + fx * c + i, vldrbq_z_s8(src + i, p), p);
            }
        }
    }
}

/* Fields longer than 64 bytes: 4 channels x every chunk of every row, x reloaded per block. */
EC_MVE_INLINE void ec_mve_rows(const int8_t *x, int32_t rows, int32_t rs, int32_t nr,
                               const int8_t *w, const int32_t *bias, const int32_t *rq,
                               int32_t out_c, int full, int32x4_t lo, int32x4_t hi, int8_t *y) {
    int32_t oc;
    for (oc = 0; oc < out_c; oc += 4, y += 4, bias += 4, rq += 12) {
        int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, r;
        int32x4_t t;
        for (r = 0; r < rows; ++r) {
            const int8_t *xp = x + r * rs;
            EC_MVE_MAC4(xp, w, nr, a0, a1, a2, a3);
        }
        t = ec_mve_rq4(ec_mve_vec4(a0, a1, a2, a3), bias, rq, full, lo, hi);
        if (out_c - oc >= 4) vstrbq_s32(y, t);
        else vstrbq_p_s32(y, t, vctp32q((uint32_t)(out_c - oc)));
    }
}

/* n interior output pixels of one row, the first one's field starting at base: each field
 * in place, assembled, or copied (mode), then 4 channels at a time (nc chunks in registers,
 * or 0: streamed). */
EC_MVE_INLINE void ec_mve_interior(const ec_mve_conv_geom *g, const int8_t *xb,
                                   const int8_t *base, int32_t n, const uint8_t *offs,
                                   const int8_t *w, const int32_t *bias, const int32_t *rq,
                                   int32x4_t lo, int32x4_t hi, int8_t *col, int8_t *y, int nc,
                                   int full) {
    const int32_t c = g->in_c, kp = g->kp, step = g->s_w * c, mode = g->mode;
    const int32_t rs = g->d_h * g->in_w * c, nr = g->rowp / 16 > 0 ? g->rowp / 16 : 1;
    const int32_t end = g->in_h * g->in_w * c;
    int32_t i, r, j;
    for (i = 0; i < n; ++i, base += step, y += g->out_c) {
        const int8_t *f = col;
        if (mode == 0) {
            if (end - (base - xb) >= kp) f = base;
            else ec_mve_col(g, xb, (int32_t)((base - xb) / c) / g->in_w,
                            (int32_t)((base - xb) / c) % g->in_w, col);
        } else if (mode == 2) {
            for (j = 0; j < kp; j += 16) {
                vst1q_s8(col + j, vldrbq_gather_offset_s8(base, vldrbq_u8(offs + j)));
            }
        } else if (kp <= 64) { /* rows of at most 16 bytes: assemble the field */
            const mve_pred16_t p = vctp8q((uint32_t)(g->k_w * c));
            for (r = 0; r < g->k_h; ++r) vst1q_s8(col + r * 16, vldrbq_z_s8(base + r * rs, p));
        } else { /* long rows: one copy makes the field one run */
            int8_t *d = col;
            for (r = 0; r < g->k_h; ++r) {
                const int8_t *src = base + r * rs;
                for (j = 0; j < nr; ++j, d += 16, src += 16) vst1q_s8(d, vldrbq_s8(src));
            }
        }
        ec_mve_row(f, kp, nc, w, bias, rq, 1, g->out_c, full, lo, hi, y);
    }
}

/* scratch: kp + 64 bytes (a copied field, or a short one assembled from rows / gathers). */
EC_MVE_SHARED void ec_mve_conv(const ec_mve_conv_geom *g, const int8_t *x, int8_t *y,
                               const int8_t *w, const int32_t *bias, const int32_t *rq,
                               const uint8_t *offs, uint8_t *scratch) {
    const int32x4_t lo = vdupq_n_s32(g->lo), hi = vdupq_n_s32(g->hi);
    const int full = g->lo == -128 && g->hi == 127;
    const int32_t c = g->in_c, kp = g->kp, plane = g->in_h * g->in_w * c;
    int8_t *col = (int8_t *)scratch;
    int32_t pix = 0, b, oy, ox, i;
    if (g->mode == 0 && g->s_h == 1 && g->s_w == 1) {
        /* unpadded 1x1, stride 1: pixel p's field is x + p * c, in one tight run for every
         * pixel whose kp-byte read stays inside the input; the last few go through col */
        const int32_t total = g->pixels * c;
        int32_t safe = total >= kp ? (total - kp) / c + 1 : 0;
        if (safe > g->pixels) safe = g->pixels;
        ec_mve_run(x, c, safe, kp, w, bias, rq, 1, g->out_c, lo, hi, y, g->out_c);
        for (pix = safe; pix < g->pixels; ++pix) {
            for (i = 0; i < c; i += 16) {
                const mve_pred16_t p = vctp8q((uint32_t)(c - i));
                vstrbq_p_s8(col + i, vldrbq_z_s8(x + pix * c + i, p), p);
            }
            ec_mve_row_any(col, kp, w, bias, rq, 1, g->out_c, lo, hi, y + pix * g->out_c);
        }
        return;
    }
    for (b = 0; pix < g->pixels; ++b) {
        const int8_t *xb = x + b * plane;
        for (oy = 0; oy < g->out_h; ++oy, pix += g->out_w) {
            const int yin = oy >= g->y0 && oy < g->y1 && g->mode != 3;
            const int32_t xa = yin ? g->x0 : g->out_w, xz = yin ? g->x1 : g->out_w;
            int8_t *yr = y + pix * g->out_c;
            for (ox = 0; ox < g->out_w; ++ox) { /* border pixels: copied fields */
                if (ox == xa) ox = xz;
                if (ox >= g->out_w) break;
                ec_mve_col(g, xb, oy, ox, col);
                ec_mve_row_any(col, kp, w, bias, rq, 1, g->out_c, lo, hi, yr + ox * g->out_c);
            }
            if (xz > xa) { /* interior pixels: fields in place (the chunk count a constant) */
                const int8_t *base = xb + ((oy * g->s_h - g->pad_t) * g->in_w +
                                           xa * g->s_w - g->pad_l) * c;
                const int32_t n = xz - xa;
                int8_t *yp = yr + xa * g->out_c;
                if (!full) ec_mve_interior(g, xb, base, n, offs, w, bias, rq, lo, hi, col, yp, 0, 0);
                else if (kp == 16) ec_mve_interior(g, xb, base, n, offs, w, bias, rq, lo, hi, col, yp, 1, 1);
                else if (kp == 32) ec_mve_interior(g, xb, base, n, offs, w, bias, rq, lo, hi, col, yp, 2, 1);
                else if (kp == 48) ec_mve_interior(g, xb, base, n, offs, w, bias, rq, lo, hi, col, yp, 3, 1);
                else if (kp == 64) ec_mve_interior(g, xb, base, n, offs, w, bias, rq, lo, hi, col, yp, 4, 1);
                else ec_mve_interior(g, xb, base, n, offs, w, bias, rq, lo, hi, col, yp, 0, 1);
            }
        }
    }
}

/* FULLY_CONNECTED: per-tensor constants (rq: one record). scratch: kp bytes. */
typedef struct {
    int32_t batches, depth, kp, units, lo, hi;
} ec_mve_fc_geom;

EC_MVE_SHARED void ec_mve_fc(const ec_mve_fc_geom *g, const int8_t *x, int8_t *y,
                             const int8_t *w, const int32_t *bias, const int32_t *rq,
                             uint8_t *scratch) {
    const int32x4_t lo = vdupq_n_s32(g->lo), hi = vdupq_n_s32(g->hi);
    int32_t b;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + b * g->depth;
        if (g->depth != g->kp) { /* the row's last chunk would read past it: copy it */
            memcpy(scratch, xb, (size_t)g->depth);
            xb = (const int8_t *)scratch;
        }
        ec_mve_row_any(xb, g->kp, w, bias, rq, 0, g->units, lo, hi, y + b * g->units);
    }
}

/* ---------------------------------------------------------------------------------------
 * DEPTHWISE_CONV_2D with at most 16 filter taps (3x3, 2x2, 3x5, 4x4, ...), any stride and
 * dilation. Input rows are transposed once into int8 channel planes [channel][k_h ring
 * slots][wp] (zero-point padded; the folded bias cancels it), so one channel's whole filter
 * window is ONE byte gather (offsets < 256 inside the channel's block, one offset vector per
 * ring phase) and one VMLADAVA against the filter's taps (loaded once per output row for four
 * channels). Four channels of one output pixel are requantized together with contiguous
 * per-channel constants and stored as 4 bytes. Per output: 2 instructions of MACs.
 */
typedef struct {
    int32_t batches, in_h, in_w, in_c, out_h, out_w, out_c, dm;
    int32_t k_h, s_h, s_w, pad_t, pad_l, wp, pad_val, lo, hi;
} ec_mve_dw_geom;

EC_MVE_INLINE void ec_mve_fill8(int8_t *d, int32_t v, int32_t n) { /* n a multiple of 16 */
    const int8x16_t z = vdupq_n_s8((int8_t)v);
    int32_t i;
    for (i = 0; i < n; i += 16) vst1q_s8(d + i, z);
}

/* One output row: planes hold its k_h input rows at the slots offv names. w16: [oc][16]
 * filter taps in window-lane order (zero lanes past the filter); rq: per 4 channels the
 * records [bias x4][m x4][N x4][-e x4]; channels padded to 4. */
EC_MVE_INLINE void ec_mve_dw_row(const ec_mve_dw_geom *g, const int8_t *planes, int8_t *yr,
                                 const int8_t *w16, const int32_t *rq, uint8x16_t offv,
                                 int full) {
    const int32_t blk = g->k_h * g->wp, sw = g->s_w, out_w = g->out_w, out_c = g->out_c;
    const int32_t dm = g->dm;
    int32_t oc, ox;
    for (oc = 0; oc < out_c; oc += 4, w16 += 64, rq += 16) {
        const int8x16_t w0 = vldrbq_s8(w16), w1 = vldrbq_s8(w16 + 16);
        const int8x16_t w2 = vldrbq_s8(w16 + 32), w3 = vldrbq_s8(w16 + 48);
        const int8_t *p0 = planes + (dm == 1 ? oc : oc / dm) * blk;
        const int8_t *p1 = planes + (dm == 1 ? oc + 1 : (oc + 1) / dm) * blk;
        const int8_t *p2 = planes + (dm == 1 ? oc + 2 : (oc + 2) / dm) * blk;
        const int8_t *p3 = planes + (dm == 1 ? oc + 3 : (oc + 3) / dm) * blk;
        const int32_t nv = out_c - oc;
        int8_t *yp = yr + oc;
        for (ox = 0; ox < out_w; ++ox, p0 += sw, p1 += sw, p2 += sw, p3 += sw, yp += out_c) {
            const int32_t a0 = vmladavq_s8(vldrbq_gather_offset_s8(p0, offv), w0);
            const int32_t a1 = vmladavq_s8(vldrbq_gather_offset_s8(p1, offv), w1);
            const int32_t a2 = vmladavq_s8(vldrbq_gather_offset_s8(p2, offv), w2);
            const int32_t a3 = vmladavq_s8(vldrbq_gather_offset_s8(p3, offv), w3);
            int32x4_t t = vaddq_s32(ec_mve_vec4(a0, a1, a2, a3), vldrwq_s32(rq));
            t = vaddq_s32(vaddq_s32(vqrdmulhq_s32(t, vldrwq_s32(rq + 4)), vldrwq_s32(rq + 8)),
                          vshrq_n_s32(t, 31));
            t = vshlq_s32(t, vldrwq_s32(rq + 12));
            t = full ? ec_mve_sat8(t)
                     : vmaxq_s32(vminq_s32(t, vdupq_n_s32(g->hi)), vdupq_n_s32(g->lo));
            if (nv >= 4) vstrbq_s32(yp, t);
            else vstrbq_p_s32(yp, t, vctp32q((uint32_t)nv));
        }
    }
}

/* scratch: in_c * k_h * wp bytes (wp a multiple of 16). offs: [k_h phases][16] offsets. */
EC_MVE_SHARED void ec_mve_dw(const ec_mve_dw_geom *g, const int8_t *x, int8_t *y,
                             const int8_t *w16, const int32_t *rq, const uint8_t *offs,
                             uint8_t *scratch) {
    int8_t *planes = (int8_t *)scratch;
    const int32_t wp = g->wp, kh = g->k_h, blk = kh * wp, c_n = g->in_c;
    const uint16x8_t coff = vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)blk);
    const int full = g->lo == -128 && g->hi == 127;
    int32_t held[16];
    int32_t b, oy, fy, i, c;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + b * g->in_h * g->in_w * c_n;
        ec_mve_fill8(planes, g->pad_val, c_n * blk);
        for (fy = 0; fy < kh; ++fy) held[fy] = INT32_MIN; /* every slot holds a padding row */
        for (oy = 0; oy < g->out_h; ++oy) {
            int8_t *yr = y + (b * g->out_h + oy) * g->out_w * g->out_c;
            uint8x16_t offv;
            for (fy = 0; fy < kh; ++fy) {
                const int32_t row = oy * g->s_h - g->pad_t + fy, slot = (oy * g->s_h + fy) % kh;
                int8_t *dst = planes + slot * wp;
                if (held[slot] == row) continue;
                held[slot] = row;
                if (row < 0 || row >= g->in_h) {
                    for (c = 0; c < c_n; ++c) ec_mve_fill8(dst + c * blk, g->pad_val, wp);
                    continue;
                }
                {
                    const int8_t *src = xb + row * g->in_w * c_n;
                    dst += g->pad_l;
                    for (i = 0; i < g->in_w; ++i, src += c_n, ++dst) {
                        for (c = 0; c < c_n; c += 8) {
                            const mve_pred16_t p = vctp16q((uint32_t)(c_n - c));
                            vstrbq_scatter_offset_p_s16(dst + c * blk, coff,
                                                        vldrbq_z_s16(src + c, p), p);
                        }
                    }
                }
            }
            offv = vldrbq_u8(offs + 16 * ((oy * g->s_h) % kh));
            if (full) ec_mve_dw_row(g, planes, yr, w16, rq, offv, 1);
            else ec_mve_dw_row(g, planes, yr, w16, rq, offv, 0);
        }
    }
}

/* ---------------------------------------------------------------------------------------
 * ADD of two int8 tensors of the same shape: edgecc_dsp.h's tables (2 * each input's rescaled
 * value) read by word gathers, 4 elements per vector, the doubled sum requantized with the
 * DSP form of the constants (VRMULH(2s, m) = SMMULR(2s, m)). The element i of y is written
 * after a[i], b[i] are read (in-place safe).
 */
EC_MVE_INLINE int32x4_t ec_mve_add4(int32x4_t va, int32x4_t vb, const int32_t *ta0,
                                    const int32_t *tb0, int32x4_t m, int32_t nn, int32_t ne,
                                    int full, int32x4_t lo, int32x4_t hi) {
    const int32x4_t s2 = vaddq_s32(
        vldrwq_gather_shifted_offset_s32(ta0, vreinterpretq_u32_s32(va)),
        vldrwq_gather_shifted_offset_s32(tb0, vreinterpretq_u32_s32(vb)));
    int32x4_t t = vaddq_s32(vaddq_n_s32(vrmulhq_s32(s2, m), nn), vshrq_n_s32(s2, 31));
    t = vshlq_r_s32(t, ne);
    return full ? ec_mve_sat8(t) : vmaxq_s32(vminq_s32(t, hi), lo);
}

EC_MVE_INLINE void ec_mve_add_run(const ec_dsp_add_geom *g, const int8_t *a, const int8_t *b,
                                  int8_t *y, const int32_t *ta, const int32_t *tb, int full) {
    const int32x4_t m = vdupq_n_s32(g->m), lo = vdupq_n_s32(g->lo), hi = vdupq_n_s32(g->hi);
    const int32_t nn = g->nn, ne = -g->e, n4 = g->n & ~3;
    const int32_t *ta0 = ta + 128, *tb0 = tb + 128; /* indexed by the signed byte */
    int32_t i;
    for (i = 0; i < n4; i += 4, a += 4, b += 4, y += 4) {
        vstrbq_s32(y, ec_mve_add4(vldrbq_s32(a), vldrbq_s32(b), ta0, tb0, m, nn, ne, full, lo,
                                  hi));
    }
    if (i < g->n) {
        const mve_pred16_t p = vctp32q((uint32_t)(g->n - i));
        vstrbq_p_s32(y, ec_mve_add4(vldrbq_z_s32(a, p), vldrbq_z_s32(b, p), ta0, tb0, m, nn, ne,
                                    full, lo, hi), p);
    }
}

EC_MVE_SHARED void ec_mve_add(const ec_dsp_add_geom *g, const int8_t *a, const int8_t *b,
                              int8_t *y, const int32_t *ta, const int32_t *tb) {
    if (g->lo == -128 && g->hi == 127) ec_mve_add_run(g, a, b, y, ta, tb, 1);
    else ec_mve_add_run(g, a, b, y, ta, tb, 0);
}

/* ---------------------------------------------------------------------------------------
 * AVERAGE_POOL_2D / MAX_POOL_2D, int8 (geometry: edgecc_dsp.h's ec_pool_geom; the window is
 * clipped to the input). Average: 16 channels summed in two int16x8 vectors (windows of at
 * most 256 taps), then TFLite's rounding division per channel. Max: VMAX.S8 on 16 channels.
 */
EC_MVE_SHARED void ec_mve_avgpool(const ec_pool_geom *g, const int8_t *x, int8_t *y) {
    const int32_t cn = g->c;
    int16_t sums[16];
    int32_t b, oy, ox, fy, fx, c, i;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + b * g->in_h * g->in_w * cn;
        for (oy = 0; oy < g->out_h; ++oy) {
            for (ox = 0; ox < g->out_w; ++ox, y += cn) {
                EC_POOL_WINDOW(g, oy, ox);
                const int32_t count = (fy1 - fy0) * (fx1 - fx0);
                const int8_t *w0 = xb + ((y0_ + fy0) * g->in_w + x0_ + fx0) * cn;
                for (c = 0; c < cn; c += 16) {
                    const mve_pred16_t p0 = vctp16q((uint32_t)(cn - c));
                    const mve_pred16_t p1 = vctp16q((uint32_t)(cn - c > 8 ? cn - c - 8 : 0));
                    int16x8_t s0 = vdupq_n_s16(0), s1 = vdupq_n_s16(0);
                    const int8_t *row = w0 + c;
                    const int32_t nv = cn - c < 16 ? cn - c : 16;
                    for (fy = fy0; fy < fy1; ++fy, row += g->in_w * cn) {
                        const int8_t *p = row;
                        for (fx = fx0; fx < fx1; ++fx, p += cn) {
                            s0 = vaddq_s16(s0, vldrbq_z_s16(p, p0));
                            s1 = vaddq_s16(s1, vldrbq_z_s16(p + 8, p1));
                        }
                    }
                    vst1q_s16(sums, s0);
                    vst1q_s16(sums + 8, s1);
                    for (i = 0; i < nv; ++i) y[c + i] = ec_pool_avg(sums[i], count, g->lo, g->hi);
                }
            }
        }
    }
}

EC_MVE_SHARED void ec_mve_maxpool(const ec_pool_geom *g, const int8_t *x, int8_t *y) {
    const int32_t cn = g->c;
    const int8x16_t lo = vdupq_n_s8((int8_t)g->lo), hi = vdupq_n_s8((int8_t)g->hi);
    int32_t b, oy, ox, fy, fx, c;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + b * g->in_h * g->in_w * cn;
        for (oy = 0; oy < g->out_h; ++oy) {
            for (ox = 0; ox < g->out_w; ++ox, y += cn) {
                EC_POOL_WINDOW(g, oy, ox);
                const int8_t *w0 = xb + ((y0_ + fy0) * g->in_w + x0_ + fx0) * cn;
                for (c = 0; c < cn; c += 16) {
                    const mve_pred16_t p = vctp8q((uint32_t)(cn - c));
                    int8x16_t m = vdupq_n_s8(-128);
                    const int8_t *row = w0 + c;
                    for (fy = fy0; fy < fy1; ++fy, row += g->in_w * cn) {
                        const int8_t *q = row;
                        for (fx = fx0; fx < fx1; ++fx, q += cn) m = vmaxq_s8(m, vldrbq_z_s8(q, p));
                    }
                    vstrbq_p_s8(y + c, vminq_s8(vmaxq_s8(m, lo), hi), p);
                }
            }
        }
    }
}

#endif /* __ARM_FEATURE_MVE */
#endif /* EDGECC_MVE_H */
