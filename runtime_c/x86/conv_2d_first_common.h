/* edgecc x86 kernel: int8 CONV_2D with few input channels, its geometry and patch building
 * (conventions: x86/conv_2d_first.h). */
#ifndef EDGECC_X86_CONV_2D_FIRST_COMMON_H
#define EDGECC_X86_CONV_2D_FIRST_COMMON_H
#if defined(__AVX2__)
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <immintrin.h>
#include "common.h"

#define EC_X86_FIRST_MAX_COL 6144   /* (band * out_w + 8) * kpp: a band of output rows' patches, and
                                 * room for the 7 pixels a last partial group computes in vain */
#define EC_X86_FIRST_MAX_ROWS 6144  /* a band's padded input rows: its input rows x row_b */
#define EC_X86_FIRST_MAX_KPP 256    /* a pixel's patch (kpp): the plain AVX2 path widens a block of
                                 * 16 channels' weights to 16 * kpp int16 on the stack */

/* A layer's geometry, all of it computed by the compiler. */
#ifndef EC_X86_ONCE_EC_X86_FIRST_GEOM /* a record the calls name: defined once, not per level */
#define EC_X86_ONCE_EC_X86_FIRST_GEOM
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
} ec_x86_first_geom;
#endif

/* Broadcasts of 4 or 8 patch bytes straight from memory (VPBROADCASTD/Q m32/m64): built from
 * a scalar load, gcc may route the bytes through general registers and the stack. */
#define EC_X86_FIRST_BC32(p) _mm256_broadcastd_epi32(_mm_loadu_si32((const void *)(p)))
#define EC_X86_FIRST_BC64(p) _mm256_broadcastq_epi64(_mm_loadl_epi64((const __m128i *)(const void *)(p)))
#if EC_X86_512
/* ZMM: as an instruction with a memory operand (gcc otherwise loads many of a block's bytes
 * into general registers ahead of time, spills them, and broadcasts from registers) */
static inline __m512i ec_x86_first_bc32z(const int8_t *p) {
    __m512i r;
    __asm__("vpbroadcastd %1, %0" : "=v"(r) : "m"(*(const int8_t(*)[4])(const void *)p));
    return r;
}
static inline __m512i ec_x86_first_bc64z(const int8_t *p) {
    __m512i r;
    __asm__("vpbroadcastq %1, %0" : "=v"(r) : "m"(*(const int8_t(*)[8])(const void *)p));
    return r;
}
#define EC_X86_FIRST_BC32Z(p) ec_x86_first_bc32z(p)
/* a ZMM weight vector kept in a register (loaded once, not as each VPDPBUSD's memory operand) */
#define EC_X86_FIRST_IN_REGZ(v) __asm__("" : "+v"(v))
#define EC_X86_FIRST_BC64Z(p) ec_x86_first_bc64z(p)
#endif

#if EC_X86_VNNI
#define EC_X86_FIRST_FLIP 0x80  /* VPDPBUSD reads u8 = x + 128 */
#else
#define EC_X86_FIRST_FLIP 0
#endif

/* n input rows from row iy0 on (batch image xb; rows outside the image read the zero point),
 * row_b bytes apart, zero-point padded left and right, flipped for VNNI. */
static inline void ec_x86_first_rows(const ec_x86_first_geom *g, const int8_t *xb, int iy0, int n,
                                 int8_t *rows) {
    const int ic = g->in_c, zp = (int8_t)(g->in_zp ^ EC_X86_FIRST_FLIP);
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
            for (i = 0; i < real; ++i) d[left + i] = (int8_t)(s[i] ^ EC_X86_FIRST_FLIP);
            ec_vec_fill(d + left + real, zp, g->row_b - left - real);
        }
    }
}

/* Every pixel's patch of an output row whose first input row is at rows, kpp bytes apart. Runs
 * are moved 16 bytes at a time: a move may write past its run (into the next run or pixel,
 * written after it, or the buffer's slack) and read past it (into the row's slack); bytes past
 * a patch's taps meet zero weights. */
static inline void ec_x86_first_patches(const ec_x86_first_geom *g, const int8_t *rows, int8_t *col) {
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
                    int32_t v = ec_x86_ld32(s + fy * rs + fx * g->dil_w * ic);
                    memcpy(d + (fy * g->k_w + fx) * ic, &v, 4);
                }
        }
    }
}

#if EC_X86_512
/* ZMM requantization constants of 16 lanes, loaded once per block of channels. */
typedef struct {
    __m512i m, mo, ce, co, e;
} ec_x86_first_rqz;

