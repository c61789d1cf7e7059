/* edgecc x86 kernel for int8 CONV_2D layers with few input channels (in_c <= 4, typically a
 * model's first layer): ec_avx2_conv_first.
 *
 * With 1 to 4 input channels a pixel's taps come in short runs (9 bytes a filter row for 3x3x3,
 * 4 for 10x4x1), which ec_avx2_conv would pad to 4 bytes each and gather at every border
 * pixel. This kernel instead builds, per output row, every pixel's whole patch (k_h * k_w * in_c
 * taps, padded to kpp, a multiple of 4) as contiguous bytes in a stack buffer ("im2col"), and
 * then runs a dense product over it:
 *   1. the k_h input rows of the output row are copied, zero-point padded left and right (and
 *      all zero point for rows outside the image), into stack rows; with VNNI the bytes are
 *      flipped to u8 = x ^ 0x80 here, once, rather than at every broadcast;
 *   2. each pixel's patch is copied from those rows, one run per filter row (16-byte moves that
 *      may overlap the next run, which is written after), or one tap per move with dilation;
 *   3. blocks of 16 output channels (a last block of 8 when out_c % 16 <= 8) against pixels of
 *      the row, the patch's 4-byte groups broadcast against the weights' quads.
 * The weights (edgecc/ops/_vec_first.py) come per block of 16 channels as [kpp/4][16][4] bytes
 * (the block of 8: [kpp/4][8][4]) for VPDPBUSD, and as int16 [kpp/2][16][2] ([kpp/2][8][2])
 * for the plain AVX2 path, whose VPMADDWD then sums each channel's tap pair straight into its
 * own int32 lane (the patch is widened to int16 once per row). Taps past k_h * k_w * in_c meet
 * zero weights. Biases and the requantization are the ones of ec_avx2_conv (bias_u for
 * u8 activations, bias_x for x itself; ec_avx2_rq), so every path sums the same products in
 * int32 and agrees bit for bit with TFLite Micro.
 *
 * Register widths: EC_X86_512 builds run 16 channels x 4 pixels in ZMM (and the block of 8 as
 * 8 pixels in YMM) and requantize 16 lanes at a time with the ZMM form of ec_avx2_fast8 (the
 * same operations lane for lane; the exact path goes through ec_avx2_requant8), packing 64
 * output bytes per step. 256-bit VNNI and plain AVX2 builds run 4 pixels x 16 (or 8) channels
 * in YMM and store through ec_avx2_out16 / ec_avx2_out8.
 *
 * No arena scratch: the rows (at most EC_FIRST_MAX_ROWS bytes) and one output row's patches
 * (EC_FIRST_MAX_COL bytes; twice that as int16 without VNNI) live on the stack; the compiler
 * only takes this kernel when they fit. C99 + intrinsics, no state, no allocation.
 */
#ifndef EDGECC_AVX2_FIRST_H
#define EDGECC_AVX2_FIRST_H
#if defined(__AVX2__)
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <immintrin.h>
#include "edgecc_avx2.h"

#define EC_FIRST_MAX_COL 6144   /* out_w * kpp: one output row's patches */
#define EC_FIRST_MAX_ROWS 4096  /* k_h * row_b: the padded input rows of one output row */

/* A layer's geometry, all of it computed by the compiler. */
typedef struct {
    int32_t batches, in_h, in_w, in_c, out_h, out_w, out_c;
    int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_t, pad_l;
    int32_t seg;       /* bytes of one filter row's run (k_w * in_c; dil_w > 1: in_c per tap) */
    int32_t kpp;       /* a pixel's patch: k_h * k_w * in_c taps padded to a multiple of 4 */
    int32_t nb16;      /* blocks of 16 output channels */
    int32_t tail8;     /* 1: then one block of 8 channels */
    int32_t row_cols;  /* columns of a padded input row that the output row reads */
    int32_t row_b;     /* bytes a padded row takes on the stack (row_cols * in_c + slack) */
    int32_t in_zp;
} ec_first_geom;

#if EC_AVX2_VNNI
#define EC_FIRST_FLIP 0x80  /* VPDPBUSD reads u8 = x + 128 */
#else
#define EC_FIRST_FLIP 0
#endif

