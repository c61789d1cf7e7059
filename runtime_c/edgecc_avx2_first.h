/* edgecc x86 kernel for int8 CONV_2D layers with few input channels (in_c <= 4, typically a
 * model's first layer): ec_avx2_conv_first.
 *
 * With 1 to 4 input channels a pixel's taps come in short runs (9 bytes a filter row for 3x3x3,
 * 4 for 10x4x1), which ec_avx2_conv would pad to 4 bytes each and gather at every border
 * pixel. This kernel instead builds every pixel's whole patch (k_h * k_w * in_c taps, padded to
 * kpp) as contiguous bytes in a stack buffer ("im2col"), a band of output rows at a time, and
 * then runs a dense product over the band's pixels (consecutive in the output):
 *   1. the band's input rows are copied once, zero-point padded left and right (all zero point
 *      for rows outside the image), into stack rows; with VNNI the bytes are flipped to
 *      u8 = x ^ 0x80 here, once, rather than at every broadcast;
 *   2. each pixel's patch is copied from those rows, one run per filter row (16-byte moves that
 *      may overlap the next run, which is written after), or one tap per move with dilation;
 *   3. blocks of 16 output channels (a last block of 8 when out_c % 16 is 1..8) against groups
 *      of pixels, the patch's bytes broadcast against the weights. A last partial group
 *      computes spare pixels (the buffer has room for them) and stores only the real ones.
 * The weights (edgecc/ops/_vec_first.py) come per block of 16 channels as [kpp/4][16][4] bytes
 * for VPDPBUSD (4-byte broadcasts; the block of 8: [kpp/8][8][8], each channel's two quads side
 * by side against an 8-byte broadcast, the lane pairs added at the end; kpp is then a multiple
 * of 8), and as int16 [kpp/2][16][2] ([kpp/2][8][2]) for the plain AVX2 path, whose VPMADDWD
 * then sums each channel's tap pair straight into its own int32 lane (the patches are widened
 * to int16 once per band). Taps past k_h * k_w * in_c meet zero weights. Biases and the
 * requantization are those of ec_avx2_conv (bias_u for u8 activations, bias_x for x itself;
 * ec_avx2_rq), so every path sums the same products in int32 and agrees bit for bit with
 * TFLite Micro.
 *
 * Register widths: EC_X86_512 builds run 64 channels x 4 pixels (layers with 4+ blocks of 16),
 * 16 channels x 8 pixels, and the block of 8 as 8 pixels x 8 channels x 2 quads, all in ZMM,
 * and requantize 16 lanes at a time with the ZMM form of ec_avx2_fast8 (the same operations
 * lane for lane; the exact path goes through ec_avx2_requant8), packing 64 output bytes per
 * step. 256-bit VNNI and plain AVX2 builds run 4 pixels x 16 (or 8) channels in YMM and store
 * through ec_avx2_out16 / ec_avx2_out8.
 *
 * No arena scratch: the rows (at most EC_FIRST_MAX_ROWS bytes) and a band's patches
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

#define EC_FIRST_MAX_COL 6144   /* (band * out_w + 8) * kpp: a band of output rows' patches, and
                                 * room for the 7 pixels a last partial group computes in vain */
#define EC_FIRST_MAX_ROWS 6144  /* a band's padded input rows: its input rows x row_b */

/* A layer's geometry, all of it computed by the compiler. */
typedef struct {
    int32_t batches, in_h, in_w, in_c, out_h, out_w, out_c;
    int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_t, pad_l;
    int32_t seg;       /* bytes of one filter row's run (k_w * in_c; dil_w > 1: in_c per tap) */
    int32_t kpp;       /* a pixel's patch: k_h * k_w * in_c taps padded to a multiple of 4 (8) */
    int32_t nb16;      /* blocks of 16 output channels */
    int32_t tail8;     /* 1: then one block of 8 channels */
    int32_t row_cols;  /* columns of a padded input row that the output row reads */
    int32_t row_b;     /* bytes a padded row takes on the stack (row_cols * in_c + slack) */
    int32_t band;      /* output rows whose patches the stack holds at once */
    int32_t in_zp;
} ec_first_geom;

