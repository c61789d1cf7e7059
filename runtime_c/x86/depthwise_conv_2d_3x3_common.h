/* edgecc x86 kernel: 3x3 DEPTHWISE_CONV_2D, the records and 256-bit blocks (conventions:
 * x86/depthwise_conv_2d.h). */
#ifndef EDGECC_X86_DEPTHWISE_CONV_2D_3X3_COMMON_H
#define EDGECC_X86_DEPTHWISE_CONV_2D_3X3_COMMON_H
#if defined(__AVX2__)
#include "common.h"

/* ------------------------------------------------- 3x3 DEPTHWISE_CONV_2D, dilation 1 */

/* int16 dot pairs into int32 with wrap-around: VPDPWSSD where VNNI exists (acc + a0*b0 + a1*b1
 * in one instruction, non-saturating), else VPMADDWD + VPADDD. Products of int8 values: a pair
 * never overflows int32, so both give the same sums. */
#if EC_X86_VNNI && EC_X86_EVEX
#define ec_x86_dw_dot(acc, a, b) _mm256_dpwssd_epi32((acc), (a), (b))
#elif EC_X86_VNNI
#define ec_x86_dw_dot(acc, a, b) _mm256_dpwssd_avx_epi32((acc), (a), (b))
#else
#define ec_x86_dw_dot(acc, a, b) _mm256_add_epi32((acc), _mm256_madd_epi16((a), (b)))
#endif

#define EC_X86_DW_INLINE static inline __attribute__((always_inline))

#ifndef EC_X86_ONCE_EC_AVX2_DW3_GEOM /* a record the calls name: defined once, not per level */
#define EC_X86_ONCE_EC_AVX2_DW3_GEOM
typedef struct {
    int32_t batches, in_h, in_w, chans, out_h, out_w, stride_h, stride_w, pad_t, pad_l;
    int32_t d4;          /* 1 for stride 2 (see ec_x86_dw3_block), else 0 */
    int32_t x_lo, x_hi;  /* interior output columns (ec_x86_dw3_block); both out_w when none */
} ec_x86_dw3_geom;
#endif

/* ec_x86_fast8 with its per-channel constants loaded once per channel block (the output
 * stores are int8, which may alias anything: constants read through q would be reloaded after
 * every store). The same instructions on the same values, but this kernel's c64 array is in
 * channel order (a block may start at any channel: see ec_x86_dw3_all). */
typedef struct {
    __m256i m, mo, ce, co, e;
    __m128i L;
} ec_x86_dw_rq8;

EC_X86_DW_INLINE ec_x86_dw_rq8 ec_x86_dw_rq8_load(const ec_x86_rq *q, int c) {
    ec_x86_dw_rq8 r;
    r.m = EC_LD256(q->mult + c);
    r.mo = _mm256_srli_epi64(r.m, 32);
    {   /* c64 in channel order here (any block start c): evens and odds of c..c+7 */
        const __m256i a = EC_LD256(q->c64 + c), b = EC_LD256(q->c64 + c + 4);
        r.ce = _mm256_permute4x64_epi64(_mm256_unpacklo_epi64(a, b), 0xD8);
        r.co = _mm256_permute4x64_epi64(_mm256_unpackhi_epi64(a, b), 0xD8);
    }
    r.e = EC_LD256(q->right + c);
    r.L = _mm_cvtsi32_si128(q->L);
    return r;
}

EC_X86_DW_INLINE __m256i ec_x86_dw_fast8(__m256i acc, const ec_x86_dw_rq8 *r) {
    const __m256i a = _mm256_sll_epi32(acc, r->L);
    const __m256i ev = _mm256_add_epi64(_mm256_mul_epi32(a, r->m), r->ce);
    const __m256i od = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), r->mo), r->co);
    const __m256i t = _mm256_blend_epi32(_mm256_srli_epi64(ev, 32), od, 0xAA);
    return _mm256_srav_epi32(_mm256_add_epi32(t, _mm256_srai_epi32(a, 31)), r->e);
}

/* ---- 256-bit blocks: 8 channels (NH 1) or 16 (NH 2, halves h = channels 8h..8h+7) */

