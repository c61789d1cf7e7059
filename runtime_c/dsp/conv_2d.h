/* edgecc Cortex-M DSP kernel: int8 CONV_2D as a matrix product (conventions: dsp/common.h). */
#ifndef EDGECC_DSP_CONV_2D_H
#define EDGECC_DSP_CONV_2D_H
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include "common.h"
#include "../edgecc_rt.h" /* ec_onnx_rq */

/* ---------------------------------------------------------------------------------------
 * Convolution as a matrix product. Each output pixel's receptive field (kh x kw x in_c bytes,
 * zero-point padded, then zero-padded to kp, a multiple of 8) is sign-extended once into a
 * block of EC_DSP_CONV_PX = 6 pixels laid out [kp/4][6 pixels][(x0,x2),(x1,x3)]; every output
 * channel then reads its kp weight bytes once per block and feeds 6 pixels with them (6
 * accumulators).
 * 86 instructions per 96 MACs in the inner loop (one assembler statement per 8 taps).
 * Access order (the planner relies on it: Kernel.streams = (1, 1, EC_DSP_CONV_PX), plan/stream.py):
 * blocks of 6 consecutive output pixels in raster order; a block's input is all read (into the
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

/* Scratch bytes ec_dsp_conv_2d_6px_s8 needs (the compiler computes the same number). */
#define EC_DSP_CONV_PX 6                     /* output pixels per block */
#define EC_DSP_XS_STEP (2 * EC_DSP_CONV_PX)  /* words of the block per 4 taps */
#define EC_DSP_CONV_SCRATCH(kp, out_c) \
    (2 * EC_DSP_CONV_PX * (kp) + (kp) + EC_DSP_CONV_PX * (out_c))

/* The receptive field of output pixel (b, oy, ox) as kp contiguous int8 bytes: straight from the
 * input when the layer is `direct` and the read stays inside it, else gathered into `col`
 * (taps outside the input read the zero point). */