/* Lanes = channels c..c+15. */
static inline ec_x86_first_rqz ec_x86_first_rqz16(const ec_x86_rq *q, int c) {
    ec_x86_first_rqz r;
    r.m = _mm512_loadu_si512((const void *)(q->mult + c));
    r.mo = _mm512_srli_epi64(r.m, 32);
    r.e = _mm512_loadu_si512((const void *)(q->right + c));
    if (q->fast) {
        /* ec_x86_rq's c64 holds per block of 8 the 4 even channels' constants, then the odd */
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
static inline ec_x86_first_rqz ec_x86_first_rqz8x2(const ec_x86_rq *q, int c) {
    ec_x86_first_rqz r;
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

/* 16 accumulators -> int32 outputs (out_zp added, not clamped): ec_x86_fast8's operations on
 * 16 lanes when the fast path was proven, else ec_x86_requant8 on each half (channels c_lo..,
 * c_hi..). */
static inline __m512i ec_x86_first_rq512(__m512i acc, const ec_x86_rq *q, const ec_x86_first_rqz *k,
                                     int c_lo, int c_hi) {
    if (q->fast) {
        const __m512i a = _mm512_sll_epi32(acc, _mm_cvtsi32_si128(q->L));
        const __m512i ev = _mm512_add_epi64(_mm512_mul_epi32(a, k->m), k->ce);
        const __m512i od = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(a, 32), k->mo),
                                            k->co);
        const __m512i t = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(ev, 32), od);
        return _mm512_srav_epi32(_mm512_add_epi32(t, _mm512_srai_epi32(a, 31)), k->e);
    } else {
        const __m256i lo = ec_x86_requant8(_mm512_castsi512_si256(acc), q, c_lo);
        const __m256i hi = ec_x86_requant8(_mm512_extracti64x4_epi64(acc, 1), q, c_hi);
        return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
    }
}

/* Four vectors of 16 int32 outputs (each 16 consecutive output bytes: one pixel's 16 channels,
 * or two pixels' 8) -> their 64 bytes in order, saturated and clamped. */
static inline __m512i ec_x86_first_pack4(__m512i r0, __m512i r1, __m512i r2, __m512i r3,
                                     const ec_x86_rq *q) {
    /* the packs work within 128-bit lanes: dword 4i+v of b holds lane i of r_v */
    const __m512i b = _mm512_packs_epi16(_mm512_packs_epi32(r0, r1), _mm512_packs_epi32(r2, r3));
    const __m512i v = _mm512_permutexvar_epi32(
        _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), b);
    return _mm512_min_epi8(_mm512_max_epi8(v, _mm512_set1_epi8((char)q->act_min)),
                           _mm512_set1_epi8((char)q->act_max));
}

/* Store np pixels of bw (8 or 16) packed output bytes each: n channels of each (n <= bw) at y,
 * out_c apart. */
static inline void ec_x86_first_store512(int8_t *y, __m512i v, int np, int bw, int out_c, int n) {
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
static inline __m256i ec_x86_first_fold8(__m256i lo, __m256i hi) {
    /* hadd within 128-bit lanes gives [c0 c1 c4 c5 | c2 c3 c6 c7] */
    return _mm256_permute4x64_epi64(_mm256_hadd_epi32(lo, hi), 0xD8);
}

#if !EC_X86_VNNI
/* The int16 tap pairs [kpp/2][16][2] of a block of 16 channels from its quads [kpp/4][16][4]:
 * each 4 channels' quads sign-extended (VPMOVSXBW), their first pairs to one step, their second
 * to the next. */
static inline void ec_x86_first_w16(const int8_t *wq, int kpp, int16_t *w) {
    const __m256i idx = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    int s, h;
    for (s = 0; s < kpp / 4; ++s, wq += 64, w += 64)
        for (h = 0; h < 2; ++h) {  /* channels 8h..8h+7 */
            const __m256i a = _mm256_permutevar8x32_epi32(
                _mm256_cvtepi8_epi16(EC_LD128(wq + 32 * h)), idx);
            const __m256i b = _mm256_permutevar8x32_epi32(
                _mm256_cvtepi8_epi16(EC_LD128(wq + 32 * h + 16)), idx);
            _mm256_storeu_si256((__m256i *)(void *)(w + 16 * h), _mm256_permute2x128_si256(a, b, 0x20));
            _mm256_storeu_si256((__m256i *)(void *)(w + 32 + 16 * h),
                                _mm256_permute2x128_si256(a, b, 0x31));
        }
}

/* The same for the block of 8: pairs [kpp/2][8][2] from [kpp/8][8][8] (each channel's 8 taps a
 * step: 4 pairs, to 4 steps). */
static inline void ec_x86_first_w16_tail8(const int8_t *wq, int kpp, int16_t *w) {
    const __m256i idx = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    int s;
    for (s = 0; s < kpp / 8; ++s, wq += 64, w += 64) {
#define EC_X86_FIRST_W8(i) _mm256_permutevar8x32_epi32(_mm256_cvtepi8_epi16(EC_LD128(wq + 16 * (i))), idx)
        const __m256i y0 = EC_X86_FIRST_W8(0), y1 = EC_X86_FIRST_W8(1);
        const __m256i y2 = EC_X86_FIRST_W8(2), y3 = EC_X86_FIRST_W8(3);
#undef EC_X86_FIRST_W8
        const __m256i l01 = _mm256_unpacklo_epi64(y0, y1), h01 = _mm256_unpackhi_epi64(y0, y1);
        const __m256i l23 = _mm256_unpacklo_epi64(y2, y3), h23 = _mm256_unpackhi_epi64(y2, y3);
        _mm256_storeu_si256((__m256i *)(void *)w, _mm256_permute2x128_si256(l01, l23, 0x20));
        _mm256_storeu_si256((__m256i *)(void *)(w + 16), _mm256_permute2x128_si256(h01, h23, 0x20));
        _mm256_storeu_si256((__m256i *)(void *)(w + 32), _mm256_permute2x128_si256(l01, l23, 0x31));
        _mm256_storeu_si256((__m256i *)(void *)(w + 48), _mm256_permute2x128_si256(h01, h23, 0x31));
    }
}
#endif

#endif /* __AVX2__ */
#endif /* EDGECC_X86_CONV_2D_FIRST_COMMON_H */
