/* edgecc x86 kernel: AVX-512 helpers (EC_X86_512) of the 512-bit convolution: its band record, u8
 * flips, 16-lane requantization, the tiles' output stages (conventions: x86/common.h). */
#ifndef EDGECC_X86_X512_H
#define EDGECC_X86_X512_H
#if defined(__AVX2__)
#include "common.h"

/* ------------------------------------------------------------------- CONV_2D on ZMM registers */

/* How the 512-bit convolution runs a layer (edgecc/ops/_vec.py: x512_band): tiles of P output
 * pixels x NC blocks of 16 channels (P = 0: the layer takes ec_x86_conv_2d_avx2), and the band: for each
 * row of output pixels, the k_h input rows it reads (columns from -pad_l on, `cols` of them,
 * `row` bytes apart) flipped to u8 = x ^ 0x80 and padded with in_zp ^ 0x80, on the stack. A 1x1
 * stride-1 unpadded layer (`chunk` > 0) flips `chunk` consecutive pixels at a time instead. */
#ifndef EC_X86_ONCE_EC_X512_BAND /* a record the calls name: defined once, not per level */
#define EC_X86_ONCE_EC_X512_BAND
typedef struct {
    int32_t P, NC, chunk, row, cols;
    int32_t slide;  /* stride 1, k_w 3, undilated, in_c % 4 == 0: ec_x86_slide1_512 / 2 */
} ec_x86_band_512;
#endif

#define EC_X86_MAX_BAND_512 16384

#if EC_X86_512
/* The band driver's scalar code runs once an output row: compiled for size (-Os). */
#if defined(__clang__)
#define EC_X86_SMALL_512 __attribute__((minsize))
#else
#define EC_X86_SMALL_512 __attribute__((optimize("Os")))
#endif

/* Keep a ZMM vector in a register (see EC_X86_IN_REG). */
#define EC_X86_IN_REG_512(v) __asm__("" : "+v"(v))

/* n bytes (any n) of src XOR 0x80 to dst / n bytes of v. */
static __attribute__((noinline, unused)) void ec_x86_flip_512(int8_t *dst, const int8_t *src, int n) {
    const __m512i f = _mm512_set1_epi8((char)0x80);
    int i = 0;
    for (; i + 64 <= n; i += 64)
        _mm512_storeu_si512((void *)(dst + i), _mm512_xor_si512(_mm512_loadu_si512((const void *)(src + i)), f));
    if (i < n) {
        const __mmask64 m = ((__mmask64)1 << (n - i)) - 1;
        _mm512_mask_storeu_epi8(dst + i, m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, src + i), f));
    }
}

static __attribute__((noinline, unused)) void ec_x86_fill_512(int8_t *dst, int v, int n) {
    const __m512i f = _mm512_set1_epi8((char)v);
    int i = 0;
    for (; i + 64 <= n; i += 64) _mm512_storeu_si512((void *)(dst + i), f);
    if (i < n) _mm512_mask_storeu_epi8(dst + i, ((__mmask64)1 << (n - i)) - 1, f);
}

/* Requantization constants of channels c..c+15, loaded once per tile (fast path: the c64 pairs
 * of the two 8-channel blocks put side by side as VPMULDQ's even / odd products want them). */
typedef struct {
    __m512i m, mo, ce, co, e, lo, hi;
} ec_x86_rqc_512;

static inline __attribute__((always_inline)) ec_x86_rqc_512 ec_x86_rq_load_512(const ec_x86_rq *q, int c) {
    ec_x86_rqc_512 r;
    r.lo = _mm512_set1_epi8((char)q->act_min);
    r.hi = _mm512_set1_epi8((char)q->act_max);
    r.m = r.mo = r.ce = r.co = r.e = _mm512_setzero_si512();
    if (q->fast) {
        r.m = _mm512_loadu_si512((const void *)(q->mult + c));
        r.mo = _mm512_srli_epi64(r.m, 32);
        r.e = _mm512_loadu_si512((const void *)(q->right + c));
        r.ce = _mm512_inserti64x4(_mm512_castsi256_si512(EC_LD256(q->c64 + c)), EC_LD256(q->c64 + c + 8), 1);
        r.co = _mm512_inserti64x4(_mm512_castsi256_si512(EC_LD256(q->c64 + c + 4)), EC_LD256(q->c64 + c + 12), 1);
    }
    return r;
}

/* Requantize 16 accumulators of channels c..c+15 (ec_x86_fast8 / ec_x86_mbqm8 on 16 lanes),
 * clamp and store the first n (1..16) bytes. */
/* The exact path (or ONNX's epilogue) out of line: 16 copies of it in every tile would only
 * cost code size. */
static __attribute__((noinline, unused)) __m512i ec_x86_mbqm16_512(__m512i acc, const ec_x86_rq *q, int c) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(ec_x86_exact8(_mm512_castsi512_si256(acc), q, c)),
                              ec_x86_exact8(_mm512_extracti64x4_epi64(acc, 1), q, c + 8), 1);
}

/* 16 accumulators of channels c..c+15 -> int32 outputs (ec_x86_fast8 / ec_x86_mbqm8 on 16
 * lanes), not yet saturated or clamped. */
