/* edgecc x86 kernel: the passes of the one-stream FULLY_CONNECTED per register width (conventions:
 * x86/fully_connected_stream.h). */
#ifndef EDGECC_X86_FULLY_CONNECTED_STREAM_PASSES_H
#define EDGECC_X86_FULLY_CONNECTED_STREAM_PASSES_H
#if defined(__AVX2__)
#include "common.h"

/* The largest padded depth ec_x86_fully_connected_stream_s8 takes (its stack row); deeper layers use ec_x86_fully_connected_quads_s8. */
#define EC_X86_FC_MAX_KP 8192

#define EC_X86_FC_INL static inline __attribute__((always_inline))

#if EC_X86_512
/* ---------------------------------------------------------------- 512-bit (ZMM VPDPBUSD) */

/* 16 accumulators of units c..c+15 -> clamped int8, the first n (1..16) stored. The clamp
 * runs on int32 lanes: [act_min, act_max] lies inside int8, so clamping before the truncating
 * VPMOVDB equals the int8 saturation then the clamp. */
EC_X86_FC_INL void ec_x86_fc_out16(int8_t *y, __m512i acc, const ec_x86_rq *q, int c, int n) {
    __m512i r;
    if (q->fast) {
        const __m512i m = _mm512_loadu_si512((const void *)(q->mult + c));
        /* c64: per 8 units the 4 even units' constants, then the 4 odd ones' */
        const __m512i ce = _mm512_inserti64x4(_mm512_castsi256_si512(EC_LD256(q->c64 + c)),
                                              EC_LD256(q->c64 + c + 8), 1);
        const __m512i co = _mm512_inserti64x4(_mm512_castsi256_si512(EC_LD256(q->c64 + c + 4)),
                                              EC_LD256(q->c64 + c + 12), 1);
        const __m512i a = _mm512_sll_epi32(acc, _mm_cvtsi32_si128(q->L));
        const __m512i ev = _mm512_add_epi64(_mm512_mul_epi32(a, m), ce);
        const __m512i od = _mm512_add_epi64(
            _mm512_mul_epi32(_mm512_srli_epi64(a, 32), _mm512_srli_epi64(m, 32)), co);
        /* the products' high halves: even lanes from ev (swapped into place), odd ones from od */
        const __m512i t = _mm512_mask_shuffle_epi32(od, 0x5555, ev, _MM_PERM_CDAB);
        r = _mm512_srav_epi32(_mm512_add_epi32(t, _mm512_srai_epi32(a, 31)),
                              _mm512_loadu_si512((const void *)(q->right + c)));
    } else {
        r = _mm512_inserti64x4(
            _mm512_castsi256_si512(ec_x86_exact8(_mm512_castsi512_si256(acc), q, c)),
            ec_x86_exact8(_mm512_extracti64x4_epi64(acc, 1), q, c + 8), 1);
    }
    r = _mm512_min_epi32(_mm512_max_epi32(r, _mm512_set1_epi32(q->act_min)),
                         _mm512_set1_epi32(q->act_max));
    if (n >= 16) _mm_storeu_si128((__m128i *)(void *)y, _mm512_cvtepi32_epi8(r));
    else _mm_mask_storeu_epi8(y, (__mmask16)((1u << n) - 1), _mm512_cvtepi32_epi8(r));
}

#define EC_FCZ_W(s, j) _mm512_loadu_si512((const void *)(wk + ((s) * NB + (j)) * 64))
#define EC_FCZ_U(s) _mm512_xor_si512(_mm512_set1_epi32(ec_x86_ld32(u + 4 * (s))), flip)
#define EC_FCZ_B(j) _mm512_loadu_si512((const void *)(bias + c + 16 * (j)))
#define EC_FCZ_DP(A, s, j) A = _mm512_dpbusd_epi32(A, v, EC_FCZ_W(s, j))
#define EC_FCZ_OUT(A, j) \
    ec_x86_fc_out16(y + c + 16 * (j), A, q, uni ? 0 : c + 16 * (j), units - c - 16 * (j))