/* The k_h input rows of output row oy (batch image xb), zero-point padded, flipped for VNNI. */
static inline void ec_first_rows(const ec_first_geom *g, const int8_t *xb, int oy, int8_t *rows) {
    const int ic = g->in_c, zp = (int8_t)(g->in_zp ^ EC_FIRST_FLIP);
    const int left = g->pad_l * ic;
    const int real = (g->row_cols - g->pad_l < g->in_w ? g->row_cols - g->pad_l : g->in_w) * ic;
    int fy, i;
    for (fy = 0; fy < g->k_h; ++fy) {
        const int iy = oy * g->stride_h - g->pad_t + fy * g->dil_h;
        int8_t *d = rows + fy * g->row_b;
        if (iy < 0 || iy >= g->in_h) {
            ec_vec_fill(d, zp, g->row_b);
            continue;
        }
        {
            const int8_t *s = xb + (size_t)iy * g->in_w * ic;
            ec_vec_fill(d, zp, left);
            for (i = 0; i < real; ++i) d[left + i] = (int8_t)(s[i] ^ EC_FIRST_FLIP);
            ec_vec_fill(d + left + real, zp, g->row_b - left - real);
        }
    }
}

/* Every pixel's patch of the output row, kpp bytes apart. Runs are moved 16 bytes at a time: a
 * move may write past its run (into the next run or pixel, written after it, or the buffer's
 * slack) and read past it (into the row's slack); bytes past a patch's taps meet zero weights. */
static inline void ec_first_patches(const ec_first_geom *g, const int8_t *rows, int8_t *col) {
    const int ic = g->in_c, step = g->stride_w * ic, seg = g->seg, kpp = g->kpp;
    int ox, fy, fx, o;
    if (g->dil_w == 1) {
        for (ox = 0; ox < g->out_w; ++ox) {
            int8_t *d = col + (size_t)ox * kpp;
            const int8_t *s = rows + (size_t)ox * step;
            for (fy = 0; fy < g->k_h; ++fy)
                for (o = 0; o < seg; o += 16)
                    _mm_storeu_si128((__m128i *)(void *)(d + fy * seg + o),
                                     EC_LD128(s + fy * g->row_b + o));
        }
    } else {
        for (ox = 0; ox < g->out_w; ++ox) {
            int8_t *d = col + (size_t)ox * kpp;
            const int8_t *s = rows + (size_t)ox * step;
            for (fy = 0; fy < g->k_h; ++fy)
                for (fx = 0; fx < g->k_w; ++fx) {
                    int32_t v = ec_avx2_ld32(s + fy * g->row_b + fx * g->dil_w * ic);
                    memcpy(d + (fy * g->k_w + fx) * ic, &v, 4);
                }
        }
    }
}

#if EC_X86_512
/* ZMM requantization constants of 16 lanes, loaded once per block of channels. */
typedef struct {
    __m512i m, mo, ce, co, e;
} ec_first_rqz;

/* Lanes = channels c..c+15. */
static inline ec_first_rqz ec_first_rqz16(const ec_avx2_rq *q, int c) {
    ec_first_rqz r;
    r.m = _mm512_loadu_si512((const void *)(q->mult + c));
    r.mo = _mm512_srli_epi64(r.m, 32);
    r.e = _mm512_loadu_si512((const void *)(q->right + c));
    if (q->fast) {
        /* ec_avx2_rq's c64 holds per block of 8 the 4 even channels' constants, then the odd */
        r.ce = _mm512_inserti64x4(_mm512_castsi256_si512(EC_LD256(q->c64 + c)),
                                  EC_LD256(q->c64 + c + 8), 1);
        r.co = _mm512_inserti64x4(_mm512_castsi256_si512(EC_LD256(q->c64 + c + 4)),
                                  EC_LD256(q->c64 + c + 12), 1);
    } else {
        r.ce = r.co = _mm512_setzero_si512();
    }
    return r;
}

/* Lanes = channels c..c+7 of two pixels. */
static inline ec_first_rqz ec_first_rqz8x2(const ec_avx2_rq *q, int c) {
    ec_first_rqz r;
    r.m = _mm512_broadcast_i64x4(EC_LD256(q->mult + c));
    r.mo = _mm512_srli_epi64(r.m, 32);
    r.e = _mm512_broadcast_i64x4(EC_LD256(q->right + c));
    if (q->fast) {
        r.ce = _mm512_broadcast_i64x4(EC_LD256(q->c64 + c));
        r.co = _mm512_broadcast_i64x4(EC_LD256(q->c64 + c + 4));
    } else {
        r.ce = r.co = _mm512_setzero_si512();
    }
    return r;
}

