/* edgecc x86 AVX2 kernels: int8 CONV_2D and FULLY_CONNECTED, and the requantization every
 * x86 kernel shares (DEPTHWISE_CONV_2D: edgecc_avx2_dw.h).
 *
 * The compiler (edgecc/ops/_vec.py) prepares everything these functions read: weights packed
 * in "quads" (for each block of 8 output channels, for each group of 4 consecutive taps: the 8
 * channels' 4 weight bytes, 32 bytes in all; channels padded to a multiple of 8, taps padded
 * with zero weights), the bias with the input offset folded in, and the requantization
 * constants (ec_avx2_rq).
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
 * Only compiled where AVX2 exists; on other targets this header is empty. The VNNI path is taken
 * when the compiler flags enable AVX-VNNI (-mavxvnni, or -march=native on such a CPU) or
 * AVX512-VNNI with AVX512VL (256-bit registers either way). C99, no state, no allocation.
 */
#ifndef EDGECC_AVX2_H
#define EDGECC_AVX2_H
#if defined(__AVX2__)
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <immintrin.h>
#include "edgecc_vec.h"

#if defined(__AVXVNNI__)
#define EC_AVX2_VNNI 1
#define ec_dpbusd(acc, u, s) _mm256_dpbusd_avx_epi32((acc), (u), (s))
#elif defined(__AVX512VNNI__) && defined(__AVX512VL__)
#define EC_AVX2_VNNI 1
#define ec_dpbusd(acc, u, s) _mm256_dpbusd_epi32((acc), (u), (s))
#else
#define EC_AVX2_VNNI 0
#endif

/* 512-bit kernels (ZMM registers, 64 int8 lanes): taken when the build enables AVX-512 F, BW, VL
 * and VNNI (the x86-avx512 target's flags, or -march=native on such a CPU). The same generated C
 * runs the 256-bit paths elsewhere. */
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VNNI__)
#define EC_X86_512 1
#else
#define EC_X86_512 0
#endif

/* Kernels shared by every layer of a kind: one copy of the code however many layers call it. */
#define EC_AVX2_SHARED static __attribute__((noinline, unused))

#define EC_LD256(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
/* Keep a vector in a register: without this the compilers fold a weight load into each of the
 * 4 pixels' VPDPBUSD (a memory operand), and the loads, not the multiplies, limit the loop. */
#define EC_AVX2_IN_REG(v) __asm__("" : "+x"(v))
#define EC_LD128(p) _mm_loadu_si128((const __m128i *)(const void *)(p))

static inline int32_t ec_avx2_ld32(const void *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline int64_t ec_avx2_ld64(const void *p) {
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
typedef struct {
    const int32_t *mult;   /* multiplier per channel (padded to a multiple of 8) */
    const int32_t *left;   /* exact path: left shift (TFLite shift > 0) */
    const int32_t *right;  /* exact path: right shift (TFLite shift < 0), at most 31; fast: e */
    const int64_t *c64;    /* fast path: 2^31 + N * 2^32, even channels then odd per block */
    int32_t fast, L;       /* fast path on; its left shift */
    int32_t out_zp, act_min, act_max;
} ec_avx2_rq;

/* TFLite's MultiplyByQuantizedMultiplier + out_zp for channels c..c+7, both roundings in turn. */
static inline __m256i ec_avx2_mbqm8(__m256i acc, const ec_avx2_rq *q, int c) {
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

/* The fast path: the same result as ec_avx2_mbqm8 wherever the compiler proved it. */
static inline __m256i ec_avx2_fast8(__m256i acc, const ec_avx2_rq *q, int c) {
    const __m256i m = EC_LD256(q->mult + c);
    const __m256i a = _mm256_sll_epi32(acc, _mm_cvtsi32_si128(q->L));
    const __m256i ev = _mm256_add_epi64(_mm256_mul_epi32(a, m), EC_LD256(q->c64 + c));
    const __m256i od = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32),
                                                         _mm256_srli_epi64(m, 32)),
                                        EC_LD256(q->c64 + c + 4));
    const __m256i t = _mm256_blend_epi32(_mm256_srli_epi64(ev, 32), od, 0xAA);
    return _mm256_srav_epi32(_mm256_add_epi32(t, _mm256_srai_epi32(a, 31)), EC_LD256(q->right + c));
}