/* Broadcasts of 4 or 8 patch bytes straight from memory (VPBROADCASTD/Q m32/m64): built from
 * a scalar load, gcc may route the bytes through general registers and the stack. */
#define EC_FIRST_BC32(p) _mm256_broadcastd_epi32(_mm_loadu_si32((const void *)(p)))
#define EC_FIRST_BC64(p) _mm256_broadcastq_epi64(_mm_loadl_epi64((const __m128i *)(const void *)(p)))
#if EC_X86_512
/* ZMM: as an instruction with a memory operand (gcc otherwise loads many of a block's bytes
 * into general registers ahead of time, spills them, and broadcasts from registers) */
static inline __m512i ec_first_bc32z(const int8_t *p) {
    __m512i r;
    __asm__("vpbroadcastd %1, %0" : "=v"(r) : "m"(*(const int8_t(*)[4])(const void *)p));
    return r;
}
static inline __m512i ec_first_bc64z(const int8_t *p) {
    __m512i r;
    __asm__("vpbroadcastq %1, %0" : "=v"(r) : "m"(*(const int8_t(*)[8])(const void *)p));
    return r;
}
#define EC_FIRST_BC32Z(p) ec_first_bc32z(p)
/* a ZMM weight vector kept in a register (loaded once, not as each VPDPBUSD's memory operand) */
#define EC_FIRST_IN_REGZ(v) __asm__("" : "+v"(v))
#define EC_FIRST_BC64Z(p) ec_first_bc64z(p)
#endif

#if EC_AVX2_VNNI
#define EC_FIRST_FLIP 0x80  /* VPDPBUSD reads u8 = x + 128 */
#else
#define EC_FIRST_FLIP 0
#endif

/* n input rows from row iy0 on (batch image xb; rows outside the image read the zero point),
 * row_b bytes apart, zero-point padded left and right, flipped for VNNI. */
