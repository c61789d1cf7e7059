/* edgecc Helium (MVE) kernels, common part, for Cortex-M55 and other Armv8.1-M cores with MVE.
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
 * This file: the macros and the matrix-product core the MVE kernel headers (mve/<op>.h)
 * share. Only compiled where MVE exists; on other targets these headers are empty.
 */
#ifndef EDGECC_MVE_COMMON_H
#define EDGECC_MVE_COMMON_H
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <stdint.h>
#include <string.h>
#include <arm_mve.h>

/* gcc's pre-allocation scheduler hoists every vector load of a kernel's loop and then spills
 * them to the stack; the kernels are written in a register-friendly order, so keep it. So that
 * the assembly's 11-13 registers allocate at -O1/-Og and with r7 reserved (no macro tells
 * those from -O2), the kernels also take -O2 options (-O2/-O3 code unchanged): the CSE, GCSE
 * and PRE passes, omit-frame-pointer (gap: *_onnx_s8 still fail with -fno-omit-frame-pointer). */
#if defined(__GNUC__) && !defined(__clang__)
#define EC_MVE_NOSCHED __attribute__((optimize("no-schedule-insns", "omit-frame-pointer", \
                                               "expensive-optimizations", "cse-follow-jumps", \
                                               "gcse", "rerun-cse-after-loop", "tree-pre")))
#else
#define EC_MVE_NOSCHED
#endif
/* 0 at -O0 (it cannot free the assembler loops' registers): the kernels' C paths instead */
#if defined(__OPTIMIZE__)
#define EC_MVE_ASM 1
#else
#define EC_MVE_ASM 0
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
 * cannot allocate the 15 registers of the assembly, nor can gcc without optimization (-O0)
 * or optimizing for size (-Os): intrinsics there (the same sums, modulo 2^32). */
#if defined(__clang__) || !defined(__OPTIMIZE__) || defined(__OPTIMIZE_SIZE__)
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

/* ONNX numerics (onnxruntime's epilogue; ec_onnx_rq in edgecc_rt.h is the scalar twin): the sum
 * plus bias to float32, times the channel's float32 scale (one rounding), rounded half to even,
 * plus the output zero point (saturating: a sum beyond int32 clamps as the twin's pre-clamp
 * does), clamped to [lo, hi]. rq per 4 channels: [scale bits x4][zero point x4][unused x4]. The
 * kernels' ONNX entry points (*_onnx_s8) exist only with MVE floating point. */
EC_MVE_INLINE int32x4_t ec_mve_rq4_onnx(int32x4_t acc, const int32_t *bias, const int32_t *rq,
                                        int32x4_t lo, int32x4_t hi) {
#if (__ARM_FEATURE_MVE & 2)
    const float32x4_t f = vmulq_f32(vcvtq_f32_s32(vaddq_s32(acc, vldrwq_s32(bias))),
                                    vreinterpretq_f32_s32(vldrwq_s32(rq)));
    return vmaxq_s32(vminq_s32(vqaddq_s32(vcvtnq_s32_f32(f), vldrwq_s32(rq + 4)), hi), lo);
#else
    (void)acc; (void)bias; (void)rq; (void)lo; (void)hi;
    __builtin_trap(); /* unreachable: no ONNX entry point without MVE floating point */
#endif
}

/* One chunk xi of a 4-channel block: the 4 weight rows' 16 bytes (w advances) against xi. */
#define EC_MVE_ROW4_CHUNK(op, xi) \
    "vldrb.u8 %q[wv], [%[w]], #16\n\t" op " %[a0], %q[" xi "], %q[wv]\n\t" \
    "vldrb.u8 %q[wv], [%[w]], #16\n\t" op " %[a1], %q[" xi "], %q[wv]\n\t" \
    "vldrb.u8 %q[wv], [%[w]], #16\n\t" op " %[a2], %q[" xi "], %q[wv]\n\t" \
    "vldrb.u8 %q[wv], [%[w]], #16\n\t" op " %[a3], %q[" xi "], %q[wv]\n\t"

/* A row of nc = 1..4 chunks (loaded into x0..x3 once) against all out_c / 4 blocks
 * (per-channel records, TFLite's requantization over the whole int8 range) in one assembler
 * loop: the weights, biases, records and outputs walked by post-incremented loads and stores
 * (the compiled block loop spends 6 more instructions per block re-deriving them). Inlined in
 * the run functions; ec_mve_rowfull1..4 are its not-inlined copies for ec_mve_row's other
 * callers (inlined there, its registers cost those callers' own loops). */
