/* edgecc x86 kernel: 3x3 DEPTHWISE_CONV_2D, the 512-bit blocks (EC_X86_512) (conventions:
 * x86/depthwise_conv_2d.h). */
#ifndef EDGECC_X86_DEPTHWISE_CONV_2D_3X3_X512_H
#define EDGECC_X86_DEPTHWISE_CONV_2D_3X3_X512_H
#if defined(__AVX2__)
#include "depthwise_conv_2d_3x3_common.h"

#if EC_X86_512
/* ---- 512-bit blocks of 32 channels: the input bytes of 32 channels sign-extended to a ZMM
 * each, then VPUNPCKLWD / VPUNPCKHWD pair two of them within 128-bit lanes: "lo" holds channels
 * 8i..8i+3 of each lane i, "hi" channels 8i+4..8i+7 (weights, bias and requantization constants
 * permuted to that order once per block). VPACKSSDW(lo, hi) puts the channels back in order. */

typedef struct {
    __m512i m, mo, ce, co, e, left;
    __m128i L;
} ec_x86_dw_rqz;

typedef struct {
    __m512i W[5][2], B[2];
    ec_x86_dw_rqz R[2];
    __m256i lo, hi;
    __m512i zp;
} ec_x86_dw_kz;

/* the channels (from the block start) of lo's lanes; hi's are these + 4 */
#define EC_X86_DW_Z_LO _mm512_setr_epi32(0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27)

/* The channels (from the block start) of lo's (h 0) or hi's (h 1) lanes: for 32 channels as
 * above; a block of C = 8 or 16 channels holds 32 / C neighbouring pixels (ec_x86_dw3_row_p), and a
 * lane's channel is then that modulo C. */
EC_X86_DW_INLINE __m512i ec_x86_dw_zidx(int h, int C) {
    const __m512i idx = _mm512_add_epi32(EC_X86_DW_Z_LO, _mm512_set1_epi32(4 * h));
    return C >= 32 ? idx : _mm512_and_si512(idx, _mm512_set1_epi32(C - 1));
}

/* int32 of channels c.. (32 of them, or 16 when C < 32: arrays padded) in lane order. */
EC_X86_DW_INLINE __m512i ec_x86_dw_z32(const void *p, int h, int C) {
    const __m512i idx = ec_x86_dw_zidx(h, C);
    if (C < 32) return _mm512_permutexvar_epi32(idx, _mm512_loadu_si512(p));
    return _mm512_permutex2var_epi32(_mm512_loadu_si512(p), idx,
                                     _mm512_loadu_si512((const int32_t *)p + 16));
}

/* c64 (int64, channel order) of channels c.. -> those of lo's (h 0) or hi's (h 1) even lanes
 * (odd 0) or odd lanes (odd 1). */
EC_X86_DW_INLINE __m512i ec_x86_dw_z64(const int64_t *p, int h, int odd, int C) {
    if (C < 32) {  /* 16 channels at most: one two-register permute */
        __m512i idx = ec_x86_dw_zidx(h, C);
        if (odd) idx = _mm512_srli_epi64(idx, 32);
        return _mm512_permutex2var_epi64(_mm512_loadu_si512(p),
                                         _mm512_cvtepu32_epi64(_mm512_cvtepi64_epi32(idx)),
                                         _mm512_loadu_si512(p + 8));
    } else {
        /* channels 4h + {0,2,8,10} | 4h + {1,3,9,11} of each 16 */
        const __m512i i1 = _mm512_add_epi64(_mm512_setr_epi64(0, 2, 8, 10, 1, 3, 9, 11),
                                            _mm512_set1_epi64(4 * h));
        const __m512i a = _mm512_permutex2var_epi64(_mm512_loadu_si512(p), i1,
                                                    _mm512_loadu_si512(p + 8));
        const __m512i b = _mm512_permutex2var_epi64(_mm512_loadu_si512(p + 16), i1,
                                                    _mm512_loadu_si512(p + 24));
        const __m512i i2 = _mm512_add_epi64(_mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11),
                                            _mm512_set1_epi64(4 * odd));
        return _mm512_permutex2var_epi64(a, i2, b);
    }
}

