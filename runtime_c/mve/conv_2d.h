/* edgecc Helium (MVE) kernel: int8 CONV_2D (conventions: mve/common.h). */
#ifndef EDGECC_MVE_CONV_2D_H
#define EDGECC_MVE_CONV_2D_H
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include "common.h"

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

/* scratch: kp + 64 bytes (a copied field, or a short one assembled from rows / gathers); none
 * (NULL) for 1x1 unpadded layers whose in_c is a multiple of 16 (every field read in place).
 * Writes whole output rows in raster order, each reading only its own pixels' fields: the
 * planner may stream it (Kernel.streams = (1,)). */
EC_MVE_INLINE void ec_mve_conv4(const ec_mve_conv_geom *g, const int8_t *x, int8_t *y,
                                 const int8_t *w, const int32_t *bias, const int32_t *rq,
                                 const uint8_t *offs, uint8_t *scratch, int onnx) {
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
        ec_mve_run(x, c, safe, kp, w, bias, rq, 1, g->out_c, lo, hi, y, g->out_c, onnx);
        for (pix = safe; pix < g->pixels; ++pix) {
            for (i = 0; i < c; i += 16) {
                const mve_pred16_t p = vctp8q((uint32_t)(c - i));
                vstrbq_p_s8(col + i, vldrbq_z_s8(x + pix * c + i, p), p);
            }
            ec_mve_row_any(col, kp, w, bias, rq, 1, g->out_c, lo, hi, y + pix * g->out_c, onnx);
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
                ec_mve_row_any(col, kp, w, bias, rq, 1, g->out_c, lo, hi, yr + ox * g->out_c,
                               onnx);
            }
            if (xz > xa) { /* interior pixels: fields in place (the chunk count a constant) */
                const int8_t *base = xb + ((oy * g->s_h - g->pad_t) * g->in_w +
                                           xa * g->s_w - g->pad_l) * c;
                const int32_t n = xz - xa;
                int8_t *yp = yr + xa * g->out_c;
#define EC_MVE_INT(nc, f) ec_mve_interior(g, xb, base, n, offs, w, bias, rq, lo, hi, col, yp, nc, f)
#define EC_MVE_INT_ONNX(nc) EC_MVE_INT(nc, 2)
#define EC_MVE_INT_FULL(nc) EC_MVE_INT(nc, 1)
                if (onnx) EC_MVE_BY_KP(EC_MVE_INT_ONNX, 0, 1, 2, 3, 4);
                else if (!full) EC_MVE_INT(0, 0);
                else EC_MVE_BY_KP(EC_MVE_INT_FULL, 0, 1, 2, 3, 4);
#undef EC_MVE_INT_FULL
#undef EC_MVE_INT_ONNX
#undef EC_MVE_INT
            }
        }
    }
}

EC_MVE_SHARED void ec_mve_conv_2d_4ch_s8(const ec_mve_conv_geom *g, const int8_t *x, int8_t *y,
                               const int8_t *w, const int32_t *bias, const int32_t *rq,
                               const uint8_t *offs, uint8_t *scratch) {
    ec_mve_conv4(g, x, y, w, bias, rq, offs, scratch, 0);
}

#if (__ARM_FEATURE_MVE & 2)
/* ONNX numerics (mve/common.h, ec_mve_rq4_onnx): rq per 4 channels [scale bits x4][zp x4][0 x4]. */
EC_MVE_SHARED void ec_mve_conv_2d_4ch_onnx_s8(const ec_mve_conv_geom *g, const int8_t *x,
                                              int8_t *y, const int8_t *w, const int32_t *bias,
                                              const int32_t *rq, const uint8_t *offs,
                                              uint8_t *scratch) {
    ec_mve_conv4(g, x, y, w, bias, rq, offs, scratch, 1);
}
#endif

/* ---------------------------------------------------------------------------------------
 * CONV_2D with long fields (kp > 64): three output pixels (consecutive in raster order) per
 * pass over the weights, blocks of 2 output channels (6 sums: 11 instructions per 96 MACs
 * instead of 9 per 64). Each channel's three sums are requantized together with that
 * channel's scalar constants (no constant vectors to load) and scattered to the three pixels.
 * Weights [blocks][chunks][2][16]; per channel [bias, m, N, -e]. Fields: in place (mode 0),
 * rows copied (mode 1), or copied with zero-point padding (borders, mode 3).
 */
EC_MVE_INLINE int32x4_t ec_mve_rq_ch(int32x4_t acc, const int32_t *r, int full, int32x4_t lo,
                                     int32x4_t hi) {
    int32x4_t t = vaddq_n_s32(acc, r[0]);
#if (__ARM_FEATURE_MVE & 2)
    if (full >= 2) { /* ONNX numerics: r = [bias, scale bits, zp, 0] (ec_mve_rq4_onnx) */
        float s;
        memcpy(&s, &r[1], sizeof s);
        t = vqaddq_n_s32(vcvtnq_s32_f32(vmulq_n_f32(vcvtq_f32_s32(t), s)), r[2]);
        return vmaxq_s32(vminq_s32(t, hi), lo);
    }
#endif
    t = vaddq_s32(vaddq_n_s32(vqrdmulhq_n_s32(t, r[1]), r[2]), vshrq_n_s32(t, 31));
    t = vshlq_r_s32(t, r[3]);
    return full ? ec_mve_sat8(t) : vmaxq_s32(vminq_s32(t, hi), lo);
}

