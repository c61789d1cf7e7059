/* edgecc x86 AVX2 kernels: int8 CONV_2D and FULLY_CONNECTED, and the requantization every
 * x86 kernel shares (DEPTHWISE_CONV_2D: edgecc_avx2_dw.h).
 *
 * The compiler (edgecc/ops/_vec.py) prepares everything these functions read: weights packed
 * in "quads" (for each block of output channels, for each group of 4 consecutive taps: the
 * block's channels' 4 weight bytes; channels padded to a multiple of 8, taps padded with zero
 * weights), the bias with the input offset folded in, and the requantization constants
 * (ec_avx2_rq). Fully connected: blocks of 8 channels (32-byte steps). Convolution
 * (pack_quads16): blocks of 16 channels (64-byte steps: one ZMM, or two YMM halves), the last
 * block of 8 when the padded count is an odd multiple of 8; block c starts at byte c * kp.
 *
 * With AVX-512 VNNI (EC_X86_512) the convolution runs ec_x512_conv: for each row of output
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
                for (s = 0; s < g->segs; ++s) {
                    const int8_t *f0 = base[0] + off[0][s], *f1 = base[1] + off[1][s];
                    const int8_t *f2 = base[2] + off[2][s], *f3 = base[3] + off[3][s];
                    for (k = 0; k < qs; ++k, wk += 64) {
                        __m256i v0 = EC_LD256(wk), v1 = EC_LD256(wk + 32);
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
            /* channels c..c+7: a half of a 16-channel block (64-byte steps) or the last block */
            const int whole = (c & ~15) + 16 <= g->ocp, step = whole ? 64 : 32;
            const int8_t *wk = w + (size_t)(c & ~15) * kp + (whole && (c & 8) ? 32 : 0);
            const __m256i z = _mm256_setzero_si256();
            __m256i l0 = z, h0 = z, l1 = z, h1 = z, l2 = z, h2 = z, l3 = z, h3 = z, b;
            int k;
            for (s = 0; s < g->segs; ++s) {
                const int8_t *f0 = base[0] + off[0][s], *f1 = base[1] + off[1][s];
                const int8_t *f2 = base[2] + off[2][s], *f3 = base[3] + off[3][s];
                for (k = 0; k < qs; ++k, wk += step) {
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

/* ------------------------------------------------------------------- CONV_2D on ZMM registers */

/* How the 512-bit convolution runs a layer (edgecc/ops/_vec.py: x512_band): tiles of P output
 * pixels x NC blocks of 16 channels (P = 0: the layer takes ec_avx2_conv), and the band: for each
 * row of output pixels, the k_h input rows it reads (columns from -pad_l on, `cols` of them,
 * `row` bytes apart) flipped to u8 = x ^ 0x80 and padded with in_zp ^ 0x80, on the stack. A 1x1
 * stride-1 unpadded layer (`chunk` > 0) flips `chunk` consecutive pixels at a time instead. */
typedef struct {
    int32_t P, NC, chunk, row, cols;
    int32_t slide;  /* stride 1, k_w 3, undilated, in_c % 4 == 0: ec_x512_slide1 / 2 */
} ec_x512_band;

#define EC_X512_MAX_BAND 16384

#if EC_X86_512
/* Keep a ZMM vector in a register (see EC_AVX2_IN_REG). */
#define EC_X512_IN_REG(v) __asm__("" : "+v"(v))

/* n bytes (any n) of src XOR 0x80 to dst / n bytes of v. */
static inline void ec_x512_flip(int8_t *dst, const int8_t *src, int n) {
    const __m512i f = _mm512_set1_epi8((char)0x80);
    int i = 0;
    for (; i + 64 <= n; i += 64)
        _mm512_storeu_si512((void *)(dst + i), _mm512_xor_si512(_mm512_loadu_si512((const void *)(src + i)), f));
    if (i < n) {
        const __mmask64 m = ((__mmask64)1 << (n - i)) - 1;
        _mm512_mask_storeu_epi8(dst + i, m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, src + i), f));
    }
}

static inline void ec_x512_fill(int8_t *dst, int v, int n) {
    const __m512i f = _mm512_set1_epi8((char)v);
    int i = 0;
    for (; i + 64 <= n; i += 64) _mm512_storeu_si512((void *)(dst + i), f);
    if (i < n) _mm512_mask_storeu_epi8(dst + i, ((__mmask64)1 << (n - i)) - 1, f);
}