#define EC_MVE_ROWFULL_ASM(chunks) \
        __asm__ volatile("1:\n\t" \
                         chunks \
                         "vmov %q[t][2], %q[t][0], %[a0], %[a2]\n\t" \
                         "vmov %q[t][3], %q[t][1], %[a1], %[a3]\n\t" \
                         "vldrw.u32 %q[wv], [%[b]], #16\n\t" \
                         "vadd.i32 %q[t], %q[t], %q[wv]\n\t" \
                         "vldrw.u32 %q[wv], [%[rq]], #48\n\t" \
                         "vqrdmulh.s32 %q[wv], %q[t], %q[wv]\n\t" \
                         "vshr.s32 %q[t], %q[t], #31\n\t" \
                         "vadd.i32 %q[wv], %q[wv], %q[t]\n\t" \
                         "vldrw.u32 %q[t], [%[rq], #-32]\n\t" \
                         "vadd.i32 %q[wv], %q[wv], %q[t]\n\t" \
                         "vldrw.u32 %q[t], [%[rq], #-16]\n\t" \
                         "vshl.s32 %q[wv], %q[wv], %q[t]\n\t" \
                         "vqshl.s32 %q[wv], %q[wv], #24\n\t" \
                         "vshr.s32 %q[wv], %q[wv], #24\n\t" \
                         "vstrb.32 %q[wv], [%[y]], #4\n\t" \
                         "subs %[m], %[m], #1\n\t" \
                         "bne 1b\n\t" \
                         : [a0] "=&Te"(a0), [a1] "=&Te"(a1), [a2] "=&Te"(a2), \
                           [a3] "=&Te"(a3), [wv] "=&w"(wv), [t] "=&w"(t), [w] "+&r"(w), \
                           [b] "+&r"(bias), [rq] "+&r"(rq), \
                           [y] "+&l"(y) /* VSTRB.32 wants a low register */, [m] "+&r"(blocks) \
                         : [x0] "w"(x0), [x1] "w"(x1), [x2] "w"(x2), [x3] "w"(x3) \
                         : "memory", "cc")
EC_MVE_INLINE void ec_mve_rowfull(const int8_t *x, int nc, const int8_t *w, const int32_t *bias,
                                  const int32_t *rq, int32_t blocks, int8_t *y) {
    const int8x16_t z = vdupq_n_s8(0);
    const int8x16_t x0 = vldrbq_s8(x), x1 = nc >= 2 ? vldrbq_s8(x + 16) : z;
    const int8x16_t x2 = nc >= 3 ? vldrbq_s8(x + 32) : z, x3 = nc >= 4 ? vldrbq_s8(x + 48) : z;
    int32_t a0, a1, a2, a3;
    int8x16_t wv;
    int32x4_t t;
    if (nc == 1) EC_MVE_ROWFULL_ASM(EC_MVE_ROW4_CHUNK("vmlav.s8", "x0"));
    else if (nc == 2) EC_MVE_ROWFULL_ASM(EC_MVE_ROW4_CHUNK("vmlav.s8", "x0")
                                         EC_MVE_ROW4_CHUNK("vmlava.s8", "x1"));
    else if (nc == 3) EC_MVE_ROWFULL_ASM(EC_MVE_ROW4_CHUNK("vmlav.s8", "x0")
                                         EC_MVE_ROW4_CHUNK("vmlava.s8", "x1")
                                         EC_MVE_ROW4_CHUNK("vmlava.s8", "x2"));
    else EC_MVE_ROWFULL_ASM(EC_MVE_ROW4_CHUNK("vmlav.s8", "x0")
                            EC_MVE_ROW4_CHUNK("vmlava.s8", "x1")
                            EC_MVE_ROW4_CHUNK("vmlava.s8", "x2")
                            EC_MVE_ROW4_CHUNK("vmlava.s8", "x3"));
}
#undef EC_MVE_ROWFULL_ASM
/* the same, not inlined (callers whose own loops need the registers) */
#define EC_MVE_ROWFULL_FN(name, nc) \
    static __attribute__((noinline, unused)) EC_MVE_NOSCHED void name( \
        const int8_t *x, const int8_t *w, const int32_t *bias, const int32_t *rq, \
        int32_t blocks, int8_t *y) { \
        ec_mve_rowfull(x, nc, w, bias, rq, blocks, y); \
    }
