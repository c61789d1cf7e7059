/* edgecc x86 AVX2 kernels: int8 DEPTHWISE_CONV_2D.
 *
 * ec_avx2_dw: any filter, pixel by pixel. ec_avx2_dw3: 3x3 undilated filters, channel block by
 * channel block and row by row, the input pairs (int16) or quads (u8, AVX-512 VPDPBUSD) of each
 * input column built once for every pixel whose window holds it; 512-bit blocks where EC_X86_512.
 * The compiler (edgecc/ops/_vec_dw.py) prepares the weights (int16 tap pairs; quads in lane
 * order), the bias with the input offset folded in, and the requantization constants
 * (ec_avx2_rq, edgecc_avx2.h). Taps outside the input read a constant row of input_zp bytes.
 * No arena scratch. Only compiled where AVX2 exists. C99, no state, no allocation.
 */
#ifndef EDGECC_AVX2_DW_H
#define EDGECC_AVX2_DW_H
#if defined(__AVX2__)
#include "edgecc_avx2.h"

/* ----------------------------------------------------------------------- DEPTHWISE_CONV_2D */

typedef struct {
    int32_t batches, in_h, in_w, chans, out_h, out_w;
    int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_t, pad_l;
    int32_t pairs;                  /* (k_h * k_w + 1) / 2 tap pairs */
} ec_avx2_dw_geom;

#define EC_AVX2_DW_MAX_TAPS 64

/* Depth multiplier 1, channels a multiple of 8. Weights: for each tap pair t, for each channel
 * c: (w[2t][c], w[2t+1][c]) as int16 (a missing last tap has weight 0). Each output pixel
 * collects its taps' input pointers (zrow, a constant row of input_zp bytes, for a tap outside
 * the input), then runs 16 channels (8 for the last block) over the tap pairs: bytes of two taps
 * interleaved, sign-extended, VPMADDWD against the weight pairs. No arena scratch. */
EC_AVX2_SHARED void ec_avx2_dw(const ec_avx2_dw_geom *g, const int8_t *x, int8_t *y,
                               const int16_t *w, const int32_t *bias, const ec_avx2_rq *q,
                               const int8_t *zrow) {
    const int C = g->chans;
    const int8_t *tp[EC_AVX2_DW_MAX_TAPS + 1];
    ptrdiff_t off[EC_AVX2_DW_MAX_TAPS];  /* tap offsets from the window's first pixel */
    int b, oy, ox;
    ec_vec_dw_offsets(g->k_h, g->k_w, g->dil_h, g->dil_w, g->in_w, C, off);
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + (size_t)b * g->in_h * g->in_w * C;
        for (oy = 0; oy < g->out_h; ++oy) {
            const int iy0 = oy * g->stride_h - g->pad_t;
            for (ox = 0; ox < g->out_w; ++ox) {
                const int ix0 = ox * g->stride_w - g->pad_l;
                int8_t *yp = y + (((size_t)b * g->out_h + oy) * g->out_w + ox) * C;
                int c;
                ec_vec_dw_taps(xb, g->in_h, g->in_w, C, g->k_h, g->k_w, g->dil_h, g->dil_w, iy0,
                               ix0, off, zrow, tp);
                for (c = 0; c + 16 <= C; c += 16) {
                    __m256i a0 = EC_LD256(bias + c), a1 = EC_LD256(bias + c + 8);
                    const int16_t *wp = w + 2 * c;
                    int k;
                    for (k = 0; k < g->pairs; ++k, wp += 2 * C) {
                        const __m128i xa = EC_LD128(tp[2 * k] + c), xb2 = EC_LD128(tp[2 * k + 1] + c);
                        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(
                            _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(xa, xb2)), EC_LD256(wp)));
                        a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(
                            _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(xa, xb2)), EC_LD256(wp + 16)));
                    }
                    ec_avx2_out16(yp + c, a0, a1, q, c, 16);
                }
                if (c < C) {  /* 8 channels left */
                    __m256i a0 = EC_LD256(bias + c);
                    const int16_t *wp = w + 2 * c;
                    int k;
                    for (k = 0; k < g->pairs; ++k, wp += 2 * C) {
                        const __m128i xa = _mm_loadl_epi64((const __m128i *)(const void *)(tp[2 * k] + c));
                        const __m128i xb2 = _mm_loadl_epi64((const __m128i *)(const void *)(tp[2 * k + 1] + c));
                        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(
                            _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(xa, xb2)), EC_LD256(wp)));
                    }
                    ec_avx2_out8(yp + c, a0, q, c, 8);
                }
            }
        }
    }
}

/* ------------------------------------------------- 3x3 DEPTHWISE_CONV_2D, dilation 1 */

/* int16 dot pairs into int32 with wrap-around: VPDPWSSD where VNNI exists (acc + a0*b0 + a1*b1
 * in one instruction, non-saturating), else VPMADDWD + VPADDD. Products of int8 values: a pair
 * never overflows int32, so both give the same sums. */
#if defined(__AVXVNNI__)
#define ec_dw_dot(acc, a, b) _mm256_dpwssd_avx_epi32((acc), (a), (b))
#elif defined(__AVX512VNNI__) && defined(__AVX512VL__)
#define ec_dw_dot(acc, a, b) _mm256_dpwssd_epi32((acc), (a), (b))
#else
#define ec_dw_dot(acc, a, b) _mm256_add_epi32((acc), _mm256_madd_epi16((a), (b)))
#endif

