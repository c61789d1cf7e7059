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

/* Two weight rows against three fields (xa, xb, xc): the weights of a chunk feed 6 sums, as
 * many as the even registers VMLAVA needs allow. 11 instructions per 96 MACs. */
#define EC_MVE_MAC2X3_STEP \
                "vldrb.u8 %q[xv], [%[x]], #16\n\t" \
                "vldrb.u8 %q[yv], [%[y]], #16\n\t" \
                "vldrb.u8 %q[zv], [%[z]], #16\n\t" \
                "vldrb.u8 %q[wv], [%[w]], #16\n\t" \
                "vmlava.s8 %[r0], %q[xv], %q[wv]\n\t" \
                "vmlava.s8 %[r1], %q[yv], %q[wv]\n\t" \
                "vmlava.s8 %[r2], %q[zv], %q[wv]\n\t" \
                "vldrb.u8 %q[wv], [%[w]], #16\n\t" \
                "vmlava.s8 %[s0], %q[xv], %q[wv]\n\t" \
                "vmlava.s8 %[s1], %q[yv], %q[wv]\n\t" \
                "vmlava.s8 %[s2], %q[zv], %q[wv]\n\t"
/* (chunks >= 1; the loop runs four chunks per iteration, the remainder first). clang 14
 * cannot allocate the 15 registers of the assembly: intrinsics there. */
#if defined(__clang__)
#define EC_MVE_MAC2X3(xa, xb, xc, wp, chunks, a0, a1, a2, b0, b1, b2) do { \
        int32_t k_; \
        for (k_ = 0; k_ < (chunks); ++k_) { \
            const int8x16_t xv_ = vldrbq_s8(xa), yv_ = vldrbq_s8(xb), zv_ = vldrbq_s8(xc); \
            const int8x16_t w0_ = vldrbq_s8(wp), w1_ = vldrbq_s8(wp + 16); \
            a0 = vmladavaq_s8(a0, xv_, w0_); a1 = vmladavaq_s8(a1, yv_, w0_); \
            a2 = vmladavaq_s8(a2, zv_, w0_); b0 = vmladavaq_s8(b0, xv_, w1_); \
            b1 = vmladavaq_s8(b1, yv_, w1_); b2 = vmladavaq_s8(b2, zv_, w1_); \
            xa += 16; xb += 16; xc += 16; wp += 32; \
        } \
    } while (0)
#else
#define EC_MVE_MAC2X3(xa, xb, xc, wp, chunks, a0, a1, a2, b0, b1, b2) do { \
        int8x16_t xv_, yv_, zv_, wv_; \
        int32_t n_ = (chunks); \
        __asm__("lsrs %[cnt], %[cnt], #1\n\t" /* carry: one chunk alone */ \
                "bcc 1f\n\t" \
                EC_MVE_MAC2X3_STEP \
                "1:\n\t" \
                "lsrs %[cnt], %[cnt], #1\n\t" /* carry: two; Z: no fours */ \
                "bcc 2f\n\t" \
                EC_MVE_MAC2X3_STEP \
                EC_MVE_MAC2X3_STEP \
                "2:\n\t" /* (vector instructions leave the flags alone) */ \
                "beq 4f\n\t" \
                "3:\n\t" \
                EC_MVE_MAC2X3_STEP \
                EC_MVE_MAC2X3_STEP \
                EC_MVE_MAC2X3_STEP \
                EC_MVE_MAC2X3_STEP \
                "subs %[cnt], %[cnt], #1\n\t" \
                "bne 3b\n\t" \
                "4:\n\t" \
                : [r0] "+Te"(a0), [r1] "+Te"(a1), [r2] "+Te"(a2), \
                  [s0] "+Te"(b0), [s1] "+Te"(b1), [s2] "+Te"(b2), \
                  [xv] "=&w"(xv_), [yv] "=&w"(yv_), [zv] "=&w"(zv_), [wv] "=&w"(wv_), \
                  [x] "+r"(xa), [y] "+r"(xb), [z] "+r"(xc), [w] "+r"(wp), [cnt] "+r"(n_) \
                : "m"(*(const int8_t (*)[16])(xa)), "m"(*(const int8_t (*)[16])(xb)), \
                  "m"(*(const int8_t (*)[16])(xc)), "m"(*(const int8_t (*)[32])(wp)) : "cc"); \
    } while (0)
#endif

/* Clamp to int8 without constant vectors: saturate t << 24, shift back. */
EC_MVE_INLINE int32x4_t ec_mve_sat8(int32x4_t t) {
    return vshrq_n_s32(vqshlq_n_s32(t, 24), 24);
}