static inline void ec_first_rows(const ec_first_geom *g, const int8_t *xb, int iy0, int n,
                                 int8_t *rows) {
    const int ic = g->in_c, zp = (int8_t)(g->in_zp ^ EC_FIRST_FLIP);
    const int left = g->pad_l * ic;
    const int real = (g->row_cols - g->pad_l < g->in_w ? g->row_cols - g->pad_l : g->in_w) * ic;
    int j, i;
    for (j = 0; j < n; ++j) {
        const int iy = iy0 + j;
        int8_t *d = rows + (size_t)j * g->row_b;
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

/* Every pixel's patch of an output row whose first input row is at rows, kpp bytes apart. Runs
 * are moved 16 bytes at a time: a move may write past its run (into the next run or pixel,
 * written after it, or the buffer's slack) and read past it (into the row's slack); bytes past
 * a patch's taps meet zero weights. */
static inline void ec_first_patches(const ec_first_geom *g, const int8_t *rows, int8_t *col) {
    const int ic = g->in_c, step = g->stride_w * ic, seg = g->seg, kpp = g->kpp;
    const int rs = g->dil_h * g->row_b;  /* from one filter row's input row to the next */
    int ox, fy, fx, o;
    if (g->dil_w == 1) {
        for (ox = 0; ox < g->out_w; ++ox) {
            int8_t *d = col + (size_t)ox * kpp;
            const int8_t *s = rows + (size_t)ox * step;
            for (fy = 0; fy < g->k_h; ++fy)
                for (o = 0; o < seg; o += 16)
                    _mm_storeu_si128((__m128i *)(void *)(d + fy * seg + o),
                                     EC_LD128(s + fy * rs + o));
        }
    } else {
        for (ox = 0; ox < g->out_w; ++ox) {
            int8_t *d = col + (size_t)ox * kpp;
            const int8_t *s = rows + (size_t)ox * step;
            for (fy = 0; fy < g->k_h; ++fy)
                for (fx = 0; fx < g->k_w; ++fx) {
                    int32_t v = ec_avx2_ld32(s + fy * rs + fx * g->dil_w * ic);
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

/* Lanes (c0 taps 0-3, c0 taps 4-7, c1 ...) of channels 0-3 (lo) and 4-7 (hi) -> channels 0-7. */
static inline __m256i ec_first_fold8(__m256i lo, __m256i hi) {
    /* hadd within 128-bit lanes gives [c0 c1 c4 c5 | c2 c3 c6 c7] */
    return _mm256_permute4x64_epi64(_mm256_hadd_epi32(lo, hi), 0xD8);
}

/* ow consecutive output pixels (patches in col, or col16 without VNNI) of every channel block,
 * to yr. */
static inline void ec_first_dot(const ec_first_geom *g, int ow, const int8_t *col,
                                const int16_t *col16, int8_t *yr, const int8_t *wq,
                                const int16_t *w16, const int32_t *bias_u,
                                const int32_t *bias_x, const ec_avx2_rq *q) {
    const int kpp = g->kpp, oc = g->out_c;
    int cb, ox, k;
#if EC_AVX2_VNNI
    const int kq = kpp / 4;
    (void)col16;
    (void)w16;
    (void)bias_x;
    cb = 0;
#if EC_X86_512
    /* 64 channels (4 blocks) x 4 pixels: each broadcast feeds 4 VPDPBUSD, 16 independent chains,
     * and a pixel's 64 output bytes leave in one store */
    for (; cb + 4 <= g->nb16; cb += 4) {
        const int c = 16 * cb, n = oc - c < 64 ? oc - c : 64;
        const int8_t *wb = wq + (size_t)c * kpp;
        const size_t bs = (size_t)16 * kpp;  /* from one block's weights to the next */
        ec_first_rqz rz[4];
        __m512i bb[4];
        int j;
        for (j = 0; j < 4; ++j) {
            rz[j] = ec_first_rqz16(q, c + 16 * j);
            bb[j] = _mm512_loadu_si512((const void *)(bias_u + c + 16 * j));
        }
        for (ox = 0; ox < ow; ox += 4) {
            const int np = ow - ox < 4 ? ow - ox : 4;
            const int8_t *p0 = col + (size_t)ox * kpp;
            const int8_t *p1 = p0 + kpp;
            const int8_t *p2 = p0 + 2 * kpp;
            const int8_t *p3 = p0 + 3 * kpp;
            const __mmask64 keep = n >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
            /* named accumulators: gcc shuffles a 2-D array of them between registers */
            __m512i a00 = bb[0], a01 = bb[1], a02 = bb[2], a03 = bb[3];
            __m512i a10 = bb[0], a11 = bb[1], a12 = bb[2], a13 = bb[3];
            __m512i a20 = bb[0], a21 = bb[1], a22 = bb[2], a23 = bb[3];
            __m512i a30 = bb[0], a31 = bb[1], a32 = bb[2], a33 = bb[3];
            int8_t *yp = yr + (size_t)ox * oc + c;
            for (k = 0; k < kq; ++k) {
                const int8_t *wk = wb + 64 * k;
                __m512i w0 = _mm512_loadu_si512((const void *)wk);
                __m512i w1 = _mm512_loadu_si512((const void *)(wk + bs));
                __m512i w2 = _mm512_loadu_si512((const void *)(wk + 2 * bs));
                __m512i w3 = _mm512_loadu_si512((const void *)(wk + 3 * bs));
                __m512i u;
                EC_FIRST_IN_REGZ(w0);
                EC_FIRST_IN_REGZ(w1);
                EC_FIRST_IN_REGZ(w2);
                EC_FIRST_IN_REGZ(w3);
                u = EC_FIRST_BC32Z((p0 + 4 * k));
                a00 = _mm512_dpbusd_epi32(a00, u, w0);
                a01 = _mm512_dpbusd_epi32(a01, u, w1);
                a02 = _mm512_dpbusd_epi32(a02, u, w2);
                a03 = _mm512_dpbusd_epi32(a03, u, w3);
                u = EC_FIRST_BC32Z((p1 + 4 * k));
                a10 = _mm512_dpbusd_epi32(a10, u, w0);
                a11 = _mm512_dpbusd_epi32(a11, u, w1);
                a12 = _mm512_dpbusd_epi32(a12, u, w2);
                a13 = _mm512_dpbusd_epi32(a13, u, w3);
                u = EC_FIRST_BC32Z((p2 + 4 * k));
                a20 = _mm512_dpbusd_epi32(a20, u, w0);
                a21 = _mm512_dpbusd_epi32(a21, u, w1);
                a22 = _mm512_dpbusd_epi32(a22, u, w2);
                a23 = _mm512_dpbusd_epi32(a23, u, w3);
                u = EC_FIRST_BC32Z((p3 + 4 * k));
                a30 = _mm512_dpbusd_epi32(a30, u, w0);
                a31 = _mm512_dpbusd_epi32(a31, u, w1);
                a32 = _mm512_dpbusd_epi32(a32, u, w2);
                a33 = _mm512_dpbusd_epi32(a33, u, w3);
            }
#define EC_FIRST_OUT64(i, x0, x1, x2, x3)                                                    \
            _mm512_mask_storeu_epi8(yp + (size_t)(i) * oc, keep, ec_first_pack4(             \
                ec_first_rq512(x0, q, &rz[0], c, c + 8),                                     \
                ec_first_rq512(x1, q, &rz[1], c + 16, c + 24),                               \
                ec_first_rq512(x2, q, &rz[2], c + 32, c + 40),                               \
                ec_first_rq512(x3, q, &rz[3], c + 48, c + 56), q))
            EC_FIRST_OUT64(0, a00, a01, a02, a03);
            if (np > 1) EC_FIRST_OUT64(1, a10, a11, a12, a13);
            if (np > 2) EC_FIRST_OUT64(2, a20, a21, a22, a23);
            if (np > 3) EC_FIRST_OUT64(3, a30, a31, a32, a33);
#undef EC_FIRST_OUT64
        }
    }
#endif
    for (; cb < g->nb16; ++cb) {
        const int c = 16 * cb, n = oc - c < 16 ? oc - c : 16;
        const int8_t *wb = wq + (size_t)c * kpp;
#if EC_X86_512
        /* 8 pixels x 16 channels: 8 independent VPDPBUSD chains hide the instruction's latency */
        const ec_first_rqz rz = ec_first_rqz16(q, c);
        const __m512i b = _mm512_loadu_si512((const void *)(bias_u + c));
        for (ox = 0; ox < ow; ox += 8) {
            const int np = ow - ox < 8 ? ow - ox : 8;
            /* one pointer (pixels kpp apart, the buffer has room past the last one) and named
             * accumulators: gcc handles arrays of them poorly */
            const int8_t *p0 = col + (size_t)ox * kpp;
            const int8_t *wk = wb;
            __m512i a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b;
            for (k = 0; k < kq; ++k, wk += 64, p0 += 4) {
                const __m512i w = _mm512_loadu_si512((const void *)wk);
                a0 = _mm512_dpbusd_epi32(a0, EC_FIRST_BC32Z(p0), w);
                a1 = _mm512_dpbusd_epi32(a1, EC_FIRST_BC32Z(p0 + kpp), w);
                a2 = _mm512_dpbusd_epi32(a2, EC_FIRST_BC32Z(p0 + 2 * kpp), w);
                a3 = _mm512_dpbusd_epi32(a3, EC_FIRST_BC32Z(p0 + 3 * kpp), w);
                a4 = _mm512_dpbusd_epi32(a4, EC_FIRST_BC32Z(p0 + 4 * kpp), w);
                a5 = _mm512_dpbusd_epi32(a5, EC_FIRST_BC32Z(p0 + 5 * kpp), w);
                a6 = _mm512_dpbusd_epi32(a6, EC_FIRST_BC32Z(p0 + 6 * kpp), w);
                a7 = _mm512_dpbusd_epi32(a7, EC_FIRST_BC32Z(p0 + 7 * kpp), w);
            }
            ec_first_store512(yr + (size_t)ox * oc + c,
                              ec_first_pack4(ec_first_rq512(a0, q, &rz, c, c + 8),
                                             ec_first_rq512(a1, q, &rz, c, c + 8),
                                             ec_first_rq512(a2, q, &rz, c, c + 8),
                                             ec_first_rq512(a3, q, &rz, c, c + 8), q),
                              np < 4 ? np : 4, 16, oc, n);
            if (np > 4)
                ec_first_store512(yr + (size_t)(ox + 4) * oc + c,
                                  ec_first_pack4(ec_first_rq512(a4, q, &rz, c, c + 8),
                                                 ec_first_rq512(a5, q, &rz, c, c + 8),
                                                 ec_first_rq512(a6, q, &rz, c, c + 8),
                                                 ec_first_rq512(a7, q, &rz, c, c + 8), q),
                                  np - 4, 16, oc, n);
        }
#else
        const __m256i bl = EC_LD256(bias_u + c), bh = EC_LD256(bias_u + c + 8);
        for (ox = 0; ox < ow; ox += 4) {
            const int np = ow - ox < 4 ? ow - ox : 4;
            const int8_t *p0 = col + (size_t)ox * kpp;
            const int8_t *p1 = p0 + kpp;
            const int8_t *p2 = p0 + 2 * kpp;
            const int8_t *p3 = p0 + 3 * kpp;
            __m256i l0 = bl, h0 = bh, l1 = bl, h1 = bh, l2 = bl, h2 = bh, l3 = bl, h3 = bh;
            int8_t *yp = yr + (size_t)ox * oc + c;
            for (k = 0; k < kq; ++k) {
                __m256i wl = EC_LD256(wb + 64 * k), wh = EC_LD256(wb + 64 * k + 32), u;
                EC_AVX2_IN_REG(wl);
                EC_AVX2_IN_REG(wh);
                u = EC_FIRST_BC32((p0 + 4 * k));
                l0 = ec_dpbusd(l0, u, wl);
                h0 = ec_dpbusd(h0, u, wh);
                u = EC_FIRST_BC32((p1 + 4 * k));
                l1 = ec_dpbusd(l1, u, wl);
                h1 = ec_dpbusd(h1, u, wh);
                u = EC_FIRST_BC32((p2 + 4 * k));
                l2 = ec_dpbusd(l2, u, wl);
                h2 = ec_dpbusd(h2, u, wh);
                u = EC_FIRST_BC32((p3 + 4 * k));
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
        /* The block of 8 takes 8 taps a step: each channel's two quads side by side (lanes
         * (c, taps 0-3), (c, taps 4-7)) against one 8-byte broadcast of the pixel's taps; the
         * lane pairs are added at the end. */
        const int c = 16 * g->nb16, n = oc - c, kq2 = kpp / 8;
        const int8_t *wb = wq + (size_t)c * kpp;
        const __m256i b = EC_LD256(bias_u + c);
#if EC_X86_512
        const ec_first_rqz rz = ec_first_rqz8x2(q, c);
        const __m512i b2 = _mm512_broadcast_i64x4(b);
        const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        const __m512i io = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
        for (ox = 0; ox < ow; ox += 8) {
            const int np = ow - ox < 8 ? ow - ox : 8;
            const int8_t *p[8];
            __m512i a[8], r[4];
            int i;
            for (i = 0; i < 8; ++i) {
                p[i] = col + (size_t)(ox + i) * kpp;
                a[i] = _mm512_setzero_si512();
            }
            for (k = 0; k < kq2; ++k) {
                const __m512i w = _mm512_loadu_si512((const void *)(wb + 64 * k));
                for (i = 0; i < 8; ++i)
                    a[i] = _mm512_dpbusd_epi32(a[i], EC_FIRST_BC64Z((p[i] + 8 * k)), w);
            }
            /* pixels 2i, 2i+1 -> [pixel 2i's 8 channels | pixel 2i+1's] */
            for (i = 0; i < 4; ++i)
                r[i] = ec_first_rq512(
                    _mm512_add_epi32(b2, _mm512_add_epi32(
                        _mm512_permutex2var_epi32(a[2 * i], ie, a[2 * i + 1]),
                        _mm512_permutex2var_epi32(a[2 * i], io, a[2 * i + 1]))), q, &rz, c, c);
            ec_first_store512(yr + (size_t)ox * oc + c, ec_first_pack4(r[0], r[1], r[2], r[3], q),
                              np, 8, oc, n);
        }
#else
        for (ox = 0; ox < ow; ox += 4) {
            const int np = ow - ox < 4 ? ow - ox : 4;
            const int8_t *p0 = col + (size_t)ox * kpp;
            const int8_t *p1 = p0 + kpp;
            const int8_t *p2 = p0 + 2 * kpp;
            const int8_t *p3 = p0 + 3 * kpp;
            const __m256i z = _mm256_setzero_si256();
            __m256i l0 = z, h0 = z, l1 = z, h1 = z, l2 = z, h2 = z, l3 = z, h3 = z;
            int8_t *yp = yr + (size_t)ox * oc + c;
            for (k = 0; k < kq2; ++k) {
                __m256i wl = EC_LD256(wb + 64 * k), wh = EC_LD256(wb + 64 * k + 32), u;
                EC_AVX2_IN_REG(wl);
                EC_AVX2_IN_REG(wh);
                u = EC_FIRST_BC64((p0 + 8 * k));
                l0 = ec_dpbusd(l0, u, wl);
                h0 = ec_dpbusd(h0, u, wh);
                u = EC_FIRST_BC64((p1 + 8 * k));
                l1 = ec_dpbusd(l1, u, wl);
                h1 = ec_dpbusd(h1, u, wh);
                u = EC_FIRST_BC64((p2 + 8 * k));
                l2 = ec_dpbusd(l2, u, wl);
                h2 = ec_dpbusd(h2, u, wh);
                u = EC_FIRST_BC64((p3 + 8 * k));
                l3 = ec_dpbusd(l3, u, wl);
                h3 = ec_dpbusd(h3, u, wh);
            }
            ec_avx2_out8(yp, _mm256_add_epi32(b, ec_first_fold8(l0, h0)), q, c, n);
            if (np > 1) ec_avx2_out8(yp + oc, _mm256_add_epi32(b, ec_first_fold8(l1, h1)), q, c, n);
            if (np > 2) ec_avx2_out8(yp + 2 * oc, _mm256_add_epi32(b, ec_first_fold8(l2, h2)), q, c, n);
            if (np > 3) ec_avx2_out8(yp + 3 * oc, _mm256_add_epi32(b, ec_first_fold8(l3, h3)), q, c, n);
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
            const int16_t *p1 = p0 + kpp;
            const int16_t *p2 = p0 + 2 * kpp;
            const int16_t *p3 = p0 + 3 * kpp;
            __m256i l0 = bl, h0 = bh, l1 = bl, h1 = bh, l2 = bl, h2 = bh, l3 = bl, h3 = bh;
            int8_t *yp = yr + (size_t)ox * oc + c;
            for (k = 0; k < kh2; ++k) {
                __m256i wl = EC_LD256(wb + 32 * k), wh = EC_LD256(wb + 32 * k + 16), u;
                EC_AVX2_IN_REG(wl);
                EC_AVX2_IN_REG(wh);
                u = EC_FIRST_BC32((p0 + 2 * k));
                l0 = _mm256_add_epi32(l0, _mm256_madd_epi16(u, wl));
                h0 = _mm256_add_epi32(h0, _mm256_madd_epi16(u, wh));
                u = EC_FIRST_BC32((p1 + 2 * k));
                l1 = _mm256_add_epi32(l1, _mm256_madd_epi16(u, wl));
                h1 = _mm256_add_epi32(h1, _mm256_madd_epi16(u, wh));
                u = EC_FIRST_BC32((p2 + 2 * k));
                l2 = _mm256_add_epi32(l2, _mm256_madd_epi16(u, wl));
                h2 = _mm256_add_epi32(h2, _mm256_madd_epi16(u, wh));
                u = EC_FIRST_BC32((p3 + 2 * k));
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
            const int16_t *p1 = p0 + kpp;
            const int16_t *p2 = p0 + 2 * kpp;
            const int16_t *p3 = p0 + 3 * kpp;
            __m256i a0 = b, a1 = b, a2 = b, a3 = b;
            int8_t *yp = yr + (size_t)ox * oc + c;
            for (k = 0; k < kh2; ++k) {
                __m256i w = EC_LD256(wb + 16 * k);
                EC_AVX2_IN_REG(w);
                a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(EC_FIRST_BC32((p0 + 2 * k)), w));
                a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(EC_FIRST_BC32((p1 + 2 * k)), w));
                a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(EC_FIRST_BC32((p2 + 2 * k)), w));
                a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(EC_FIRST_BC32((p3 + 2 * k)), w));
            }
            ec_avx2_out8(yp, a0, q, c, n);
            if (np > 1) ec_avx2_out8(yp + oc, a1, q, c, n);
            if (np > 2) ec_avx2_out8(yp + 2 * oc, a2, q, c, n);
            if (np > 3) ec_avx2_out8(yp + 3 * oc, a3, q, c, n);
        }
    }
#endif
}

/* The layer: per batch image, bands of output rows: the band's input rows padded on the stack
 * once, each row's patches copied after the band's previous rows', then the band's pixels
 * (consecutive in the output) as one run of products. wq: the VNNI quads, w16: the int16 pairs
 * (only the build's path reads its own). No arena scratch. */
EC_AVX2_SHARED void ec_avx2_conv_first(const ec_first_geom *g, const int8_t *x, int8_t *y,
                                       const int8_t *wq, const int16_t *w16,
                                       const int32_t *bias_u, const int32_t *bias_x,
                                       const ec_avx2_rq *q) {
    int8_t rows[EC_FIRST_MAX_ROWS];
    int8_t col[EC_FIRST_MAX_COL + 16];
#if !EC_AVX2_VNNI
    int16_t col16[EC_FIRST_MAX_COL + 16];
#else
    int16_t *col16 = NULL;
#endif
    const int row_px = g->out_w * g->kpp;
    int b, oy0, r;
    /* patches' padding bytes are never written; they meet zero weights but must be defined */
    memset(col, 0, (size_t)(g->band * g->out_w + 8) * g->kpp + 16);
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + (size_t)b * g->in_h * g->in_w * g->in_c;
        for (oy0 = 0; oy0 < g->out_h; oy0 += g->band) {
            const int nr = g->out_h - oy0 < g->band ? g->out_h - oy0 : g->band;
            ec_first_rows(g, xb, oy0 * g->stride_h - g->pad_t,
                          (nr - 1) * g->stride_h + (g->k_h - 1) * g->dil_h + 1, rows);
            for (r = 0; r < nr; ++r)
                ec_first_patches(g, rows + (size_t)r * g->stride_h * g->row_b,
                                 col + (size_t)r * row_px);
#if !EC_AVX2_VNNI
            {
                const int n16 = (nr * g->out_w + 8) * g->kpp;  /* with the spare pixels */
                int i;
                for (i = 0; i < n16; i += 16)
                    _mm256_storeu_si256((__m256i *)(void *)(col16 + i),
                                        _mm256_cvtepi8_epi16(EC_LD128(col + i)));
            }
#endif
            ec_first_dot(g, nr * g->out_w, col, col16,
                         y + ((size_t)b * g->out_h + oy0) * g->out_w * g->out_c, wq, w16, bias_u,
                         bias_x, q);
        }
    }
}

#endif /* __AVX2__ */
#endif /* EDGECC_AVX2_FIRST_H */
