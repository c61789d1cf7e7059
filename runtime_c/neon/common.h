/* edgecc AArch64 NEON kernels, common part: int8 CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED.
 *
 * The compiler (edgecc/ops/_vec.py) prepares what these functions read: conv and fully-connected
 * weights as "quads" (for each block of 8 output channels, for each group of 4 consecutive taps,
 * the 8 channels' 4 weight bytes: two 16-byte vectors of 4 channels x 4 taps), depthwise weights
 * tap by tap, the bias with -input_zp * sum(w) folded in, and TFLite's per-channel multiplier
 * and shifts.
 *
 * Dot products run on the int8 values themselves. With the dot-product extension
 * (__ARM_FEATURE_DOTPROD: -march=armv8.2-a+dotprod), SDOT adds four int8 x int8 products per
 * 32-bit lane: one lane per output channel, the pixel's 4 input bytes duplicated to every lane.
 * Without it, SMULL makes exact int16 products and SADALP adds them pairwise into int32 lanes
 * (channel c's taps 0-1 and 2-3 in two lanes, added at the end with ADDP). Depthwise
 * convolution multiplies 16 channels per tap with SMULL and widens with SADDW; two taps share
 * one int16 sum (SMLAL) when the compiler checked that no weight is -128 (then |sum| <= 32512).
 * A tap outside the input reads x = input_zp (a constant zero-point row for the depthwise
 * kernel, the gathered border pixels of the conv kernel, runtime_c/vec/common.h): it adds
 * exactly what the folded bias subtracted, i.e. nothing, as in TFLite Micro.
 *
 * Requantization is TFLite's MultiplyByQuantizedMultiplier exactly: SQRDMULH is
 * SaturatingRoundingDoublingHighMul, and RoundingDivideByPOT is gemmlowp's NEON form (a -1
 * fix-up for negative values, then SRSHL), both bit-exact with the reference for every input.
 * ONNX-numerics layers (edgecc/numerics/qlinear.py) take onnxruntime's epilogue instead, on the same
 * accumulators: SCVTF, FMUL by the float32 scale (one rounding each, as ec_onnx_rq in
 * edgecc_rt.h built with -ffp-contract=off), clamp to +-2^15, FCVTNS (round half to even).
 * Each kernel body is written once with a constant `onnx` parameter choosing the epilogue; the
 * two entry points (ec_neon_<op>_<variant>_s8 and ..._onnx_s8) inline it, so the TFLite code is
 * what it was without the ONNX one.
 *
 * This file: requantization and output helpers the NEON kernel headers (neon/<op>.h) share.
 * Only compiled for AArch64 NEON; elsewhere these headers are empty. C99, no state, no allocation,
 * no arena scratch (conv border pixels are gathered on the stack, 4 * kp bytes at most 8 KiB).
 */
#ifndef EDGECC_NEON_COMMON_H
#define EDGECC_NEON_COMMON_H
#if defined(__ARM_NEON) && defined(__aarch64__)
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <arm_neon.h>
#include "../vec/common.h"

#if defined(__ARM_FEATURE_DOTPROD)
#define EC_NEON_DOT 1
#else
#define EC_NEON_DOT 0
#endif

/* Kernels shared by every layer of a kind: one copy of the code however many layers call it. */
#define EC_NEON_SHARED static __attribute__((noinline, unused))

/* Per-channel requantization constants (padded to a multiple of 16) and the output clamp. */
typedef struct {
    const int32_t *mult;   /* TFLite multiplier */
    const int32_t *left;   /* left shift (TFLite shift > 0) */
    const int32_t *right;  /* right shift (TFLite shift < 0) */
    int32_t out_zp, act_min, act_max;
    const float *scale;    /* ONNX numerics: float32 scale per channel (else unused, 0) */
} ec_neon_rq;

/* A kernel body inlined into its TFLite and ONNX entry points (constant `onnx`). */
#define EC_NEON_BODY static inline __attribute__((always_inline))

/* TFLite's MultiplyByQuantizedMultiplier + out_zp for channels c..c+3. */
static inline int32x4_t ec_neon_requant4(int32x4_t acc, const ec_neon_rq *q, int c) {
    const int32x4_t neg_e = vnegq_s32(vld1q_s32(q->right + c));
    int32x4_t x = vqrdmulhq_s32(vshlq_s32(acc, vld1q_s32(q->left + c)), vld1q_s32(q->mult + c));
    /* ties away from zero: SRSHL rounds half up, so negative values first move down by one */
    const int32x4_t fixup = vshrq_n_s32(vandq_s32(x, neg_e), 31);
    x = vrshlq_s32(vqaddq_s32(x, fixup), neg_e);
    return vaddq_s32(x, vdupq_n_s32(q->out_zp));
}