/* 16 accumulators -> int32 outputs (out_zp added, not clamped): ec_avx2_fast8's operations on
 * 16 lanes when the fast path was proven, else ec_avx2_requant8 on each half (channels c_lo..,
 * c_hi..). */
static inline __m512i ec_first_rq512(__m512i acc, const ec_avx2_rq *q, const ec_first_rqz *k,
                                     int c_lo, int c_hi) {
    if (q->fast) {
        const __m512i a = _mm512_sll_epi32(acc, _mm_cvtsi32_si128(q->L));
        const __m512i ev = _mm512_add_epi64(_mm512_mul_epi32(a, k->m), k->ce);
        const __m512i od = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(a, 32), k->mo),
                                            k->co);
        const __m512i t = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(ev, 32), od);
        return _mm512_srav_epi32(_mm512_add_epi32(t, _mm512_srai_epi32(a, 31)), k->e);
    } else {
        const __m256i lo = ec_avx2_requant8(_mm512_castsi512_si256(acc), q, c_lo);
        const __m256i hi = ec_avx2_requant8(_mm512_extracti64x4_epi64(acc, 1), q, c_hi);
        return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
    }
}

/* Four vectors of 16 int32 outputs (each 16 consecutive output bytes: one pixel's 16 channels,
 * or two pixels' 8) -> their 64 bytes in order, saturated and clamped. */
static inline __m512i ec_first_pack4(__m512i r0, __m512i r1, __m512i r2, __m512i r3,
                                     const ec_avx2_rq *q) {
    /* the packs work within 128-bit lanes: dword 4i+v of b holds lane i of r_v */
    const __m512i b = _mm512_packs_epi16(_mm512_packs_epi32(r0, r1), _mm512_packs_epi32(r2, r3));
    const __m512i v = _mm512_permutexvar_epi32(
        _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), b);
    return _mm512_min_epi8(_mm512_max_epi8(v, _mm512_set1_epi8((char)q->act_min)),
                           _mm512_set1_epi8((char)q->act_max));
}

/* Store np pixels of bw (8 or 16) packed output bytes each: n channels of each (n <= bw) at y,
 * out_c apart. */
static inline void ec_first_store512(int8_t *y, __m512i v, int np, int bw, int out_c, int n) {
    if (out_c == bw) {
        const int nb = np * bw;
        _mm512_mask_storeu_epi8(y, nb >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << nb) - 1), v);
    } else {
        int8_t t[64];
        int p;
        _mm512_storeu_si512((void *)t, v);
        if (n == 16) {
            for (p = 0; p < np; ++p)
                _mm_storeu_si128((__m128i *)(void *)(y + (size_t)p * out_c), EC_LD128(t + 16 * p));
        } else {
            for (p = 0; p < np; ++p) memcpy(y + (size_t)p * out_c, t + p * bw, (size_t)n);
        }
    }
}
#endif

