/* edgecc x86 AVX2 / AVX-512 kernels: int8 element-wise ADD (same-shape inputs).
 *
 * TFLite Micro's int8 ADD is y = clamp(MBQM(MBQM((a - za) << 20, m1, s1) + MBQM((b - zb) << 20,
 * m2, s2), mo, so) + zo): three multiplications with two roundings each. Only 256 x 256 input
 * pairs exist, so the compiler (edgecc/ops/_vec_elt.py) looks for integers A, B, C, k, D with
 *     y = clamp(sat8(sat16((a*A + b*B + C) >> k) + D))      (int32 wrap-around arithmetic)
 * and proves it equal to TFLite's result on all 65,536 pairs by evaluating exactly what this C
 * computes. Such a form exists whenever the real function a*alpha + b*beta + gamma separates
 * the output levels with some margin (the two inner roundings move the sum by about 2^-20 of an
 * output step): about 20 bits of A and B. D re-centres the output so the int32 sum of the
 * clamped pairs cannot wrap. ec_x86_add_lin_s8 is that form: 8 x VPMULLD per 32 outputs (YMM) or
 * per 64 (ZMM, EC_X86_512). When no such form is proven, ec_x86_add_exact_s8 runs TFLite's
 * arithmetic as it is, 8 lanes at a time (SRDHM as floor((x*m + 2^30) / 2^31) with VPMULDQ on
 * even and odd lanes, then RoundingDivideByPOT), three times per element.
 *
 * Outputs may alias either input (ADD is planned in place): each block reads its inputs before
 * writing the same bytes. A partial last block runs on zero-padded copies on the stack. No arena
 * scratch. Only compiled where AVX2 exists. C99, no state, no allocation.
 */
#ifndef EDGECC_X86_ADD_H
#define EDGECC_X86_ADD_H
#if defined(__AVX2__)
#include "common.h"

/* ------------------------------------------------------------------- ADD, proven linear form */

#ifndef EC_X86_ONCE_EC_AVX2_ADD_LIN_GEOM /* a record the calls name: defined once, not per level */
#define EC_X86_ONCE_EC_AVX2_ADD_LIN_GEOM
typedef struct {
    int32_t n;          /* elements */
    int32_t A, B, C;    /* a*A + b*B + C, int32 wrap-around */
    int32_t k;          /* arithmetic right shift */
    int32_t D;          /* added to the int16-saturated quotient */
    int32_t lo, hi;     /* fused activation range */
} ec_x86_add_lin_geom;
#endif

/* 32 outputs from 32 bytes of each input. VPACKSSDW/VPACKSSWB work within 128-bit lanes, so the
 * packed dwords come out as groups 0,2,4,6 | 1,3,5,7 of 4 outputs: VPERMD puts them in order. */
static inline __m256i ec_x86_add_lin32(const ec_x86_add_lin_geom *g, const int8_t *a,
                                        const int8_t *b) {
    const __m256i A = _mm256_set1_epi32(g->A), B = _mm256_set1_epi32(g->B);
    const __m256i C = _mm256_set1_epi32(g->C);
    const __m128i k = _mm_cvtsi32_si128(g->k);
    __m256i r[4];
    int j;
    for (j = 0; j < 4; ++j) {
        const __m256i x = _mm256_cvtepi8_epi32(EC_LD64(a + 8 * j));
        const __m256i z = _mm256_cvtepi8_epi32(EC_LD64(b + 8 * j));
        const __m256i v = _mm256_add_epi32(_mm256_mullo_epi32(x, A),
                                           _mm256_add_epi32(_mm256_mullo_epi32(z, B), C));
        r[j] = _mm256_sra_epi32(v, k);
    }
    {
        const __m256i D = _mm256_set1_epi16((short)g->D);
        const __m256i p0 = _mm256_add_epi16(_mm256_packs_epi32(r[0], r[1]), D);
        const __m256i p1 = _mm256_add_epi16(_mm256_packs_epi32(r[2], r[3]), D);
        const __m256i p = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(p0, p1),
                                                      _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        return _mm256_min_epi8(_mm256_max_epi8(p, _mm256_set1_epi8((char)g->lo)),
                               _mm256_set1_epi8((char)g->hi));
    }
}

#if EC_X86_512
/* 64 outputs: as above on ZMM; the packs leave dword 4i+j of lane i holding outputs
 * 16j+4i..16j+4i+3, so VPERMD transposes that 4x4. */
static inline __m512i ec_x86_add_lin64(const ec_x86_add_lin_geom *g, const int8_t *a,
                                        const int8_t *b) {
    const __m512i A = _mm512_set1_epi32(g->A), B = _mm512_set1_epi32(g->B);
    const __m512i C = _mm512_set1_epi32(g->C);
    const __m128i k = _mm_cvtsi32_si128(g->k);
    __m512i r[4];
    int j;
    for (j = 0; j < 4; ++j) {
        const __m512i x = _mm512_cvtepi8_epi32(EC_LD128(a + 16 * j));
        const __m512i z = _mm512_cvtepi8_epi32(EC_LD128(b + 16 * j));
        const __m512i v = _mm512_add_epi32(_mm512_mullo_epi32(x, A),
                                           _mm512_add_epi32(_mm512_mullo_epi32(z, B), C));
        r[j] = _mm512_sra_epi32(v, k);
    }
    {
        const __m512i D = _mm512_set1_epi16((short)g->D);
        const __m512i p0 = _mm512_add_epi16(_mm512_packs_epi32(r[0], r[1]), D);
        const __m512i p1 = _mm512_add_epi16(_mm512_packs_epi32(r[2], r[3]), D);
        const __m512i p = _mm512_permutexvar_epi32(
            _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15),
            _mm512_packs_epi16(p0, p1));
        return _mm512_min_epi8(_mm512_max_epi8(p, _mm512_set1_epi8((char)g->lo)),
                               _mm512_set1_epi8((char)g->hi));
    }
}
#endif