/* Requantization constants of channels c..c+15, loaded once per tile (fast path: the c64 pairs
 * of the two 8-channel blocks put side by side as VPMULDQ's even / odd products want them). */
typedef struct {
    __m512i m, mo, ce, co, e, lo, hi;
} ec_x512_rqc;

static inline __attribute__((always_inline)) ec_x512_rqc ec_x512_rq_load(const ec_avx2_rq *q, int c) {
    ec_x512_rqc r;
    r.lo = _mm512_set1_epi8((char)q->act_min);
    r.hi = _mm512_set1_epi8((char)q->act_max);
    r.m = r.mo = r.ce = r.co = r.e = _mm512_setzero_si512();
    if (q->fast) {
        r.m = _mm512_loadu_si512((const void *)(q->mult + c));
        r.mo = _mm512_srli_epi64(r.m, 32);
        r.e = _mm512_loadu_si512((const void *)(q->right + c));
        r.ce = _mm512_inserti64x4(_mm512_castsi256_si512(EC_LD256(q->c64 + c)), EC_LD256(q->c64 + c + 8), 1);
        r.co = _mm512_inserti64x4(_mm512_castsi256_si512(EC_LD256(q->c64 + c + 4)), EC_LD256(q->c64 + c + 12), 1);
    }
    return r;
}

/* Requantize 16 accumulators of channels c..c+15 (ec_avx2_fast8 / ec_avx2_mbqm8 on 16 lanes),
 * clamp and store the first n (1..16) bytes. */
/* The exact path out of line: 16 copies of it in every tile would only cost code size. */
static __attribute__((noinline, unused)) __m512i ec_x512_mbqm16(__m512i acc, const ec_avx2_rq *q, int c) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(ec_avx2_mbqm8(_mm512_castsi512_si256(acc), q, c)),
                              ec_avx2_mbqm8(_mm512_extracti64x4_epi64(acc, 1), q, c + 8), 1);
}

/* 16 accumulators of channels c..c+15 -> int32 outputs (ec_avx2_fast8 / ec_avx2_mbqm8 on 16
 * lanes), not yet saturated or clamped. */
static inline __attribute__((always_inline)) __m512i ec_x512_rq16(__m512i acc, const ec_x512_rqc *r,
                                                                  const ec_avx2_rq *q, int c) {
    if (q->fast) {
        const __m512i a = q->L ? _mm512_sll_epi32(acc, _mm_cvtsi32_si128(q->L)) : acc;
        const __m512i ev = _mm512_add_epi64(_mm512_mul_epi32(a, r->m), r->ce);
        const __m512i od = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(a, 32), r->mo), r->co);
        /* the products' high halves: even lanes from ev (swapped into place), odd ones from od */
        const __m512i t = _mm512_mask_shuffle_epi32(od, 0x5555, ev, _MM_PERM_CDAB);
        return _mm512_srav_epi32(_mm512_add_epi32(t, _mm512_srai_epi32(a, 31)), r->e);
    }
    return ec_x512_mbqm16(acc, q, c);
}

/* 4 pixels' accumulators of channels c..c+15 (pixel k's at y + k * ys): requantized, packed
 * with saturation to int8 (two packs, then the pixels' dwords put back in order), clamped to
 * the activation range (int8 lanes, 64 at once) and stored, n channels (1..16) of the first np
 * pixels (0..4); 16 channels of 4 consecutive pixels in one 64-byte store. */
static inline __attribute__((always_inline)) void ec_x512_out4x16(
    int8_t *y, ptrdiff_t ys, __m512i a0, __m512i a1, __m512i a2, __m512i a3,
    const ec_x512_rqc *r, const ec_avx2_rq *q, int c, int n, int np) {
    const __m512i idx = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    __m512i v;
    const __mmask16 m = (__mmask16)(((uint32_t)1 << n) - 1);
    if (np <= 0) return;
    v = _mm512_packs_epi16(_mm512_packs_epi32(ec_x512_rq16(a0, r, q, c), ec_x512_rq16(a1, r, q, c)),
                           _mm512_packs_epi32(ec_x512_rq16(a2, r, q, c), ec_x512_rq16(a3, r, q, c)));
    v = _mm512_permutexvar_epi32(idx, v);
    if (q->act_min > -128) v = _mm512_max_epi8(v, r->lo);
    if (q->act_max < 127) v = _mm512_min_epi8(v, r->hi);
    if (np >= 4 && n == 16 && ys == 16) {
        _mm512_storeu_si512((void *)y, v);
        return;
    }
    _mm_mask_storeu_epi8(y, m, _mm512_castsi512_si128(v));
    if (np > 1) _mm_mask_storeu_epi8(y + ys, m, _mm512_extracti32x4_epi32(v, 1));
    if (np > 2) _mm_mask_storeu_epi8(y + 2 * ys, m, _mm512_extracti32x4_epi32(v, 2));
    if (np > 3) _mm_mask_storeu_epi8(y + 3 * ys, m, _mm512_extracti32x4_epi32(v, 3));
}