#define EC_DW_INLINE static inline __attribute__((always_inline))

typedef struct {
    int32_t batches, in_h, in_w, chans, out_h, out_w, stride_h, stride_w, pad_t, pad_l;
    int32_t d4;          /* 1 for stride 2 (see ec_dw3_block), else 0 */
    int32_t x_lo, x_hi;  /* interior output columns (ec_dw3_block); both out_w when none */
} ec_avx2_dw3_geom;

/* ec_avx2_fast8 with its per-channel constants loaded once per channel block (the output
 * stores are int8, which may alias anything: constants read through q would be reloaded after
 * every store). The same instructions on the same values, but this kernel's c64 array is in
 * channel order (a block may start at any channel: see ec_dw3_all). */
typedef struct {
    __m256i m, mo, ce, co, e;
    __m128i L;
} ec_dw_rq8;

EC_DW_INLINE ec_dw_rq8 ec_dw_rq8_load(const ec_avx2_rq *q, int c) {
    ec_dw_rq8 r;
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

EC_DW_INLINE __m256i ec_dw_fast8(__m256i acc, const ec_dw_rq8 *r) {
    const __m256i a = _mm256_sll_epi32(acc, r->L);
    const __m256i ev = _mm256_add_epi64(_mm256_mul_epi32(a, r->m), r->ce);
    const __m256i od = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), r->mo), r->co);
    const __m256i t = _mm256_blend_epi32(_mm256_srli_epi64(ev, 32), od, 0xAA);
    return _mm256_srav_epi32(_mm256_add_epi32(t, _mm256_srai_epi32(a, 31)), r->e);
}

/* ---- 256-bit blocks: 8 channels (NH 1) or 16 (NH 2, halves h = channels 8h..8h+7) */

typedef struct {
    __m256i W[5][2], B[2];
    ec_dw_rq8 R[2];
    __m128i lo, hi;  /* the activation clamp */
    const ec_avx2_rq *q;
    int c;
} ec_dw_ky;

EC_DW_INLINE void ec_dw_ky_load(ec_dw_ky *k, const int16_t *w, const int32_t *bias,
                                const ec_avx2_rq *q, int C, int c, int NH, int FAST) {
    int h, i;
    for (h = 0; h < NH; ++h) {
        for (i = 0; i < 5; ++i) k->W[i][h] = EC_LD256(w + 2 * (size_t)i * C + 2 * c + 16 * h);
        k->B[h] = EC_LD256(bias + c + 8 * h);
        if (FAST) k->R[h] = ec_dw_rq8_load(q, c + 8 * h);
    }
    k->lo = _mm_set1_epi8((char)q->act_min);
    k->hi = _mm_set1_epi8((char)q->act_max);
    k->q = q;
    k->c = c;
}