/* The field of output pixel pix in place (mode 0 interior), its rows copied (mode 1
 * interior) or copied with zero-point padding (borders, mode 3) into col. */
EC_MVE_INLINE const int8_t *ec_mve_field3(const ec_mve_conv_geom *g, const int8_t *x,
                                          int32_t pix, const uint8_t *offs, int8_t *col) {
    const int32_t hw = g->out_h * g->out_w, c = g->in_c, plane = g->in_h * g->in_w * c;
    const int32_t b = pix / hw, rem = pix - b * hw;
    const int32_t oy = rem / g->out_w, ox = rem - oy * g->out_w;
    const int8_t *xb = x + b * plane;
    const int8_t *base = xb + ((oy * g->s_h - g->pad_t) * g->in_w + ox * g->s_w - g->pad_l) * c;
    if (g->mode != 3 && oy >= g->y0 && oy < g->y1 && ox >= g->x0 && ox < g->x1) {
        if (g->mode == 0) {
            if (plane - (base - xb) >= g->kp) return base;
        } else if (g->mode == 2) { /* the field by byte gathers */
            int32_t j;
            for (j = 0; j < g->kp; j += 16) {
                vst1q_s8(col + j, vldrbq_gather_offset_s8(base, vldrbq_u8(offs + j)));
            }
            return col;
        } else {
            const int32_t rs = g->d_h * g->in_w * c, nr = g->rowp / 16;
            int8_t *d = col;
            int32_t r;
            for (r = 0; r < g->k_h; ++r) {
                const int8_t *src = base + r * rs;
                int32_t k = nr;
                int8x16_t v;
                /* (assembly: a counted loop without the low-overhead loop's set-up) */
                __asm__ volatile("1:\n\t"
                                 "vldrb.u8 %q[v], [%[s]], #16\n\t"
                                 "vstrb.8 %q[v], [%[d]], #16\n\t"
                                 "subs %[k], %[k], #1\n\t"
                                 "bne 1b\n\t"
                                 : [v] "=&w"(v), [s] "+r"(src), [d] "+r"(d), [k] "+r"(k)
                                 : : "cc", "memory");
            }
            return col;
        }
    }
    ec_mve_col(g, xb, oy, ox, col);
    return col;
}

/* The epilogues of one channel's 3 sums (t: sums + bias; r1..r3: the record's scalars) that
 * leave int8-saturable lanes in x: TFLite's requantization, or ONNX numerics (float32 product
 * with the scale, VCVTN, + zero point; over the whole int8 range, full == 3). */
#define EC_MVE_RQ3_TFLITE \
    "vqrdmulh.s32 %q[x], %q[t], %[r1]\n\t" \
    "vshr.s32 %q[t], %q[t], #31\n\t" \
    "vadd.i32 %q[x], %q[x], %q[t]\n\t" \
    "vadd.i32 %q[x], %q[x], %[r2]\n\t" \
    "vshl.s32 %q[x], %[r3]\n\t"
#define EC_MVE_RQ3_ONNX \
    "vcvt.f32.s32 %q[t], %q[t]\n\t" \
    "vmul.f32 %q[t], %q[t], %[r1]\n\t" \
    "vcvtn.s32.f32 %q[x], %q[t]\n\t" \
    "vqadd.s32 %q[x], %q[x], %[r2]\n\t"