/* ---------------------------------------------------------------------------------------
 * Matrix product core: one row x (kp bytes, kp a multiple of 16) against blocks of 4 weight
 * rows; y[0..out_c) = requantized sums. bias: per channel (padded to 4); rq: per 4 channels
 * [m x4][N x4][-e x4] (per_channel = 0: one record for every block, per-tensor layers). With
 * at most 4 chunks the row stays in registers across all blocks (nc = 1..4, a constant at each
 * call site); nc = 0 reloads it per block.
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
        if (full && nc != 4 && out_c - oc >= 4) {
            /* the requantization in assembly (15 instructions; with 4 chunks held in registers
             * the compiler's own version spills less) */
            int32x4_t qx, qc;
            __asm__ volatile("vmov %q[t][2], %q[t][0], %[v0], %[v2]\n\t"
                             "vmov %q[t][3], %q[t][1], %[v1], %[v3]\n\t"
                             "vldrw.u32 %q[c], [%[b]]\n\t"
                             "vadd.i32 %q[t], %q[t], %q[c]\n\t"
                             "vldrw.u32 %q[c], [%[rq]]\n\t"
                             "vqrdmulh.s32 %q[x], %q[t], %q[c]\n\t"
                             "vshr.s32 %q[t], %q[t], #31\n\t"
                             "vadd.i32 %q[x], %q[x], %q[t]\n\t"
                             "vldrw.u32 %q[c], [%[rq], #16]\n\t"
                             "vadd.i32 %q[x], %q[x], %q[c]\n\t"
                             "vldrw.u32 %q[c], [%[rq], #32]\n\t"
                             "vshl.s32 %q[x], %q[x], %q[c]\n\t"
                             "vqshl.s32 %q[x], %q[x], #24\n\t"
                             "vshr.s32 %q[x], %q[x], #24\n\t"
                             "vstrb.32 %q[x], [%[y]]\n\t"
                             : [t] "=&w"(t), [x] "=&w"(qx), [c] "=&w"(qc)
                             : [v0] "r"(a0), [v1] "r"(a1), [v2] "r"(a2), [v3] "r"(a3),
                               [b] "r"(bias), [rq] "r"(rq), [y] "l"(y)
                             : "memory");
        } else {
            t = ec_mve_rq4(ec_mve_vec4(a0, a1, a2, a3), bias, rq, full, lo, hi);
            if (out_c - oc >= 4) vstrbq_s32(y, t);
            else vstrbq_p_s32(y, t, vctp32q((uint32_t)(out_c - oc)));
        }
        if (per_channel) rq += 12;
    }
}

/* ec_mve_row with the chunk count and the clamp as constants of the call. */
/* n rows x (x, x + xstep, ...) -> y, y + ystep, ...: the chunk count and the clamp become
 * constants of each loop (a switch outside it). */
/* n rows x (x, x + xstep, ...) -> y, y + ystep, ...; one separate function per chunk count
 * and clamp (each loop's register allocation then stays its own). */
#define EC_MVE_RUN_FN(name, nc, f) \
    static __attribute__((noinline, unused)) EC_MVE_NOSCHED void name( \
        const int8_t *x, int32_t xstep, int32_t n, int32_t kp, const int8_t *w, \
        const int32_t *bias, const int32_t *rq, int per_channel, int32_t out_c, int32x4_t lo, \
        int32x4_t hi, int8_t *y, int32_t ystep) { \
        int32_t i; \
        for (i = 0; i < n; ++i, x += xstep, y += ystep) \
            ec_mve_row(x, kp, nc, w, bias, rq, per_channel, out_c, f, lo, hi, y); \
    }
EC_MVE_RUN_FN(ec_mve_run_c, 0, 0)
EC_MVE_RUN_FN(ec_mve_run_0, 0, 1)
EC_MVE_RUN_FN(ec_mve_run_1, 1, 1)
EC_MVE_RUN_FN(ec_mve_run_2, 2, 1)
EC_MVE_RUN_FN(ec_mve_run_3, 3, 1)
EC_MVE_RUN_FN(ec_mve_run_4, 4, 1)
#undef EC_MVE_RUN_FN

