/* edgecc x86 kernels, common part: the requantization and output helpers every x86 kernel header
 * (x86/<op>.h) shares, and the conventions of the int8 CONV_2D and FULLY_CONNECTED kernels
 * (x86/conv_2d.h, x86/conv_2d_x512.h, x86/fully_connected.h).
 *
 * The compiler (edgecc/ops/_vec.py) prepares everything these functions read: weights packed
 * in "quads" (for each block of output channels, for each group of 4 consecutive taps: the
 * block's channels' 4 weight bytes; channels padded to a multiple of 8, taps padded with zero
 * weights), the bias with the input offset folded in, and the requantization constants
 * (ec_x86_rq). Fully connected: blocks of 8 channels (32-byte steps). Convolution
 * (pack_quads16): blocks of 16 channels (64-byte steps: one ZMM, or two YMM halves), the last
 * block of 8 when the padded count is an odd multiple of 8; block c starts at byte c * kp.
 *
 * With AVX-512 VNNI (EC_X86_512) the convolution runs ec_x86_conv_2d_x512: for each row of output
 * pixels the input rows it reads are flipped to u8 once into a stack band (zero-point padded),
 * then tiles of 16 pixels x 16 channels, 8 x 32 or 4 x 64 accumulate in 16 ZMM registers
 * against broadcast input quads; stride-1 3-wide filters share each broadcast among 3 pixels.
 *
 * With AVX-VNNI, activations enter the conv and fully-connected dot products as unsigned bytes
 * u = x + 128 (x XOR 0x80): VPDPBUSD multiplies u8 x s8 and sums four products into int32 with
 * no intermediate saturation, and the compiler folds -(input_zp + 128) * sum(w) into that path's
 * bias (bias_u). Without VNNI (plain AVX2) the same quads are sign-extended to int16 and
 * multiplied by VPMADDWD with the activations x themselves sign-extended (bias_x folds
 * -input_zp * sum(w)): products are at most 128 * 128 and pairs of them fit int32, so nothing
 * saturates (VPMADDUBSW would saturate int16 and is not used). A tap outside the input reads
 * x = input_zp, which contributes exactly zero as in TFLite Micro. Every path sums the same
 * products in int32 with wrap-around, so all agree with the portable kernel bit for bit.
 * No kernel needs arena scratch:
 * convolution border pixels are gathered on the stack (4 * kp bytes at most 8 KiB).
 *
 * Only compiled where AVX2 exists; on other targets these headers are empty.
 * The VNNI path is taken
 * when the compiler flags enable AVX-VNNI (-mavxvnni, or -march=native on such a CPU) or
 * AVX512-VNNI with AVX512VL (256-bit registers either way). C99, no state, no allocation.
 */
#ifndef EDGECC_X86_COMMON_H
#define EDGECC_X86_COMMON_H
#if defined(__AVX2__)
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <immintrin.h>
#include "../vec/common.h"

#include "levels.h"

/* The level of the code below (EC_X86_LVL, see levels.h): kernels.h sets it for each copy it
 * compiles; a header included alone takes the build flags' level. */
#ifndef EC_X86_LVL
#define EC_X86_LVL EC_X86_FLAGS_LVL
#endif

/* VPDPBUSD on YMM registers: the VEX form (AVX-VNNI) or the EVEX one (AVX512-VNNI + VL). */
#if EC_X86_LVL >= 2 || (EC_X86_LVL == 1 && !defined(__AVXVNNI__) && defined(__AVX512VNNI__) && \
                        defined(__AVX512VL__))
#define EC_X86_VNNI 1
#define EC_X86_EVEX 1
#define ec_dpbusd(acc, u, s) _mm256_dpbusd_epi32((acc), (u), (s))
#elif EC_X86_LVL == 1
#define EC_X86_VNNI 1
#define EC_X86_EVEX 0
#define ec_dpbusd(acc, u, s) _mm256_dpbusd_avx_epi32((acc), (u), (s))
#else
#define EC_X86_VNNI 0
#define EC_X86_EVEX 0
#endif

/* 512-bit kernels (ZMM registers, 64 int8 lanes): level 2, AVX-512 F, BW, VL and VNNI (the
 * x86-avx512 target's flags, or the copy kernels.h compiles for such a CPU). */
#define EC_X86_512 (EC_X86_LVL >= 2)

/* Kernels shared by every layer of a kind: one copy of the code however many layers call it. */
#define EC_X86_SHARED static __attribute__((noinline, unused))

#define EC_LD256(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
/* Keep a vector in a register: without this the compilers fold a weight load into each of the
 * 4 pixels' VPDPBUSD (a memory operand), and the loads, not the multiplies, limit the loop. */
#define EC_X86_IN_REG(v) __asm__("" : "+x"(v))
#define EC_LD128(p) _mm_loadu_si128((const __m128i *)(const void *)(p))