/* full: the epilogue (epi of ec_mve_row, mve/common.h; 3: ONNX over the whole int8 range) */
EC_MVE_INLINE void ec_mve_conv23_run(const ec_mve_conv_geom *g, const int8_t *x, int8_t *y,
                                     const int8_t *w, const int32_t *rq, const uint8_t *offs,
                                     int8_t *col, int full) {
    const int32x4_t lo = vdupq_n_s32(g->lo), hi = vdupq_n_s32(g->hi);
    const int32_t kp = g->kp, nc = kp / 16, out_c = g->out_c, cols = kp + 64;
    const uint32x4_t yoff = vsetq_lane_u32((uint32_t)out_c,
                                           vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)out_c), 3);
    int32_t pix, oc;
    for (pix = 0; pix < g->pixels; pix += 3) {
        const int32_t np = g->pixels - pix < 3 ? g->pixels - pix : 3;
        const mve_pred16_t keep = vctp32q((uint32_t)np);
        const int8_t *fa = ec_mve_field3(g, x, pix, offs, col);
        const int8_t *fb = np > 1 ? ec_mve_field3(g, x, pix + 1, offs, col + cols) : fa;
        const int8_t *fc = np > 2 ? ec_mve_field3(g, x, pix + 2, offs, col + 2 * cols) : fa;
        const int8_t *wp = w;
        const int32_t *r = rq;
        int8_t *yp = y + pix * out_c;
        /* Whole triples (but the last), even channel counts, int8 clamp: the epilogue in assembly, storing
         * 4 lanes: the 4th holds the 2nd pixel's sum and yoff sends it to the 2nd pixel's
         * byte again (the same value), so nothing outside the triple's own pixels is written
         * (a streamed plan may still hold input under the next pass's output). */
        const int fast = (full == 1 || full == 3) && np == 3 && pix + 3 < g->pixels &&
                         (out_c & 1) == 0;
        for (oc = 0; fast && oc < out_c; oc += 2, r += 8, yp += 2) {
            int32_t a0 = 0, a1 = 0, a2 = 0, b0 = 0, b1 = 0, b2 = 0, t0, t1, t2, t3;
            int32x4_t qt, qx;
            const int8_t *pa = fa, *pb = fb, *pc = fc;
            EC_MVE_MAC2X3(pa, pb, pc, wp, nc, a0, a1, a2, b0, b1, b2);
#define EC_MVE_RQ3(x0, x1, x2, rec, y, epilogue) \
            __asm__ volatile("vmov %q[t][2], %q[t][0], %[v0], %[v2]\n\t" \
                             "vmov %q[t][3], %q[t][1], %[v1], %[v1]\n\t" \
                             "ldrd %[r0], %[r1], [%[rp]]\n\t" \
                             "ldrd %[r2], %[r3], [%[rp], #8]\n\t" \
                             "vadd.i32 %q[t], %q[t], %[r0]\n\t" \
                             epilogue \
                             "vqshl.s32 %q[x], %q[x], #24\n\t" \
                             "vshr.s32 %q[x], %q[x], #24\n\t" \
                             "vstrb.32 %q[x], [%[yo], %q[off]]\n\t" \
                             : [t] "=&w"(qt), [x] "=&w"(qx), [r0] "=&r"(t0), [r1] "=&r"(t1), \
                               [r2] "=&r"(t2), [r3] "=&r"(t3) \
                             : [v0] "r"(x0), [v1] "r"(x1), [v2] "r"(x2), [rp] "r"(rec), \
                               [yo] "r"(y), [off] "w"(yoff) \
                             : "memory")
            if (full == 1) {
                EC_MVE_RQ3(a0, a1, a2, r, yp, EC_MVE_RQ3_TFLITE);
                EC_MVE_RQ3(b0, b1, b2, r + 4, yp + 1, EC_MVE_RQ3_TFLITE);
            } else {
                EC_MVE_RQ3(a0, a1, a2, r, yp, EC_MVE_RQ3_ONNX);
                EC_MVE_RQ3(b0, b1, b2, r + 4, yp + 1, EC_MVE_RQ3_ONNX);
            }
#undef EC_MVE_RQ3
        }
        for (; oc < out_c; oc += 2, r += 8, yp += 2) {
            int32_t a0 = 0, a1 = 0, a2 = 0, b0 = 0, b1 = 0, b2 = 0;
            const int8_t *pa = fa, *pb = fb, *pc = fc;
            EC_MVE_MAC2X3(pa, pb, pc, wp, nc, a0, a1, a2, b0, b1, b2);
            vstrbq_scatter_offset_p_s32(yp, yoff,
                                        ec_mve_rq_ch(ec_mve_vec4(a0, a1, a2, 0), r, full, lo, hi),
                                        keep);
            if (oc + 1 < out_c) {
                vstrbq_scatter_offset_p_s32(yp + 1, yoff,
                                            ec_mve_rq_ch(ec_mve_vec4(b0, b1, b2, 0), r + 4, full,
                                                         lo, hi), keep);
            }
        }
    }
}

/* scratch: 3 * (kp + 64) bytes; none (NULL) for 1x1 unpadded layers whose in_c is a multiple
 * of 16. Streams in passes of whole triples (see ec_mve_conv23_run). */
EC_MVE_SHARED void ec_mve_conv_2d_2ch3px_s8(const ec_mve_conv_geom *g, const int8_t *x, int8_t *y,
                                 const int8_t *w, const int32_t *rq, const uint8_t *offs,
                                 uint8_t *scratch) {
    int8_t *col = (int8_t *)scratch;
    if (g->lo == -128 && g->hi == 127) ec_mve_conv23_run(g, x, y, w, rq, offs, col, 1);
    else ec_mve_conv23_run(g, x, y, w, rq, offs, col, 0);
}

#if (__ARM_FEATURE_MVE & 2)
/* ONNX numerics: per channel [bias, scale bits, zp, 0] (ec_mve_rq_ch). */
EC_MVE_SHARED void ec_mve_conv_2d_2ch3px_onnx_s8(const ec_mve_conv_geom *g, const int8_t *x,
                                                 int8_t *y, const int8_t *w, const int32_t *rq,
                                                 const uint8_t *offs, uint8_t *scratch) {
    if (g->lo == -128 && g->hi == 127) ec_mve_conv23_run(g, x, y, w, rq, offs, (int8_t *)scratch, 3);
    else ec_mve_conv23_run(g, x, y, w, rq, offs, (int8_t *)scratch, 2);
}
#endif

#endif /* __ARM_FEATURE_MVE */
#endif /* EDGECC_MVE_CONV_2D_H */
