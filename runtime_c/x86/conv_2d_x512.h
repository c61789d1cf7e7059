/* edgecc x86 kernel: int8 CONV_2D on ZMM registers (EC_X86_512): tiles of pixels x channel blocks
 * over a flipped input band (conventions: x86/common.h). */
#ifndef EDGECC_X86_CONV_2D_X512_H
#define EDGECC_X86_CONV_2D_X512_H
#if defined(__AVX2__)
#include "x512.h"
/* The row kinds (edgecc/lower/vec/conv.py x512_kind, the same order): 0-1 16 pixels x 16 channels
 * (sliding, or not), 2-5 8 x 32 (sliding, or not; each without, then with a last 16- or
 * 8-channel block), 6-7 4 x 64 (without, with a last block), all with the fast requantization;
 * 8-15 the same tiles with the exact one. A kind's entry names its tiles and output stage, so a
 * model carries those its layers run (x86/conv_2d.h: the entries; the tiles below). */
#define EC_X86_TILINGS_512(X, ST, K0, K1, K2, K3, K4, K5, K6, K7)                          \
    X(K0, 16, 0, 0, ec_x86_s1_512, ST)                                                     \
    X(K1, 16, 0, 0, ec_x86_t1p16_512, ST)                                                  \
    X(K2, 8, 32, ec_x86_s2_512, 0, ST)                                                     \
    X(K3, 8, 32, ec_x86_s2_512, ec_x86_t1p8_512, ST)                                       \
    X(K4, 8, 32, ec_x86_t2_512, 0, ST)                                                     \
    X(K5, 8, 32, ec_x86_t2_512, ec_x86_t1p8_512, ST)                                       \
    X(K6, 4, 64, ec_x86_t4_512, 0, ST)                                                     \
    X(K7, 4, 64, ec_x86_t4_512, ec_x86_t1p4_512, ST)
#define EC_X86_KINDS_512(X)                                                                      \
    EC_X86_TILINGS_512(X, ec_x86_stf_512, ec_x86_conv_2d_k0_s8, ec_x86_conv_2d_k1_s8,            \
                       ec_x86_conv_2d_k2_s8, ec_x86_conv_2d_k3_s8, ec_x86_conv_2d_k4_s8,         \
                       ec_x86_conv_2d_k5_s8, ec_x86_conv_2d_k6_s8, ec_x86_conv_2d_k7_s8)         \
    EC_X86_TILINGS_512(X, ec_x86_stx_512, ec_x86_conv_2d_k8_s8, ec_x86_conv_2d_k9_s8,            \
                       ec_x86_conv_2d_k10_s8, ec_x86_conv_2d_k11_s8, ec_x86_conv_2d_k12_s8,      \
                       ec_x86_conv_2d_k13_s8, ec_x86_conv_2d_k14_s8, ec_x86_conv_2d_k15_s8)

#if EC_X86_512
/* Tiles: P pixels (src, src + ps, ...: band bytes; the first np are stored) x NC blocks of 16
 * channels from c, accumulators in named registers (an array would live in memory). The
 * one-block tile masks the block to 8 channels (wm) and steps 32 bytes for the last, 8-channel
 * block. P is a constant where these are inlined: the unused pixels' code disappears. */
#define EC_X86_U_512(i) _mm512_set1_epi32(ec_x86_ld32(f + (i) * ps))
#define EC_X86_W_512(j) _mm512_maskz_loadu_epi32(wm, wk + (size_t)(j) * 16 * kp)
#define EC_X86_TILE_HEAD_512(NC)                                                          \
    const int qs = g->seg_p / 4, kp = g->kp, full = c + 16 * (NC) <= g->ocp;              \
    const int wstep = full ? 64 : 32;                                                     \
    const __mmask16 wm = full ? (__mmask16)0xFFFF : (__mmask16)0x00FF;                    \
    const int8_t *wk = w + (size_t)c * kp;                                                \
    int s, k