EC_X86_DW_INLINE void ec_x86_dw_kz_load(ec_x86_dw_kz *k, const int16_t *w, const int32_t *bias,
                                const ec_x86_rq *q, int C, int c, int FAST) {
    const int B = C >= 32 ? 32 : C;  /* the channels of a block */
    int h, i;
    for (h = 0; h < 2; ++h) {
        for (i = 0; i < 5; ++i)  /* a pair (w_a, w_b) of int16 is one 32-bit element */
            k->W[i][h] = ec_x86_dw_z32(w + 2 * ((size_t)i * C + c), h, B);
        k->B[h] = ec_x86_dw_z32(bias + c, h, B);
        k->R[h].m = ec_x86_dw_z32(q->mult + c, h, B);
        k->R[h].mo = _mm512_srli_epi64(k->R[h].m, 32);
        k->R[h].e = ec_x86_dw_z32(q->right + c, h, B);
        k->R[h].L = _mm_cvtsi32_si128(q->L);
        if (FAST) {
            k->R[h].ce = ec_x86_dw_z64(q->c64 + c, h, 0, B);
            k->R[h].co = ec_x86_dw_z64(q->c64 + c, h, 1, B);
            k->R[h].left = _mm512_setzero_si512();
        } else {
            k->R[h].ce = k->R[h].co = _mm512_setzero_si512();
            k->R[h].left = ec_x86_dw_z32(q->left + c, h, B);
        }
    }
    k->lo = _mm256_set1_epi8((char)q->act_min);
    k->hi = _mm256_set1_epi8((char)q->act_max);
    k->zp = _mm512_set1_epi32(q->out_zp);
}

EC_X86_DW_INLINE void ec_x86_dw_kz_pairs(const int8_t *a, const int8_t *b, __m512i *v, int NH) {
    const __m512i xa = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(const void *)a));
    const __m512i xb = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(const void *)b));
    (void)NH;
    v[0] = _mm512_unpacklo_epi16(xa, xb);
    v[1] = _mm512_unpackhi_epi16(xa, xb);
}

EC_X86_DW_INLINE void ec_x86_dw_kz_mac(const ec_x86_dw_kz *k, const __m512i *v0, const __m512i *v1,
                               const __m512i *v2, const __m512i *h0, const __m512i *h1,
                               __m512i *acc, int NH) {
    int h;
    (void)NH;
    for (h = 0; h < 2; ++h) {
        __m512i s0 = _mm512_dpwssd_epi32(k->B[h], v0[h], k->W[0][h]);
        __m512i s1 = _mm512_madd_epi16(v1[h], k->W[1][h]);
        s0 = _mm512_dpwssd_epi32(s0, v2[h], k->W[2][h]);
        s1 = _mm512_dpwssd_epi32(s1, h0[h], k->W[3][h]);
        s0 = _mm512_dpwssd_epi32(s0, h1[h], k->W[4][h]);
        acc[h] = _mm512_add_epi32(s0, s1);
    }
}

/* ec_x86_fast8 on 16 lanes. */
EC_X86_DW_INLINE __m512i ec_x86_dw_fastz(__m512i acc, const ec_x86_dw_rqz *r) {
    const __m512i a = _mm512_sll_epi32(acc, r->L);
    const __m512i ev = _mm512_add_epi64(_mm512_mul_epi32(a, r->m), r->ce);
    const __m512i od = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(a, 32), r->mo), r->co);
    const __m512i t = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(ev, 32), od);
    return _mm512_srav_epi32(_mm512_add_epi32(t, _mm512_srai_epi32(a, 31)), r->e);
}

/* ec_x86_mbqm8 (TFLite's two roundings) on 16 lanes, without out_zp. */
EC_X86_DW_INLINE __m512i ec_x86_dw_mbqmz(__m512i acc, const ec_x86_dw_rqz *r) {
    const __m512i one = _mm512_set1_epi32(1);
    const __m512i nudge = _mm512_set1_epi64((long long)1 << 30);
    const __m512i a = _mm512_sllv_epi32(acc, r->left);
    const __m512i ev = _mm512_add_epi64(_mm512_mul_epi32(a, r->m), nudge);
    const __m512i od = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(a, 32), r->mo), nudge);
    const __m512i x = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(ev, 31),
                                              _mm512_slli_epi64(od, 1));
    const __m512i mask = _mm512_sub_epi32(_mm512_sllv_epi32(one, r->e), one);
    const __m512i rem = _mm512_and_si512(x, mask);
    /* threshold = mask/2 + (x < 0) */
    const __m512i thr = _mm512_sub_epi32(_mm512_srai_epi32(mask, 1), _mm512_srai_epi32(x, 31));
    const __m512i q = _mm512_srav_epi32(x, r->e);
    return _mm512_mask_add_epi32(q, _mm512_cmpgt_epi32_mask(rem, thr), q, one);
}