/* A pass of 8 blocks (128 units from c), the steps alternating between 2 accumulator chains. */
EC_X86_FC_INL void ec_x86_fcz8(const int8_t *u, int kq, const int8_t *wk, const int32_t *bias,
                               const ec_x86_rq *q, int8_t *y, int c, int units, int uni) {
    enum { NB = 8 };
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    __m512i a0 = EC_FCZ_B(0), a1 = EC_FCZ_B(1), a2 = EC_FCZ_B(2), a3 = EC_FCZ_B(3);
    __m512i a4 = EC_FCZ_B(4), a5 = EC_FCZ_B(5), a6 = EC_FCZ_B(6), a7 = EC_FCZ_B(7);
    __m512i b0 = _mm512_setzero_si512(), b1 = b0, b2 = b0, b3 = b0, b4 = b0, b5 = b0, b6 = b0;
    __m512i b7 = b0, v;
    int k;
    for (k = 0; k + 2 <= kq; k += 2, u += 8, wk += 2 * NB * 64) {
        v = EC_FCZ_U(0);
        EC_FCZ_DP(a0, 0, 0); EC_FCZ_DP(a1, 0, 1); EC_FCZ_DP(a2, 0, 2); EC_FCZ_DP(a3, 0, 3);
        EC_FCZ_DP(a4, 0, 4); EC_FCZ_DP(a5, 0, 5); EC_FCZ_DP(a6, 0, 6); EC_FCZ_DP(a7, 0, 7);
        v = EC_FCZ_U(1);
        EC_FCZ_DP(b0, 1, 0); EC_FCZ_DP(b1, 1, 1); EC_FCZ_DP(b2, 1, 2); EC_FCZ_DP(b3, 1, 3);
        EC_FCZ_DP(b4, 1, 4); EC_FCZ_DP(b5, 1, 5); EC_FCZ_DP(b6, 1, 6); EC_FCZ_DP(b7, 1, 7);
    }
    if (k < kq) {
        v = EC_FCZ_U(0);
        EC_FCZ_DP(a0, 0, 0); EC_FCZ_DP(a1, 0, 1); EC_FCZ_DP(a2, 0, 2); EC_FCZ_DP(a3, 0, 3);
        EC_FCZ_DP(a4, 0, 4); EC_FCZ_DP(a5, 0, 5); EC_FCZ_DP(a6, 0, 6); EC_FCZ_DP(a7, 0, 7);
    }
    EC_FCZ_OUT(_mm512_add_epi32(a0, b0), 0); EC_FCZ_OUT(_mm512_add_epi32(a1, b1), 1);
    EC_FCZ_OUT(_mm512_add_epi32(a2, b2), 2); EC_FCZ_OUT(_mm512_add_epi32(a3, b3), 3);
    EC_FCZ_OUT(_mm512_add_epi32(a4, b4), 4); EC_FCZ_OUT(_mm512_add_epi32(a5, b5), 5);
    EC_FCZ_OUT(_mm512_add_epi32(a6, b6), 6); EC_FCZ_OUT(_mm512_add_epi32(a7, b7), 7);
}