/* The int16 pairs (a[c], b[c]) of the block's channels. */
EC_DW_INLINE void ec_dw_ky_pairs(const int8_t *a, const int8_t *b, __m256i *v, int NH) {
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
EC_DW_INLINE void ec_dw_ky_mac(const ec_dw_ky *k, const __m256i *v0, const __m256i *v1,
                               const __m256i *v2, const __m256i *h0, const __m256i *h1,
                               __m256i *acc, int NH) {
    int h;
    for (h = 0; h < NH; ++h) {
        __m256i s0 = ec_dw_dot(k->B[h], v0[h], k->W[0][h]);
        __m256i s1 = _mm256_madd_epi16(v1[h], k->W[1][h]);
        s0 = ec_dw_dot(s0, v2[h], k->W[2][h]);
        s1 = ec_dw_dot(s1, h0[h], k->W[3][h]);
        s0 = ec_dw_dot(s0, h1[h], k->W[4][h]);
        acc[h] = _mm256_add_epi32(s0, s1);
    }
}

/* Requantize, clamp and store one pixel's block. */
EC_DW_INLINE void ec_dw_ky_store(int8_t *y, const __m256i *acc, const ec_dw_ky *k, int NH,
                                 int FAST) {
    __m256i o0, o1;
    __m128i v;
    if (FAST) {
        o0 = ec_dw_fast8(acc[0], &k->R[0]);
        o1 = NH == 2 ? ec_dw_fast8(acc[1], &k->R[1]) : o0;
    } else {
        o0 = ec_avx2_mbqm8(acc[0], k->q, k->c);
        o1 = NH == 2 ? ec_avx2_mbqm8(acc[1], k->q, k->c + 8) : o0;
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

#if EC_X86_512
/* ---- 512-bit blocks of 32 channels: the input bytes of 32 channels sign-extended to a ZMM
 * each, then VPUNPCKLWD / VPUNPCKHWD pair two of them within 128-bit lanes: "lo" holds channels
 * 8i..8i+3 of each lane i, "hi" channels 8i+4..8i+7 (weights, bias and requantization constants
 * permuted to that order once per block). VPACKSSDW(lo, hi) puts the channels back in order. */

typedef struct {
    __m512i m, mo, ce, co, e, left;
    __m128i L;
} ec_dw_rqz;

typedef struct {
    __m512i W[5][2], B[2];
    ec_dw_rqz R[2];
    __m256i lo, hi;
    __m512i zp;
} ec_dw_kz;

/* the channels (from the block start) of lo's lanes; hi's are these + 4 */
#define EC_DW_Z_LO _mm512_setr_epi32(0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27)

/* The channels (from the block start) of lo's (h 0) or hi's (h 1) lanes: for 32 channels as
 * above; a block of C = 8 or 16 channels holds 32 / C neighbouring pixels (ec_dw3_row_p), and a
 * lane's channel is then that modulo C. */
EC_DW_INLINE __m512i ec_dw_zidx(int h, int C) {
    const __m512i idx = _mm512_add_epi32(EC_DW_Z_LO, _mm512_set1_epi32(4 * h));
    return C >= 32 ? idx : _mm512_and_si512(idx, _mm512_set1_epi32(C - 1));
}

/* int32 of channels c.. (32 of them, or 16 when C < 32: arrays padded) in lane order. */
EC_DW_INLINE __m512i ec_dw_z32(const void *p, int h, int C) {
    const __m512i idx = ec_dw_zidx(h, C);
    if (C < 32) return _mm512_permutexvar_epi32(idx, _mm512_loadu_si512(p));
    return _mm512_permutex2var_epi32(_mm512_loadu_si512(p), idx,
                                     _mm512_loadu_si512((const int32_t *)p + 16));
}

/* c64 (int64, channel order) of channels c.. -> those of lo's (h 0) or hi's (h 1) even lanes
 * (odd 0) or odd lanes (odd 1). */
EC_DW_INLINE __m512i ec_dw_z64(const int64_t *p, int h, int odd, int C) {
    if (C < 32) {  /* 16 channels at most: one two-register permute */
        __m512i idx = ec_dw_zidx(h, C);
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

EC_DW_INLINE void ec_dw_kz_load(ec_dw_kz *k, const int16_t *w, const int32_t *bias,
                                const ec_avx2_rq *q, int C, int c, int FAST) {
    const int B = C >= 32 ? 32 : C;  /* the channels of a block */
    int h, i;
    for (h = 0; h < 2; ++h) {
        for (i = 0; i < 5; ++i)  /* a pair (w_a, w_b) of int16 is one 32-bit element */
            k->W[i][h] = ec_dw_z32(w + 2 * ((size_t)i * C + c), h, B);
        k->B[h] = ec_dw_z32(bias + c, h, B);
        k->R[h].m = ec_dw_z32(q->mult + c, h, B);
        k->R[h].mo = _mm512_srli_epi64(k->R[h].m, 32);
        k->R[h].e = ec_dw_z32(q->right + c, h, B);
        k->R[h].L = _mm_cvtsi32_si128(q->L);
        if (FAST) {
            k->R[h].ce = ec_dw_z64(q->c64 + c, h, 0, B);
            k->R[h].co = ec_dw_z64(q->c64 + c, h, 1, B);
            k->R[h].left = _mm512_setzero_si512();
        } else {
            k->R[h].ce = k->R[h].co = _mm512_setzero_si512();
            k->R[h].left = ec_dw_z32(q->left + c, h, B);
        }
    }
    k->lo = _mm256_set1_epi8((char)q->act_min);
    k->hi = _mm256_set1_epi8((char)q->act_max);
    k->zp = _mm512_set1_epi32(q->out_zp);
}

EC_DW_INLINE void ec_dw_kz_pairs(const int8_t *a, const int8_t *b, __m512i *v, int NH) {
    const __m512i xa = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(const void *)a));
    const __m512i xb = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(const void *)b));
    (void)NH;
    v[0] = _mm512_unpacklo_epi16(xa, xb);
    v[1] = _mm512_unpackhi_epi16(xa, xb);
}

EC_DW_INLINE void ec_dw_kz_mac(const ec_dw_kz *k, const __m512i *v0, const __m512i *v1,
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

/* ec_avx2_fast8 on 16 lanes. */
EC_DW_INLINE __m512i ec_dw_fastz(__m512i acc, const ec_dw_rqz *r) {
    const __m512i a = _mm512_sll_epi32(acc, r->L);
    const __m512i ev = _mm512_add_epi64(_mm512_mul_epi32(a, r->m), r->ce);
    const __m512i od = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(a, 32), r->mo), r->co);
    const __m512i t = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(ev, 32), od);
    return _mm512_srav_epi32(_mm512_add_epi32(t, _mm512_srai_epi32(a, 31)), r->e);
}