EC_MVE_ROWFULL_FN(ec_mve_rowfull1, 1) EC_MVE_ROWFULL_FN(ec_mve_rowfull2, 2)
EC_MVE_ROWFULL_FN(ec_mve_rowfull3, 3) EC_MVE_ROWFULL_FN(ec_mve_rowfull4, 4)
#undef EC_MVE_ROWFULL_FN

/* epi (a constant at each call site): 0 = TFLite's requantization clamped to [lo, hi], 1 = the
 * same over the whole int8 range (saturation), 2 = ONNX numerics (ec_mve_rq4_onnx). */
EC_MVE_INLINE void ec_mve_row(const int8_t *x, int32_t kp, int nc, const int8_t *w,
                              const int32_t *bias, const int32_t *rq, int per_channel,
                              int32_t out_c, int full, int32x4_t lo, int32x4_t hi, int8_t *y) {
    const int8x16_t z = vdupq_n_s8(0);
    const int8x16_t x0 = nc >= 1 ? vldrbq_s8(x) : z, x1 = nc >= 2 ? vldrbq_s8(x + 16) : z;
    const int8x16_t x2 = nc >= 3 ? vldrbq_s8(x + 32) : z, x3 = nc >= 4 ? vldrbq_s8(x + 48) : z;
    int32_t oc;
    if (full == 1 && per_channel && nc > 0 && out_c % 4 == 0) { /* (the block loop in assembly) */
        if (nc == 1) ec_mve_rowfull1(x, w, bias, rq, out_c / 4, y);
        else if (nc == 2) ec_mve_rowfull2(x, w, bias, rq, out_c / 4, y);
        else if (nc == 3) ec_mve_rowfull3(x, w, bias, rq, out_c / 4, y);
        else ec_mve_rowfull4(x, w, bias, rq, out_c / 4, y);
        return;
    }
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
        if (full == 1 && out_c - oc >= 4) {
            /* the requantization in assembly (15 instructions in two vector registers, the
             * constants loaded in turn into the one the step frees) */
            int32x4_t qx;
            __asm__ volatile("vmov %q[t][2], %q[t][0], %[v0], %[v2]\n\t"
                             "vmov %q[t][3], %q[t][1], %[v1], %[v3]\n\t"
                             "vldrw.u32 %q[x], [%[b]]\n\t"
                             "vadd.i32 %q[t], %q[t], %q[x]\n\t"
                             "vldrw.u32 %q[x], [%[rq]]\n\t"
                             "vqrdmulh.s32 %q[x], %q[t], %q[x]\n\t"
                             "vshr.s32 %q[t], %q[t], #31\n\t"
                             "vadd.i32 %q[x], %q[x], %q[t]\n\t"
                             "vldrw.u32 %q[t], [%[rq], #16]\n\t"
                             "vadd.i32 %q[x], %q[x], %q[t]\n\t"
                             "vldrw.u32 %q[t], [%[rq], #32]\n\t"
                             "vshl.s32 %q[x], %q[x], %q[t]\n\t"
                             "vqshl.s32 %q[x], %q[x], #24\n\t"
                             "vshr.s32 %q[x], %q[x], #24\n\t"
                             "vstrb.32 %q[x], [%[y]]\n\t"
                             : [t] "=&w"(t), [x] "=&w"(qx)
                             : [v0] "r"(a0), [v1] "r"(a1), [v2] "r"(a2), [v3] "r"(a3),
                               [b] "r"(bias), [rq] "r"(rq), [y] "l"(y)
                             : "memory");
        } else {
            t = full == 2 ? ec_mve_rq4_onnx(ec_mve_vec4(a0, a1, a2, a3), bias, rq, lo, hi)
                          : ec_mve_rq4(ec_mve_vec4(a0, a1, a2, a3), bias, rq, full, lo, hi);
            if (out_c - oc >= 4) vstrbq_s32(y, t);
            else vstrbq_p_s32(y, t, vctp32q((uint32_t)(out_c - oc)));
        }
        if (per_channel) rq += 12;
    }
}

/* n rows x (x, x + xstep, ...) -> y, y + ystep, ...; one separate function per chunk count,
 * epilogue and record stride (pc: a record per 4 channels, or one for all: per-tensor fully
 * connected layers), each a constant of its loop (each loop's register allocation then stays
 * its own). */