EC_MVE_INLINE void ec_mve_run(const int8_t *x, int32_t xstep, int32_t n, int32_t kp,
                              const int8_t *w, const int32_t *bias, const int32_t *rq,
                              int per_channel, int32_t out_c, int32x4_t lo, int32x4_t hi,
                              int8_t *y, int32_t ystep) {
    const int full = vgetq_lane_s32(lo, 0) == -128 && vgetq_lane_s32(hi, 0) == 127;
    /* direct calls (no function pointer: the static stack bound follows the call graph) */
#define EC_MVE_CALL(fn) fn(x, xstep, n, kp, w, bias, rq, per_channel, out_c, lo, hi, y, ystep)
    if (!full) EC_MVE_CALL(ec_mve_run_c);
    else if (kp == 16) EC_MVE_CALL(ec_mve_run_1);
    else if (kp == 32) EC_MVE_CALL(ec_mve_run_2);
    else if (kp == 48) EC_MVE_CALL(ec_mve_run_3);
    else if (kp == 64) EC_MVE_CALL(ec_mve_run_4);
    else EC_MVE_CALL(ec_mve_run_0);
#undef EC_MVE_CALL
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
#define EC_MVE_INT(nc, f) ec_mve_interior(g, xb, base, n, offs, w, bias, rq, lo, hi, col, yp, nc, f)
                if (!full) EC_MVE_INT(0, 0);
                else if (kp == 16) EC_MVE_INT(1, 1);
                else if (kp == 32) EC_MVE_INT(2, 1);
                else if (kp == 48) EC_MVE_INT(3, 1);
                else if (kp == 64) EC_MVE_INT(4, 1);
                else EC_MVE_INT(0, 1);
#undef EC_MVE_INT
            }
        }
    }
}

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