/* 8 accumulators of channels c..c+7 -> int32 outputs (out_zp added), not yet clamped. */
static inline __m256i ec_avx2_requant8(__m256i acc, const ec_avx2_rq *q, int c) {
    return q->fast ? ec_avx2_fast8(acc, q, c) : ec_avx2_mbqm8(acc, q, c);
}

/* Packed int8 (the packs saturate to [-128, 127]) -> the fused activation's range. */
static inline __m128i ec_avx2_clamp8(__m128i b, const ec_avx2_rq *q) {
    return _mm_min_epi8(_mm_max_epi8(b, _mm_set1_epi8((char)q->act_min)),
                        _mm_set1_epi8((char)q->act_max));
}

static inline void ec_avx2_store_n(int8_t *y, __m128i v, int n) {
    int8_t t[16];
    _mm_storeu_si128((__m128i *)(void *)t, v);
    memcpy(y, t, (size_t)n);
}

/* Requantize 16 channels (a: c..c+7, b: c+8..c+15) and store the first n (1..16). */
static inline void ec_avx2_out16(int8_t *y, __m256i a, __m256i b, const ec_avx2_rq *q, int c,
                                 int n) {
    const __m256i p = _mm256_permute4x64_epi64(
        _mm256_packs_epi32(ec_avx2_requant8(a, q, c), ec_avx2_requant8(b, q, c + 8)), 0xD8);
    const __m128i v = ec_avx2_clamp8(_mm_packs_epi16(_mm256_castsi256_si128(p),
                                                     _mm256_extracti128_si256(p, 1)), q);
    if (n >= 16) _mm_storeu_si128((__m128i *)(void *)y, v);
    else ec_avx2_store_n(y, v, n);
}

/* Requantize 8 channels c..c+7 and store the first n (1..8). */
static inline void ec_avx2_out8(int8_t *y, __m256i a, const ec_avx2_rq *q, int c, int n) {
    const __m256i r = ec_avx2_requant8(a, q, c);
    const __m128i p = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    const __m128i v = ec_avx2_clamp8(_mm_packs_epi16(p, p), q);
    if (n >= 8) _mm_storel_epi64((__m128i *)(void *)y, v);
    else ec_avx2_store_n(y, v, n);
}

#if !EC_AVX2_VNNI
/* madd path: 8 channels x 4 taps of quads (32 bytes) against one pixel's 4 taps (int16, broadcast
 * as a 64-bit pattern) leave lanes (c0 taps 0-1, c0 taps 2-3, c1 ...) in lo (c0-c3) and hi
 * (c4-c7): add the pairs and put the channels in order. */
static inline __m256i ec_avx2_fold8(__m256i lo, __m256i hi) {
    /* hadd within 128-bit lanes gives [c0 c1 c4 c5 | c2 c3 c6 c7] */
    return _mm256_permute4x64_epi64(_mm256_hadd_epi32(lo, hi), 0xD8);
}

#endif


/* One step of 4 taps for channels c..c+7 (weights v) and one pixel's 4 input bytes at f:
 * VNNI: u8 = x ^ 0x80 against the quads; AVX2: the 4 bytes sign-extended to int16 and repeated
 * (VPBROADCASTD + VPMOVSXBW), VPMADDWD against the quads widened once per step. */
#if EC_AVX2_VNNI
#define EC_AVX2_U(f) _mm256_xor_si256(_mm256_set1_epi32(ec_avx2_ld32(f)), flip)
#else
#define EC_AVX2_X(f) _mm256_cvtepi8_epi16(_mm_set1_epi32(ec_avx2_ld32(f)))
#endif

/* Convolution as blocks of 4 output pixels x 16 output channels (VNNI) or x 8 (AVX2).
 * Pixels whose window lies inside the input are read in place, segment by segment; the others
 * (borders) are gathered, zero-point padded, into a stack buffer. A last partial block repeats
 * its last pixel (computed, not stored). bias_u is the bias for u8 = x + 128 (VNNI), bias_x the
 * one for x itself (AVX2). No arena scratch. */