#define EC_MVE_RUN_FN(name, nc, f, pc) \
    static __attribute__((noinline, unused)) EC_MVE_NOSCHED void name( \
        const int8_t *x, int32_t xstep, int32_t n, int32_t kp, const int8_t *w, \
        const int32_t *bias, const int32_t *rq, int32_t out_c, int32x4_t lo, \
        int32x4_t hi, int8_t *y, int32_t ystep) { \
        int32_t i; \
        if (nc > 0 && f == 1 && pc && out_c % 4 == 0) { /* (the block loop in assembly) */ \
            for (i = 0; i < n; ++i, x += xstep, y += ystep) \
                ec_mve_rowfull(x, nc, w, bias, rq, out_c / 4, y); \
            return; \
        } \
        for (i = 0; i < n; ++i, x += xstep, y += ystep) \
            ec_mve_row(x, kp, nc, w, bias, rq, pc, out_c, f, lo, hi, y); \
    }
/* <name><nc>: nc = 0, the row streamed; 1-4, that many chunks held in registers */
EC_MVE_RUN_FN(ec_mve_run_0, 0, 1, 1) EC_MVE_RUN_FN(ec_mve_run_1, 1, 1, 1)
EC_MVE_RUN_FN(ec_mve_run_2, 2, 1, 1) EC_MVE_RUN_FN(ec_mve_run_3, 3, 1, 1)
EC_MVE_RUN_FN(ec_mve_run_4, 4, 1, 1)
EC_MVE_RUN_FN(ec_mve_run_onnx0, 0, 2, 1) EC_MVE_RUN_FN(ec_mve_run_onnx1, 1, 2, 1)
EC_MVE_RUN_FN(ec_mve_run_onnx2, 2, 2, 1) EC_MVE_RUN_FN(ec_mve_run_onnx3, 3, 2, 1)
EC_MVE_RUN_FN(ec_mve_run_onnx4, 4, 2, 1)
EC_MVE_RUN_FN(ec_mve_run_c, 0, 0, 1)
EC_MVE_RUN_FN(ec_mve_run_tc, 0, 0, 0)
EC_MVE_RUN_FN(ec_mve_run_t, 0, 1, 0)
#undef EC_MVE_RUN_FN

/* call(a<nc>): the chunk count nc held in registers for kp (0: streamed) */
#define EC_MVE_BY_KP(call, a0, a1, a2, a3, a4) do { \
        if (kp == 16) call(a1); \
        else if (kp == 32) call(a2); \
        else if (kp == 48) call(a3); \
        else if (kp == 64) call(a4); \
        else call(a0); \
    } while (0)

/* per_channel, onnx: a record per 4 channels, ONNX numerics (constants at each call site) */
EC_MVE_INLINE void ec_mve_run(const int8_t *x, int32_t xstep, int32_t n, int32_t kp,
                              const int8_t *w, const int32_t *bias, const int32_t *rq,
                              int per_channel, int32_t out_c, int32x4_t lo, int32x4_t hi,
                              int8_t *y, int32_t ystep, int onnx) {
    const int full = vgetq_lane_s32(lo, 0) == -128 && vgetq_lane_s32(hi, 0) == 127;
    /* direct calls (no function pointer: the static stack bound follows the call graph) */
#define EC_MVE_CALL(fn) fn(x, xstep, n, kp, w, bias, rq, out_c, lo, hi, y, ystep)
    if (!per_channel) { /* (per-tensor fully connected layers: TFLite numerics) */
        if (full) EC_MVE_CALL(ec_mve_run_t);
        else EC_MVE_CALL(ec_mve_run_tc);
    } else if (onnx) {
        EC_MVE_BY_KP(EC_MVE_CALL, ec_mve_run_onnx0, ec_mve_run_onnx1, ec_mve_run_onnx2,
                     ec_mve_run_onnx3, ec_mve_run_onnx4);
    } else if (!full) {
        EC_MVE_CALL(ec_mve_run_c);
    } else {
        EC_MVE_BY_KP(EC_MVE_CALL, ec_mve_run_0, ec_mve_run_1, ec_mve_run_2, ec_mve_run_3,
                     ec_mve_run_4);
    }
#undef EC_MVE_CALL
}

EC_MVE_INLINE void ec_mve_row_any(const int8_t *x, int32_t kp, const int8_t *w,
                                  const int32_t *bias, const int32_t *rq, int per_channel,
                                  int32_t out_c, int32x4_t lo, int32x4_t hi, int8_t *y,
                                  int onnx) {
    ec_mve_run(x, 0, 1, kp, w, bias, rq, per_channel, out_c, lo, hi, y, 0, onnx);
}

#endif /* __ARM_FEATURE_MVE */
#endif /* EDGECC_MVE_COMMON_H */