static inline EC_DSP_NOSCHED const int8_t *ec_dsp_field(const ec_dsp_conv_geom *g,
                                                        const int8_t *x, int32_t b, int32_t oy,
                                                        int32_t ox, int8_t *col) {
    const int32_t c = g->in_c;
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

/* Sign-extend (and double) kp bytes into one pixel slot of the block xs. */
static inline void ec_dsp_extend(int32_t *xs, const int8_t *src, int32_t kp) {
    int32_t i;
    for (i = 0; i < kp; i += 4) {
        ec_dsp_ext2(ec_dsp_ld32(src + i), xs, xs + 1);
        xs += EC_DSP_XS_STEP;
    }
}

/* Per output channel, EC_DSP_CONV_REC int32 words: the doubled bias (the input zero point folded
 * in), then the epilogue's constants: TFLite's fast requantization m, N, e (common.h); or, for
 * ONNX numerics, the bits of HALF the float32 scale (the kernel holds 2 * acc, and float(2 * acc)
 * * (scale / 2) is the very real number float(acc) * scale, so it rounds to the same float32;
 * the compiler checked scale / 2 is a normal float), the output zero point and 0. */
#define EC_DSP_CONV_REC 4
/* A float-group layer's records (dsp/conv_2d_near.h) are EC_DSP_CONV_REC words too.
 * onnx == 3: onnxruntime's epilogue as the integer line the compiler proved equal to it on every
 * accumulator of the channel (edgecc/numerics/qlinear.py fixed_epilogue): M, then the doubled R's low
 * and high words; floor((2 acc * M + 2 R) / 2^33). A channel without such a line keeps the
 * float epilogue's record with EC_DSP_NO_LINE (common.h) as its last word. */

/* onnxruntime's round(float32(acc) * scale) (ec_onnx_rq) of a = 2 * acc with h = scale / 2.
 * With an FPU, VCVTR rounds half to even (FPSCR's default rounding, which ec_onnx_round's
 * magic-number addition relies on too) in one instruction; the compiler proved |acc * scale| <
 * 2^30, so neither that conversion nor the zero point's addition saturates. */
static inline int32_t ec_dsp_round_f(float r) {
#if defined(__ARM_FP) && (__ARM_FP & 4)
    float o; /* its own register: r may still be needed (the near-tie test) */
    int32_t i;
    __asm__("vcvtr.s32.f32 %0, %1" : "=t"(o) : "t"(r));
    memcpy(&i, &o, 4);
    return i;
#else
    return ec_onnx_round(r);
#endif
}

static inline int32_t ec_dsp_onnx_round(int32_t a, float h) {
    return ec_dsp_round_f((float)a * h);
}

/* A doubled accumulator to its output value before the clamp; `onnx` is a constant at each
 * call, so each kernel keeps one of the three. */
static inline int32_t ec_dsp_conv_epi(int32_t a, int32_t m, int32_t n, int32_t e, const int onnx) {
    if (onnx == 3) return ec_dsp_line(a, m, n, e) >> 1; /* a = 2 acc, (e:n) = 2 R */
    if (onnx) {
        float h;
        memcpy(&h, &m, 4);
        return ec_dsp_onnx_round(a, h) + n;
    }
    return ec_dsp_rq(a, m, n, e);
}

/* v clamped to [lo, hi] inside int8, without branches. */
static inline int32_t ec_dsp_clamp_s8(int32_t v, int32_t lo, int32_t hi) {
    v = __ssat(v, 8);
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}

/* y[0], y[s], y[2s], y[3s] = the low bytes of a0..a3: one base register and a stride (the
 * compiler otherwise keeps four running pointers and spills). */
static inline void ec_dsp_st4(int8_t *y, int32_t s, int32_t a0, int32_t a1, int32_t a2,
                              int32_t a3) {
    int8_t *y2 = y + 2 * s;
    __asm__ volatile("strb %0, [%4]\n\tstrb %1, [%4, %5]\n\tstrb %2, [%6]\n\tstrb %3, [%6, %5]"
                     : : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(y), "r"(s), "r"(y2) : "memory");
}

/* 4 taps of the 6 pixels against one output channel, as assembler text: the weight word's
 * two sign-extended halves (%6, %7) against each pixel's two doubled pairs (%8, %9). */
#define EC_DSP_MM6_QUAD \
    "ldr %7, [%10], #4\n\t" \
    "sxtb16 %6, %7\n\t" \
    "sxtb16 %7, %7, ror #8\n\t" \
    "ldrd %8, %9, [%11], #8\n\tsmlad %0, %8, %6, %0\n\tsmlad %0, %9, %7, %0\n\t" \
    "ldrd %8, %9, [%11], #8\n\tsmlad %1, %8, %6, %1\n\tsmlad %1, %9, %7, %1\n\t" \
    "ldrd %8, %9, [%11], #8\n\tsmlad %2, %8, %6, %2\n\tsmlad %2, %9, %7, %2\n\t" \
    "ldrd %8, %9, [%11], #8\n\tsmlad %3, %8, %6, %3\n\tsmlad %3, %9, %7, %3\n\t" \
    "ldrd %8, %9, [%11], #8\n\tsmlad %4, %8, %6, %4\n\tsmlad %4, %9, %7, %4\n\t" \
    "ldrd %8, %9, [%11], #8\n\tsmlad %5, %8, %6, %5\n\tsmlad %5, %9, %7, %5\n\t"

/* 8 taps (two quads) of the 6 pixels: w (8 weight bytes) and xp (6 pixels x 8 doubled
 * halfwords) advance; a0..a5 accumulate. One statement with every register named, so the
 * compiler neither shuffles the pointers nor spills: 42 instructions per 48 MACs. */
#if defined(__OPTIMIZE__)
#define EC_DSP_MM6_STEP() do { \
        int32_t t0, t1, x0, x1; \
        __asm__(EC_DSP_MM6_QUAD EC_DSP_MM6_QUAD \
                : "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3), "+r"(a4), "+r"(a5), \
                  "=&r"(t0), "=&r"(t1), "=&r"(x0), "=&r"(x1), "+r"(w), "+r"(xp) \
                : : "memory"); \
    } while (0)
#else
/* An unoptimized build (-O0) cannot free the 12 registers the statement names: the same
 * arithmetic, one quad at a time, in ACLE intrinsics. */
#define EC_DSP_MM6_QUAD_C() do { \
        const int32_t t0 = __sxtb16(*w), t1 = ec_dsp_sxtb16_r8(*w); \
        w++; \
        a0 = __smlad(xp[0], t0, a0); a0 = __smlad(xp[1], t1, a0); \
        a1 = __smlad(xp[2], t0, a1); a1 = __smlad(xp[3], t1, a1); \
        a2 = __smlad(xp[4], t0, a2); a2 = __smlad(xp[5], t1, a2); \
        a3 = __smlad(xp[6], t0, a3); a3 = __smlad(xp[7], t1, a3); \
        a4 = __smlad(xp[8], t0, a4); a4 = __smlad(xp[9], t1, a4); \
        a5 = __smlad(xp[10], t0, a5); a5 = __smlad(xp[11], t1, a5); \
        xp += 12; \
    } while (0)
#define EC_DSP_MM6_STEP() do { EC_DSP_MM6_QUAD_C(); EC_DSP_MM6_QUAD_C(); } while (0)
#endif

/* One accumulator to its output byte: the epilogue k (a constant: ec_dsp_conv_epi), the clamp. */
#define EC_DSP_MM6_OUT(a, k) do { \
        a = ec_dsp_conv_epi(a, m, n, e, (k)); \
        a = full ? __ssat(a, 8) : ec_dsp_clamp_s8(a, lo, hi); \
    } while (0)