/* One output row (patches in col, or col16 without VNNI) of every channel block, to yr. */
static inline void ec_first_row_dot(const ec_first_geom *g, const int8_t *col,
                                    const int16_t *col16, int8_t *yr, const int8_t *wq,
                                    const int16_t *w16, const int32_t *bias_u,
                                    const int32_t *bias_x, const ec_avx2_rq *q) {
    const int kpp = g->kpp, ow = g->out_w, oc = g->out_c;
    int cb, ox, k;
#if EC_AVX2_VNNI
    const int kq = kpp / 4;
    (void)col16;
    (void)w16;
    (void)bias_x;
    for (cb = 0; cb < g->nb16; ++cb) {
        const int c = 16 * cb, n = oc - c < 16 ? oc - c : 16;
        const int8_t *wb = wq + (size_t)c * kpp;
#if EC_X86_512
        const ec_first_rqz rz = ec_first_rqz16(q, c);
        const __m512i b = _mm512_loadu_si512((const void *)(bias_u + c));
        for (ox = 0; ox < ow; ox += 4) {
            const int np = ow - ox < 4 ? ow - ox : 4;
            const int8_t *p0 = col + (size_t)ox * kpp;
            const int8_t *p1 = p0 + (np > 1 ? kpp : 0);
            const int8_t *p2 = p0 + (np > 2 ? 2 * kpp : 0);
            const int8_t *p3 = p0 + (np > 3 ? 3 * kpp : 0);
            __m512i a0 = b, a1 = b, a2 = b, a3 = b;
            for (k = 0; k < kq; ++k) {
                const __m512i w = _mm512_loadu_si512((const void *)(wb + 64 * k));
                a0 = _mm512_dpbusd_epi32(a0, _mm512_set1_epi32(ec_avx2_ld32(p0 + 4 * k)), w);
                a1 = _mm512_dpbusd_epi32(a1, _mm512_set1_epi32(ec_avx2_ld32(p1 + 4 * k)), w);
                a2 = _mm512_dpbusd_epi32(a2, _mm512_set1_epi32(ec_avx2_ld32(p2 + 4 * k)), w);
                a3 = _mm512_dpbusd_epi32(a3, _mm512_set1_epi32(ec_avx2_ld32(p3 + 4 * k)), w);
            }
            ec_first_store512(yr + (size_t)ox * oc + c,
                              ec_first_pack4(ec_first_rq512(a0, q, &rz, c, c + 8),
                                             ec_first_rq512(a1, q, &rz, c, c + 8),
                                             ec_first_rq512(a2, q, &rz, c, c + 8),
                                             ec_first_rq512(a3, q, &rz, c, c + 8), q),
                              np, 16, oc, n);
        }
#else
        const __m256i bl = EC_LD256(bias_u + c), bh = EC_LD256(bias_u + c + 8);
        for (ox = 0; ox < ow; ox += 4) {
            const int np = ow - ox < 4 ? ow - ox : 4;
            const int8_t *p0 = col + (size_t)ox * kpp;
            const int8_t *p1 = p0 + (np > 1 ? kpp : 0);
            const int8_t *p2 = p0 + (np > 2 ? 2 * kpp : 0);
            const int8_t *p3 = p0 + (np > 3 ? 3 * kpp : 0);
            __m256i l0 = bl, h0 = bh, l1 = bl, h1 = bh, l2 = bl, h2 = bh, l3 = bl, h3 = bh;
            int8_t *yp = yr + (size_t)ox * oc + c;
            for (k = 0; k < kq; ++k) {
                __m256i wl = EC_LD256(wb + 64 * k), wh = EC_LD256(wb + 64 * k + 32), u;
                EC_AVX2_IN_REG(wl);
                EC_AVX2_IN_REG(wh);
                u = _mm256_set1_epi32(ec_avx2_ld32(p0 + 4 * k));
                l0 = ec_dpbusd(l0, u, wl);
                h0 = ec_dpbusd(h0, u, wh);
                u = _mm256_set1_epi32(ec_avx2_ld32(p1 + 4 * k));
                l1 = ec_dpbusd(l1, u, wl);
                h1 = ec_dpbusd(h1, u, wh);
                u = _mm256_set1_epi32(ec_avx2_ld32(p2 + 4 * k));
                l2 = ec_dpbusd(l2, u, wl);
                h2 = ec_dpbusd(h2, u, wh);
                u = _mm256_set1_epi32(ec_avx2_ld32(p3 + 4 * k));
                l3 = ec_dpbusd(l3, u, wl);
                h3 = ec_dpbusd(h3, u, wh);
            }
            ec_avx2_out16(yp, l0, h0, q, c, n);
            if (np > 1) ec_avx2_out16(yp + oc, l1, h1, q, c, n);
            if (np > 2) ec_avx2_out16(yp + 2 * oc, l2, h2, q, c, n);
            if (np > 3) ec_avx2_out16(yp + 3 * oc, l3, h3, q, c, n);
        }
#endif
    }
    if (g->tail8) {
        const int c = 16 * g->nb16, n = oc - c;
        const int8_t *wb = wq + (size_t)c * kpp;
        const __m256i b = EC_LD256(bias_u + c);
#if EC_X86_512
        const ec_first_rqz rz = ec_first_rqz8x2(q, c);
        for (ox = 0; ox < ow; ox += 8) {
            const int np = ow - ox < 8 ? ow - ox : 8;
            const int8_t *p[8];
            __m256i a[8];
            int i;
            for (i = 0; i < 8; ++i) {
                p[i] = col + (size_t)(ox + (i < np ? i : np - 1)) * kpp;
                a[i] = b;
            }
            for (k = 0; k < kq; ++k) {
                __m256i w = EC_LD256(wb + 32 * k);
                EC_AVX2_IN_REG(w);
                for (i = 0; i < 8; ++i)
                    a[i] = ec_dpbusd(a[i], _mm256_set1_epi32(ec_avx2_ld32(p[i] + 4 * k)), w);
            }
            {
                __m512i r[4];
                for (i = 0; i < 4; ++i)
                    r[i] = ec_first_rq512(_mm512_inserti64x4(_mm512_castsi256_si512(a[2 * i]),
                                                             a[2 * i + 1], 1), q, &rz, c, c);
                ec_first_store512(yr + (size_t)ox * oc + c, ec_first_pack4(r[0], r[1], r[2], r[3], q),
                                  np, 8, oc, n);
            }
        }
#else
        for (ox = 0; ox < ow; ox += 4) {
            const int np = ow - ox < 4 ? ow - ox : 4;
            const int8_t *p0 = col + (size_t)ox * kpp;
            const int8_t *p1 = p0 + (np > 1 ? kpp : 0);
            const int8_t *p2 = p0 + (np > 2 ? 2 * kpp : 0);
            const int8_t *p3 = p0 + (np > 3 ? 3 * kpp : 0);
            __m256i a0 = b, a1 = b, a2 = b, a3 = b;
            int8_t *yp = yr + (size_t)ox * oc + c;
            for (k = 0; k < kq; ++k) {
                __m256i w = EC_LD256(wb + 32 * k);
                EC_AVX2_IN_REG(w);
                a0 = ec_dpbusd(a0, _mm256_set1_epi32(ec_avx2_ld32(p0 + 4 * k)), w);
                a1 = ec_dpbusd(a1, _mm256_set1_epi32(ec_avx2_ld32(p1 + 4 * k)), w);
                a2 = ec_dpbusd(a2, _mm256_set1_epi32(ec_avx2_ld32(p2 + 4 * k)), w);
                a3 = ec_dpbusd(a3, _mm256_set1_epi32(ec_avx2_ld32(p3 + 4 * k)), w);
            }
            ec_avx2_out8(yp, a0, q, c, n);
            if (np > 1) ec_avx2_out8(yp + oc, a1, q, c, n);
            if (np > 2) ec_avx2_out8(yp + 2 * oc, a2, q, c, n);
            if (np > 3) ec_avx2_out8(yp + 3 * oc, a3, q, c, n);
        }
#endif
    }
#else  /* plain AVX2: int16 tap pairs, VPMADDWD */
    const int kh2 = kpp / 2;
    (void)col;
    (void)wq;
    (void)bias_u;
    for (cb = 0; cb < g->nb16; ++cb) {
        const int c = 16 * cb, n = oc - c < 16 ? oc - c : 16;
        const int16_t *wb = w16 + (size_t)c * kpp;
        const __m256i bl = EC_LD256(bias_x + c), bh = EC_LD256(bias_x + c + 8);
        for (ox = 0; ox < ow; ox += 4) {
            const int np = ow - ox < 4 ? ow - ox : 4;
            const int16_t *p0 = col16 + (size_t)ox * kpp;
            const int16_t *p1 = p0 + (np > 1 ? kpp : 0);
            const int16_t *p2 = p0 + (np > 2 ? 2 * kpp : 0);
            const int16_t *p3 = p0 + (np > 3 ? 3 * kpp : 0);
            __m256i l0 = bl, h0 = bh, l1 = bl, h1 = bh, l2 = bl, h2 = bh, l3 = bl, h3 = bh;
            int8_t *yp = yr + (size_t)ox * oc + c;
            for (k = 0; k < kh2; ++k) {
                __m256i wl = EC_LD256(wb + 32 * k), wh = EC_LD256(wb + 32 * k + 16), u;
                EC_AVX2_IN_REG(wl);
                EC_AVX2_IN_REG(wh);
                u = _mm256_set1_epi32(ec_avx2_ld32(p0 + 2 * k));
                l0 = _mm256_add_epi32(l0, _mm256_madd_epi16(u, wl));
                h0 = _mm256_add_epi32(h0, _mm256_madd_epi16(u, wh));
                u = _mm256_set1_epi32(ec_avx2_ld32(p1 + 2 * k));
                l1 = _mm256_add_epi32(l1, _mm256_madd_epi16(u, wl));
                h1 = _mm256_add_epi32(h1, _mm256_madd_epi16(u, wh));
                u = _mm256_set1_epi32(ec_avx2_ld32(p2 + 2 * k));
                l2 = _mm256_add_epi32(l2, _mm256_madd_epi16(u, wl));
                h2 = _mm256_add_epi32(h2, _mm256_madd_epi16(u, wh));
                u = _mm256_set1_epi32(ec_avx2_ld32(p3 + 2 * k));
                l3 = _mm256_add_epi32(l3, _mm256_madd_epi16(u, wl));
                h3 = _mm256_add_epi32(h3, _mm256_madd_epi16(u, wh));
            }
            ec_avx2_out16(yp, l0, h0, q, c, n);
            if (np > 1) ec_avx2_out16(yp + oc, l1, h1, q, c, n);
            if (np > 2) ec_avx2_out16(yp + 2 * oc, l2, h2, q, c, n);
            if (np > 3) ec_avx2_out16(yp + 3 * oc, l3, h3, q, c, n);
        }
    }
    if (g->tail8) {
        const int c = 16 * g->nb16, n = oc - c;
        const int16_t *wb = w16 + (size_t)c * kpp;
        const __m256i b = EC_LD256(bias_x + c);
        for (ox = 0; ox < ow; ox += 4) {
            const int np = ow - ox < 4 ? ow - ox : 4;
            const int16_t *p0 = col16 + (size_t)ox * kpp;
            const int16_t *p1 = p0 + (np > 1 ? kpp : 0);
            const int16_t *p2 = p0 + (np > 2 ? 2 * kpp : 0);
            const int16_t *p3 = p0 + (np > 3 ? 3 * kpp : 0);
            __m256i a0 = b, a1 = b, a2 = b, a3 = b;
            int8_t *yp = yr + (size_t)ox * oc + c;
            for (k = 0; k < kh2; ++k) {
                __m256i w = EC_LD256(wb + 16 * k);
                EC_AVX2_IN_REG(w);
                a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_set1_epi32(ec_avx2_ld32(p0 + 2 * k)), w));
                a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_set1_epi32(ec_avx2_ld32(p1 + 2 * k)), w));
                a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(_mm256_set1_epi32(ec_avx2_ld32(p2 + 2 * k)), w));
                a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(_mm256_set1_epi32(ec_avx2_ld32(p3 + 2 * k)), w));
            }
            ec_avx2_out8(yp, a0, q, c, n);
            if (np > 1) ec_avx2_out8(yp + oc, a1, q, c, n);
            if (np > 2) ec_avx2_out8(yp + 2 * oc, a2, q, c, n);
            if (np > 3) ec_avx2_out8(yp + 3 * oc, a3, q, c, n);
        }
    }