static inline __attribute__((always_inline)) void ec_x86_tile1_512(
    const ec_vec_conv_geom *g, const int8_t *src, ptrdiff_t ps, const ptrdiff_t *boff,
    const int8_t *w, const int32_t *bias, const ec_x86_rq *q, int c, int8_t *y, int np,
    ec_x86_storefn_512 st,
    const int P) {
    EC_X86_TILE_HEAD_512(1);
    const __m512i b = _mm512_maskz_loadu_epi32(wm, bias + c);
    __m512i a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b;
    __m512i a8 = b, a9 = b, a10 = b, a11 = b, a12 = b, a13 = b, a14 = b, a15 = b;
    for (s = 0; s < g->segs; ++s) {
        const int8_t *f = src + boff[s];
        for (k = 0; k < qs; ++k, f += 4, wk += wstep) {
            __m512i v0 = EC_X86_W_512(0);
            EC_X86_IN_REG_512(v0);
            a0 = _mm512_dpbusd_epi32(a0, EC_X86_U_512(0), v0);
            a1 = _mm512_dpbusd_epi32(a1, EC_X86_U_512(1), v0);
            a2 = _mm512_dpbusd_epi32(a2, EC_X86_U_512(2), v0);
            a3 = _mm512_dpbusd_epi32(a3, EC_X86_U_512(3), v0);
            if (P > 4) {
                a4 = _mm512_dpbusd_epi32(a4, EC_X86_U_512(4), v0);
                a5 = _mm512_dpbusd_epi32(a5, EC_X86_U_512(5), v0);
                a6 = _mm512_dpbusd_epi32(a6, EC_X86_U_512(6), v0);
                a7 = _mm512_dpbusd_epi32(a7, EC_X86_U_512(7), v0);
            }
            if (P > 8) {
                a8 = _mm512_dpbusd_epi32(a8, EC_X86_U_512(8), v0);
                a9 = _mm512_dpbusd_epi32(a9, EC_X86_U_512(9), v0);
                a10 = _mm512_dpbusd_epi32(a10, EC_X86_U_512(10), v0);
                a11 = _mm512_dpbusd_epi32(a11, EC_X86_U_512(11), v0);
                a12 = _mm512_dpbusd_epi32(a12, EC_X86_U_512(12), v0);
                a13 = _mm512_dpbusd_epi32(a13, EC_X86_U_512(13), v0);
                a14 = _mm512_dpbusd_epi32(a14, EC_X86_U_512(14), v0);
                a15 = _mm512_dpbusd_epi32(a15, EC_X86_U_512(15), v0);
            }
        }
    }
    {
        const __m512i acc[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
        st(g, q, c, y, np, acc, 1, P / 4);
    }
}

/* 8 pixels x 2 blocks of 16 channels (whole blocks). */
static inline __attribute__((always_inline)) void ec_x86_tile2_512(
    const ec_vec_conv_geom *g, const int8_t *src, ptrdiff_t ps, const ptrdiff_t *boff,
    const int8_t *w, const int32_t *bias, const ec_x86_rq *q, int c, int8_t *y, int np,
    ec_x86_storefn_512 st) {
    EC_X86_TILE_HEAD_512(2);
    const __m512i b0 = _mm512_loadu_si512((const void *)(bias + c));
    const __m512i b1 = _mm512_loadu_si512((const void *)(bias + c + 16));
    __m512i a00 = b0, a10 = b0, a20 = b0, a30 = b0, a40 = b0, a50 = b0, a60 = b0, a70 = b0;
    __m512i a01 = b1, a11 = b1, a21 = b1, a31 = b1, a41 = b1, a51 = b1, a61 = b1, a71 = b1;
    (void)wstep;
    for (s = 0; s < g->segs; ++s) {
        const int8_t *f = src + boff[s];
        for (k = 0; k < qs; ++k, f += 4, wk += 64) {
            __m512i v0 = EC_X86_W_512(0), v1 = EC_X86_W_512(1), u;
            EC_X86_IN_REG_512(v0);
            EC_X86_IN_REG_512(v1);
#define EC_X86_P2_512(i) u = EC_X86_U_512(i); a##i##0 = _mm512_dpbusd_epi32(a##i##0, u, v0); \
            a##i##1 = _mm512_dpbusd_epi32(a##i##1, u, v1)
            EC_X86_P2_512(0); EC_X86_P2_512(1); EC_X86_P2_512(2); EC_X86_P2_512(3);
            EC_X86_P2_512(4); EC_X86_P2_512(5); EC_X86_P2_512(6); EC_X86_P2_512(7);
#undef EC_X86_P2_512
        }
    }
    {
        const __m512i acc[16] = {a00, a10, a20, a30, a40, a50, a60, a70,
                                 a01, a11, a21, a31, a41, a51, a61, a71};
        st(g, q, c, y, np, acc, 2, 2);
    }
}

/* 4 pixels x 4 blocks of 16 channels (whole blocks). */
static inline __attribute__((always_inline)) void ec_x86_tile4_512(
    const ec_vec_conv_geom *g, const int8_t *src, ptrdiff_t ps, const ptrdiff_t *boff,
    const int8_t *w, const int32_t *bias, const ec_x86_rq *q, int c, int8_t *y, int np,
    ec_x86_storefn_512 st) {
    EC_X86_TILE_HEAD_512(4);
    const __m512i b0 = _mm512_loadu_si512((const void *)(bias + c));
    const __m512i b1 = _mm512_loadu_si512((const void *)(bias + c + 16));
    const __m512i b2 = _mm512_loadu_si512((const void *)(bias + c + 32));
    const __m512i b3 = _mm512_loadu_si512((const void *)(bias + c + 48));
    __m512i a00 = b0, a10 = b0, a20 = b0, a30 = b0, a01 = b1, a11 = b1, a21 = b1, a31 = b1;
    __m512i a02 = b2, a12 = b2, a22 = b2, a32 = b2, a03 = b3, a13 = b3, a23 = b3, a33 = b3;
    (void)wstep;
    for (s = 0; s < g->segs; ++s) {
        const int8_t *f = src + boff[s];
        for (k = 0; k < qs; ++k, f += 4, wk += 64) {
            __m512i v0 = EC_X86_W_512(0), v1 = EC_X86_W_512(1), v2 = EC_X86_W_512(2), v3 = EC_X86_W_512(3), u;
            EC_X86_IN_REG_512(v0);
            EC_X86_IN_REG_512(v1);
            EC_X86_IN_REG_512(v2);
            EC_X86_IN_REG_512(v3);
#define EC_X86_P4_512(i) u = EC_X86_U_512(i); a##i##0 = _mm512_dpbusd_epi32(a##i##0, u, v0); \
            a##i##1 = _mm512_dpbusd_epi32(a##i##1, u, v1);                               \
            a##i##2 = _mm512_dpbusd_epi32(a##i##2, u, v2);                               \
            a##i##3 = _mm512_dpbusd_epi32(a##i##3, u, v3)
            EC_X86_P4_512(0); EC_X86_P4_512(1); EC_X86_P4_512(2); EC_X86_P4_512(3);
#undef EC_X86_P4_512
        }
    }
    {
        const __m512i acc[16] = {a00, a10, a20, a30, a01, a11, a21, a31,
                                 a02, a12, a22, a32, a03, a13, a23, a33};
        st(g, q, c, y, np, acc, 4, 1);
    }
}

/* Stride-1 3-wide filter rows over in_c % 4 == 0 channels (bd->slide): a segment's quads k,
 * k + d, k + 2d (d = in_c / 4) of pixel i are the quad k of pixels i, i + 1, i + 2, so each
 * broadcast input quad feeds 3 pixels: P + 2 broadcasts for 3P products (x NC blocks) instead
 * of 3P. Weights of the three taps stay in registers. */
#define EC_X86_S3_512(j, A, B, C) u = EC_X86_U_512(j); C = _mm512_dpbusd_epi32(C, u, w2); \
    B = _mm512_dpbusd_epi32(B, u, w1); A = _mm512_dpbusd_epi32(A, u, w0)

static inline __attribute__((always_inline)) void ec_x86_slide1_512(
    const ec_vec_conv_geom *g, const int8_t *src, ptrdiff_t ps, const ptrdiff_t *boff,
    const int8_t *w, const int32_t *bias, const ec_x86_rq *q, int c, int8_t *y, int np,
    ec_x86_storefn_512 st) {
    EC_X86_TILE_HEAD_512(1);
    const int d = qs / 3;
    const __m512i b = _mm512_maskz_loadu_epi32(wm, bias + c);
    __m512i a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b;
    __m512i a8 = b, a9 = b, a10 = b, a11 = b, a12 = b, a13 = b, a14 = b, a15 = b;
    for (s = 0; s < g->segs; ++s, wk += (size_t)qs * wstep) {
        const int8_t *f = src + boff[s];
        for (k = 0; k < d; ++k, f += 4) {
            __m512i w0 = _mm512_maskz_loadu_epi32(wm, wk + (size_t)k * wstep);
            __m512i w1 = _mm512_maskz_loadu_epi32(wm, wk + (size_t)(k + d) * wstep);
            __m512i w2 = _mm512_maskz_loadu_epi32(wm, wk + (size_t)(k + 2 * d) * wstep);
            __m512i u = EC_X86_U_512(0);
            EC_X86_IN_REG_512(w0);
            EC_X86_IN_REG_512(w1);
            EC_X86_IN_REG_512(w2);
            a0 = _mm512_dpbusd_epi32(a0, u, w0);
            u = EC_X86_U_512(1);
            a0 = _mm512_dpbusd_epi32(a0, u, w1);
            a1 = _mm512_dpbusd_epi32(a1, u, w0);
            EC_X86_S3_512(2, a2, a1, a0); EC_X86_S3_512(3, a3, a2, a1); EC_X86_S3_512(4, a4, a3, a2);
            EC_X86_S3_512(5, a5, a4, a3); EC_X86_S3_512(6, a6, a5, a4); EC_X86_S3_512(7, a7, a6, a5);
            EC_X86_S3_512(8, a8, a7, a6); EC_X86_S3_512(9, a9, a8, a7); EC_X86_S3_512(10, a10, a9, a8);
            EC_X86_S3_512(11, a11, a10, a9); EC_X86_S3_512(12, a12, a11, a10);
            EC_X86_S3_512(13, a13, a12, a11); EC_X86_S3_512(14, a14, a13, a12);
            EC_X86_S3_512(15, a15, a14, a13);
            u = EC_X86_U_512(16);
            a14 = _mm512_dpbusd_epi32(a14, u, w2);
            a15 = _mm512_dpbusd_epi32(a15, u, w1);
            u = EC_X86_U_512(17);
            a15 = _mm512_dpbusd_epi32(a15, u, w2);
        }
    }
    {
        const __m512i acc[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
        st(g, q, c, y, np, acc, 1, 4);
    }
}

/* The same for 8 pixels x 2 blocks of 16 channels (6 weight registers). */
static inline __attribute__((always_inline)) void ec_x86_slide2_512(
    const ec_vec_conv_geom *g, const int8_t *src, ptrdiff_t ps, const ptrdiff_t *boff,
    const int8_t *w, const int32_t *bias, const ec_x86_rq *q, int c, int8_t *y, int np,
    ec_x86_storefn_512 st) {
    EC_X86_TILE_HEAD_512(2);
    const int d = qs / 3;
    const size_t kb = (size_t)16 * kp;
    const __m512i b0 = _mm512_loadu_si512((const void *)(bias + c));
    const __m512i b1 = _mm512_loadu_si512((const void *)(bias + c + 16));
    __m512i a00 = b0, a10 = b0, a20 = b0, a30 = b0, a40 = b0, a50 = b0, a60 = b0, a70 = b0;
    __m512i a01 = b1, a11 = b1, a21 = b1, a31 = b1, a41 = b1, a51 = b1, a61 = b1, a71 = b1;
    (void)wm;
    for (s = 0; s < g->segs; ++s, wk += (size_t)qs * wstep) {
        const int8_t *f = src + boff[s];
        for (k = 0; k < d; ++k, f += 4) {
            __m512i w0 = _mm512_loadu_si512((const void *)(wk + (size_t)k * 64));
            __m512i w1 = _mm512_loadu_si512((const void *)(wk + (size_t)(k + d) * 64));
            __m512i w2 = _mm512_loadu_si512((const void *)(wk + (size_t)(k + 2 * d) * 64));
            __m512i x0 = _mm512_loadu_si512((const void *)(wk + kb + (size_t)k * 64));
            __m512i x1 = _mm512_loadu_si512((const void *)(wk + kb + (size_t)(k + d) * 64));
            __m512i x2 = _mm512_loadu_si512((const void *)(wk + kb + (size_t)(k + 2 * d) * 64));
            __m512i u = EC_X86_U_512(0);
            EC_X86_IN_REG_512(w0);
            EC_X86_IN_REG_512(w1);
            EC_X86_IN_REG_512(w2);
            EC_X86_IN_REG_512(x0);
            EC_X86_IN_REG_512(x1);
            EC_X86_IN_REG_512(x2);
#define EC_X86_S3B_512(j, A, B, C, D, E, F) u = EC_X86_U_512(j); \
            C = _mm512_dpbusd_epi32(C, u, w2); B = _mm512_dpbusd_epi32(B, u, w1);      \
            A = _mm512_dpbusd_epi32(A, u, w0); F = _mm512_dpbusd_epi32(F, u, x2);      \
            E = _mm512_dpbusd_epi32(E, u, x1); D = _mm512_dpbusd_epi32(D, u, x0)
            a00 = _mm512_dpbusd_epi32(a00, u, w0);
            a01 = _mm512_dpbusd_epi32(a01, u, x0);
            u = EC_X86_U_512(1);
            a00 = _mm512_dpbusd_epi32(a00, u, w1);
            a10 = _mm512_dpbusd_epi32(a10, u, w0);
            a01 = _mm512_dpbusd_epi32(a01, u, x1);
            a11 = _mm512_dpbusd_epi32(a11, u, x0);
            EC_X86_S3B_512(2, a20, a10, a00, a21, a11, a01);
            EC_X86_S3B_512(3, a30, a20, a10, a31, a21, a11);
            EC_X86_S3B_512(4, a40, a30, a20, a41, a31, a21);
            EC_X86_S3B_512(5, a50, a40, a30, a51, a41, a31);
            EC_X86_S3B_512(6, a60, a50, a40, a61, a51, a41);
            EC_X86_S3B_512(7, a70, a60, a50, a71, a61, a51);
#undef EC_X86_S3B_512
            u = EC_X86_U_512(8);
            a60 = _mm512_dpbusd_epi32(a60, u, w2);
            a70 = _mm512_dpbusd_epi32(a70, u, w1);
            a61 = _mm512_dpbusd_epi32(a61, u, x2);
            a71 = _mm512_dpbusd_epi32(a71, u, x1);
            u = EC_X86_U_512(9);
            a70 = _mm512_dpbusd_epi32(a70, u, w2);
            a71 = _mm512_dpbusd_epi32(a71, u, x2);
        }
    }
    {
        const __m512i acc[16] = {a00, a10, a20, a30, a40, a50, a60, a70,
                                 a01, a11, a21, a31, a41, a51, a61, a71};
        st(g, q, c, y, np, acc, 2, 2);
    }
}

/* A tile as a function (the bodies above, inlined once each): the pixel stride ps a run-time
 * argument, so one copy serves every stride. */
typedef void (*ec_x86_tilefn_512)(const ec_vec_conv_geom *g, const int8_t *src, ptrdiff_t ps,
                               const ptrdiff_t *boff, const int8_t *w, const int32_t *bias,
                               const ec_x86_rq *q, int c, int8_t *y, int np, ec_x86_storefn_512 st);
#define EC_X86_TILE_FN_512(NAME, CALL)                                                             \
    static __attribute__((noinline, unused)) void NAME(                                            \
        const ec_vec_conv_geom *g, const int8_t *src, ptrdiff_t ps, const ptrdiff_t *boff,         \
        const int8_t *w, const int32_t *bias, const ec_x86_rq *q, int c, int8_t *y, int np,        \
        ec_x86_storefn_512 st) {                                                                   \
        CALL;                                                                                      \
    }
EC_X86_TILE_FN_512(ec_x86_t1p16_512, ec_x86_tile1_512(g, src, ps, boff, w, bias, q, c, y, np, st, 16))
EC_X86_TILE_FN_512(ec_x86_t1p8_512, ec_x86_tile1_512(g, src, ps, boff, w, bias, q, c, y, np, st, 8))
EC_X86_TILE_FN_512(ec_x86_t1p4_512, ec_x86_tile1_512(g, src, ps, boff, w, bias, q, c, y, np, st, 4))
EC_X86_TILE_FN_512(ec_x86_t2_512, ec_x86_tile2_512(g, src, ps, boff, w, bias, q, c, y, np, st))
EC_X86_TILE_FN_512(ec_x86_t4_512, ec_x86_tile4_512(g, src, ps, boff, w, bias, q, c, y, np, st))
EC_X86_TILE_FN_512(ec_x86_s1_512, ec_x86_slide1_512(g, src, ps, boff, w, bias, q, c, y, np, st))
EC_X86_TILE_FN_512(ec_x86_s2_512, ec_x86_slide2_512(g, src, ps, boff, w, bias, q, c, y, np, st))
#undef EC_X86_TILE_FN_512

/* A layer's row kind: tiles of P pixels, `step` channels at a time by `main` while they fit,
 * then 16 (or a last 8) at a time by `rest` (either may be absent), each ending in `st`. */
typedef struct {
    int P, step;
    ec_x86_tilefn_512 main, rest;
    ec_x86_storefn_512 st;
} ec_x86_rowk_512;

/* A row of n output pixels whose band starts at src (pixel i at src + i * ps): tiles of P pixels
 * (the last one moved back to end at the row's end when the row has P pixels, so every tile is
 * full), over the channels as the kind says. */
static EC_X86_SMALL_512 __attribute__((noinline, unused)) void ec_x86_row_512(
    const ec_vec_conv_geom *g, const int8_t *src, ptrdiff_t ps, const ptrdiff_t *boff, int n,
    const int8_t *w, const int32_t *bias, const ec_x86_rq *q, int8_t *y, const ec_x86_rowk_512 *k) {
    const int P = k->P;
    int o0, c;
    for (o0 = 0; o0 < n; o0 += P) {
        int np = n - o0 < P ? n - o0 : P;
        if (np < P && n >= P) {
            o0 = n - P;
            np = P;
        }
        {
            int8_t *yo = y + (size_t)o0 * g->out_c;
            const int8_t *so = src + o0 * ps;
            c = 0;
            if (k->main)
                for (; c + k->step <= g->ocp; c += k->step) k->main(g, so, ps, boff, w, bias, q, c, yo, np, k->st);
            if (k->rest)
                for (; c < g->ocp; c += 16) k->rest(g, so, ps, boff, w, bias, q, c, yo, np, k->st);
        }
    }
}

/* The convolution over bands of input rows, each row of output pixels by the kind's tiles. */
static EC_X86_SMALL_512 __attribute__((noinline, unused)) void ec_x86_conv_512(
    const ec_vec_conv_geom *g, const ec_x86_band_512 *bd, const int8_t *x, int8_t *y,
    const int8_t *w, const int32_t *bias_u, const ec_x86_rq *q, const ec_x86_rowk_512 *k) {
    int8_t band[EC_X86_MAX_BAND_512] __attribute__((aligned(64)));
    ptrdiff_t boff[EC_VEC_MAX_SEGS];
    const ptrdiff_t ps = (ptrdiff_t)g->stride_w * g->in_c;
    const int zpu = (g->in_zp ^ 0x80) & 0xFF;
    int s = 0, fy, fx, b, oy;
    for (fy = 0; fy < g->k_h; ++fy) {
        if (g->dil_w == 1) boff[s++] = (ptrdiff_t)fy * bd->row;
        else
            for (fx = 0; fx < g->k_w; ++fx)
                boff[s++] = (ptrdiff_t)fy * bd->row + (ptrdiff_t)fx * g->dil_w * g->in_c;
    }
    if (bd->chunk > 0) {
        int p0;
        for (p0 = 0; p0 < g->pixels; p0 += bd->chunk) {
            const int n = g->pixels - p0 < bd->chunk ? g->pixels - p0 : bd->chunk;
            ec_x86_flip_512(band, x + (size_t)p0 * g->in_c, n * g->in_c);
            ec_x86_row_512(g, band, ps, boff, n, w, bias_u, q, y + (size_t)p0 * g->out_c, k);
        }
        return;
    }
    {
        /* the band's k_h rows are a ring (undilated rows): an input row is flipped once, into
         * slot iy mod k_h, and stays while the next output rows read it */
        const int left = g->pad_l < bd->cols ? g->pad_l : bd->cols;
        const int mid = g->in_w < bd->cols - left ? g->in_w : bd->cols - left;
        const int ring = g->dil_h == 1;
        int held[EC_VEC_MAX_SEGS];
        for (b = 0; b < g->batches; ++b) {
            for (fy = 0; fy < g->k_h; ++fy) held[fy] = -0x7fffffff;
            for (oy = 0; oy < g->out_h; ++oy) {
                for (fy = 0, s = 0; fy < g->k_h; ++fy) {
                    const int iy = oy * g->stride_h - g->pad_t + fy * g->dil_h;
                    const int slot = ring ? ((iy % g->k_h) + g->k_h) % g->k_h : fy;
                    int8_t *d = band + (ptrdiff_t)slot * bd->row;
                    if (g->dil_w == 1) boff[s++] = (ptrdiff_t)slot * bd->row;
                    else
                        for (fx = 0; fx < g->k_w; ++fx)
                            boff[s++] = (ptrdiff_t)slot * bd->row + (ptrdiff_t)fx * g->dil_w * g->in_c;
                    if (ring && held[slot] == iy) continue;
                    held[slot] = iy;
                    if (iy < 0 || iy >= g->in_h) {
                        ec_x86_fill_512(d, zpu, bd->cols * g->in_c);
                        continue;
                    }
                    ec_x86_fill_512(d, zpu, left * g->in_c);
                    ec_x86_flip_512(d + left * g->in_c,
                                 x + (((ptrdiff_t)b * g->in_h + iy) * g->in_w + (left - g->pad_l)) * g->in_c,
                                 mid * g->in_c);
                    ec_x86_fill_512(d + (left + mid) * g->in_c, zpu, (bd->cols - left - mid) * g->in_c);
                }
                ec_x86_row_512(g, band, ps, boff, g->out_w, w, bias_u, q,
                            y + (((size_t)b * g->out_h + oy) * g->out_w) * g->out_c, k);
            }
        }
    }
}

/* The kind of a layer's rows from its band and padded channels (the order of the kinds above). */
static inline int ec_x86_kind_512(const ec_x86_band_512 *bd, int ocp, int fast) {
    const int x = fast ? 0 : 8;
    if (bd->P == 16) return x + (bd->slide ? 0 : 1);
    if (bd->P == 8) return x + (bd->slide ? 2 : 4) + (ocp % 32 != 0);
    return x + 6 + (ocp % 64 != 0);
}

/* Any kind, chosen at run time (every kind's code). */
EC_X86_SHARED void ec_x86_conv_2d_x512(const ec_vec_conv_geom *g, const ec_x86_band_512 *bd,
                                 const int8_t *x, int8_t *y, const int8_t *w,
                                 const int32_t *bias_u, const ec_x86_rq *q) {
#define EC_X86_ROWK_512(N, P, STEP, MAIN, REST, ST) {P, STEP, MAIN, REST, ST},
    static const ec_x86_rowk_512 kinds[16] = {EC_X86_KINDS_512(EC_X86_ROWK_512)};
#undef EC_X86_ROWK_512
    ec_x86_conv_512(g, bd, x, y, w, bias_u, q, &kinds[ec_x86_kind_512(bd, g->ocp, q->fast)]);
}
#endif
#endif /* __AVX2__ */
#endif /* EDGECC_X86_CONV_2D_X512_H */