/* The channel loop of a block of EC_DSP_CONV_PX = 6 pixels (xs) x all output channels:
 * y[p * out_c + oc] for p < 6. w: [out_c][kp] bytes, packed; rec: EC_DSP_CONV_REC words per
 * output channel; odd (kp = 8 mod 16) is one test per channel (one loop for both filter
 * lengths: flash). Per channel: six accumulators from the doubled bias rec[0], the block's taps,
 * then EPI(), a statement turning a0..a5 into output bytes from the channel's record rec and the
 * clamp (lo, hi; full: no clamp beyond int8), then the stores. Shared by ec_dsp_mm6 and the
 * float groups' twin (dsp/conv_2d_near.h). */
#define EC_DSP_MM6_CHANNELS(EPI) do { \
        const int32_t *xend = xs + g->kp / 4 * EC_DSP_XS_STEP; \
        const int32_t oc_n = g->out_c, lo = g->lo, hi = g->hi; \
        const int8_t *yend = y + oc_n; \
        const int full = lo == -128 && hi == 127; \
        do { \
            int32_t a0 = rec[0], a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0; \
            const int32_t *xp = xs; \
            if (odd) EC_DSP_MM6_STEP(); /* kp = 8 (mod 16): one step of 8 first */ \
            if (!odd || xp != xend) { \
                do { \
                    EC_DSP_MM6_STEP(); \
                    EC_DSP_MM6_STEP(); \
                } while (xp != xend); \
            } \
            EPI(); \
            ec_dsp_st4(y, oc_n, a0, a1, a2, a3); \
            y[4 * oc_n] = (int8_t)a4; \
            y[5 * oc_n] = (int8_t)a5; \
            rec += EC_DSP_CONV_REC; \
        } while (++y != yend); \
    } while (0)

#define EC_DSP_MM6_OUTS(k) do { \
        EC_DSP_MM6_OUT(a0, k); EC_DSP_MM6_OUT(a1, k); EC_DSP_MM6_OUT(a2, k); \
        EC_DSP_MM6_OUT(a3, k); EC_DSP_MM6_OUT(a4, k); EC_DSP_MM6_OUT(a5, k); \
    } while (0)
