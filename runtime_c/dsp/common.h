/* edgecc Cortex-M DSP kernels, common part (Armv7E-M / Armv8-M with the DSP extension: M4,
 * M7, M33, M55).
 *
 * int8 CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED with SMLAD: two 16x16 multiplies and an
 * accumulate per instruction. The compiler (edgecc/ops/_simd.py) prepares everything these
 * functions read: weights re-laid out and packed into aligned int32 words, the input zero point
 * folded into the bias, and per-channel "fast requantization" constants (m, N, e) with which
 *     out = clamp((SMMLAR(2 * acc, m, N) + sign(acc)) >> e)
 * is bit-exact with TFLite Micro's MultiplyByQuantizedMultiplier for every reachable
 * accumulator (the compiler proves it per channel; see _simd.py). The kernels obtain 2 * acc
 * for free by doubling the sign-extended activations (or the int16 weights) and the bias.
 *
 * Sign extension: SXTB16 turns the int8 bytes (b0, b1, b2, b3) of a word into the int16 pairs
 * (b0, b2) and, rotated by 8, (b1, b3). Weights and activations are both split that way, so
 * SMLAD((x0, x2), (w0, w2)) + SMLAD((x1, x3), (w1, w3)) is the 4-tap dot product with no
 * reordering anywhere.
 *
 * This file: what every DSP kernel header (dsp/<op>.h) shares. Only compiled where the DSP
 * extension exists; on other targets these headers are empty.
 * C99, no state, no allocation; ACLE intrinsics (arm_acle.h) and three one-instruction asm
 * helpers for what ACLE lacks (SMMLAR, SXTB16 with rotation, LDRD with post-increment).
 */
#ifndef EDGECC_DSP_COMMON_H
#define EDGECC_DSP_COMMON_H
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <stdint.h>
#include <string.h>
#include <arm_acle.h>

/* Kernels shared by every layer of a kind: one copy of the code however many layers call it.
 * gcc's pre-allocation scheduler (active for cores with a pipeline model, e.g. -mcpu=cortex-m33)
 * hoists the loads of the kernels' loops and spills; they are written in a register-friendly
 * order, so keep it. */
#if defined(__GNUC__) && !defined(__clang__)
#define EC_DSP_NOSCHED __attribute__((optimize("no-schedule-insns")))
#else
#define EC_DSP_NOSCHED
#endif
#define EC_DSP_SHARED static __attribute__((noinline, unused)) EC_DSP_NOSCHED
/* A kernel body each EC_DSP_SHARED entry specializes with its constant arguments: inlined even
 * when several entries of one model call it (gcc would otherwise keep one generic copy). */
#define EC_DSP_BODY static inline __attribute__((always_inline)) EC_DSP_NOSCHED

static inline int32_t ec_dsp_ld32(const void *p) {
    int32_t v;
    memcpy(&v, p, 4); /* one LDR: unaligned word loads are fine on these cores */
    return v;
}

static inline void ec_dsp_st32(void *p, int32_t v) { memcpy(p, &v, 4); }

static inline int32_t ec_dsp_sxtb16_r8(int32_t x) {
    int32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
    return r;
}

/* Volatile forms: the compiler keeps them in program order, so a loop written to need few live
 * registers is not "scheduled" into one that spills (gcc hoists every load otherwise). */
#define EC_DSP_V_SMLAD(acc, x, w) __asm__ volatile("smlad %0, %1, %2, %0" : "+r"(acc) : "r"(x), "r"(w))
#define EC_DSP_V_SXTB16(d, s) __asm__ volatile("sxtb16 %0, %1" : "=r"(d) : "r"(s))
#define EC_DSP_V_SXTB16_R8(d, s) __asm__ volatile("sxtb16 %0, %1, ror #8" : "=r"(d) : "r"(s))
#define EC_DSP_V_LDRD_PI(p, a, b) \
    __asm__ volatile("ldrd %0, %1, [%2], #8" : "=r"(a), "=r"(b), "+r"(p) \
                     : "m"(*(const int32_t (*)[2])(p)))