EC_AVX2_SHARED void ec_avx2_conv(const ec_vec_conv_geom *g, const int8_t *x, int8_t *y,
                                 const int8_t *w, const int32_t *bias_u, const int32_t *bias_x,
                                 const ec_avx2_rq *q) {
    const int kp = g->kp, qs = g->seg_p / 4;
    int8_t buf[4 * EC_VEC_MAX_KP];
    ptrdiff_t soff[EC_VEC_MAX_SEGS];  /* segment s's first byte, from the window's first byte */
    ptrdiff_t goff[EC_VEC_MAX_SEGS];  /* the same in a gathered field */
    ec_vec_pos pos = {0, 0, 0};       /* the next pixel's position */
    int p0, s;
    ec_vec_segments(g, soff, goff);
    for (p0 = 0; p0 < g->pixels; p0 += 4) {
        const int np = g->pixels - p0 < 4 ? g->pixels - p0 : 4;
        const int8_t *base[4];
        const ptrdiff_t *off[4];
        int c;
        ec_vec_block(g, x, &pos, np, buf, soff, goff, base, off);
#if EC_AVX2_VNNI
        (void)bias_x;
        for (c = 0; c < g->ocp; c += 16) {
            const __m256i flip = _mm256_set1_epi8((char)0x80);
            const int8_t *wk = w + (size_t)c * kp;
            int k;
            if (c + 8 < g->ocp) {
                __m256i a00 = EC_LD256(bias_u + c), a01 = EC_LD256(bias_u + c + 8);
                __m256i a10 = a00, a11 = a01, a20 = a00, a21 = a01, a30 = a00, a31 = a01;
                const int8_t *w1 = wk + 8 * kp;
                for (s = 0; s < g->segs; ++s) {
                    const int8_t *f0 = base[0] + off[0][s], *f1 = base[1] + off[1][s];
                    const int8_t *f2 = base[2] + off[2][s], *f3 = base[3] + off[3][s];
                    for (k = 0; k < qs; ++k, wk += 32, w1 += 32) {
                        __m256i v0 = EC_LD256(wk), v1 = EC_LD256(w1);
                        EC_AVX2_IN_REG(v0);
                        EC_AVX2_IN_REG(v1);
                        __m256i u = EC_AVX2_U(f0 + 4 * k);
                        a00 = ec_dpbusd(a00, u, v0);
                        a01 = ec_dpbusd(a01, u, v1);
                        u = EC_AVX2_U(f1 + 4 * k);
                        a10 = ec_dpbusd(a10, u, v0);
                        a11 = ec_dpbusd(a11, u, v1);
                        u = EC_AVX2_U(f2 + 4 * k);
                        a20 = ec_dpbusd(a20, u, v0);
                        a21 = ec_dpbusd(a21, u, v1);
                        u = EC_AVX2_U(f3 + 4 * k);
                        a30 = ec_dpbusd(a30, u, v0);
                        a31 = ec_dpbusd(a31, u, v1);
                    }
                }
                {
                    const int n = g->out_c - c;
                    int8_t *yp = y + (size_t)p0 * g->out_c + c;
                    ec_avx2_out16(yp, a00, a01, q, c, n);
                    if (np > 1) ec_avx2_out16(yp + g->out_c, a10, a11, q, c, n);
                    if (np > 2) ec_avx2_out16(yp + 2 * g->out_c, a20, a21, q, c, n);
                    if (np > 3) ec_avx2_out16(yp + 3 * g->out_c, a30, a31, q, c, n);
                }
            } else {
                __m256i a0 = EC_LD256(bias_u + c), a1 = a0, a2 = a0, a3 = a0;
                for (s = 0; s < g->segs; ++s) {
                    const int8_t *f0 = base[0] + off[0][s], *f1 = base[1] + off[1][s];
                    const int8_t *f2 = base[2] + off[2][s], *f3 = base[3] + off[3][s];
                    for (k = 0; k < qs; ++k, wk += 32) {
                        __m256i v0 = EC_LD256(wk);
                        EC_AVX2_IN_REG(v0);
                        a0 = ec_dpbusd(a0, EC_AVX2_U(f0 + 4 * k), v0);
                        a1 = ec_dpbusd(a1, EC_AVX2_U(f1 + 4 * k), v0);
                        a2 = ec_dpbusd(a2, EC_AVX2_U(f2 + 4 * k), v0);
                        a3 = ec_dpbusd(a3, EC_AVX2_U(f3 + 4 * k), v0);
                    }
                }
                {
                    const int n = g->out_c - c;
                    int8_t *yp = y + (size_t)p0 * g->out_c + c;
                    ec_avx2_out8(yp, a0, q, c, n);
                    if (np > 1) ec_avx2_out8(yp + g->out_c, a1, q, c, n);
                    if (np > 2) ec_avx2_out8(yp + 2 * g->out_c, a2, q, c, n);
                    if (np > 3) ec_avx2_out8(yp + 3 * g->out_c, a3, q, c, n);
                }
            }
        }
#else
        (void)bias_u;
        for (c = 0; c < g->ocp; c += 8) {
            const int8_t *wk = w + (size_t)c * kp;
            const __m256i z = _mm256_setzero_si256();
            __m256i l0 = z, h0 = z, l1 = z, h1 = z, l2 = z, h2 = z, l3 = z, h3 = z, b;
            int k;
            for (s = 0; s < g->segs; ++s) {
                const int8_t *f0 = base[0] + off[0][s], *f1 = base[1] + off[1][s];
                const int8_t *f2 = base[2] + off[2][s], *f3 = base[3] + off[3][s];
                for (k = 0; k < qs; ++k, wk += 32) {
                    const __m256i vl = _mm256_cvtepi8_epi16(EC_LD128(wk));
                    const __m256i vh = _mm256_cvtepi8_epi16(EC_LD128(wk + 16));
                    __m256i u = EC_AVX2_X(f0 + 4 * k);
                    l0 = _mm256_add_epi32(l0, _mm256_madd_epi16(u, vl));
                    h0 = _mm256_add_epi32(h0, _mm256_madd_epi16(u, vh));
                    u = EC_AVX2_X(f1 + 4 * k);
                    l1 = _mm256_add_epi32(l1, _mm256_madd_epi16(u, vl));
                    h1 = _mm256_add_epi32(h1, _mm256_madd_epi16(u, vh));
                    u = EC_AVX2_X(f2 + 4 * k);
                    l2 = _mm256_add_epi32(l2, _mm256_madd_epi16(u, vl));
                    h2 = _mm256_add_epi32(h2, _mm256_madd_epi16(u, vh));
                    u = EC_AVX2_X(f3 + 4 * k);
                    l3 = _mm256_add_epi32(l3, _mm256_madd_epi16(u, vl));
                    h3 = _mm256_add_epi32(h3, _mm256_madd_epi16(u, vh));
                }
            }
            b = EC_LD256(bias_x + c);
            {
                const int n = g->out_c - c;
                int8_t *yp = y + (size_t)p0 * g->out_c + c;
                ec_avx2_out8(yp, _mm256_add_epi32(b, ec_avx2_fold8(l0, h0)), q, c, n);
                if (np > 1) ec_avx2_out8(yp + g->out_c, _mm256_add_epi32(b, ec_avx2_fold8(l1, h1)), q, c, n);
                if (np > 2) ec_avx2_out8(yp + 2 * g->out_c, _mm256_add_epi32(b, ec_avx2_fold8(l2, h2)), q, c, n);
                if (np > 3) ec_avx2_out8(yp + 3 * g->out_c, _mm256_add_epi32(b, ec_avx2_fold8(l3, h3)), q, c, n);
            }
        }
#endif
    }
}