/* ec_avx2_mbqm8 (TFLite's two roundings) on 16 lanes, without out_zp. */
EC_DW_INLINE __m512i ec_dw_mbqmz(__m512i acc, const ec_dw_rqz *r) {
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

EC_DW_INLINE void ec_dw_kz_store(int8_t *y, const __m512i *acc, const ec_dw_kz *k, int NH,
                                 int FAST) {
    __m512i o0, o1;
    __m256i v;
    (void)NH;
    if (FAST) {
        o0 = ec_dw_fastz(acc[0], &k->R[0]);
        o1 = ec_dw_fastz(acc[1], &k->R[1]);
    } else {
        o0 = _mm512_add_epi32(ec_dw_mbqmz(acc[0], &k->R[0]), k->zp);
        o1 = _mm512_add_epi32(ec_dw_mbqmz(acc[1], &k->R[1]), k->zp);
    }
    /* saturating int32 -> int16 -> int8, as the 256-bit packs */
    v = _mm512_cvtsepi16_epi8(_mm512_packs_epi32(o0, o1));
    v = _mm256_min_epi8(_mm256_max_epi8(v, k->lo), k->hi);
    _mm256_storeu_si256((__m256i *)(void *)y, v);
}

/* ---- 512-bit blocks of 16 channels in channel order (int16 pairs of 16 channels widened to one
 * ZMM): the kind for 16-channel rests and layers the packed and quad paths do not take. Only
 * W[i][0], B[0], R[0] of an ec_dw_kz are used. */
EC_DW_INLINE void ec_dw_kw_load(ec_dw_kz *k, const int16_t *w, const int32_t *bias,
                                const ec_avx2_rq *q, int C, int c, int FAST) {
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

EC_DW_INLINE void ec_dw_kw_pairs(const int8_t *a, const int8_t *b, __m512i *v, int NH) {
    const __m128i xa = EC_LD128(a), xb = EC_LD128(b);
    (void)NH;
    v[0] = _mm512_cvtepi8_epi16(_mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_unpacklo_epi8(xa, xb)), _mm_unpackhi_epi8(xa, xb), 1));
}