/* Passes of 4, 2 and 1 blocks: 4 accumulator chains (steps k, k+1, k+2, k+3). */
#define EC_FCZ_SMALL(NAME, NBV, STEP, OUT)                                                  \
EC_X86_FC_INL void NAME(const int8_t *u, int kq, const int8_t *wk, const int32_t *bias,     \
                        const ec_x86_rq *q, int8_t *y, int c, int units, int uni) {         \
    enum { NB = NBV };                                                                      \
    const __m512i z = _mm512_setzero_si512(), flip = _mm512_set1_epi8((char)0x80);          \
    __m512i a0 = EC_FCZ_B(0), b0 = z, g0 = z, d0 = z;                                       \
    __m512i a1 = NB > 1 ? EC_FCZ_B(1 % NB) : z, b1 = z, g1 = z, d1 = z;                     \
    __m512i a2 = NB > 2 ? EC_FCZ_B(2 % NB) : z, b2 = z, g2 = z, d2 = z;                     \
    __m512i a3 = NB > 3 ? EC_FCZ_B(3 % NB) : z, b3 = z, g3 = z, d3 = z, v;                  \
    int k;                                                                                  \
    for (k = 0; k + 4 <= kq; k += 4, u += 16, wk += 4 * NB * 64) {                          \
        v = EC_FCZ_U(0); STEP(a, 0);                                                        \
        v = EC_FCZ_U(1); STEP(b, 1);                                                        \
        v = EC_FCZ_U(2); STEP(g, 2);                                                        \
        v = EC_FCZ_U(3); STEP(d, 3);                                                        \
    }                                                                                       \
    for (; k < kq; ++k, u += 4, wk += NB * 64) {                                            \
        v = EC_FCZ_U(0); STEP(a, 0);                                                        \
    }                                                                                       \
    a0 = _mm512_add_epi32(_mm512_add_epi32(a0, b0), _mm512_add_epi32(g0, d0));              \
    a1 = _mm512_add_epi32(_mm512_add_epi32(a1, b1), _mm512_add_epi32(g1, d1));              \
    a2 = _mm512_add_epi32(_mm512_add_epi32(a2, b2), _mm512_add_epi32(g2, d2));              \
    a3 = _mm512_add_epi32(_mm512_add_epi32(a3, b3), _mm512_add_epi32(g3, d3));              \
    OUT;                                                                                    \
}
#define EC_FCZ_S4(A, s) EC_FCZ_DP(A##0, s, 0); EC_FCZ_DP(A##1, s, 1); EC_FCZ_DP(A##2, s, 2); \
    EC_FCZ_DP(A##3, s, 3)
#define EC_FCZ_S2(A, s) EC_FCZ_DP(A##0, s, 0); EC_FCZ_DP(A##1, s, 1)
#define EC_FCZ_S1(A, s) EC_FCZ_DP(A##0, s, 0)
EC_FCZ_SMALL(ec_x86_fcz4, 4, EC_FCZ_S4,
             EC_FCZ_OUT(a0, 0); EC_FCZ_OUT(a1, 1); EC_FCZ_OUT(a2, 2); EC_FCZ_OUT(a3, 3))
EC_FCZ_SMALL(ec_x86_fcz2, 2, EC_FCZ_S2, EC_FCZ_OUT(a0, 0); EC_FCZ_OUT(a1, 1); (void)a2; (void)a3)
EC_FCZ_SMALL(ec_x86_fcz1, 1, EC_FCZ_S1, EC_FCZ_OUT(a0, 0); (void)a1; (void)a2; (void)a3)
#undef EC_FCZ_SMALL
#undef EC_FCZ_S4
#undef EC_FCZ_S2
#undef EC_FCZ_S1
#undef EC_FCZ_W
#undef EC_FCZ_U
#undef EC_FCZ_B
#undef EC_FCZ_DP
#undef EC_FCZ_OUT

#elif EC_X86_VNNI
/* ---------------------------------------------------------- 256-bit VPDPBUSD (AVX-VNNI) */

/* Blocks j0..j0+NBV-1 of a pass of np blocks (a step is np * 64 bytes), each as two YMM halves:
 * sub-passes of 4 blocks (8 accumulators), 2 blocks (2 chains) and 1 block (4 chains). */
#define EC_FCY_W(s, j, h) EC_LD256(wk + ((s) * np + (j)) * 64 + 32 * (h))
#define EC_FCY_U(s) _mm256_xor_si256(_mm256_set1_epi32(ec_x86_ld32(u + 4 * (s))), flip)
#define EC_FCY_B(j, h) EC_LD256(bias + c + 16 * (j) + 8 * (h))
#define EC_FCY_DP(A, s, j, h) A = ec_dpbusd(A, v, EC_FCY_W(s, j, h))
#define EC_FCY_OUT(L, H, j) \
    ec_x86_out16(y + c + 16 * (j), L, H, q, uni ? 0 : c + 16 * (j), units - c - 16 * (j))

EC_X86_FC_INL void ec_x86_fcy4(const int8_t *u, int kq, const int8_t *wk, int np,
                               const int32_t *bias, const ec_x86_rq *q, int8_t *y, int c,
                               int units, int uni) {
    const __m256i flip = _mm256_set1_epi8((char)0x80);
    __m256i l0 = EC_FCY_B(0, 0), h0 = EC_FCY_B(0, 1), l1 = EC_FCY_B(1, 0), h1 = EC_FCY_B(1, 1);
    __m256i l2 = EC_FCY_B(2, 0), h2 = EC_FCY_B(2, 1), l3 = EC_FCY_B(3, 0), h3 = EC_FCY_B(3, 1);
    int k;
    for (k = 0; k < kq; ++k, u += 4, wk += np * 64) {
        const __m256i v = EC_FCY_U(0);
        EC_FCY_DP(l0, 0, 0, 0); EC_FCY_DP(h0, 0, 0, 1); EC_FCY_DP(l1, 0, 1, 0);
        EC_FCY_DP(h1, 0, 1, 1); EC_FCY_DP(l2, 0, 2, 0); EC_FCY_DP(h2, 0, 2, 1);
        EC_FCY_DP(l3, 0, 3, 0); EC_FCY_DP(h3, 0, 3, 1);
    }
    EC_FCY_OUT(l0, h0, 0); EC_FCY_OUT(l1, h1, 1); EC_FCY_OUT(l2, h2, 2); EC_FCY_OUT(l3, h3, 3);
}

EC_X86_FC_INL void ec_x86_fcy2(const int8_t *u, int kq, const int8_t *wk, int np,
                               const int32_t *bias, const ec_x86_rq *q, int8_t *y, int c,
                               int units, int uni) {
    const __m256i z = _mm256_setzero_si256(), flip = _mm256_set1_epi8((char)0x80);
    __m256i l0 = EC_FCY_B(0, 0), h0 = EC_FCY_B(0, 1), l1 = EC_FCY_B(1, 0), h1 = EC_FCY_B(1, 1);
    __m256i m0 = z, g0 = z, m1 = z, g1 = z, v;
    int k;
    for (k = 0; k + 2 <= kq; k += 2, u += 8, wk += 2 * np * 64) {
        v = EC_FCY_U(0);
        EC_FCY_DP(l0, 0, 0, 0); EC_FCY_DP(h0, 0, 0, 1);
        EC_FCY_DP(l1, 0, 1, 0); EC_FCY_DP(h1, 0, 1, 1);
        v = EC_FCY_U(1);
        EC_FCY_DP(m0, 1, 0, 0); EC_FCY_DP(g0, 1, 0, 1);
        EC_FCY_DP(m1, 1, 1, 0); EC_FCY_DP(g1, 1, 1, 1);
    }
    if (k < kq) {
        v = EC_FCY_U(0);
        EC_FCY_DP(l0, 0, 0, 0); EC_FCY_DP(h0, 0, 0, 1);
        EC_FCY_DP(l1, 0, 1, 0); EC_FCY_DP(h1, 0, 1, 1);
    }
    EC_FCY_OUT(_mm256_add_epi32(l0, m0), _mm256_add_epi32(h0, g0), 0);
    EC_FCY_OUT(_mm256_add_epi32(l1, m1), _mm256_add_epi32(h1, g1), 1);
}

EC_X86_FC_INL void ec_x86_fcy1(const int8_t *u, int kq, const int8_t *wk, int np,
                               const int32_t *bias, const ec_x86_rq *q, int8_t *y, int c,
                               int units, int uni) {
    const __m256i z = _mm256_setzero_si256(), flip = _mm256_set1_epi8((char)0x80);
    __m256i l0 = EC_FCY_B(0, 0), h0 = EC_FCY_B(0, 1), l1 = z, h1 = z, l2 = z, h2 = z, l3 = z;
    __m256i h3 = z, v;
    int k;
    for (k = 0; k + 4 <= kq; k += 4, u += 16, wk += 4 * np * 64) {
        v = EC_FCY_U(0); EC_FCY_DP(l0, 0, 0, 0); EC_FCY_DP(h0, 0, 0, 1);
        v = EC_FCY_U(1); EC_FCY_DP(l1, 1, 0, 0); EC_FCY_DP(h1, 1, 0, 1);
        v = EC_FCY_U(2); EC_FCY_DP(l2, 2, 0, 0); EC_FCY_DP(h2, 2, 0, 1);
        v = EC_FCY_U(3); EC_FCY_DP(l3, 3, 0, 0); EC_FCY_DP(h3, 3, 0, 1);
    }
    for (; k < kq; ++k, u += 4, wk += np * 64) {
        v = EC_FCY_U(0); EC_FCY_DP(l0, 0, 0, 0); EC_FCY_DP(h0, 0, 0, 1);
    }
    EC_FCY_OUT(_mm256_add_epi32(_mm256_add_epi32(l0, l1), _mm256_add_epi32(l2, l3)),
               _mm256_add_epi32(_mm256_add_epi32(h0, h1), _mm256_add_epi32(h2, h3)), 0);
}
#undef EC_FCY_W
#undef EC_FCY_U
#undef EC_FCY_B
#undef EC_FCY_DP
#undef EC_FCY_OUT

#else
/* ------------------------------------------------- plain AVX2 (VPMADDWD on int16 values) */

/* 8 units' madd lanes (lo: units 0-3, two pair sums each; hi: units 4-7) -> 8 sums in order. */
EC_X86_FC_INL __m256i ec_x86_fc_fold8(__m256i lo, __m256i hi) {
    /* hadd within 128-bit lanes gives [u0 u1 u4 u5 | u2 u3 u6 u7] */
    return _mm256_permute4x64_epi64(_mm256_hadd_epi32(lo, hi), 0xD8);
}

/* The row as int16 (4 values = one 64-bit broadcast per step); the quarter r of block j's 64
 * bytes (units 4r..4r+3) sign-extended. */
#define EC_FCX_U(s) _mm256_set1_epi64x(ec_x86_ld64(xs + 4 * (s)))
#define EC_FCX_W(s, j, r) _mm256_cvtepi8_epi16(EC_LD128(wk + ((s) * np + (j)) * 64 + 16 * (r)))
#define EC_FCX_DP(A, s, j, r) A = _mm256_add_epi32(A, _mm256_madd_epi16(v, EC_FCX_W(s, j, r)))
#define EC_FCX_OUT(A, B, C, D, j)                                                                \
    ec_x86_out16(y + c + 16 * (j),                                                               \
                  _mm256_add_epi32(EC_LD256(bias + c + 16 * (j)), ec_x86_fc_fold8(A, B)),        \
                  _mm256_add_epi32(EC_LD256(bias + c + 16 * (j) + 8), ec_x86_fc_fold8(C, D)), q, \
                  uni ? 0 : c + 16 * (j), units - c - 16 * (j))

/* Blocks j..j+1 of a pass of np blocks: 8 accumulators. */
EC_X86_FC_INL void ec_x86_fcx2(const int16_t *xs, int kq, const int8_t *wk, int np,
                               const int32_t *bias, const ec_x86_rq *q, int8_t *y, int c,
                               int units, int uni) {
    const __m256i z = _mm256_setzero_si256();
    __m256i p0 = z, p1 = z, p2 = z, p3 = z, r0 = z, r1 = z, r2 = z, r3 = z;
    int k;
    for (k = 0; k < kq; ++k, xs += 4, wk += np * 64) {
        const __m256i v = EC_FCX_U(0);
        EC_FCX_DP(p0, 0, 0, 0); EC_FCX_DP(p1, 0, 0, 1);
        EC_FCX_DP(p2, 0, 0, 2); EC_FCX_DP(p3, 0, 0, 3);
        EC_FCX_DP(r0, 0, 1, 0); EC_FCX_DP(r1, 0, 1, 1);
        EC_FCX_DP(r2, 0, 1, 2); EC_FCX_DP(r3, 0, 1, 3);
    }
    EC_FCX_OUT(p0, p1, p2, p3, 0);
    EC_FCX_OUT(r0, r1, r2, r3, 1);
}

/* One block: 2 chains of 4 accumulators. */
EC_X86_FC_INL void ec_x86_fcx1(const int16_t *xs, int kq, const int8_t *wk, int np,
                               const int32_t *bias, const ec_x86_rq *q, int8_t *y, int c,
                               int units, int uni) {
    const __m256i z = _mm256_setzero_si256();
    __m256i p0 = z, p1 = z, p2 = z, p3 = z, r0 = z, r1 = z, r2 = z, r3 = z, v;
    int k;
    for (k = 0; k + 2 <= kq; k += 2, xs += 8, wk += 2 * np * 64) {
        v = EC_FCX_U(0);
        EC_FCX_DP(p0, 0, 0, 0); EC_FCX_DP(p1, 0, 0, 1);
        EC_FCX_DP(p2, 0, 0, 2); EC_FCX_DP(p3, 0, 0, 3);
        v = EC_FCX_U(1);
        EC_FCX_DP(r0, 1, 0, 0); EC_FCX_DP(r1, 1, 0, 1);
        EC_FCX_DP(r2, 1, 0, 2); EC_FCX_DP(r3, 1, 0, 3);
    }
    if (k < kq) {
        v = EC_FCX_U(0);
        EC_FCX_DP(p0, 0, 0, 0); EC_FCX_DP(p1, 0, 0, 1);
        EC_FCX_DP(p2, 0, 0, 2); EC_FCX_DP(p3, 0, 0, 3);
    }
    EC_FCX_OUT(_mm256_add_epi32(p0, r0), _mm256_add_epi32(p1, r1), _mm256_add_epi32(p2, r2),
               _mm256_add_epi32(p3, r3), 0);
}
#undef EC_FCX_U
#undef EC_FCX_W
#undef EC_FCX_DP
#undef EC_FCX_OUT
#endif

#endif /* __AVX2__ */
#endif /* EDGECC_X86_FULLY_CONNECTED_STREAM_PASSES_H */