typedef struct {
    __m256i W[5][2], B[2];
    ec_x86_dw_rq8 R[2];
    __m128i lo, hi;  /* the activation clamp */
    const ec_x86_rq *q;
    int c;
} ec_x86_dw_ky;

EC_X86_DW_INLINE void ec_x86_dw_ky_load(ec_x86_dw_ky *k, const int16_t *w, const int32_t *bias,
                                const ec_x86_rq *q, int C, int c, int NH, int FAST) {
    int h, i;
    for (h = 0; h < NH; ++h) {
        for (i = 0; i < 5; ++i) k->W[i][h] = EC_LD256(w + 2 * (size_t)i * C + 2 * c + 16 * h);
        k->B[h] = EC_LD256(bias + c + 8 * h);
        if (FAST) k->R[h] = ec_x86_dw_rq8_load(q, c + 8 * h);
    }
    k->lo = _mm_set1_epi8((char)q->act_min);
    k->hi = _mm_set1_epi8((char)q->act_max);
    k->q = q;
    k->c = c;
}

/* The int16 pairs (a[c], b[c]) of the block's channels. */
EC_X86_DW_INLINE void ec_x86_dw_ky_pairs(const int8_t *a, const int8_t *b, __m256i *v, int NH) {
    if (NH == 2) {
        const __m128i xa = EC_LD128(a), xb = EC_LD128(b);
        v[0] = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(xa, xb));
        v[1] = _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(xa, xb));
    } else {
        const __m128i xa = _mm_loadl_epi64((const __m128i *)(const void *)a);
        const __m128i xb = _mm_loadl_epi64((const __m128i *)(const void *)b);
        v[0] = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(xa, xb));
    }
}

/* bias + the 5 pair products (two chains for latency). */
EC_X86_DW_INLINE void ec_x86_dw_ky_mac(const ec_x86_dw_ky *k, const __m256i *v0, const __m256i *v1,
                               const __m256i *v2, const __m256i *h0, const __m256i *h1,
                               __m256i *acc, int NH) {
    int h;
    for (h = 0; h < NH; ++h) {
        __m256i s0 = ec_x86_dw_dot(k->B[h], v0[h], k->W[0][h]);
        __m256i s1 = _mm256_madd_epi16(v1[h], k->W[1][h]);
        s0 = ec_x86_dw_dot(s0, v2[h], k->W[2][h]);
        s1 = ec_x86_dw_dot(s1, h0[h], k->W[3][h]);
        s0 = ec_x86_dw_dot(s0, h1[h], k->W[4][h]);
        acc[h] = _mm256_add_epi32(s0, s1);
    }
}

/* Requantize, clamp and store one pixel's block. */
EC_X86_DW_INLINE void ec_x86_dw_ky_store(int8_t *y, const __m256i *acc, const ec_x86_dw_ky *k, int NH,
                                 int FAST) {
    __m256i o0, o1;
    __m128i v;
    if (FAST) {
        o0 = ec_x86_dw_fast8(acc[0], &k->R[0]);
        o1 = NH == 2 ? ec_x86_dw_fast8(acc[1], &k->R[1]) : o0;
    } else {
        o0 = ec_x86_mbqm8(acc[0], k->q, k->c);
        o1 = NH == 2 ? ec_x86_mbqm8(acc[1], k->q, k->c + 8) : o0;
    }
    if (NH == 2) {
        const __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(o0, o1), 0xD8);
        v = _mm_packs_epi16(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
        v = _mm_min_epi8(_mm_max_epi8(v, k->lo), k->hi);
        _mm_storeu_si128((__m128i *)(void *)y, v);
    } else {
        const __m128i p = _mm_packs_epi32(_mm256_castsi256_si128(o0),
                                          _mm256_extracti128_si256(o0, 1));
        v = _mm_min_epi8(_mm_max_epi8(_mm_packs_epi16(p, p), k->lo), k->hi);
        _mm_storel_epi64((__m128i *)(void *)y, v);
    }
}

#endif /* __AVX2__ */
#endif /* EDGECC_X86_DEPTHWISE_CONV_2D_3X3_COMMON_H */