/* Tiles: P pixels (src, src + ps, ...: band bytes; the first np are stored) x NC blocks of 16
 * channels from c, accumulators in named registers (an array would live in memory). The
 * one-block tile masks the block to 8 channels (wm) and steps 32 bytes for the last, 8-channel
 * block. P is a constant where these are inlined: the unused pixels' code disappears. */
#define EC_X512_U(i) _mm512_set1_epi32(ec_avx2_ld32(f + (i) * ps))
#define EC_X512_W(j) _mm512_maskz_loadu_epi32(wm, wk + (size_t)(j) * 16 * kp)
#define EC_X512_ST(i, a, b, cc, d, j) \
    ec_x512_out4x16(y + (size_t)(i) * g->out_c + c + 16 * (j), g->out_c, a, b, cc, d, &r##j, q, c + 16 * (j), n##j, np - (i))
#define EC_X512_TILE_HEAD(NC)                                                               \
    const int qs = g->seg_p / 4, kp = g->kp, full = c + 16 * (NC) <= g->ocp;              \
    const int wstep = full ? 64 : 32;                                                      \
    const __mmask16 wm = full ? (__mmask16)0xFFFF : (__mmask16)0x00FF;                    \
    const int8_t *wk = w + (size_t)c * kp;                                                 \
    int s, k

static inline __attribute__((always_inline)) void ec_x512_tile1(
    const ec_vec_conv_geom *g, const int8_t *src, ptrdiff_t ps, const ptrdiff_t *boff,
    const int8_t *w, const int32_t *bias, const ec_avx2_rq *q, int c, int8_t *y, int np,
    const int P) {
    EC_X512_TILE_HEAD(1);
    const __m512i b = _mm512_maskz_loadu_epi32(wm, bias + c);
    __m512i a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b;
    __m512i a8 = b, a9 = b, a10 = b, a11 = b, a12 = b, a13 = b, a14 = b, a15 = b;
    for (s = 0; s < g->segs; ++s) {
        const int8_t *f = src + boff[s];
        for (k = 0; k < qs; ++k, f += 4, wk += wstep) {
            __m512i v0 = EC_X512_W(0);
            EC_X512_IN_REG(v0);
            a0 = _mm512_dpbusd_epi32(a0, EC_X512_U(0), v0);
            a1 = _mm512_dpbusd_epi32(a1, EC_X512_U(1), v0);
            a2 = _mm512_dpbusd_epi32(a2, EC_X512_U(2), v0);
            a3 = _mm512_dpbusd_epi32(a3, EC_X512_U(3), v0);
            if (P > 4) {
                a4 = _mm512_dpbusd_epi32(a4, EC_X512_U(4), v0);
                a5 = _mm512_dpbusd_epi32(a5, EC_X512_U(5), v0);
                a6 = _mm512_dpbusd_epi32(a6, EC_X512_U(6), v0);
                a7 = _mm512_dpbusd_epi32(a7, EC_X512_U(7), v0);
            }
            if (P > 8) {
                a8 = _mm512_dpbusd_epi32(a8, EC_X512_U(8), v0);
                a9 = _mm512_dpbusd_epi32(a9, EC_X512_U(9), v0);
                a10 = _mm512_dpbusd_epi32(a10, EC_X512_U(10), v0);
                a11 = _mm512_dpbusd_epi32(a11, EC_X512_U(11), v0);
                a12 = _mm512_dpbusd_epi32(a12, EC_X512_U(12), v0);
                a13 = _mm512_dpbusd_epi32(a13, EC_X512_U(13), v0);
                a14 = _mm512_dpbusd_epi32(a14, EC_X512_U(14), v0);
                a15 = _mm512_dpbusd_epi32(a15, EC_X512_U(15), v0);
            }
        }
    }
    {
        const ec_x512_rqc r0 = ec_x512_rq_load(q, c);
        const int n0 = g->out_c - c < 16 ? g->out_c - c : 16;
        EC_X512_ST(0, a0, a1, a2, a3, 0);
        if (P > 4) EC_X512_ST(4, a4, a5, a6, a7, 0);
        if (P > 8) {
            EC_X512_ST(8, a8, a9, a10, a11, 0);
            EC_X512_ST(12, a12, a13, a14, a15, 0);
        }
    }
}

/* 8 pixels x 2 blocks of 16 channels (whole blocks). */
static inline __attribute__((always_inline)) void ec_x512_tile2(
    const ec_vec_conv_geom *g, const int8_t *src, ptrdiff_t ps, const ptrdiff_t *boff,
    const int8_t *w, const int32_t *bias, const ec_avx2_rq *q, int c, int8_t *y, int np) {
    EC_X512_TILE_HEAD(2);
    const __m512i b0 = _mm512_loadu_si512((const void *)(bias + c));
    const __m512i b1 = _mm512_loadu_si512((const void *)(bias + c + 16));
    __m512i a00 = b0, a10 = b0, a20 = b0, a30 = b0, a40 = b0, a50 = b0, a60 = b0, a70 = b0;
    __m512i a01 = b1, a11 = b1, a21 = b1, a31 = b1, a41 = b1, a51 = b1, a61 = b1, a71 = b1;
    (void)wstep;
    for (s = 0; s < g->segs; ++s) {
        const int8_t *f = src + boff[s];
        for (k = 0; k < qs; ++k, f += 4, wk += 64) {
            __m512i v0 = EC_X512_W(0), v1 = EC_X512_W(1), u;
            EC_X512_IN_REG(v0);
            EC_X512_IN_REG(v1);
#define EC_X512_P2(i) u = EC_X512_U(i); a##i##0 = _mm512_dpbusd_epi32(a##i##0, u, v0); \
            a##i##1 = _mm512_dpbusd_epi32(a##i##1, u, v1)
            EC_X512_P2(0); EC_X512_P2(1); EC_X512_P2(2); EC_X512_P2(3);
            EC_X512_P2(4); EC_X512_P2(5); EC_X512_P2(6); EC_X512_P2(7);
#undef EC_X512_P2
        }
    }
    {
        const ec_x512_rqc r0 = ec_x512_rq_load(q, c), r1 = ec_x512_rq_load(q, c + 16);
        const int n0 = g->out_c - c < 16 ? g->out_c - c : 16;
        const int n1 = g->out_c - c - 16 < 16 ? g->out_c - c - 16 : 16;
        EC_X512_ST(0, a00, a10, a20, a30, 0); EC_X512_ST(0, a01, a11, a21, a31, 1);
        EC_X512_ST(4, a40, a50, a60, a70, 0); EC_X512_ST(4, a41, a51, a61, a71, 1);
    }
}

/* 4 pixels x 4 blocks of 16 channels (whole blocks). */
static inline __attribute__((always_inline)) void ec_x512_tile4(
    const ec_vec_conv_geom *g, const int8_t *src, ptrdiff_t ps, const ptrdiff_t *boff,
    const int8_t *w, const int32_t *bias, const ec_avx2_rq *q, int c, int8_t *y, int np) {
    EC_X512_TILE_HEAD(4);
    const __m512i b0 = _mm512_loadu_si512((const void *)(bias + c));
    const __m512i b1 = _mm512_loadu_si512((const void *)(bias + c + 16));
    const __m512i b2 = _mm512_loadu_si512((const void *)(bias + c + 32));
    const __m512i b3 = _mm512_loadu_si512((const void *)(bias + c + 48));
    __m512i a00 = b0, a10 = b0, a20 = b0, a30 = b0, a01 = b1, a11 = b1, a21 = b1, a31 = b1;
    __m512i a02 = b2, a12 = b2, a22 = b2, a32 = b2, a03 = b3, a13 = b3, a23 = b3, a33 = b3;
    (void)wstep;
    for (s = 0; s < g->segs; ++s) {
        const int8_t *f = src + boff[s];
        for (k = 0; k < qs; ++k, f += 4, wk += 64) {
            __m512i v0 = EC_X512_W(0), v1 = EC_X512_W(1), v2 = EC_X512_W(2), v3 = EC_X512_W(3), u;
            EC_X512_IN_REG(v0);
            EC_X512_IN_REG(v1);
            EC_X512_IN_REG(v2);
            EC_X512_IN_REG(v3);
#define EC_X512_P4(i) u = EC_X512_U(i); a##i##0 = _mm512_dpbusd_epi32(a##i##0, u, v0); \
            a##i##1 = _mm512_dpbusd_epi32(a##i##1, u, v1);                               \
            a##i##2 = _mm512_dpbusd_epi32(a##i##2, u, v2);                               \
            a##i##3 = _mm512_dpbusd_epi32(a##i##3, u, v3)
            EC_X512_P4(0); EC_X512_P4(1); EC_X512_P4(2); EC_X512_P4(3);
#undef EC_X512_P4
        }
    }
    {
        const ec_x512_rqc r0 = ec_x512_rq_load(q, c), r1 = ec_x512_rq_load(q, c + 16);
        const ec_x512_rqc r2 = ec_x512_rq_load(q, c + 32), r3 = ec_x512_rq_load(q, c + 48);
        const int n0 = g->out_c - c < 16 ? g->out_c - c : 16;
        const int n1 = g->out_c - c - 16 < 16 ? g->out_c - c - 16 : 16;
        const int n2 = g->out_c - c - 32 < 16 ? g->out_c - c - 32 : 16;
        const int n3 = g->out_c - c - 48 < 16 ? g->out_c - c - 48 : 16;
        EC_X512_ST(0, a00, a10, a20, a30, 0); EC_X512_ST(0, a01, a11, a21, a31, 1);
        EC_X512_ST(0, a02, a12, a22, a32, 2); EC_X512_ST(0, a03, a13, a23, a33, 3);
    }
}

/* Stride-1 3-wide filter rows over in_c % 4 == 0 channels (bd->slide): a segment's quads k,
 * k + d, k + 2d (d = in_c / 4) of pixel i are the quad k of pixels i, i + 1, i + 2, so each
 * broadcast input quad feeds 3 pixels: P + 2 broadcasts for 3P products (x NC blocks) instead
 * of 3P. Weights of the three taps stay in registers. */
#define EC_X512_S3(j, A, B, C) u = EC_X512_U(j); C = _mm512_dpbusd_epi32(C, u, w2); \
    B = _mm512_dpbusd_epi32(B, u, w1); A = _mm512_dpbusd_epi32(A, u, w0)

static inline __attribute__((always_inline)) void ec_x512_slide1(
    const ec_vec_conv_geom *g, const int8_t *src, ptrdiff_t ps, const ptrdiff_t *boff,
    const int8_t *w, const int32_t *bias, const ec_avx2_rq *q, int c, int8_t *y, int np) {
    EC_X512_TILE_HEAD(1);
    const int d = qs / 3;
    const __m512i b = _mm512_maskz_loadu_epi32(wm, bias + c);
    __m512i a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b;
    __m512i a8 = b, a9 = b, a10 = b, a11 = b, a12 = b, a13 = b, a14 = b, a15 = b;
    for (s = 0; s < g->segs; ++s, wk += (size_t)qs * wstep) {
        const int8_t *f = src + boff[s];
        for (k = 0; k < d; ++k, f += 4) {
            __m512i w0 = _mm512_maskz_loadu_epi32(wm, wk + (size_t)k * wstep);
            __m512i w1 = _mm512_maskz_loadu_epi32(wm, wk + (size_t)(k + d) * wstep);
            __m512i w2 = _mm512_maskz_loadu_epi32(wm, wk + (size_t)(k + 2 * d) * wstep);
            __m512i u = EC_X512_U(0);
            EC_X512_IN_REG(w0);
            EC_X512_IN_REG(w1);
            EC_X512_IN_REG(w2);
            a0 = _mm512_dpbusd_epi32(a0, u, w0);
            u = EC_X512_U(1);
            a0 = _mm512_dpbusd_epi32(a0, u, w1);
            a1 = _mm512_dpbusd_epi32(a1, u, w0);
            EC_X512_S3(2, a2, a1, a0); EC_X512_S3(3, a3, a2, a1); EC_X512_S3(4, a4, a3, a2);
            EC_X512_S3(5, a5, a4, a3); EC_X512_S3(6, a6, a5, a4); EC_X512_S3(7, a7, a6, a5);
            EC_X512_S3(8, a8, a7, a6); EC_X512_S3(9, a9, a8, a7); EC_X512_S3(10, a10, a9, a8);
            EC_X512_S3(11, a11, a10, a9); EC_X512_S3(12, a12, a11, a10);
            EC_X512_S3(13, a13, a12, a11); EC_X512_S3(14, a14, a13, a12);
            EC_X512_S3(15, a15, a14, a13);
            u = EC_X512_U(16);
            a14 = _mm512_dpbusd_epi32(a14, u, w2);
            a15 = _mm512_dpbusd_epi32(a15, u, w1);
            u = EC_X512_U(17);
            a15 = _mm512_dpbusd_epi32(a15, u, w2);
        }
    }
    {
        const ec_x512_rqc r0 = ec_x512_rq_load(q, c);
        const int n0 = g->out_c - c < 16 ? g->out_c - c : 16;
        EC_X512_ST(0, a0, a1, a2, a3, 0); EC_X512_ST(4, a4, a5, a6, a7, 0);
        EC_X512_ST(8, a8, a9, a10, a11, 0); EC_X512_ST(12, a12, a13, a14, a15, 0);
    }
}

/* The same for 8 pixels x 2 blocks of 16 channels (6 weight registers). */
static inline __attribute__((always_inline)) void ec_x512_slide2(
    const ec_vec_conv_geom *g, const int8_t *src, ptrdiff_t ps, const ptrdiff_t *boff,
    const int8_t *w, const int32_t *bias, const ec_avx2_rq *q, int c, int8_t *y, int np) {
    EC_X512_TILE_HEAD(2);
    const int d = qs / 3;
    const size_t kb = (size_t)16 * kp;
    const __m512i b0 = _mm512_loadu_si512((const void *)(bias + c));
    const __m512i b1 = _mm512_loadu_si512((const void *)(bias + c + 16));
    __m512i a00 = b0, a10 = b0, a20 = b0, a30 = b0, a40 = b0, a50 = b0, a60 = b0, a70 = b0;
    __m512i a01 = b1, a11 = b1, a21 = b1, a31 = b1, a41 = b1, a51 = b1, a61 = b1, a71 = b1;
    (void)wm;
    for (s = 0; s < g->segs; ++s, wk += (size_t)qs * wstep) {
        const int8_t *f = src + boff[s];
        for (k = 0; k < d; ++k, f += 4) {
            __m512i w0 = _mm512_loadu_si512((const void *)(wk + (size_t)k * 64));
            __m512i w1 = _mm512_loadu_si512((const void *)(wk + (size_t)(k + d) * 64));
            __m512i w2 = _mm512_loadu_si512((const void *)(wk + (size_t)(k + 2 * d) * 64));
            __m512i x0 = _mm512_loadu_si512((const void *)(wk + kb + (size_t)k * 64));
            __m512i x1 = _mm512_loadu_si512((const void *)(wk + kb + (size_t)(k + d) * 64));
            __m512i x2 = _mm512_loadu_si512((const void *)(wk + kb + (size_t)(k + 2 * d) * 64));
            __m512i u = EC_X512_U(0);
            EC_X512_IN_REG(w0);
            EC_X512_IN_REG(w1);
            EC_X512_IN_REG(w2);
            EC_X512_IN_REG(x0);
            EC_X512_IN_REG(x1);
            EC_X512_IN_REG(x2);
#define EC_X512_S3B(j, A, B, C, D, E, F) u = EC_X512_U(j); \
            C = _mm512_dpbusd_epi32(C, u, w2); B = _mm512_dpbusd_epi32(B, u, w1);      \
            A = _mm512_dpbusd_epi32(A, u, w0); F = _mm512_dpbusd_epi32(F, u, x2);      \
            E = _mm512_dpbusd_epi32(E, u, x1); D = _mm512_dpbusd_epi32(D, u, x0)
            a00 = _mm512_dpbusd_epi32(a00, u, w0);
            a01 = _mm512_dpbusd_epi32(a01, u, x0);
            u = EC_X512_U(1);
            a00 = _mm512_dpbusd_epi32(a00, u, w1);
            a10 = _mm512_dpbusd_epi32(a10, u, w0);
            a01 = _mm512_dpbusd_epi32(a01, u, x1);
            a11 = _mm512_dpbusd_epi32(a11, u, x0);
            EC_X512_S3B(2, a20, a10, a00, a21, a11, a01);
            EC_X512_S3B(3, a30, a20, a10, a31, a21, a11);
            EC_X512_S3B(4, a40, a30, a20, a41, a31, a21);
            EC_X512_S3B(5, a50, a40, a30, a51, a41, a31);
            EC_X512_S3B(6, a60, a50, a40, a61, a51, a41);
            EC_X512_S3B(7, a70, a60, a50, a71, a61, a51);
#undef EC_X512_S3B
            u = EC_X512_U(8);
            a60 = _mm512_dpbusd_epi32(a60, u, w2);
            a70 = _mm512_dpbusd_epi32(a70, u, w1);
            a61 = _mm512_dpbusd_epi32(a61, u, x2);
            a71 = _mm512_dpbusd_epi32(a71, u, x1);
            u = EC_X512_U(9);
            a70 = _mm512_dpbusd_epi32(a70, u, w2);
            a71 = _mm512_dpbusd_epi32(a71, u, x2);
        }
    }
    {
        const ec_x512_rqc r0 = ec_x512_rq_load(q, c), r1 = ec_x512_rq_load(q, c + 16);
        const int n0 = g->out_c - c < 16 ? g->out_c - c : 16;
        const int n1 = g->out_c - c - 16 < 16 ? g->out_c - c - 16 : 16;
        EC_X512_ST(0, a00, a10, a20, a30, 0); EC_X512_ST(0, a01, a11, a21, a31, 1);
        EC_X512_ST(4, a40, a50, a60, a70, 0); EC_X512_ST(4, a41, a51, a61, a71, 1);
    }
}

/* A row of n output pixels whose band starts at src (pixel i at src + i * ps): tiles of P pixels
 * (the last one moved back to end at the row's end when the row has P pixels, so every tile is
 * full); channels NC blocks at a time, then block by block. */
static inline __attribute__((always_inline)) void ec_x512_row(
    const ec_vec_conv_geom *g, const int8_t *src, ptrdiff_t ps, const ptrdiff_t *boff, int n,
    const int8_t *w, const int32_t *bias, const ec_avx2_rq *q, int8_t *y, const int P,
    const int NC, const int slide) {
    int o0, c;
    (void)NC;
    for (o0 = 0; o0 < n; o0 += P) {
        int np = n - o0 < P ? n - o0 : P;
        if (np < P && n >= P) {
            o0 = n - P;
            np = P;
        }
        int8_t *yo = y + (size_t)o0 * g->out_c;
        c = 0;
        if (slide && NC == 2)
            for (; c + 32 <= g->ocp; c += 32) ec_x512_slide2(g, src + o0 * ps, ps, boff, w, bias, q, c, yo, np);
        if (slide && P == 16)
            for (; c < g->ocp; c += 16) ec_x512_slide1(g, src + o0 * ps, ps, boff, w, bias, q, c, yo, np);
        if (NC == 4)
            for (; c + 64 <= g->ocp; c += 64) ec_x512_tile4(g, src + o0 * ps, ps, boff, w, bias, q, c, yo, np);
        if (NC == 2)
            for (; c + 32 <= g->ocp; c += 32) ec_x512_tile2(g, src + o0 * ps, ps, boff, w, bias, q, c, yo, np);
        for (; c < g->ocp; c += 16) ec_x512_tile1(g, src + o0 * ps, ps, boff, w, bias, q, c, yo, np, P);
    }
}

EC_AVX2_SHARED void ec_x512_conv(const ec_vec_conv_geom *g, const ec_x512_band *bd,
                                 const int8_t *x, int8_t *y, const int8_t *w,
                                 const int32_t *bias_u, const ec_avx2_rq *q) {
    int8_t band[EC_X512_MAX_BAND] __attribute__((aligned(64)));
    ptrdiff_t boff[EC_VEC_MAX_SEGS];
    const ptrdiff_t ps = (ptrdiff_t)g->stride_w * g->in_c;
    const int zpu = (g->in_zp ^ 0x80) & 0xFF;
    int s = 0, fy, fx, b, oy;
    for (fy = 0; fy < g->k_h; ++fy) {
        if (g->dil_w == 1) boff[s++] = (ptrdiff_t)fy * bd->row;
        else
            for (fx = 0; fx < g->k_w; ++fx)
                boff[s++] = (ptrdiff_t)fy * bd->row + (ptrdiff_t)fx * g->dil_w * g->in_c;
    }
#define EC_X512_ROW(src, n, yr)                                                   \
    do {                                                                          \
        /* the common pixel strides as constants: the broadcasts then address src + immediate */ \
        if (bd->P == 16 && bd->slide && ps == 16) ec_x512_row(g, src, 16, boff, n, w, bias_u, q, yr, 16, 1, 1); \
        else if (bd->P == 8 && bd->slide && ps == 32) ec_x512_row(g, src, 32, boff, n, w, bias_u, q, yr, 8, 2, 1); \
        else if (bd->P == 4 && ps == 64) ec_x512_row(g, src, 64, boff, n, w, bias_u, q, yr, 4, 4, 0); \
        else if (bd->P == 4 && ps == 32) ec_x512_row(g, src, 32, boff, n, w, bias_u, q, yr, 4, 4, 0); \
        else if (bd->P == 8 && !bd->slide && ps == 32) ec_x512_row(g, src, 32, boff, n, w, bias_u, q, yr, 8, 2, 0); \
        else if (bd->P == 8 && !bd->slide && ps == 16) ec_x512_row(g, src, 16, boff, n, w, bias_u, q, yr, 8, 2, 0); \
        else if (bd->P == 16 && !bd->slide && ps == 8) ec_x512_row(g, src, 8, boff, n, w, bias_u, q, yr, 16, 1, 0); \
        else if (bd->P == 16 && bd->slide) ec_x512_row(g, src, ps, boff, n, w, bias_u, q, yr, 16, 1, 1); \
        else if (bd->P == 16) ec_x512_row(g, src, ps, boff, n, w, bias_u, q, yr, 16, 1, 0); \
        else if (bd->P == 8 && bd->slide) ec_x512_row(g, src, ps, boff, n, w, bias_u, q, yr, 8, 2, 1); \
        else if (bd->P == 8) ec_x512_row(g, src, ps, boff, n, w, bias_u, q, yr, 8, 2, 0); \
        else ec_x512_row(g, src, ps, boff, n, w, bias_u, q, yr, 4, 4, 0);             \
    } while (0)
    if (bd->chunk > 0) {
        int p0;
        for (p0 = 0; p0 < g->pixels; p0 += bd->chunk) {
            const int n = g->pixels - p0 < bd->chunk ? g->pixels - p0 : bd->chunk;
            ec_x512_flip(band, x + (size_t)p0 * g->in_c, n * g->in_c);
            EC_X512_ROW(band, n, y + (size_t)p0 * g->out_c);
        }
        return;
    }
    {
        const int left = g->pad_l < bd->cols ? g->pad_l : bd->cols;
        const int mid = g->in_w < bd->cols - left ? g->in_w : bd->cols - left;
        for (b = 0; b < g->batches; ++b) {
            for (oy = 0; oy < g->out_h; ++oy) {
                for (fy = 0; fy < g->k_h; ++fy) {
                    const int iy = oy * g->stride_h - g->pad_t + fy * g->dil_h;
                    int8_t *d = band + (ptrdiff_t)fy * bd->row;
                    if (iy < 0 || iy >= g->in_h) {
                        ec_x512_fill(d, zpu, bd->cols * g->in_c);
                        continue;
                    }
                    ec_x512_fill(d, zpu, left * g->in_c);
                    ec_x512_flip(d + left * g->in_c,
                                 x + (((ptrdiff_t)b * g->in_h + iy) * g->in_w + (left - g->pad_l)) * g->in_c,
                                 mid * g->in_c);
                    ec_x512_fill(d + (left + mid) * g->in_c, zpu, (bd->cols - left - mid) * g->in_c);
                }
                EC_X512_ROW(band, g->out_w, y + (((size_t)b * g->out_h + oy) * g->out_w) * g->out_c);
            }
        }
    }
#undef EC_X512_ROW
}
#endif

/* The convolution: 512-bit where the build has it and the layer's band fits, else ec_avx2_conv. */
static inline void ec_avx2_conv_any(const ec_vec_conv_geom *g, const ec_x512_band *bd,
                                    const int8_t *x, int8_t *y, const int8_t *w,
                                    const int32_t *bias_u, const int32_t *bias_x,
                                    const ec_avx2_rq *q) {
#if EC_X86_512
    if (bd->P > 0) {
        (void)bias_x;
        ec_x512_conv(g, bd, x, y, w, bias_u, q);
        return;
    }
#else
    (void)bd;
#endif
    ec_avx2_conv(g, x, y, w, bias_u, bias_x, q);
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