EC_DW_INLINE void ec_dw_kw_mac(const ec_dw_kz *k, const __m512i *v0, const __m512i *v1,
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

EC_DW_INLINE void ec_dw_kw_store(int8_t *y, const __m512i *acc, const ec_dw_kz *k, int NH,
                                 int FAST) {
    const __m512i o = FAST ? ec_dw_fastz(acc[0], &k->R[0])
                           : _mm512_add_epi32(ec_dw_mbqmz(acc[0], &k->R[0]), k->zp);
    /* saturating int32 -> int8 (what the two saturating packs give), then the clamp */
    __m128i v = _mm512_cvtsepi32_epi8(o);
    (void)NH;
    v = _mm_min_epi8(_mm_max_epi8(v, _mm256_castsi256_si128(k->lo)), _mm256_castsi256_si128(k->hi));
    _mm_storeu_si128((__m128i *)(void *)y, v);
}
#endif /* EC_X86_512 */

/* One output row of one channel block. rp: the 3 input rows' first pixel (a row outside the
 * input: zrow, a whole row of input_zp bytes and 64 more; every row steps C bytes a pixel).
 * Weights: 5 pairs P0..P4 = (w0,w3) (w1,w4) (w2,w5) (w6,w7) and (w8,0) when d4 == 1, else (0,w8)
 * (tap t = 3*fy + fx), for each pair [c][2]. With V(j) = pairs of rows 0 and 1 at input column j
 * and H(j) = pairs of row 2 at columns j, j+1, the pixel whose window starts at column j - 1 is
 * V(j-1).P0 + V(j).P1 + V(j+1).P2 + H(j-1).P3 + H(j+d4).P4; along a row each V and H serves
 * several pixels and is built once (stride 1: d4 = 0; stride 2: d4 = 1, H(j+1) is the next
 * pixel's H(j'-1)). A column outside the input reads zrow; interior pixels (x_lo..x_hi-1: the
 * columns j-1..j+1+d4 inside the row) need no check: this does xa..x_hi-1 of them (the packed ZMM
 * rows do the first ones, ec_dw3_row_p). VT: the vector type; K: the block kind (ky: 256-bit, kz:
 * 512-bit) whose _pairs, _mac and _store this uses. */
#define EC_DW3_ROW(NAME, VT, KT, K)                                                            \
EC_DW_INLINE void NAME(const ec_avx2_dw3_geom *g, const int8_t *const rp[3],                   \
                       int8_t *yrow, const int8_t *zrow, const KT *k,                          \
                       int c, int NH, int FAST, int xa) {                                      \
    const int C = g->chans, sw = g->stride_w, in_w = g->in_w, d4 = g->d4;                      \
    int ox, h;                                                                                 \
    for (ox = 0; ox < g->out_w; ++ox) { /* border pixels: every column checked */              \
        const int j = ox * sw - g->pad_l + 1;                                                  \
        const int8_t *p[3][4];                                                                 \
        VT V[3][2], H[2][2], acc[2];                                                           \
        int i, d;                                                                              \
        if (ox == g->x_lo) {                                                                   \
            ox = g->x_hi - 1;                                                                  \
            continue;                                                                          \
        }                                                                                      \
        for (i = 0; i < 3; ++i)                                                                \
            for (d = 0; d < 4; ++d) {                                                          \
                const int col = j - 1 + d;                                                     \
                p[i][d] = (col < 0 || col >= in_w) ? zrow + c : rp[i] + col * C + c;       \
            }                                                                                  \
        for (d = 0; d < 3; ++d) K##_pairs(p[0][d], p[1][d], V[d], NH);                         \
        K##_pairs(p[2][0], p[2][1], H[0], NH);                                                 \
        K##_pairs(p[2][1 + d4], p[2][2 + d4], H[1], NH);                                       \
        K##_mac(k, V[0], V[1], V[2], H[0], H[1], acc, NH);                                     \
        K##_store(yrow + (size_t)ox * C + c, acc, k, NH, FAST);                                \
    }                                                                                          \
    if (xa < g->x_hi) { /* interior pixels xa..: pointers at each row's column j - 1 */         \
        const int j0 = xa * sw - g->pad_l;                                                     \
        const int8_t *p0 = rp[0] + j0 * C + c, *p1 = rp[1] + j0 * C + c;                         \
        const int8_t *p2 = rp[2] + j0 * C + c;                                                 \
        const ptrdiff_t c0 = C, c1 = C, c2 = C; /* every row (zrow too) steps C */          \
        int8_t *yp = yrow + (size_t)xa * C + c;                                                \
        const int n = g->x_hi - xa;                                                            \
        VT Vm[2], V0[2], Vp[2], Hm[2], Hp[2], acc[2];                                          \
        if (sw == 1) {                                                                         \
            K##_pairs(p0, p1, Vm, NH);                                                         \
            K##_pairs(p0 + c0, p1 + c1, V0, NH);                                               \
            K##_pairs(p2, p2 + c2, Hm, NH);                                                    \
            for (ox = 0; ox < n; ++ox) {                                                       \
                K##_pairs(p0 + 2 * c0, p1 + 2 * c1, Vp, NH);                                   \
                K##_pairs(p2 + c2, p2 + 2 * c2, Hp, NH);                                       \
                K##_mac(k, Vm, V0, Vp, Hm, Hp, acc, NH);                                       \
                K##_store(yp, acc, k, NH, FAST);                                               \
                for (h = 0; h < NH; ++h) Vm[h] = V0[h], V0[h] = Vp[h], Hm[h] = Hp[h];          \
                p0 += c0, p1 += c1, p2 += c2, yp += C;                                         \
            }                                                                                  \
        } else if (d4) { /* stride 2 */                                                        \
            K##_pairs(p0, p1, Vm, NH);                                                         \
            K##_pairs(p2, p2 + c2, Hm, NH);                                                    \
            for (ox = 0; ox < n; ++ox) {                                                       \
                K##_pairs(p0 + c0, p1 + c1, V0, NH);                                           \
                K##_pairs(p0 + 2 * c0, p1 + 2 * c1, Vp, NH);                                   \
                K##_pairs(p2 + 2 * c2, p2 + 3 * c2, Hp, NH);                                   \
                K##_mac(k, Vm, V0, Vp, Hm, Hp, acc, NH);                                       \
                K##_store(yp, acc, k, NH, FAST);                                               \
                for (h = 0; h < NH; ++h) Vm[h] = Vp[h], Hm[h] = Hp[h];                         \
                p0 += 2 * c0, p1 += 2 * c1, p2 += 2 * c2, yp += C;                             \
            }                                                                                  \
        } else {                                                                               \
            for (ox = 0; ox < n; ++ox) {                                                       \
                K##_pairs(p0, p1, Vm, NH);                                                     \
                K##_pairs(p0 + c0, p1 + c1, V0, NH);                                           \
                K##_pairs(p0 + 2 * c0, p1 + 2 * c1, Vp, NH);                                   \
                K##_pairs(p2, p2 + c2, Hm, NH);                                                \
                K##_pairs(p2 + c2, p2 + 2 * c2, Hp, NH);                                       \
                K##_mac(k, Vm, V0, Vp, Hm, Hp, acc, NH);                                       \
                K##_store(yp, acc, k, NH, FAST);                                               \
                p0 += sw * c0, p1 += sw * c1, p2 += sw * c2, yp += C;                          \
            }                                                                                  \
        }                                                                                      \
    }                                                                                          \
}

EC_DW3_ROW(ec_dw3_row_y, __m256i, ec_dw_ky, ec_dw_ky)
#if EC_X86_512
EC_DW3_ROW(ec_dw3_row_z, __m512i, ec_dw_kz, ec_dw_kz)
EC_DW3_ROW(ec_dw3_row_w, __m512i, ec_dw_kz, ec_dw_kw)
#endif

/* The 64-channel ZMM blocks' constants (edgecc/ops/_vec_dw.py _lower_dw3), for each block of 64
 * channels in "quad lane order": accumulator g (0..3) lane i (0..15) is channel
 * 16 * (i / 4) + 4 * g + i % 4 of the block (the order VPUNPCK{L,H}BW then VPUNPCK{L,H}WD of
 * three 64-byte rows produce). Unused (a single zero) below 64 channels or without EC_X86_512. */
typedef struct {
    const int8_t *w;      /* [block][column d][64 lanes][4]: (w[0][d], w[1][d], w[2][d], 0) */
    const int32_t *bias;  /* bias - (input_zp + 128) * sum(w): the dot products run on x ^ 0x80 */
    const int32_t *mult, *left, *right;  /* as ec_avx2_rq, in lane order (left: exact path) */
    const int64_t *c64;   /* fast path: [block][g][8 even lanes, 8 odd lanes] */
} ec_avx2_dw3_q;

#if EC_X86_512
typedef struct {
    __m512i W[3][4], B[4];
    ec_dw_rqz R[4];
    __m512i lo, hi, zp;
} ec_dw_kq;

EC_DW_INLINE void ec_dw_kq_load(ec_dw_kq *k, const ec_avx2_dw3_q *z, const ec_avx2_rq *q, int c,
                                int FAST) {
    const int b = c / 64;
    int g, d;
    for (g = 0; g < 4; ++g) {
        for (d = 0; d < 3; ++d)
            k->W[d][g] = _mm512_loadu_si512(z->w + ((size_t)(3 * b + d) * 64 + 16 * g) * 4);
        k->B[g] = _mm512_loadu_si512(z->bias + c + 16 * g);
        k->R[g].m = _mm512_loadu_si512(z->mult + c + 16 * g);
        k->R[g].mo = _mm512_srli_epi64(k->R[g].m, 32);
        k->R[g].e = _mm512_loadu_si512(z->right + c + 16 * g);
        k->R[g].L = _mm_cvtsi32_si128(q->L);
        if (FAST) {
            k->R[g].ce = _mm512_loadu_si512(z->c64 + (size_t)(4 * b + g) * 16);
            k->R[g].co = _mm512_loadu_si512(z->c64 + (size_t)(4 * b + g) * 16 + 8);
            k->R[g].left = _mm512_setzero_si512();
        } else {
            k->R[g].ce = k->R[g].co = _mm512_setzero_si512();
            k->R[g].left = _mm512_loadu_si512(z->left + c + 16 * g);
        }
    }
    k->lo = _mm512_set1_epi8((char)q->act_min);
    k->hi = _mm512_set1_epi8((char)q->act_max);
    k->zp = _mm512_set1_epi32(q->out_zp);
}

/* The quads (u0, u1, u2, 0) of input column pointers a, b, c (rows 0, 1, 2), u = x ^ 0x80. */
EC_DW_INLINE void ec_dw_kq_build(const int8_t *a, const int8_t *b, const int8_t *c, __m512i *v) {
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
EC_DW_INLINE void ec_dw_kq_pixel(int8_t *y, const __m512i *v0, const __m512i *v1,
                                 const __m512i *v2, const ec_dw_kq *k, int FAST) {
    __m512i o[4];
    int g;
    for (g = 0; g < 4; ++g) {
        __m512i acc = _mm512_dpbusd_epi32(k->B[g], v0[g], k->W[0][g]);
        acc = _mm512_dpbusd_epi32(acc, v1[g], k->W[1][g]);
        acc = _mm512_dpbusd_epi32(acc, v2[g], k->W[2][g]);
        o[g] = FAST ? ec_dw_fastz(acc, &k->R[g])
                    : _mm512_add_epi32(ec_dw_mbqmz(acc, &k->R[g]), k->zp);
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
EC_DW_INLINE void ec_dw3_row_q(const ec_avx2_dw3_geom *g, const int8_t *const rp[3],
                               int8_t *yrow, const int8_t *zrow,
                               const ec_dw_kq *k, int c, int FAST) {
    const int C = g->chans, sw = g->stride_w, in_w = g->in_w;
    __m512i q0[4], q1[4], q2[4];
    int ox, have = -1000000, i;  /* the column q2 holds (stride 1 and 2 slide) */
    int8_t *yp = yrow + c;
    for (i = 0; i < 4; ++i)  /* set before use (the first pixel builds all 3); for the compiler */
        q0[i] = q1[i] = q2[i] = _mm512_setzero_si512();
#define EC_DW_Q(col, v)                                                                        \
    do {                                                                                       \
        const int col_ = (col), in_ = col_ >= 0 && col_ < in_w;                                \
        ec_dw_kq_build(in_ ? rp[0] + col_ * C + c : zrow + c,                              \
                       in_ ? rp[1] + col_ * C + c : zrow + c,                              \
                       in_ ? rp[2] + col_ * C + c : zrow + c, (v));                        \
    } while (0)
    for (ox = 0; ox < g->out_w; ++ox, yp += C) {
        const int j = ox * sw - g->pad_l;  /* the window's first column */
        if (have == j + 1 && sw == 1) {       /* slide by one */
            for (i = 0; i < 4; ++i) q0[i] = q1[i], q1[i] = q2[i];
            EC_DW_Q(j + 2, q2);
        } else if (have == j && sw == 2) {    /* slide by two */
            for (i = 0; i < 4; ++i) q0[i] = q2[i];
            EC_DW_Q(j + 1, q1);
            EC_DW_Q(j + 2, q2);
        } else {
            EC_DW_Q(j, q0);
            EC_DW_Q(j + 1, q1);
            EC_DW_Q(j + 2, q2);
        }
        have = j + 2;
        ec_dw_kq_pixel(yp, q0, q1, q2, k, FAST);
    }
#undef EC_DW_Q
}
#endif

#if EC_X86_512
/* Stride 1 with C = 8 or 16 channels: 32 input bytes are 32 / C neighbouring pixels, so a ZMM
 * pair (lo/hi) holds P = 32 / C output pixels x C channels. Interior pixels x_lo.. in groups of
 * P (the return value: the first pixel left to ec_dw3_row_y); each group reads the 32 bytes at
 * columns j-1, j, j+1 of rows 0 and 1 (V0..V2) and j-1, j, j+1 of row 2 (H0 = (j-1, j),
 * H1 = (j, j+1), P4 = (0, w8)), all inside the row. */
EC_DW_INLINE int ec_dw3_row_p(const ec_avx2_dw3_geom *g, const int8_t *const rp[3],
                              int8_t *yrow, const ec_dw_kz *k, int FAST,
                              int C) {
    const int P = 32 / C, j0 = g->x_lo - g->pad_l;
    const int n = (g->x_hi - g->x_lo) / P;
    const ptrdiff_t c0 = C, c1 = C, c2 = C;  /* every row (zrow too) steps C */
    const int8_t *p0 = rp[0] + j0 * c0, *p1 = rp[1] + j0 * c1, *p2 = rp[2] + j0 * c2;
    int8_t *yp = yrow + (size_t)g->x_lo * C;
    int i;
    if (g->x_lo >= g->x_hi) return g->x_hi;
    for (i = 0; i < n; ++i) {
#define EC_DW_W(p) _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(const void *)(p)))
        const __m512i a0 = EC_DW_W(p0), a1 = EC_DW_W(p0 + c0), a2 = EC_DW_W(p0 + 2 * c0);
        const __m512i b0 = EC_DW_W(p1), b1 = EC_DW_W(p1 + c1), b2 = EC_DW_W(p1 + 2 * c1);
        const __m512i d0 = EC_DW_W(p2), d1 = EC_DW_W(p2 + c2), d2 = EC_DW_W(p2 + 2 * c2);
#undef EC_DW_W
        __m512i v0[2], v1[2], v2[2], h0[2], h1[2], acc[2];
        v0[0] = _mm512_unpacklo_epi16(a0, b0), v0[1] = _mm512_unpackhi_epi16(a0, b0);
        v1[0] = _mm512_unpacklo_epi16(a1, b1), v1[1] = _mm512_unpackhi_epi16(a1, b1);
        v2[0] = _mm512_unpacklo_epi16(a2, b2), v2[1] = _mm512_unpackhi_epi16(a2, b2);
        h0[0] = _mm512_unpacklo_epi16(d0, d1), h0[1] = _mm512_unpackhi_epi16(d0, d1);
        h1[0] = _mm512_unpacklo_epi16(d1, d2), h1[1] = _mm512_unpackhi_epi16(d1, d2);
        ec_dw_kz_mac(k, v0, v1, v2, h0, h1, acc, 2);
        ec_dw_kz_store(yp, acc, k, 2, FAST);
        p0 += P * c0, p1 += P * c1, p2 += P * c2, yp += 32;
    }
    return g->x_lo + n * P;
}
#endif

/* Every row of every batch for the block of channels c.. of a kind (NH 1: 8 channels, 2: 16, 3:
 * 32 on ZMM, 4 / 6: the whole layer of 8 / 16 channels, stride 1, pixels packed on ZMM, 5: 64 on
 * ZMM as VPDPBUSD quads, 7: 16 on one ZMM): the block's constants are loaded once. NH is a
 * constant in every inlined copy, and so are the loops and arrays it sizes. */
EC_DW_INLINE void ec_dw3_block(const ec_avx2_dw3_geom *g, const int8_t *x, int8_t *y,
                               const int16_t *w, const int32_t *bias, const ec_avx2_rq *q,
                               const ec_avx2_dw3_q *z, const int8_t *zrow, int c, int NH,
                               int FAST) {
    const int C = g->chans;
    const size_t row = (size_t)g->in_w * C;
    int b, oy, i;
#if EC_X86_512
    ec_dw_kz kz;
    ec_dw_kq kk;
    if (NH == 3 || NH == 4 || NH == 6) ec_dw_kz_load(&kz, w, bias, q, C, c, FAST);
    if (NH == 5) ec_dw_kq_load(&kk, z, q, c, FAST);
    if (NH == 7) ec_dw_kw_load(&kz, w, bias, q, C, c, FAST);
#else
    (void)z;
#endif
    ec_dw_ky ky;
    if (NH < 3 || NH == 4 || NH == 6)
        ec_dw_ky_load(&ky, w, bias, q, C, c, NH == 4 ? 1 : NH == 6 ? 2 : NH, FAST);
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + (size_t)b * g->in_h * row;
        for (oy = 0; oy < g->out_h; ++oy) {
            const int8_t *rp[3];
            int8_t *yrow = y + ((size_t)b * g->out_h + oy) * g->out_w * C;
            int xa = g->x_lo;
            for (i = 0; i < 3; ++i) {
                const int iy = oy * g->stride_h - g->pad_t + i;
                const int in = iy >= 0 && iy < g->in_h;
                rp[i] = in ? xb + (size_t)iy * row : zrow;
            }
#if EC_X86_512
            if (NH == 5) {
                ec_dw3_row_q(g, rp, yrow, zrow, &kk, c, FAST);
                continue;
            }
            if (NH == 3) {
                ec_dw3_row_z(g, rp, yrow, zrow, &kz, c, 2, FAST, g->x_lo);
                continue;
            }
            if (NH == 7) {
                ec_dw3_row_w(g, rp, yrow, zrow, &kz, c, 1, FAST, g->x_lo);
                continue;
            }
            if (NH == 4 || NH == 6) {
                xa = ec_dw3_row_p(g, rp, yrow, &kz, FAST, NH == 4 ? 8 : 16);
                ec_dw3_row_y(g, rp, yrow, zrow, &ky, 0, NH == 4 ? 1 : 2, FAST, xa);
                continue;
            }
#endif
            ec_dw3_row_y(g, rp, yrow, zrow, &ky, c, NH, FAST, xa);
        }
    }
}

/* Each kind of block (NH) and requantization path (FAST) as its own function: one function
 * holding them all would share one register allocation, and spill. Not specialised per call
 * site by GCC (noipa): a clone for a layer that never runs a kind would be warned about for
 * reads past that layer's (dummy) arrays. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#define EC_DW3_NOIPA __attribute__((noipa))
#else
#define EC_DW3_NOIPA
#endif
#define EC_DW3_BLK(NH, FAST)                                                                   \
    static __attribute__((noinline, unused)) EC_DW3_NOIPA void ec_dw3_blk_##NH##_##FAST(       \
        const ec_avx2_dw3_geom *g, const int8_t *x, int8_t *y, const int16_t *w,               \
        const int32_t *bias, const ec_avx2_rq *q, const ec_avx2_dw3_q *z, const int8_t *zrow,  \
        int c) {                                                                               \
        const ec_avx2_dw3_geom gl = *g; /* not reloaded after each int8 store */               \
        ec_dw3_block(&gl, x, y, w, bias, q, z, zrow, c, NH, FAST);                             \
    }
EC_DW3_BLK(1, 0)
EC_DW3_BLK(1, 1)
EC_DW3_BLK(2, 0)
EC_DW3_BLK(2, 1)
#if EC_X86_512
EC_DW3_BLK(3, 0)
EC_DW3_BLK(3, 1)
EC_DW3_BLK(4, 0)
EC_DW3_BLK(4, 1)
EC_DW3_BLK(5, 0)
EC_DW3_BLK(5, 1)
EC_DW3_BLK(6, 0)
EC_DW3_BLK(6, 1)
EC_DW3_BLK(7, 0)
EC_DW3_BLK(7, 1)
#endif
#undef EC_DW3_BLK

EC_DW_INLINE void ec_dw3_all(const ec_avx2_dw3_geom *g, const int8_t *x, int8_t *y,
                             const int16_t *w, const int32_t *bias, const ec_avx2_rq *q,
                             const ec_avx2_dw3_q *z, const int8_t *zrow, int FAST) {
    const int C = g->chans;
    int c = 0;
#define EC_DW3_B(NH, c0)                                                                       \
    do {                                                                                       \
        if (FAST) ec_dw3_blk_##NH##_1(g, x, y, w, bias, q, z, zrow, (c0));                     \
        else ec_dw3_blk_##NH##_0(g, x, y, w, bias, q, z, zrow, (c0));                          \
    } while (0)
#if EC_X86_512
    for (; c + 64 <= C; c += 64) EC_DW3_B(5, c);
    if (c == C) return;
    if ((C == 8 || C == 16) && g->stride_w == 1) {
        if (C == 8) EC_DW3_B(4, 0);
        else EC_DW3_B(6, 0);
        return;
    }
    for (; c + 32 <= C; c += 32) EC_DW3_B(3, c);
    if (C - c > 16 && C >= 32) {  /* overlapping last block (see below) */
        EC_DW3_B(3, C - 32);
        return;
    }
    for (; c + 16 <= C; c += 16) EC_DW3_B(7, c);
    if (c < C && C - c > 8 && C >= 16) {
        EC_DW3_B(7, C - 16);
        return;
    }
#endif
    for (; c + 16 <= C; c += 16) EC_DW3_B(2, c);
    /* the last channels: a block ending at channel C - 1 (overlapping channels are computed
     * and stored twice, the same values): no read or write past a pixel */
    if (c < C && C - c > 8 && C >= 16) {
        EC_DW3_B(2, C - 16);
    } else if (c < C) {
        if (C - c > 8) EC_DW3_B(1, c);
        EC_DW3_B(1, C - 8);
    }
#undef EC_DW3_B
}

/* 3x3 depthwise, dilation 1, depth multiplier 1, at least 8 channels, any stride (1 and 2 share
 * input pairs between neighbouring pixels). Channel block by channel block (64 channels as
 * VPDPBUSD quads then 32 on ZMM, 16 or 8 on YMM), row by row: weights, bias and requantization
 * constants stay in registers; border pixels check their columns, interior ones do not. No arena
 * scratch. */
EC_AVX2_SHARED void ec_avx2_dw3(const ec_avx2_dw3_geom *g, const int8_t *x, int8_t *y,
                                const int16_t *w, const int32_t *bias, const ec_avx2_rq *q,
                                const ec_avx2_dw3_q *z, const int8_t *zrow) {
    /* a local copy: the int8 output stores may alias anything, *g would be reloaded after each */
    const ec_avx2_dw3_geom gl = *g;
    if (q->fast) ec_dw3_all(&gl, x, y, w, bias, q, z, zrow, 1);
    else ec_dw3_all(&gl, x, y, w, bias, q, z, zrow, 0);
}

#endif /* __AVX2__ */
#endif /* EDGECC_AVX2_DW_H */
