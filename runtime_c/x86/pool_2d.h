/* edgecc x86 kernel: int8 AVERAGE_POOL_2D (conventions: x86/common.h). */
#ifndef EDGECC_X86_POOL_2D_H
#define EDGECC_X86_POOL_2D_H
#if defined(__AVX2__)
#include "common.h"

/* ------------------------------------------------------------------------ AVERAGE_POOL_2D */

/* int8 average pooling, windows clipped to the input like TFLite Micro (padding is never
 * averaged in). Per output pixel, 64 or 16 channels at a time: the taps sign-extended and summed
 * in int16 (at most 256 taps: the sums stay in [-32768, 32512]); then TFLite's
 * (sum +- count/2) / count, truncating, as sign(sum) * (((|sum| + count/2) * M) >> 24) with
 * M = ceil(2^24 / count): the product stays below 2^32 (VPMULLD, logical shift), and the
 * compiler checked the quotient exact for every reachable |sum| of every count that occurs.
 * A pixel's outputs are written after all of its window is read (the planner may stream the
 * output over the input). Channels: a multiple of 16 (the compiler checks). */
#ifndef EC_X86_ONCE_EC_AVX2_POOL_GEOM /* a record the calls name: defined once, not per level */
#define EC_X86_ONCE_EC_AVX2_POOL_GEOM
typedef struct {
    int32_t batches, in_h, in_w, c, out_h, out_w, fh, fw, s_h, s_w, pad_h, pad_w, lo, hi;
} ec_x86_pool_geom;
#endif

#define EC_X86_POOL_MAX_C 2048

static inline void ec_x86_avg16(int8_t *out, __m256i acc, __m256i M, __m256i H, __m128i lo,
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

EC_X86_SHARED void ec_x86_pool_2d_avg_s8(const ec_x86_pool_geom *g, const int8_t *x, int8_t *y) {
    const int C = g->c;
    const ptrdiff_t row = (ptrdiff_t)g->in_w * C;
    const __m128i lo = _mm_set1_epi8((char)g->lo), hi = _mm_set1_epi8((char)g->hi);
    int8_t out[EC_X86_POOL_MAX_C];
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
                    ec_x86_avg16(out + c, a0, M, H, lo, hi);
                    ec_x86_avg16(out + c + 16, a1, M, H, lo, hi);
                    ec_x86_avg16(out + c + 32, a2, M, H, lo, hi);
                    ec_x86_avg16(out + c + 48, a3, M, H, lo, hi);
                }
                for (; c + 16 <= C; c += 16) {
                    __m256i a0 = _mm256_setzero_si256();
                    for (fy = fy0; fy < fy1; ++fy) {
                        const int8_t *p = w0 + (ptrdiff_t)(fy - fy0) * row + c;
                        for (fx = fx0; fx < fx1; ++fx, p += C)
                            a0 = _mm256_add_epi16(a0, _mm256_cvtepi8_epi16(EC_LD128(p)));
                    }
                    ec_x86_avg16(out + c, a0, M, H, lo, hi);
                }
                memcpy(y, out, (size_t)C);
            }
        }
    }
}

#endif /* __AVX2__ */
#endif /* EDGECC_X86_POOL_2D_H */