/* a, b = the two words at p (word aligned); p += 8 bytes. */
#define EC_DSP_LDRD_PI(p, a, b) \
    __asm__("ldrd %0, %1, [%2], #8" : "=r"(a), "=r"(b), "+r"(p) : "m"(*(const int32_t (*)[2])(p)))

/* The fast requantization up to the clamp (see the header comment), of an accumulator the
 * kernel already holds doubled (its inputs or weights were scaled by 2 at extension time). */
static inline int32_t ec_dsp_rq(int32_t a, int32_t m, int32_t n, int32_t e) {
    int32_t t;
    __asm__("smmlar %0, %1, %2, %3" : "=r"(t) : "r"(a), "r"(m), "r"(n));
    return (t + (a >> 31)) >> e;
}

/* onnxruntime's epilogue as a proven integer line (edgecc/numerics/qlinear.py fixed_epilogue): the
 * high word of the 64-bit (hi:lo) + a * m, one SMLAL; the zero point is in (hi:lo). */
#define EC_DSP_NO_LINE ((int32_t)0x80000000) /* marks a record without a line: float32 kept */
static inline int32_t ec_dsp_line(int32_t a, int32_t m, int32_t lo, int32_t hi) {
    const int64_t r = (int64_t)(((uint64_t)(uint32_t)hi << 32) | (uint32_t)lo) + (int64_t)a * m;
    return (int32_t)(r >> 32);
}

/* (x0,x2), (x1,x3) of the int8 word v, each halfword doubled (the accumulator's 2^L, L = 1). */
static inline void ec_dsp_ext2(int32_t v, int32_t *even, int32_t *odd) {
    const int32_t a = __sxtb16(v), b = ec_dsp_sxtb16_r8(v);
    *even = __sadd16(a, a);
    *odd = __sadd16(b, b);
}

static inline int8_t ec_dsp_clamp8(int32_t v, int32_t lo, int32_t hi) {
    return (int8_t)(v < lo ? lo : (v > hi ? hi : v));
}

static inline void ec_dsp_copy8(int8_t *d, const int8_t *s, int32_t n) {
    const int32_t n4 = n & ~3;
    int32_t i;
    for (i = 0; i < n4; i += 4) ec_dsp_st32(d + i, ec_dsp_ld32(s + i));
    for (; i < n; ++i) d[i] = s[i];
}

static inline void ec_dsp_fill8(int8_t *d, int32_t v, int32_t n) {
    int32_t n4 = n & ~3, word = (int32_t)(0x01010101u * (uint8_t)v);
    int32_t i;
    __asm__("" : "+r"(word)); /* a plain loop: fills here are short, a memset call costs more */
    for (i = 0; i < n4; i += 4) ec_dsp_st32(d + i, word);
    for (; i < n; ++i) d[i] = (int8_t)v;
}

/* ---- ONNX numerics (onnxruntime's float32 requantization, edgecc/numerics/qlinear.py) ---- */
#include "../edgecc_rt.h" /* ec_onnx_round, ec_onnx_rq */

/* onnxruntime's clamp(round_half_even(float32(a) * s) + zp) before the [lo, hi] clamp, as a
 * value whose int8 saturation is exact. With an FPU: VCVTR rounds half to even (FPSCR's default
 * rounding) and saturates to int32, and QADD adds the zero point saturating, so a product
 * beyond int32 or +-2^15 still lands outside int8 on the same side as ec_onnx_rq's clamped one
 * (`inside` is not needed). Without: inside = 1 where |a * s| is proven below 2^15 (no float
 * clamp). */
static inline __attribute__((always_inline)) int32_t ec_dsp_onnx_val(int32_t a, float s, int32_t zp,
                                                                     int32_t inside) {
    float r = (float)a * s;
#if defined(__ARM_FP) && (__ARM_FP & 4)
    int32_t i;
    (void)inside;
    __asm__("vcvtr.s32.f32 %0, %0" : "+t"(r));
    memcpy(&i, &r, 4);
    return __qadd(i, zp);
#else
    return (inside ? ec_onnx_round(r) : ec_onnx_rq(a, s, 0)) + zp;
#endif
}

#endif /* __ARM_FEATURE_DSP */
#endif /* EDGECC_DSP_COMMON_H */