EC_X86_DW_INLINE void ec_x86_dw_kz_store(int8_t *y, const __m512i *acc, const ec_x86_dw_kz *k, int NH,
                                 int FAST) {
    __m512i o0, o1;
    __m256i v;
    (void)NH;
    if (FAST) {
        o0 = ec_x86_dw_fastz(acc[0], &k->R[0]);
        o1 = ec_x86_dw_fastz(acc[1], &k->R[1]);
    } else {
        o0 = _mm512_add_epi32(ec_x86_dw_mbqmz(acc[0], &k->R[0]), k->zp);
        o1 = _mm512_add_epi32(ec_x86_dw_mbqmz(acc[1], &k->R[1]), k->zp);
    }
    /* saturating int32 -> int16 -> int8, as the 256-bit packs */
    v = _mm512_cvtsepi16_epi8(_mm512_packs_epi32(o0, o1));
    v = _mm256_min_epi8(_mm256_max_epi8(v, k->lo), k->hi);
    _mm256_storeu_si256((__m256i *)(void *)y, v);
}

/* ---- 512-bit blocks of 16 channels in channel order (int16 pairs of 16 channels widened to one
 * ZMM): the kind for 16-channel rests and layers the packed and quad paths do not take. Only
 * W[i][0], B[0], R[0] of an ec_x86_dw_kz are used. */
EC_X86_DW_INLINE void ec_x86_dw_kw_load(ec_x86_dw_kz *k, const int16_t *w, const int32_t *bias,
                                const ec_x86_rq *q, int C, int c, int FAST) {
    int i;
    for (i = 0; i < 5; ++i) k->W[i][0] = _mm512_loadu_si512(w + 2 * ((size_t)i * C + c));
    k->B[0] = _mm512_loadu_si512(bias + c);
    k->R[0].m = _mm512_loadu_si512(q->mult + c);
    k->R[0].mo = _mm512_srli_epi64(k->R[0].m, 32);
    k->R[0].e = _mm512_loadu_si512(q->right + c);
    k->R[0].L = _mm_cvtsi32_si128(q->L);
    if (FAST) {  /* c64 in channel order: the even channels' and the odd channels' */
        const __m512i a = _mm512_loadu_si512(q->c64 + c), b = _mm512_loadu_si512(q->c64 + c + 8);
        k->R[0].ce = _mm512_permutex2var_epi64(a, _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), b);
        k->R[0].co = _mm512_permutex2var_epi64(a, _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15), b);
        k->R[0].left = _mm512_setzero_si512();
    } else {
        k->R[0].ce = k->R[0].co = _mm512_setzero_si512();
        k->R[0].left = _mm512_loadu_si512(q->left + c);
    }
    k->W[0][1] = k->W[1][1] = k->W[2][1] = k->W[3][1] = k->W[4][1] = k->B[1] = k->B[0];
    k->R[1] = k->R[0];
    k->lo = _mm256_set1_epi8((char)q->act_min);
    k->hi = _mm256_set1_epi8((char)q->act_max);
    k->zp = _mm512_set1_epi32(q->out_zp);
}

EC_X86_DW_INLINE void ec_x86_dw_kw_pairs(const int8_t *a, const int8_t *b, __m512i *v, int NH) {
    const __m128i xa = EC_LD128(a), xb = EC_LD128(b);
    (void)NH;
    v[0] = _mm512_cvtepi8_epi16(_mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_unpacklo_epi8(xa, xb)), _mm_unpackhi_epi8(xa, xb), 1));
}