static inline int32_t ec_x86_ld32(const void *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline int64_t ec_x86_ld64(const void *p) {
    int64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* ---------------------------------------------------------------------- requantization */

/* Per-channel requantization constants and the output clamp of one layer.
 *
 * Exact path (fast == 0): TFLite's MultiplyByQuantizedMultiplier as it is,
 * SaturatingRoundingDoublingHighMul as floor((a*m + 2^30) / 2^31) (TFLite's nudge-and-truncate
 * for every m != INT32_MIN, which the compiler checks), then RoundingDivideByPOT per lane.
 * Fast path (fast == 1), used when the compiler proved it exact for every reachable accumulator
 * of every channel (edgecc/ops/_simd.py: fast_requant): with a = acc << L,
 *     t = (a*m + 2^31 + N*2^32) >> 32  (+ a >> 31),   out = t >> e
 * where N = 2^(e-1) + out_zp * 2^e folds RoundingDivideByPOT's rounding and the output zero
 * point into the 64-bit product: c64 holds 2^31 + N*2^32 per channel, for each block of 8
 * channels the 4 even channels first, then the 4 odd ones (the order VPMULDQ produces). */
#ifndef EC_X86_ONCE_EC_AVX2_RQ /* a record the calls name: defined once, not per level */
#define EC_X86_ONCE_EC_AVX2_RQ
typedef struct {
    const int32_t *mult;   /* multiplier per channel (padded to a multiple of 8) */
    const int32_t *left;   /* exact path: left shift (TFLite shift > 0) */
    const int32_t *right;  /* exact path: right shift (TFLite shift < 0), at most 31; fast: e */
    const int64_t *c64;    /* fast path: 2^31 + N * 2^32, even channels then odd per block */
    int32_t fast, L;       /* fast path on; its left shift */
    int32_t out_zp, act_min, act_max;
    const float *fscale;   /* ONNX numerics (fast == 0): float32 scale per channel, else 0 */
} ec_x86_rq;
#endif

/* TFLite's MultiplyByQuantizedMultiplier + out_zp for channels c..c+7, both roundings in turn. */
static inline __m256i ec_x86_mbqm8(__m256i acc, const ec_x86_rq *q, int c) {
    const __m256i m = EC_LD256(q->mult + c);
    const __m256i e = EC_LD256(q->right + c);
    const __m256i one = _mm256_set1_epi32(1);
    const __m256i nudge = _mm256_set1_epi64x((long long)1 << 30);
    const __m256i a = _mm256_sllv_epi32(acc, EC_LD256(q->left + c));
    /* a*m in 64 bits, even lanes and odd lanes; bits 31..62 of (a*m + 2^30) are SRDHM. */
    const __m256i ev = _mm256_add_epi64(_mm256_mul_epi32(a, m), nudge);
    const __m256i od = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32),
                                                         _mm256_srli_epi64(m, 32)), nudge);
    const __m256i x = _mm256_blend_epi32(_mm256_srli_epi64(ev, 31), _mm256_slli_epi64(od, 1), 0xAA);
    /* RoundingDivideByPOT: (x >> e) + (remainder > threshold), threshold = mask/2 + (x < 0) */
    const __m256i mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, e), one);
    const __m256i rem = _mm256_and_si256(x, mask);
    const __m256i thr = _mm256_sub_epi32(_mm256_srai_epi32(mask, 1),
                                         _mm256_cmpgt_epi32(_mm256_setzero_si256(), x));
    const __m256i r = _mm256_sub_epi32(_mm256_srav_epi32(x, e), _mm256_cmpgt_epi32(rem, thr));
    return _mm256_add_epi32(r, _mm256_set1_epi32(q->out_zp));
}

/* The fast path: the same result as ec_x86_mbqm8 wherever the compiler proved it. */
static inline __m256i ec_x86_fast8(__m256i acc, const ec_x86_rq *q, int c) {
    const __m256i m = EC_LD256(q->mult + c);
    const __m256i a = _mm256_sll_epi32(acc, _mm_cvtsi32_si128(q->L));
    const __m256i ev = _mm256_add_epi64(_mm256_mul_epi32(a, m), EC_LD256(q->c64 + c));
    const __m256i od = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32),
                                                         _mm256_srli_epi64(m, 32)),
                                        EC_LD256(q->c64 + c + 4));
    const __m256i t = _mm256_blend_epi32(_mm256_srli_epi64(ev, 32), od, 0xAA);
    return _mm256_srav_epi32(_mm256_add_epi32(t, _mm256_srai_epi32(a, 31)), EC_LD256(q->right + c));
}