EC_X86_SHARED void ec_x86_add_lin_s8(const ec_x86_add_lin_geom *g, const int8_t *a,
                                    const int8_t *b, int8_t *y) {
    const int n = g->n;
    int i = 0;
#if EC_X86_512
    for (; i + 64 <= n; i += 64)
        _mm512_storeu_si512((void *)(y + i), ec_x86_add_lin64(g, a + i, b + i));
#endif
    for (; i + 32 <= n; i += 32)
        _mm256_storeu_si256((__m256i *)(void *)(y + i), ec_x86_add_lin32(g, a + i, b + i));
    if (i < n) {
        int8_t ta[32] = {0}, tb[32] = {0}, ty[32];
        memcpy(ta, a + i, (size_t)(n - i));
        memcpy(tb, b + i, (size_t)(n - i));
        _mm256_storeu_si256((__m256i *)(void *)ty, ec_x86_add_lin32(g, ta, tb));
        memcpy(y + i, ty, (size_t)(n - i));
    }
}

/* ------------------------------------------------------------------ ADD, TFLite's arithmetic */

#ifndef EC_X86_ONCE_EC_AVX2_ADD_EXACT_GEOM /* a record the calls name: defined once, not per level */
#define EC_X86_ONCE_EC_AVX2_ADD_EXACT_GEOM
typedef struct {
    int32_t n;
    int32_t off1, m1, e1;   /* input 1: -zero point, multiplier, right shift */
    int32_t off2, m2, e2;
    int32_t mo, eo, zp;     /* output multiplier, right shift, zero point */
    int32_t lo, hi;
} ec_x86_add_exact_geom;
#endif

/* MultiplyByQuantizedMultiplierSmallerThanOneExp(x, m, -e) on 8 lanes, m != INT32_MIN. */
static inline __m256i ec_x86_elt_mbqm(__m256i x, int32_t m, int32_t e) {
    const __m256i mv = _mm256_set1_epi32(m);
    const __m256i nudge = _mm256_set1_epi64x((long long)1 << 30);
    const __m256i one = _mm256_set1_epi32(1);
    const __m128i ev_ = _mm_cvtsi32_si128(e);
    const __m256i ev = _mm256_add_epi64(_mm256_mul_epi32(x, mv), nudge);
    const __m256i od = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), mv), nudge);
    const __m256i s = _mm256_blend_epi32(_mm256_srli_epi64(ev, 31), _mm256_slli_epi64(od, 1), 0xAA);
    const __m256i mask = _mm256_sub_epi32(_mm256_sll_epi32(one, ev_), one);
    const __m256i rem = _mm256_and_si256(s, mask);
    const __m256i thr = _mm256_sub_epi32(_mm256_srai_epi32(mask, 1),
                                         _mm256_cmpgt_epi32(_mm256_setzero_si256(), s));
    return _mm256_sub_epi32(_mm256_sra_epi32(s, ev_), _mm256_cmpgt_epi32(rem, thr));
}

static inline __m256i ec_x86_add_exact8(const ec_x86_add_exact_geom *g, const int8_t *a,
                                         const int8_t *b) {
    const __m256i x = _mm256_cvtepi8_epi32(EC_LD64(a));
    const __m256i z = _mm256_cvtepi8_epi32(EC_LD64(b));
    const __m256i va = _mm256_slli_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(g->off1)), 20);
    const __m256i vb = _mm256_slli_epi32(_mm256_add_epi32(z, _mm256_set1_epi32(g->off2)), 20);
    const __m256i s = _mm256_add_epi32(ec_x86_elt_mbqm(va, g->m1, g->e1),
                                       ec_x86_elt_mbqm(vb, g->m2, g->e2));
    const __m256i r = _mm256_add_epi32(ec_x86_elt_mbqm(s, g->mo, g->eo),
                                       _mm256_set1_epi32(g->zp));
    return _mm256_min_epi32(_mm256_max_epi32(r, _mm256_set1_epi32(g->lo)),
                            _mm256_set1_epi32(g->hi));
}

EC_X86_SHARED void ec_x86_add_exact_s8(const ec_x86_add_exact_geom *g, const int8_t *a,
                                      const int8_t *b, int8_t *y) {
    const int n = g->n;
    int i;
    for (i = 0; i + 8 <= n; i += 8) {
        const __m256i r = ec_x86_add_exact8(g, a + i, b + i);
        const __m128i p = _mm_packs_epi32(_mm256_castsi256_si128(r),
                                          _mm256_extracti128_si256(r, 1));
        _mm_storel_epi64((__m128i *)(void *)(y + i), _mm_packs_epi16(p, p));
    }
    if (i < n) {
        int8_t ta[8] = {0}, tb[8] = {0}, ty[16];
        const int m = n - i;
        __m256i r;
        __m128i p;
        memcpy(ta, a + i, (size_t)m);
        memcpy(tb, b + i, (size_t)m);
        r = ec_x86_add_exact8(g, ta, tb);
        p = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
        _mm_storeu_si128((__m128i *)(void *)ty, _mm_packs_epi16(p, p));
        memcpy(y + i, ty, (size_t)m);
    }
}

#endif /* __AVX2__ */
#endif /* EDGECC_X86_ADD_H */