EC_X86_DW_INLINE void ec_x86_dw_kw_mac(const ec_x86_dw_kz *k, const __m512i *v0, const __m512i *v1,
                               const __m512i *v2, const __m512i *h0, const __m512i *h1,
                               __m512i *acc, int NH) {
    __m512i s0 = _mm512_dpwssd_epi32(k->B[0], v0[0], k->W[0][0]);
    __m512i s1 = _mm512_madd_epi16(v1[0], k->W[1][0]);
    (void)NH;
    s0 = _mm512_dpwssd_epi32(s0, v2[0], k->W[2][0]);
    s1 = _mm512_dpwssd_epi32(s1, h0[0], k->W[3][0]);
    s0 = _mm512_dpwssd_epi32(s0, h1[0], k->W[4][0]);
    acc[0] = _mm512_add_epi32(s0, s1);
}

EC_X86_DW_INLINE void ec_x86_dw_kw_store(int8_t *y, const __m512i *acc, const ec_x86_dw_kz *k, int NH,
                                 int FAST) {
    const __m512i o = FAST ? ec_x86_dw_fastz(acc[0], &k->R[0])
                           : _mm512_add_epi32(ec_x86_dw_mbqmz(acc[0], &k->R[0]), k->zp);
    /* saturating int32 -> int8 (what the two saturating packs give), then the clamp */
    __m128i v = _mm512_cvtsepi32_epi8(o);
    (void)NH;
    v = _mm_min_epi8(_mm_max_epi8(v, _mm256_castsi256_si128(k->lo)), _mm256_castsi256_si128(k->hi));
    _mm_storeu_si128((__m128i *)(void *)y, v);
}
#endif /* EC_X86_512 */

#if EC_X86_512
typedef struct {
    __m512i W[3][4], B[4];
    ec_x86_dw_rqz R[4];
    __m512i lo, hi, zp;
} ec_x86_dw_kq;

/* Four vectors of 16 channels each (64 channels in channel order) in quad lane order:
 * accumulator g lane i is channel 16 * (i / 4) + 4 * g + i % 4, so g's lanes are the 128-bit
 * chunk g of each 16 channels (a 4 x 4 transpose of 128-bit chunks). */
EC_X86_DW_INLINE void ec_x86_dw_t4(__m512i l0, __m512i l1, __m512i l2, __m512i l3, __m512i *v) {
    const __m512i a = _mm512_shuffle_i32x4(l0, l1, 0x44), b = _mm512_shuffle_i32x4(l0, l1, 0xEE);
    const __m512i c = _mm512_shuffle_i32x4(l2, l3, 0x44), d = _mm512_shuffle_i32x4(l2, l3, 0xEE);
    v[0] = _mm512_shuffle_i32x4(a, c, 0x88);
    v[1] = _mm512_shuffle_i32x4(a, c, 0xDD);
    v[2] = _mm512_shuffle_i32x4(b, d, 0x88);
    v[3] = _mm512_shuffle_i32x4(b, d, 0xDD);
}

/* The 64 int32 of channels p.. in quad lane order. */
EC_X86_DW_INLINE void ec_x86_dw_q32(const int32_t *p, __m512i *v) {
    ec_x86_dw_t4(_mm512_loadu_si512(p), _mm512_loadu_si512(p + 16), _mm512_loadu_si512(p + 32),
                 _mm512_loadu_si512(p + 48), v);
}

/* The weight quads (w[0][d], w[1][d], w[2][d], 0) of filter column d for 16 channels, in channel
 * order, from the layer's int16 pairs (the 256-bit and 32-channel blocks' weights): pd, the pairs
 * (w[0][d], w[1][d]) = P_d, and px, the pair holding w[2][d] as its first (hi 0) or second (hi 1)
 * tap (P3 = (w6, w7); P4 = (w8, 0) at stride 2, else (0, w8)); each int16 is an int8 value, its
 * low byte (VPMOVWB) that value. */
EC_X86_DW_INLINE __m512i ec_x86_dw_quad16(const int16_t *pd, const int16_t *px, int hi) {
    const __m512i a = _mm512_cvtepu16_epi32(_mm512_cvtepi16_epi8(_mm512_loadu_si512(pd)));
    const __m512i x = _mm512_cvtepu16_epi32(_mm512_cvtepi16_epi8(_mm512_loadu_si512(px)));
    const __m512i t = hi ? _mm512_srli_epi32(x, 8) : _mm512_and_si512(x, _mm512_set1_epi32(0xFF));
    return _mm512_or_si512(a, _mm512_slli_epi32(t, 16));
}