EC_MVE_INLINE void ec_mve_conv23_run(const ec_mve_conv_geom *g, const int8_t *x, int8_t *y,
                                     const int8_t *w, const int32_t *rq, const uint8_t *offs,
                                     int8_t *col, int full) {
    const int32x4_t lo = vdupq_n_s32(g->lo), hi = vdupq_n_s32(g->hi);
    const int32_t kp = g->kp, nc = kp / 16, out_c = g->out_c, cols = kp + 64;
    const uint32x4_t yoff = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)out_c);
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
        /* Whole triples with a pixel after them, even channel counts, int8 clamp: the
         * epilogue in assembly, storing 4 lanes (the 4th lands on the next pixel's channel,
         * which the next triple writes afterwards). */
        const int fast = full && np == 3 && pix + 3 < g->pixels && (out_c & 1) == 0;
        for (oc = 0; fast && oc < out_c; oc += 2, r += 8, yp += 2) {
            int32_t a0 = 0, a1 = 0, a2 = 0, b0 = 0, b1 = 0, b2 = 0, t0, t1, t2, t3;
            int32x4_t qt, qx;
            const int8_t *pa = fa, *pb = fb, *pc = fc;
            EC_MVE_MAC2X3(pa, pb, pc, wp, nc, a0, a1, a2, b0, b1, b2);
#define EC_MVE_RQ3(x0, x1, x2, rec, y) \
            __asm__ volatile("vmov %q[t][2], %q[t][0], %[v0], %[v2]\n\t" \
                             "vmov %q[t][3], %q[t][1], %[v1], %[v1]\n\t" \
                             "ldrd %[r0], %[r1], [%[rp]]\n\t" \
                             "ldrd %[r2], %[r3], [%[rp], #8]\n\t" \
                             "vadd.i32 %q[t], %q[t], %[r0]\n\t" \
                             "vqrdmulh.s32 %q[x], %q[t], %[r1]\n\t" \
                             "vshr.s32 %q[t], %q[t], #31\n\t" \
                             "vadd.i32 %q[x], %q[x], %q[t]\n\t" \
                             "vadd.i32 %q[x], %q[x], %[r2]\n\t" \
                             "vshl.s32 %q[x], %[r3]\n\t" \
                             "vqshl.s32 %q[x], %q[x], #24\n\t" \
                             "vshr.s32 %q[x], %q[x], #24\n\t" \
                             "vstrb.32 %q[x], [%[yo], %q[off]]\n\t" \
                             : [t] "=&w"(qt), [x] "=&w"(qx), [r0] "=&r"(t0), [r1] "=&r"(t1), \
                               [r2] "=&r"(t2), [r3] "=&r"(t3) \
                             : [v0] "r"(x0), [v1] "r"(x1), [v2] "r"(x2), [rp] "r"(rec), \
                               [yo] "r"(y), [off] "w"(yoff) \
                             : "memory")
            EC_MVE_RQ3(a0, a1, a2, r, yp);
            EC_MVE_RQ3(b0, b1, b2, r + 4, yp + 1);
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

/* scratch: 3 * (kp + 64) bytes. */
EC_MVE_SHARED void ec_mve_conv23(const ec_mve_conv_geom *g, const int8_t *x, int8_t *y,
                                 const int8_t *w, const int32_t *rq, const uint8_t *offs,
                                 uint8_t *scratch) {
    int8_t *col = (int8_t *)scratch;
    if (g->lo == -128 && g->hi == 127) ec_mve_conv23_run(g, x, y, w, rq, offs, col, 1);
    else ec_mve_conv23_run(g, x, y, w, rq, offs, col, 0);
}

/* FULLY_CONNECTED: per-tensor constants (rq: one record). scratch: kp bytes when depth < kp
 * (the row is copied so its last 16-byte chunk stays inside); none (NULL) otherwise. */
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
        const int8_t *p0, *p1, *p2, *p3;
        if (dm == 1) { /* (no divisions on the common path) */
            p0 = planes + oc * blk;
            p1 = p0 + blk;
            p2 = p1 + blk;
            p3 = p2 + blk;
        } else {
            p0 = planes + (oc / dm) * blk;
            p1 = planes + ((oc + 1) / dm) * blk;
            p2 = planes + ((oc + 2) / dm) * blk;
            p3 = planes + ((oc + 3) / dm) * blk;
        }
        const int32_t nv = out_c - oc;
        int8_t *yp = yr + oc;
        if (full && nv >= 4) {
            /* one pixel of 4 channels in assembly: 4 gathers + 4 VMLAV, the requantization
             * with the 4 records' vectors loaded in turn into one register (compilers keep
             * the constants live and spill the filters instead) */
            for (ox = 0; ox < out_w; ++ox, p0 += sw, p1 += sw, p2 += sw, p3 += sw, yp += out_c) {
                int32_t a0, a1, a2, a3;
                int8x16_t qx;
                int32x4_t qt, qc;
                __asm__ volatile(
                    "vldrb.u8 %q[x], [%[p0], %q[off]]\n\t"
                    "vmlav.s8 %[a0], %q[x], %q[w0]\n\t"
                    "vldrb.u8 %q[x], [%[p1], %q[off]]\n\t"
                    "vmlav.s8 %[a1], %q[x], %q[w1]\n\t"
                    "vldrb.u8 %q[x], [%[p2], %q[off]]\n\t"
                    "vmlav.s8 %[a2], %q[x], %q[w2]\n\t"
                    "vldrb.u8 %q[x], [%[p3], %q[off]]\n\t"
                    "vmlav.s8 %[a3], %q[x], %q[w3]\n\t"
                    "vmov %q[t][2], %q[t][0], %[a0], %[a2]\n\t"
                    "vmov %q[t][3], %q[t][1], %[a1], %[a3]\n\t"
                    "vldrw.u32 %q[c], [%[rq]]\n\t"
                    "vadd.i32 %q[t], %q[t], %q[c]\n\t"
                    "vldrw.u32 %q[c], [%[rq], #16]\n\t"
                    "vqrdmulh.s32 %q[x], %q[t], %q[c]\n\t"
                    "vshr.s32 %q[t], %q[t], #31\n\t"
                    "vadd.i32 %q[x], %q[x], %q[t]\n\t"
                    "vldrw.u32 %q[c], [%[rq], #32]\n\t"
                    "vadd.i32 %q[x], %q[x], %q[c]\n\t"
                    "vldrw.u32 %q[c], [%[rq], #48]\n\t"
                    "vshl.s32 %q[x], %q[x], %q[c]\n\t"
                    "vqshl.s32 %q[x], %q[x], #24\n\t"
                    "vshr.s32 %q[x], %q[x], #24\n\t"
                    "vstrb.32 %q[x], [%[y]]\n\t"
                    : [a0] "=&Te"(a0), [a1] "=&Te"(a1), [a2] "=&Te"(a2), [a3] "=&Te"(a3),
                      [x] "=&w"(qx), [t] "=&w"(qt), [c] "=&w"(qc)
                    : [p0] "r"(p0), [p1] "r"(p1), [p2] "r"(p2), [p3] "r"(p3), [off] "w"(offv),
                      [w0] "w"(w0), [w1] "w"(w1), [w2] "w"(w2), [w3] "w"(w3), [rq] "r"(rq),
                      [y] "l"(yp) /* VSTRB.32 wants a low register */
                    : "memory");
            }
            continue;
        }
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
