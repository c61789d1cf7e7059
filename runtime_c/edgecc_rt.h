/* edgecc runtime helpers: TFLite's fixed-point arithmetic as static inline C99.
 *
 * These are the C twins of edgecc/numerics/fixed_point.py and must stay bit-identical with it and with
 * TensorFlow Lite Micro (two-step rounding: SaturatingRoundingDoublingHighMul, then
 * RoundingDivideByPOT). No state, no libc beyond <stdint.h>.
 */
#ifndef EDGECC_RT_H
#define EDGECC_RT_H
#include <stdint.h>

/* (int64_t)a * b. Armv6-M (Cortex-M0/M0+) has no 32x32->64 multiply: gcc calls libgcc's
 * 64x64 __aeabi_lmul there. From 16-bit halves instead: four 32-bit MULS and 32-bit partial
 * sums (each fits: a signed half times an unsigned one is within +-2^31), exact for every a, b.
 * EDGECC_MUL_HALVES selects it elsewhere (tests/test_small_cores.py runs it on the host). */
static inline int64_t ec_mul64(int32_t a, int32_t b) {
#if defined(__ARM_ARCH_6M__) || defined(EDGECC_MUL_HALVES)
    /* Hacker's Delight mulhs: every partial sum fits in 32 bits */
    const int32_t a1 = a >> 16, b1 = b >> 16;
    const int32_t a0 = (int32_t)((uint32_t)a & 0xFFFFu), b0 = (int32_t)((uint32_t)b & 0xFFFFu);
    const uint32_t w0 = (uint32_t)a0 * (uint32_t)b0;
    const int32_t t = a1 * b0 + (int32_t)(w0 >> 16);
    const int32_t w1 = a0 * b1 + (t & 0xFFFF);
    const int32_t hi = a1 * b1 + (t >> 16) + (w1 >> 16);
    const uint32_t lo = ((uint32_t)w1 << 16) | (w0 & 0xFFFFu);
    return (int64_t)(((uint64_t)(uint32_t)hi << 32) | lo);
#else
    return (int64_t)a * b;
#endif
}

/* (a*b*2)>>32 with rounding to nearest (ties away from zero), saturating the one overflow case. */
static inline int32_t ec_srdhm(int32_t a, int32_t b) {
    int64_t ab;
    int32_t nudge;
    if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
    ab = ec_mul64(a, b);
    nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
    return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

/* x / 2^e rounded to nearest, ties away from zero. */
static inline int32_t ec_rdbpot(int32_t x, int e) {
    const int32_t mask = (int32_t)(((int64_t)1 << e) - 1);
    const int32_t rem = x & mask;
    const int32_t thr = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> e) + (rem > thr ? 1 : 0);
}

/* x * 2^left with int32 wrap-around (TFLite's x * (1 << left)), defined for every left >= 0:
 * shifting a 32-bit value by 32 or more is undefined in C, and wraps to 0 here. edgecc refuses a
 * scale ratio whose shift exceeds 30 at compile time (quant.py), so left <= 30 in generated code. */
static inline int32_t ec_shl32(int32_t x, int left) {
    return left < 32 ? (int32_t)((uint32_t)x << left) : 0;
}

/* TFLite MultiplyByQuantizedMultiplier: x * m * 2^(shift-31), for shift in [-31, 30]. */
static inline int32_t ec_mbqm(int32_t x, int32_t m, int shift) {
    const int left = shift > 0 ? shift : 0;
    const int right = shift > 0 ? 0 : -shift;
    return ec_rdbpot(ec_srdhm(ec_shl32(x, left), m), right);
}

/* ec_mbqm for a multiplier m != INT32_MIN (QuantizeMultiplier only makes 0 or [2^30, 2^31)):
 * the same result without the 64-bit division. SRDHM's nudge-then-truncate-toward-zero equals
 * floor((a*b + 2^30) / 2^31) for every product, and the saturating case needs m == INT32_MIN. */
static inline int32_t ec_mbqm_pos(int32_t x, int32_t m, int shift) {
    const int left = shift > 0 ? shift : 0;
    const int right = shift > 0 ? 0 : -shift;
    const int64_t ab = ec_mul64(ec_shl32(x, left), m);
    return ec_rdbpot((int32_t)((ab + ((int64_t)1 << 30)) >> 31), right);
}