/* The block's constants from the layer's own arrays (those of the 256-bit and 32-channel blocks:
 * int16 pairs w, channel-order bias, mult, right/left, c64), put in quad lane order once per
 * block: the weight quads of the 3 filter columns, the bias for u = x + 128 (the bias minus 128
 * times the sum of the channel's 9 weights: VPDPBUSD of 128s against the quads), the
 * requantization constants (c64: per accumulator its 8 even lanes, then its 8 odd lanes). */
EC_X86_DW_INLINE void ec_x86_dw_kq_load(ec_x86_dw_kq *k, const int16_t *w, const int32_t *bias,
                                const ec_x86_rq *q, int C, int d4, int c, int FAST) {
    const __m512i u128 = _mm512_set1_epi8((char)0x80);
    __m512i bv[4], mv[4], ev[4], lv[4], s[4];
    int g, d;
    ec_x86_dw_q32(bias + c, bv);
    ec_x86_dw_q32(q->mult + c, mv);
    ec_x86_dw_q32(q->right + c, ev);
    if (!FAST) ec_x86_dw_q32(q->left + c, lv);
    for (g = 0; g < 4; ++g) s[g] = _mm512_setzero_si512();
    for (d = 0; d < 3; ++d) {
        const int16_t *pd = w + 2 * ((size_t)d * C + c);
        const int16_t *px = w + 2 * ((size_t)(d < 2 ? 3 : 4) * C + c);
        const int hi = d < 2 ? d : !d4;
#define EC_X86_DW_Q16(j) ec_x86_dw_quad16(pd + 32 * (j), px + 32 * (j), hi)
        ec_x86_dw_t4(EC_X86_DW_Q16(0), EC_X86_DW_Q16(1), EC_X86_DW_Q16(2), EC_X86_DW_Q16(3),
                     k->W[d]);
#undef EC_X86_DW_Q16
        for (g = 0; g < 4; ++g) s[g] = _mm512_dpbusd_epi32(s[g], u128, k->W[d][g]);
    }
    for (g = 0; g < 4; ++g) {
        k->B[g] = _mm512_sub_epi32(bv[g], s[g]);
        k->R[g].m = mv[g];
        k->R[g].mo = _mm512_srli_epi64(mv[g], 32);
        k->R[g].e = ev[g];
        k->R[g].L = _mm_cvtsi32_si128(q->L);
        if (FAST) {  /* channels 16j + 4g + {0, 2} (even lanes) and + {1, 3} (odd) */
            const int64_t *p = q->c64 + c + 4 * g;
            const __m512i lo = _mm512_inserti64x4(
                _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)p)),
                _mm256_loadu_si256((const __m256i *)(const void *)(p + 16)), 1);
            const __m512i hi = _mm512_inserti64x4(
                _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)(p + 32))),
                _mm256_loadu_si256((const __m256i *)(const void *)(p + 48)), 1);
            k->R[g].ce = _mm512_permutex2var_epi64(lo, _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), hi);
            k->R[g].co = _mm512_permutex2var_epi64(lo, _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15), hi);
            k->R[g].left = _mm512_setzero_si512();
        } else {
            k->R[g].ce = k->R[g].co = _mm512_setzero_si512();
            k->R[g].left = lv[g];
        }
    }
    k->lo = _mm512_set1_epi8((char)q->act_min);
    k->hi = _mm512_set1_epi8((char)q->act_max);
    k->zp = _mm512_set1_epi32(q->out_zp);
}

/* The quads (u0, u1, u2, 0) of input column pointers a, b, c (rows 0, 1, 2), u = x ^ 0x80. */
EC_X86_DW_INLINE void ec_x86_dw_kq_build(const int8_t *a, const int8_t *b, const int8_t *c, __m512i *v) {
    const __m512i f = _mm512_set1_epi8((char)0x80), zero = _mm512_setzero_si512();
    const __m512i r0 = _mm512_xor_si512(_mm512_loadu_si512(a), f);
    const __m512i r1 = _mm512_xor_si512(_mm512_loadu_si512(b), f);
    const __m512i r2 = _mm512_xor_si512(_mm512_loadu_si512(c), f);
    const __m512i a0 = _mm512_unpacklo_epi8(r0, r1), a1 = _mm512_unpackhi_epi8(r0, r1);
    const __m512i b0 = _mm512_unpacklo_epi8(r2, zero), b1 = _mm512_unpackhi_epi8(r2, zero);
    v[0] = _mm512_unpacklo_epi16(a0, b0);
    v[1] = _mm512_unpackhi_epi16(a0, b0);
    v[2] = _mm512_unpacklo_epi16(a1, b1);
    v[3] = _mm512_unpackhi_epi16(a1, b1);
}