#endif
}

/* The layer: per batch image and output row, rows -> patches -> products. wq: the VNNI quads,
 * w16: the int16 pairs (only the build's path reads its own). No arena scratch. */
EC_AVX2_SHARED void ec_avx2_conv_first(const ec_first_geom *g, const int8_t *x, int8_t *y,
                                       const int8_t *wq, const int16_t *w16,
                                       const int32_t *bias_u, const int32_t *bias_x,
                                       const ec_avx2_rq *q) {
    int8_t rows[EC_FIRST_MAX_ROWS];
    int8_t col[EC_FIRST_MAX_COL + 16];
#if !EC_AVX2_VNNI
    int16_t col16[EC_FIRST_MAX_COL + 16];
    const int n16 = g->out_w * g->kpp;
#else
    int16_t *col16 = NULL;
#endif
    int b, oy;
    /* patches' padding bytes are never written; they meet zero weights but must be defined */
    memset(col, 0, (size_t)g->out_w * g->kpp + 16);
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + (size_t)b * g->in_h * g->in_w * g->in_c;
        for (oy = 0; oy < g->out_h; ++oy) {
            int8_t *yr = y + ((size_t)b * g->out_h + oy) * g->out_w * g->out_c;
            ec_first_rows(g, xb, oy, rows);
            ec_first_patches(g, rows, col);
#if !EC_AVX2_VNNI
            {
                int i;
                for (i = 0; i < n16; i += 16)
                    _mm256_storeu_si256((__m256i *)(void *)(col16 + i),
                                        _mm256_cvtepi8_epi16(EC_LD128(col + i)));
            }
#endif
            ec_first_row_dot(g, col, col16, yr, wq, w16, bias_u, bias_x, q);
        }
    }
}

#endif /* __AVX2__ */
#endif /* EDGECC_AVX2_FIRST_H */