static inline __attribute__((always_inline)) __m512i ec_x86_rq16_512(__m512i acc, const ec_x86_rqc_512 *r,
                                                                  const ec_x86_rq *q, int c,
                                                                  const int fast) {
    if (fast) {
        const __m512i a = q->L ? _mm512_sll_epi32(acc, _mm_cvtsi32_si128(q->L)) : acc;
        const __m512i ev = _mm512_add_epi64(_mm512_mul_epi32(a, r->m), r->ce);
        const __m512i od = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(a, 32), r->mo), r->co);
        /* the products' high halves: even lanes from ev (swapped into place), odd ones from od */
        const __m512i t = _mm512_mask_shuffle_epi32(od, 0x5555, ev, _MM_PERM_CDAB);
        return _mm512_srav_epi32(_mm512_add_epi32(t, _mm512_srai_epi32(a, 31)), r->e);
    }
    return ec_x86_mbqm16_512(acc, q, c);
}

/* 4 pixels' accumulators of channels c..c+15 (pixel k's at y + k * ys): requantized, packed
 * with saturation to int8 (two packs, then the pixels' dwords put back in order), clamped to
 * the activation range (int8 lanes, 64 at once) and stored, n channels (1..16) of the first np
 * pixels (0..4); 16 channels of 4 consecutive pixels in one 64-byte store. */
static inline __attribute__((always_inline)) void ec_x86_out4x16_512(
    int8_t *y, ptrdiff_t ys, __m512i a0, __m512i a1, __m512i a2, __m512i a3,
    const ec_x86_rqc_512 *r, const ec_x86_rq *q, int c, int n, int np, const int fast) {
    const __m512i idx = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    __m512i v;
    const __mmask16 m = (__mmask16)(((uint32_t)1 << n) - 1);
    if (np <= 0) return;
    v = _mm512_packs_epi16(_mm512_packs_epi32(ec_x86_rq16_512(a0, r, q, c, fast), ec_x86_rq16_512(a1, r, q, c, fast)),
                           _mm512_packs_epi32(ec_x86_rq16_512(a2, r, q, c, fast), ec_x86_rq16_512(a3, r, q, c, fast)));
    v = _mm512_permutexvar_epi32(idx, v);
    if (q->act_min > -128) v = _mm512_max_epi8(v, r->lo);
    if (q->act_max < 127) v = _mm512_min_epi8(v, r->hi);
    if (np >= 4 && n == 16 && ys == 16) {
        _mm512_storeu_si512((void *)y, v);
        return;
    }
    _mm_mask_storeu_epi8(y, m, _mm512_castsi512_si128(v));
    if (np > 1) _mm_mask_storeu_epi8(y + ys, m, _mm512_extracti32x4_epi32(v, 1));
    if (np > 2) _mm_mask_storeu_epi8(y + 2 * ys, m, _mm512_extracti32x4_epi32(v, 2));
    if (np > 3) _mm_mask_storeu_epi8(y + 3 * ys, m, _mm512_extracti32x4_epi32(v, 3));
}

/* The output stage of every tile, out of line (one copy, not one per tile and kind): NC blocks
 * of 16 channels from c, ng groups of 4 accumulators each, group k acc[4k..4k+3] the pixels
 * 4k .. 4k + 3 of block 0, then block 1's groups, ...: requantized (each block's constants
 * loaded once), clamped and stored, the first np pixels. */
static inline __attribute__((always_inline)) void ec_x86_store_as_512(
    const ec_vec_conv_geom *g, const ec_x86_rq *q, int c, int8_t *y, int np, const __m512i *acc,
    int NC, int ng, const int fast) {
    int j, k;
    for (j = 0; j < NC; ++j, acc += 4 * ng) {
        const int cj = c + 16 * j, n = g->out_c - cj < 16 ? g->out_c - cj : 16;
        const ec_x86_rqc_512 r = ec_x86_rq_load_512(q, cj);
        for (k = 0; k < ng && 4 * k < np; ++k)
            ec_x86_out4x16_512(y + (size_t)(4 * k) * g->out_c + cj, g->out_c, acc[4 * k], acc[4 * k + 1],
                            acc[4 * k + 2], acc[4 * k + 3], &r, q, cj, n, np - 4 * k, fast);
    }
}

/* The output stage a layer's tiles call (its kind names it): the fast requantization alone (no
 * branch on it per accumulator, no code of the other), or the exact one (TFLite's two roundings
 * or ONNX's epilogue, x512.h: ec_x86_mbqm16_512). */
typedef void (*ec_x86_storefn_512)(const ec_vec_conv_geom *g, const ec_x86_rq *q, int c, int8_t *y,
                                int np, const __m512i *acc, int NC, int ng);
#define EC_X86_STORE_FN_512(NAME, FAST)                                                               \
    static __attribute__((noinline, unused)) void NAME(                                               \
        const ec_vec_conv_geom *g, const ec_x86_rq *q, int c, int8_t *y, int np,                      \
        const __m512i *acc, int NC, int ng) {                                                         \
        ec_x86_store_as_512(g, q, c, y, np, acc, NC, ng, FAST);                                       \
    }
EC_X86_STORE_FN_512(ec_x86_stf_512, 1)
EC_X86_STORE_FN_512(ec_x86_stx_512, 0)
#undef EC_X86_STORE_FN_512

#endif /* EC_X86_512 */

#endif /* __AVX2__ */
#endif /* EDGECC_X86_X512_H */