/* One pixel from the quads of its 3 columns: 3 VPDPBUSD per 16 channels, requantize, store 64. */
EC_X86_DW_INLINE void ec_x86_dw_kq_pixel(int8_t *y, const __m512i *v0, const __m512i *v1,
                                 const __m512i *v2, const ec_x86_dw_kq *k, int FAST) {
    __m512i o[4];
    int g;
    for (g = 0; g < 4; ++g) {
        __m512i acc = _mm512_dpbusd_epi32(k->B[g], v0[g], k->W[0][g]);
        acc = _mm512_dpbusd_epi32(acc, v1[g], k->W[1][g]);
        acc = _mm512_dpbusd_epi32(acc, v2[g], k->W[2][g]);
        o[g] = FAST ? ec_x86_dw_fastz(acc, &k->R[g])
                    : _mm512_add_epi32(ec_x86_dw_mbqmz(acc, &k->R[g]), k->zp);
    }
    {   /* saturating packs put the lanes back in channel order */
        __m512i v = _mm512_packs_epi16(_mm512_packs_epi32(o[0], o[1]),
                                       _mm512_packs_epi32(o[2], o[3]));
        v = _mm512_min_epi8(_mm512_max_epi8(v, k->lo), k->hi);
        _mm512_storeu_si512(y, v);
    }
}

/* One output row of a 64-channel block: each input column's quads are built once and serve
 * every pixel whose window holds the column; a column outside the row reads zrow. */
EC_X86_DW_INLINE void ec_x86_dw3_row_q(const ec_x86_dw3_geom *g, const int8_t *const rp[3],
                               int8_t *yrow, const int8_t *zrow,
                               const ec_x86_dw_kq *k, int c, int FAST) {
    const int C = g->chans, sw = g->stride_w, in_w = g->in_w;
    __m512i q0[4], q1[4], q2[4];
    int ox, have = -1000000, i;  /* the column q2 holds (stride 1 and 2 slide) */
    int8_t *yp = yrow + c;
    for (i = 0; i < 4; ++i)  /* set before use (the first pixel builds all 3); for the compiler */
        q0[i] = q1[i] = q2[i] = _mm512_setzero_si512();
#define EC_X86_DW_Q(col, v)                                                                    \
    do {                                                                                       \
        const int col_ = (col), in_ = col_ >= 0 && col_ < in_w;                                \
        ec_x86_dw_kq_build(in_ ? rp[0] + col_ * C + c : zrow + c,                              \
                       in_ ? rp[1] + col_ * C + c : zrow + c,                                  \
                       in_ ? rp[2] + col_ * C + c : zrow + c, (v));                            \
    } while (0)
    for (ox = 0; ox < g->out_w; ++ox, yp += C) {
        const int j = ox * sw - g->pad_l;  /* the window's first column */
        if (have == j + 1 && sw == 1) {       /* slide by one */
            for (i = 0; i < 4; ++i) q0[i] = q1[i], q1[i] = q2[i];
            EC_X86_DW_Q(j + 2, q2);
        } else if (have == j && sw == 2) {    /* slide by two */
            for (i = 0; i < 4; ++i) q0[i] = q2[i];
            EC_X86_DW_Q(j + 1, q1);
            EC_X86_DW_Q(j + 2, q2);
        } else {
            EC_X86_DW_Q(j, q0);
            EC_X86_DW_Q(j + 1, q1);
            EC_X86_DW_Q(j + 2, q2);
        }
        have = j + 2;
        ec_x86_dw_kq_pixel(yp, q0, q1, q2, k, FAST);
    }
#undef EC_X86_DW_Q
}
#endif

#endif /* __AVX2__ */
#endif /* EDGECC_X86_DEPTHWISE_CONV_2D_3X3_X512_H */