/* TFLite's epilogue (onnx == 0), onnxruntime's (1) or its proven integer lines (3; a channel
 * without one keeps the float32 epilogue) */
#define EC_DSP_MM6_EPI() do { \
        const int32_t m = rec[1], n = rec[2], e = rec[3]; \
        if (onnx == 3 && e == EC_DSP_NO_LINE) EC_DSP_MM6_OUTS(1); /* no line: float32 */ \
        else EC_DSP_MM6_OUTS(onnx); \
    } while (0)

/* One block with the epilogue `onnx`, a constant at each call, so each use compiles its own
 * loop. */
EC_DSP_BODY void ec_dsp_mm6(const int32_t *xs, const int32_t *w, const int32_t *rec,
                            const ec_dsp_conv_geom *g, int8_t *y, const int onnx, const int odd) {
    EC_DSP_MM6_CHANNELS(EC_DSP_MM6_EPI);
}

/* Output pixel (b, oy, ox)'s receptive field, sign-extended and doubled into one slot of the
 * block xs. With in_c a multiple of 4 (or rows of whole words inside the input) the taps are
 * extended straight from the input (padded taps get the zero point's words); otherwise the
 * field is gathered into col first. */
static inline EC_DSP_NOSCHED void ec_dsp_gather(const ec_dsp_conv_geom *g, const int8_t *x,
                                                int32_t b, int32_t oy, int32_t ox, int32_t *xs,
                                                int8_t *col) {
    const int32_t c = g->in_c;
    /* in_c not a multiple of 4 (a first layer): rows of whole words still extend in place where
     * the window lies inside the input horizontally (only rows above or below pad) */
    if (g->direct || ((c & 3) != 0 && (((g->k_w * c) & 3) != 0 || g->d_w != 1 ||
                                       ox * g->s_w < g->pad_l ||
                                       ox * g->s_w - g->pad_l + g->k_w > g->in_w))) {
        ec_dsp_extend(xs, ec_dsp_field(g, x, b, oy, ox, col), g->kp);
        return;
    }
    {
        const int32_t iy0 = oy * g->s_h - g->pad_t, ix0 = ox * g->s_w - g->pad_l;
        const int8_t *xb = x + b * g->in_h * g->in_w * c;
        const int32_t run = g->k_w * c;
        int32_t ze, zo, fy, fx, i;
        ec_dsp_ext2((int32_t)(0x01010101u * (uint8_t)g->pad_val), &ze, &zo);
        for (fy = 0; fy < g->k_h; ++fy) {
            const int32_t iy = iy0 + fy * g->d_h;
            if (iy < 0 || iy >= g->in_h) {
                for (i = 0; i < run; i += 4, xs += EC_DSP_XS_STEP) { xs[0] = ze; xs[1] = zo; }
            } else if (g->d_w == 1 && ix0 >= 0 && ix0 + g->k_w <= g->in_w) {
                ec_dsp_extend(xs, xb + (iy * g->in_w + ix0) * c, run);
                xs += run / 4 * EC_DSP_XS_STEP;
            } else {
                for (fx = 0; fx < g->k_w; ++fx) {
                    const int32_t ix = ix0 + fx * g->d_w;
                    if (ix < 0 || ix >= g->in_w) {
                        for (i = 0; i < c; i += 4, xs += EC_DSP_XS_STEP) { xs[0] = ze; xs[1] = zo; }
                    } else {
                        ec_dsp_extend(xs, xb + (iy * g->in_w + ix) * c, c);
                        xs += c / 4 * EC_DSP_XS_STEP;
                    }
                }
            }
        }
        /* groups past the filter volume meet zero weights: left as they are */
    }
}