/* TFLite MultiplyByQuantizedMultiplier(int64_t x, ...), the 16x8 conv/FC requantization: the
 * multiplier rounded to 16 bits, then one rounding shift (half up) by 15 - shift (<= 14 here).
 * Products wrap as unsigned (C's int64 overflow is undefined; TFLite's would wrap). */
static inline int32_t ec_mbqm64(int64_t x, int32_t m, int shift) {
    const int64_t reduced = m < 0x7FFF0000 ? (((int64_t)m + (1 << 15)) >> 16) : 0x7FFF;
    const int total = 15 - shift;
    const int64_t r = (int64_t)((uint64_t)x * (uint64_t)reduced + ((uint64_t)1 << (total - 1)));
    return (int32_t)(r >> total);
}

/* ec_mbqm64 for an int32 x with constants edgecc prepared at compile time (quant.py
 * mbqm64_prepare): one 32x32->64 multiply-add, the high word, a 32-bit shift. */
static inline int32_t ec_mbqm64_pre(int32_t x, int32_t m_pre, int64_t r_pre, int k) {
    return (int32_t)((ec_mul64(x, m_pre) + r_pre) >> 32) >> k;
}

static inline int32_t ec_clamp(int32_t x, int32_t lo, int32_t hi) {
    return x < lo ? lo : (x > hi ? hi : x);
}

/* onnxruntime's float requantization (MLAS MlasRequantizeOutput, QuantizeLinear): round half to
 * even of a float32, as x86's cvtps2dq and MLAS's scalar magic-number path do, without libm.
 * Valid for |r| <= 2^22 (callers clamp first). Needs -ffp-contract=off and no -ffast-math: the
 * add and subtract below must each round to float32. */
static inline int32_t ec_onnx_round(float r) {
    return (int32_t)((r + 12582912.0f) - 12582912.0f);
}

/* One ONNX-numerics output value before the zero point: float(acc) * scale in float32, clamped
 * to +-2^15 (every int8/uint8 result saturates beyond), rounded half to even. `unused` keeps the
 * signature of ec_mbqm so kernels call either through one name. */
static inline int32_t ec_onnx_rq(int32_t acc, float scale, int unused) {
    float r = (float)acc * scale;
    (void)unused;
    if (!(r > -32768.0f)) r = -32768.0f;
    if (r > 32767.0f) r = 32767.0f;
    return ec_onnx_round(r);
}

/* float32 fma(a, b, c) rounded once, as onnxruntime's SGEMM kernels (FMA3 / AVX-512) compute it
 * (edgecc/numerics/ort_order.py): the instruction where the target has one (gcc; clang on Arm),
 * else (clang on x86 / AArch64, cores without FMA) in double without libm: a * b is exact
 * there, and the double sum's rounding only errs when that sum lies exactly halfway between two
 * floats (its low 29 mantissa bits 1 then zeros) while the exact sum does not; the sum's error
 * term then says which way to round. Normal float32 results only. */
static inline float ec_fmaf(float a, float b, float c) {
#if defined(__FP_FAST_FMAF) && !defined(__clang__)
    return __builtin_fmaf(a, b, c); /* gcc: one instruction at every -O level */
#elif defined(__clang__) && defined(__arm__) && defined(__ARM_FEATURE_FMA) && defined(__ARM_FP) \
    && (__ARM_FP & 4)
    /* clang keeps fmaf a libm call while errno is on (its default): the instruction itself */
    __asm__("vfma.f32 %0, %1, %2" : "+t"(c) : "t"(a), "t"(b));
    return c;
#else
    union { double d; uint64_t u; } s;
    const double p = (double)a * (double)b;
    double bb, err;
    s.d = p + (double)c;
    bb = s.d - p;
    err = (p - (s.d - bb)) + ((double)c - bb);
    if (err != 0.0 && (s.u & 0x1FFFFFFFu) == 0x10000000u) {
        if ((err > 0.0) == (s.d > 0.0)) s.u += 1; else s.u -= 1;
    }
    return (float)s.d;
#endif
}

#endif /* EDGECC_RT_H */
