/* edgecc x86 AVX2 / AVX-512 kernels: int8 element-wise ADD (same-shape inputs) and
 * AVERAGE_POOL_2D (at the end of this file).
 *
 * TFLite Micro's int8 ADD is y = clamp(MBQM(MBQM((a - za) << 20, m1, s1) + MBQM((b - zb) << 20,
 * m2, s2), mo, so) + zo): three multiplications with two roundings each. Only 256 x 256 input
 * pairs exist, so the compiler (edgecc/ops/_vec_elt.py) looks for integers A, B, C, k, D with
 *     y = clamp(sat8(sat16((a*A + b*B + C) >> k) + D))      (int32 wrap-around arithmetic)
 * and proves it equal to TFLite's result on all 65,536 pairs by evaluating exactly what this C
 * computes. Such a form exists whenever the real function a*alpha + b*beta + gamma separates
 * the output levels with some margin (the two inner roundings move the sum by about 2^-20 of an
 * output step): about 20 bits of A and B. D re-centres the output so the int32 sum of the
 * clamped pairs cannot wrap. ec_avx2_add_lin is that form: 8 x VPMULLD per 32 outputs (YMM) or
 * per 64 (ZMM, EC_X86_512). When no such form is proven, ec_avx2_add_exact runs TFLite's
 * arithmetic as it is, 8 lanes at a time (SRDHM as floor((x*m + 2^30) / 2^31) with VPMULDQ on
 * even and odd lanes, then RoundingDivideByPOT), three times per element.
 *
 * Outputs may alias either input (ADD is planned in place): each block reads its inputs before
 * writing the same bytes. A partial last block runs on zero-padded copies on the stack. No arena
 * scratch. Only compiled where AVX2 exists. C99, no state, no allocation.
 */
#ifndef EDGECC_AVX2_ELT_H
#define EDGECC_AVX2_ELT_H
#if defined(__AVX2__)
#include "edgecc_avx2.h"

#define EC_ELT_LD64(p) _mm_loadl_epi64((const __m128i *)(const void *)(p))

/* ------------------------------------------------------------------- ADD, proven linear form */

typedef struct {
    int32_t n;          /* elements */
    int32_t A, B, C;    /* a*A + b*B + C, int32 wrap-around */
    int32_t k;          /* arithmetic right shift */
    int32_t D;          /* added to the int16-saturated quotient */
    int32_t lo, hi;     /* fused activation range */
} ec_avx2_add_lin_geom;

/* 32 outputs from 32 bytes of each input. VPACKSSDW/VPACKSSWB work within 128-bit lanes, so the
 * packed dwords come out as groups 0,2,4,6 | 1,3,5,7 of 4 outputs: VPERMD puts them in order. */