/* ------------------------------------------------------------------------- FULLY_CONNECTED */

/* y[b][u] for every batch row, read in place (a last partial quad of the row from a 4-byte
 * copy): VNNI 32 units (4 blocks of 8) at a time, AVX2 16; then 8 at a time. bias_u / bias_x as
 * for the convolution. No arena scratch. */
EC_AVX2_SHARED void ec_avx2_fc(int batches, int depth, int kp, int units, int ocp,
                               const int8_t *x, int8_t *y, const int8_t *w, const int32_t *bias_u,
                               const int32_t *bias_x, const ec_avx2_rq *q) {
    const int kq = kp / 4, full = depth / 4;
    int bt;
    for (bt = 0; bt < batches; ++bt, x += depth, y += units) {
        int8_t tail[4] = {0, 0, 0, 0};
        int c = 0;
        memcpy(tail, x + 4 * full, (size_t)(depth - 4 * full));
#define EC_AVX2_FC_X(k) ((k) < full ? x + 4 * (k) : tail)
#if EC_AVX2_VNNI
        {
        const __m256i flip = _mm256_set1_epi8((char)0x80);
        (void)bias_x;
        for (; c + 32 <= ocp; c += 32) {
            const int8_t *w0 = w + (size_t)c * kp;
            __m256i a0 = EC_LD256(bias_u + c), a1 = EC_LD256(bias_u + c + 8);
            __m256i a2 = EC_LD256(bias_u + c + 16), a3 = EC_LD256(bias_u + c + 24);
            int k;
            for (k = 0; k < kq; ++k) {
                const __m256i u = EC_AVX2_U(EC_AVX2_FC_X(k));
                a0 = ec_dpbusd(a0, u, EC_LD256(w0 + 32 * k));
                a1 = ec_dpbusd(a1, u, EC_LD256(w0 + 8 * kp + 32 * k));
                a2 = ec_dpbusd(a2, u, EC_LD256(w0 + 16 * kp + 32 * k));
                a3 = ec_dpbusd(a3, u, EC_LD256(w0 + 24 * kp + 32 * k));
            }
            ec_avx2_out16(y + c, a0, a1, q, c, units - c);
            ec_avx2_out16(y + c + 16, a2, a3, q, c + 16, units - c - 16);
        }
        for (; c < ocp; c += 8) {
            const int8_t *w0 = w + (size_t)c * kp;
            __m256i a0 = EC_LD256(bias_u + c), a1 = _mm256_setzero_si256();
            int k;
            for (k = 0; k + 2 <= kq; k += 2) {  /* two chains: the adds do not wait on each other */
                a0 = ec_dpbusd(a0, EC_AVX2_U(EC_AVX2_FC_X(k)), EC_LD256(w0 + 32 * k));
                a1 = ec_dpbusd(a1, EC_AVX2_U(EC_AVX2_FC_X(k + 1)), EC_LD256(w0 + 32 * k + 32));
            }
            if (k < kq) a0 = ec_dpbusd(a0, EC_AVX2_U(EC_AVX2_FC_X(k)), EC_LD256(w0 + 32 * k));
            ec_avx2_out8(y + c, _mm256_add_epi32(a0, a1), q, c, units - c);
        }
        }
#else
        (void)bias_u;
        for (; c + 16 <= ocp; c += 16) {
            const int8_t *w0 = w + (size_t)c * kp, *w1 = w0 + 8 * kp;
            const __m256i z = _mm256_setzero_si256();
            __m256i l0 = z, h0 = z, l1 = z, h1 = z;
            int k;
            for (k = 0; k < kq; ++k) {
                const __m256i u = EC_AVX2_X(EC_AVX2_FC_X(k));
                l0 = _mm256_add_epi32(l0, _mm256_madd_epi16(u, _mm256_cvtepi8_epi16(EC_LD128(w0 + 32 * k))));
                h0 = _mm256_add_epi32(h0, _mm256_madd_epi16(u, _mm256_cvtepi8_epi16(EC_LD128(w0 + 32 * k + 16))));
                l1 = _mm256_add_epi32(l1, _mm256_madd_epi16(u, _mm256_cvtepi8_epi16(EC_LD128(w1 + 32 * k))));
                h1 = _mm256_add_epi32(h1, _mm256_madd_epi16(u, _mm256_cvtepi8_epi16(EC_LD128(w1 + 32 * k + 16))));
            }
            ec_avx2_out16(y + c, _mm256_add_epi32(EC_LD256(bias_x + c), ec_avx2_fold8(l0, h0)),
                          _mm256_add_epi32(EC_LD256(bias_x + c + 8), ec_avx2_fold8(l1, h1)), q, c, units - c);
        }
        for (; c < ocp; c += 8) {
            const int8_t *w0 = w + (size_t)c * kp;
            const __m256i z = _mm256_setzero_si256();
            __m256i l0 = z, h0 = z;
            int k;
            for (k = 0; k < kq; ++k) {
                const __m256i u = EC_AVX2_X(EC_AVX2_FC_X(k));
                l0 = _mm256_add_epi32(l0, _mm256_madd_epi16(u, _mm256_cvtepi8_epi16(EC_LD128(w0 + 32 * k))));
                h0 = _mm256_add_epi32(h0, _mm256_madd_epi16(u, _mm256_cvtepi8_epi16(EC_LD128(w0 + 32 * k + 16))));
            }
            ec_avx2_out8(y + c, _mm256_add_epi32(EC_LD256(bias_x + c), ec_avx2_fold8(l0, h0)), q, c, units - c);
        }
#endif
#undef EC_AVX2_FC_X
    }
}

#endif /* __AVX2__ */
#endif /* EDGECC_AVX2_H */