/* The block loop's state in the scratch: the block xs, a field's bytes col where they cannot
 * extend in place, and trash, where the last, partial block goes (its slots >= np hold stale
 * pixels); the block's first pixel and the next pixel's coordinates. */
#define EC_DSP_CONV_STATE \
    int32_t *xs = (int32_t *)(void *)scratch; \
    int8_t *col = (int8_t *)(scratch + EC_DSP_XS_STEP * g->kp); \
    int8_t *trash = col + g->kp; \
    int32_t pix, p, b = 0, oy = 0, ox = 0

/* The block loop of a convolution over g->pixels output pixels (EC_DSP_CONV_STATE): each
 * block's pixels gathered into their slots of xs, PIXEL(p) after slot p's gather, then
 * BLOCK(yb): the block's channels into yb, the output or trash. */
#define EC_DSP_CONV_BLOCKS(PIXEL, BLOCK) do { \
        for (pix = 0; pix < g->pixels; pix += EC_DSP_CONV_PX) { \
            const int32_t np = g->pixels - pix < EC_DSP_CONV_PX ? g->pixels - pix \
                                                                : EC_DSP_CONV_PX; \
            for (p = 0; p < np; ++p) { \
                ec_dsp_gather(g, x, b, oy, ox, xs + 2 * p, col); \
                PIXEL(p); \
                if (++ox == g->out_w) { \
                    ox = 0; \
                    if (++oy == g->out_h) { oy = 0; ++b; } \
                } \
            } \
            { \
                int8_t *yb = np == EC_DSP_CONV_PX ? y + pix * g->out_c : trash; \
                BLOCK(yb); \
                if (yb == trash) memcpy(y + pix * g->out_c, trash, (size_t)(np * g->out_c)); \
            } \
        } \
    } while (0)

#define EC_DSP_CONV_NO_PIXEL(p) ((void)0)
#define EC_DSP_CONV_MM6(yb) ec_dsp_mm6(xs, w, rec, g, yb, onnx, (g->kp & 8) != 0)

/* The whole convolution, with TFLite's epilogue or (onnx) onnxruntime's. scratch:
 * EC_DSP_CONV_SCRATCH(kp, out_c) bytes, word aligned. */
EC_DSP_BODY void ec_dsp_conv_run(const ec_dsp_conv_geom *g, const int8_t *x, int8_t *y,
                                 const int32_t *w, const int32_t *rec, uint8_t *scratch,
                                 const int onnx) {
    EC_DSP_CONV_STATE;
    EC_DSP_CONV_BLOCKS(EC_DSP_CONV_NO_PIXEL, EC_DSP_CONV_MM6);
}

EC_DSP_SHARED void ec_dsp_conv_2d_6px_s8(const ec_dsp_conv_geom *g, const int8_t *x, int8_t *y,
                                         const int32_t *w, const int32_t *rec, uint8_t *scratch) {
    ec_dsp_conv_run(g, x, y, w, rec, scratch, 0);
}

/* The same with ONNX numerics' epilogue (rec holds the float32 scales and zero points). */
EC_DSP_SHARED void ec_dsp_conv_2d_6px_onnx_s8(const ec_dsp_conv_geom *g, const int8_t *x,
                                              int8_t *y, const int32_t *w, const int32_t *rec,
                                              uint8_t *scratch) {
    ec_dsp_conv_run(g, x, y, w, rec, scratch, 1);
}

/* The same with onnxruntime's epilogue as proven integer lines (onnx == 3, records above). */
EC_DSP_SHARED void ec_dsp_conv_2d_6px_fixed_s8(const ec_dsp_conv_geom *g, const int8_t *x,
                                               int8_t *y, const int32_t *w, const int32_t *rec,
                                               uint8_t *scratch) {
    ec_dsp_conv_run(g, x, y, w, rec, scratch, 3);
}

#endif /* __ARM_FEATURE_DSP */
#endif /* EDGECC_DSP_CONV_2D_H */