/* onnxruntime's epilogue (ec_onnx_rq, edgecc/numerics/qlinear.py) on channels c..c+7: float32(acc)
 * * scale[c] in float32, clamped to [-32768, 32767], rounded half to even (VCVTPS2DQ under the
 * default MXCSR, as the C twin's rounding), + out_zp. The kernels' saturating packs and the
 * activation clamp then give clamp(... + zp, act_min, act_max) as onnxruntime does. */
static inline __m256i ec_x86_onnx8(__m256i acc, const ec_x86_rq *q, int c) {
    __m256 r = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), _mm256_loadu_ps(q->fscale + c));
    r = _mm256_min_ps(_mm256_max_ps(r, _mm256_set1_ps(-32768.0f)), _mm256_set1_ps(32767.0f));
    return _mm256_add_epi32(_mm256_cvtps_epi32(r), _mm256_set1_epi32(q->out_zp));
}

/* The path the compiler did not prove fast: TFLite's two roundings, or ONNX's float epilogue. */
static inline __m256i ec_x86_exact8(__m256i acc, const ec_x86_rq *q, int c) {
    return q->fscale ? ec_x86_onnx8(acc, q, c) : ec_x86_mbqm8(acc, q, c);
}

/* 8 accumulators of channels c..c+7 -> int32 outputs (out_zp added), not yet clamped. */
static inline __m256i ec_x86_requant8(__m256i acc, const ec_x86_rq *q, int c) {
    return q->fast ? ec_x86_fast8(acc, q, c) : ec_x86_exact8(acc, q, c);
}

/* Packed int8 (the packs saturate to [-128, 127]) -> the fused activation's range. */
static inline __m128i ec_x86_clamp8(__m128i b, const ec_x86_rq *q) {
    return _mm_min_epi8(_mm_max_epi8(b, _mm_set1_epi8((char)q->act_min)),
                        _mm_set1_epi8((char)q->act_max));
}

static inline void ec_x86_store_n(int8_t *y, __m128i v, int n) {
    int8_t t[16];
    _mm_storeu_si128((__m128i *)(void *)t, v);
    memcpy(y, t, (size_t)n);
}

/* Requantize 16 channels (a: c..c+7, b: c+8..c+15) and store the first n (1..16). */
static inline void ec_x86_out16(int8_t *y, __m256i a, __m256i b, const ec_x86_rq *q, int c,
                                 int n) {
    const __m256i p = _mm256_permute4x64_epi64(
        _mm256_packs_epi32(ec_x86_requant8(a, q, c), ec_x86_requant8(b, q, c + 8)), 0xD8);
    const __m128i v = ec_x86_clamp8(_mm_packs_epi16(_mm256_castsi256_si128(p),
                                                     _mm256_extracti128_si256(p, 1)), q);
    if (n >= 16) _mm_storeu_si128((__m128i *)(void *)y, v);
    else ec_x86_store_n(y, v, n);
}

/* Requantize 8 channels c..c+7 and store the first n (1..8). */
static inline void ec_x86_out8(int8_t *y, __m256i a, const ec_x86_rq *q, int c, int n) {
    const __m256i r = ec_x86_requant8(a, q, c);
    const __m128i p = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    const __m128i v = ec_x86_clamp8(_mm_packs_epi16(p, p), q);
    if (n >= 8) _mm_storel_epi64((__m128i *)(void *)y, v);
    else ec_x86_store_n(y, v, n);
}

#if !EC_X86_VNNI
/* madd path: 8 channels x 4 taps of quads (32 bytes) against one pixel's 4 taps (int16, broadcast
 * as a 64-bit pattern) leave lanes (c0 taps 0-1, c0 taps 2-3, c1 ...) in lo (c0-c3) and hi
 * (c4-c7): add the pairs and put the channels in order. */
static inline __m256i ec_x86_fold8(__m256i lo, __m256i hi) {
    /* hadd within 128-bit lanes gives [c0 c1 c4 c5 | c2 c3 c6 c7] */
    return _mm256_permute4x64_epi64(_mm256_hadd_epi32(lo, hi), 0xD8);
}

#endif

/* One step of 4 taps for channels c..c+7 (weights v) and one pixel's 4 input bytes at f:
 * VNNI: u8 = x ^ 0x80 against the quads; AVX2: the 4 bytes sign-extended to int16 and repeated
 * (VPBROADCASTD + VPMOVSXBW), VPMADDWD against the quads widened once per step. */
#if EC_X86_VNNI
#define EC_X86_U(f) _mm256_xor_si256(_mm256_set1_epi32(ec_x86_ld32(f)), flip)
#else
#define EC_X86_X(f) _mm256_cvtepi8_epi16(_mm_set1_epi32(ec_x86_ld32(f)))
#endif

/* 8 bytes at p into the low half of an XMM register */
#define EC_LD64(p) _mm_loadl_epi64((const __m128i *)(const void *)(p))

#endif /* __AVX2__ */
#endif /* EDGECC_X86_COMMON_H */