/* onnxruntime's epilogue (ec_onnx_rq) + out_zp for channels c..c+3: float32(acc) * scale[c]
 * rounded once, clamped to [-32768, 32767], rounded half to even. */
static inline int32x4_t ec_neon_onnx_rq4(int32x4_t acc, const ec_neon_rq *q, int c) {
    float32x4_t r = vmulq_f32(vcvtq_f32_s32(acc), vld1q_f32(q->scale + c));
    r = vminq_f32(vmaxq_f32(r, vdupq_n_f32(-32768.0f)), vdupq_n_f32(32767.0f));
    return vaddq_s32(vcvtnq_s32_f32(r), vdupq_n_s32(q->out_zp));
}

/* The epilogue of channels c..c+3: TFLite's, or onnxruntime's when `onnx` (a constant). */
EC_NEON_BODY int32x4_t ec_neon_rq4(int32x4_t acc, const ec_neon_rq *q, int c, int onnx) {
    return onnx ? ec_neon_onnx_rq4(acc, q, c) : ec_neon_requant4(acc, q, c);
}

/* Requantize 16 channels c..c+15 (a0..a3, 4 each), saturate to int8, clamp, store n (1..16). */
EC_NEON_BODY void ec_neon_out16(int8_t *y, int32x4_t a0, int32x4_t a1, int32x4_t a2,
                                int32x4_t a3, const ec_neon_rq *q, int c, int n, int onnx) {
    const int16x8_t lo = vcombine_s16(vqmovn_s32(ec_neon_rq4(a0, q, c, onnx)),
                                      vqmovn_s32(ec_neon_rq4(a1, q, c + 4, onnx)));
    const int16x8_t hi = vcombine_s16(vqmovn_s32(ec_neon_rq4(a2, q, c + 8, onnx)),
                                      vqmovn_s32(ec_neon_rq4(a3, q, c + 12, onnx)));
    int8x16_t v = vcombine_s8(vqmovn_s16(lo), vqmovn_s16(hi));
    v = vminq_s8(vmaxq_s8(v, vdupq_n_s8((int8_t)q->act_min)), vdupq_n_s8((int8_t)q->act_max));
    if (n >= 16) {
        vst1q_s8(y, v);
    } else {
        int8_t t[16];
        vst1q_s8(t, v);
        memcpy(y, t, (size_t)n);
    }
}

/* The same for 8 channels c..c+7, storing n (1..8). */
EC_NEON_BODY void ec_neon_out8(int8_t *y, int32x4_t a0, int32x4_t a1, const ec_neon_rq *q,
                               int c, int n, int onnx) {
    const int16x8_t h = vcombine_s16(vqmovn_s32(ec_neon_rq4(a0, q, c, onnx)),
                                     vqmovn_s32(ec_neon_rq4(a1, q, c + 4, onnx)));
    int8x8_t v = vqmovn_s16(h);
    v = vmin_s8(vmax_s8(v, vdup_n_s8((int8_t)q->act_min)), vdup_n_s8((int8_t)q->act_max));
    if (n >= 8) {
        vst1_s8(y, v);
    } else {
        int8_t t[8];
        vst1_s8(t, v);
        memcpy(y, t, (size_t)n);
    }
}

/* A pixel's 4 input bytes in every 32-bit lane. */
static inline int8x16_t ec_neon_dup4(const int8_t *f) {
    int32_t v;
    memcpy(&v, f, 4);
    return vreinterpretq_s8_s32(vdupq_n_s32(v));
}

#if EC_NEON_DOT
#define EC_NEON_MAC(acc, w, x) vdotq_s32((acc), (w), (x))
#else
/* 4 channels x 4 taps (w) against 4 input bytes (x, duplicated): lanes (c0 taps 0-1, c0 taps
 * 2-3, c1 ...) in lo (c0, c1) and hi (c2, c3); ADDP puts the channels back together. */
static inline void ec_neon_mac2(int32x4_t *lo, int32x4_t *hi, int8x16_t w, int8x16_t x) {
    *lo = vpadalq_s16(*lo, vmull_s8(vget_low_s8(w), vget_low_s8(x)));
    *hi = vpadalq_s16(*hi, vmull_high_s8(w, x));
}
#endif

#endif /* __ARM_NEON && __aarch64__ */
#endif /* EDGECC_NEON_COMMON_H */