static inline __m256i ec_avx2_add_lin32(const ec_avx2_add_lin_geom *g, const int8_t *a,
                                        const int8_t *b) {
    const __m256i A = _mm256_set1_epi32(g->A), B = _mm256_set1_epi32(g->B);
    const __m256i C = _mm256_set1_epi32(g->C);
    const __m128i k = _mm_cvtsi32_si128(g->k);
    __m256i r[4];
    int j;
    for (j = 0; j < 4; ++j) {
        const __m256i x = _mm256_cvtepi8_epi32(EC_ELT_LD64(a + 8 * j));
        const __m256i z = _mm256_cvtepi8_epi32(EC_ELT_LD64(b + 8 * j));
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
static inline __m512i ec_avx2_add_lin64(const ec_avx2_add_lin_geom *g, const int8_t *a,
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

EC_AVX2_SHARED void ec_avx2_add_lin(const ec_avx2_add_lin_geom *g, const int8_t *a,
                                    const int8_t *b, int8_t *y) {
    const int n = g->n;
    int i = 0;
#if EC_X86_512
    for (; i + 64 <= n; i += 64)
        _mm512_storeu_si512((void *)(y + i), ec_avx2_add_lin64(g, a + i, b + i));
#endif
    for (; i + 32 <= n; i += 32)
        _mm256_storeu_si256((__m256i *)(void *)(y + i), ec_avx2_add_lin32(g, a + i, b + i));
    if (i < n) {
        int8_t ta[32] = {0}, tb[32] = {0}, ty[32];
        memcpy(ta, a + i, (size_t)(n - i));
        memcpy(tb, b + i, (size_t)(n - i));
        _mm256_storeu_si256((__m256i *)(void *)ty, ec_avx2_add_lin32(g, ta, tb));
        memcpy(y + i, ty, (size_t)(n - i));
    }
}

/* ------------------------------------------------------------------ ADD, TFLite's arithmetic */

typedef struct {
    int32_t n;
    int32_t off1, m1, e1;   /* input 1: -zero point, multiplier, right shift */
    int32_t off2, m2, e2;
    int32_t mo, eo, zp;     /* output multiplier, right shift, zero point */
    int32_t lo, hi;
} ec_avx2_add_exact_geom;

/* MultiplyByQuantizedMultiplierSmallerThanOneExp(x, m, -e) on 8 lanes, m != INT32_MIN. */
static inline __m256i ec_avx2_elt_mbqm(__m256i x, int32_t m, int32_t e) {
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

static inline __m256i ec_avx2_add_exact8(const ec_avx2_add_exact_geom *g, const int8_t *a,
                                         const int8_t *b) {
    const __m256i x = _mm256_cvtepi8_epi32(EC_ELT_LD64(a));
    const __m256i z = _mm256_cvtepi8_epi32(EC_ELT_LD64(b));
    const __m256i va = _mm256_slli_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(g->off1)), 20);
    const __m256i vb = _mm256_slli_epi32(_mm256_add_epi32(z, _mm256_set1_epi32(g->off2)), 20);
    const __m256i s = _mm256_add_epi32(ec_avx2_elt_mbqm(va, g->m1, g->e1),
                                       ec_avx2_elt_mbqm(vb, g->m2, g->e2));
    const __m256i r = _mm256_add_epi32(ec_avx2_elt_mbqm(s, g->mo, g->eo),
                                       _mm256_set1_epi32(g->zp));
    return _mm256_min_epi32(_mm256_max_epi32(r, _mm256_set1_epi32(g->lo)),
                            _mm256_set1_epi32(g->hi));
}

EC_AVX2_SHARED void ec_avx2_add_exact(const ec_avx2_add_exact_geom *g, const int8_t *a,
                                      const int8_t *b, int8_t *y) {
    const int n = g->n;
    int i;
    for (i = 0; i + 8 <= n; i += 8) {
        const __m256i r = ec_avx2_add_exact8(g, a + i, b + i);
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
        r = ec_avx2_add_exact8(g, ta, tb);
        p = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
        _mm_storeu_si128((__m128i *)(void *)ty, _mm_packs_epi16(p, p));
        memcpy(y + i, ty, (size_t)m);
    }
}

/* ------------------------------------------------------------------------ AVERAGE_POOL_2D */

/* int8 average pooling, windows clipped to the input like TFLite Micro (padding is never
 * averaged in). Per output pixel, 64 or 16 channels at a time: the taps sign-extended and summed
 * in int16 (at most 256 taps: the sums stay in [-32768, 32512]); then TFLite's
 * (sum +- count/2) / count, truncating, as sign(sum) * (((|sum| + count/2) * M) >> 24) with
 * M = ceil(2^24 / count): the product stays below 2^32 (VPMULLD, logical shift), and the
 * compiler checked the quotient exact for every reachable |sum| of every count that occurs.
 * A pixel's outputs are written after all of its window is read (the planner may stream the
 * output over the input). Channels: a multiple of 16 (the compiler checks). */
typedef struct {
    int32_t batches, in_h, in_w, c, out_h, out_w, fh, fw, s_h, s_w, pad_h, pad_w, lo, hi;
} ec_avx2_pool_geom;

#define EC_AVX2_POOL_MAX_C 2048

static inline void ec_avx2_avg16(int8_t *out, __m256i acc, __m256i M, __m256i H, __m128i lo,
                                 __m128i hi) {
    __m256i v[2];
    __m128i p[2];
    int j;
    v[0] = _mm256_cvtepi16_epi32(_mm256_castsi256_si128(acc));
    v[1] = _mm256_cvtepi16_epi32(_mm256_extracti128_si256(acc, 1));
    for (j = 0; j < 2; ++j) {
        const __m256i q = _mm256_srli_epi32(
            _mm256_mullo_epi32(_mm256_add_epi32(_mm256_abs_epi32(v[j]), H), M), 24);
        const __m256i r = _mm256_sign_epi32(q, v[j]);
        p[j] = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    }
    _mm_storeu_si128((__m128i *)(void *)out,
                     _mm_min_epi8(_mm_max_epi8(_mm_packs_epi16(p[0], p[1]), lo), hi));
}

EC_AVX2_SHARED void ec_avx2_avgpool(const ec_avx2_pool_geom *g, const int8_t *x, int8_t *y) {
    const int C = g->c;
    const ptrdiff_t row = (ptrdiff_t)g->in_w * C;
    const __m128i lo = _mm_set1_epi8((char)g->lo), hi = _mm_set1_epi8((char)g->hi);
    int8_t out[EC_AVX2_POOL_MAX_C];
    int b, oy, ox;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + (size_t)b * g->in_h * g->in_w * C;
        for (oy = 0; oy < g->out_h; ++oy) {
            for (ox = 0; ox < g->out_w; ++ox, y += C) {
                const int y0 = oy * g->s_h - g->pad_h, x0 = ox * g->s_w - g->pad_w;
                const int fy0 = y0 < 0 ? -y0 : 0, fx0 = x0 < 0 ? -x0 : 0;
                const int fy1 = g->in_h - y0 < g->fh ? g->in_h - y0 : g->fh;
                const int fx1 = g->in_w - x0 < g->fw ? g->in_w - x0 : g->fw;
                const int32_t count = (fy1 - fy0) * (fx1 - fx0);
                const __m256i M = _mm256_set1_epi32(((1 << 24) + count - 1) / count);
                const __m256i H = _mm256_set1_epi32(count / 2);
                const int8_t *w0 = xb + (ptrdiff_t)(y0 + fy0) * row + (ptrdiff_t)(x0 + fx0) * C;
                int c = 0, fy, fx;
                for (; c + 64 <= C; c += 64) {
                    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
                    for (fy = fy0; fy < fy1; ++fy) {
                        const int8_t *p = w0 + (ptrdiff_t)(fy - fy0) * row + c;
                        for (fx = fx0; fx < fx1; ++fx, p += C) {
                            a0 = _mm256_add_epi16(a0, _mm256_cvtepi8_epi16(EC_LD128(p)));
                            a1 = _mm256_add_epi16(a1, _mm256_cvtepi8_epi16(EC_LD128(p + 16)));
                            a2 = _mm256_add_epi16(a2, _mm256_cvtepi8_epi16(EC_LD128(p + 32)));
                            a3 = _mm256_add_epi16(a3, _mm256_cvtepi8_epi16(EC_LD128(p + 48)));
                        }
                    }
                    ec_avx2_avg16(out + c, a0, M, H, lo, hi);
                    ec_avx2_avg16(out + c + 16, a1, M, H, lo, hi);
                    ec_avx2_avg16(out + c + 32, a2, M, H, lo, hi);
                    ec_avx2_avg16(out + c + 48, a3, M, H, lo, hi);
                }
                for (; c + 16 <= C; c += 16) {
                    __m256i a0 = _mm256_setzero_si256();
                    for (fy = fy0; fy < fy1; ++fy) {
                        const int8_t *p = w0 + (ptrdiff_t)(fy - fy0) * row + c;
                        for (fx = fx0; fx < fx1; ++fx, p += C)
                            a0 = _mm256_add_epi16(a0, _mm256_cvtepi8_epi16(EC_LD128(p)));
                    }
                    ec_avx2_avg16(out + c, a0, M, H, lo, hi);
                }
                memcpy(y, out, (size_t)C);
            }
        }
    }
}

#endif /* __AVX2__ */
#endif /* EDGECC_AVX2_ELT_H */
