/* edgecc x86 kernel: 3x3 undilated DEPTHWISE_CONV_2D, row by row (conventions:
 * x86/depthwise_conv_2d.h). */
#ifndef EDGECC_X86_DEPTHWISE_CONV_2D_3X3_H
#define EDGECC_X86_DEPTHWISE_CONV_2D_3X3_H
#if defined(__AVX2__)
#include "depthwise_conv_2d_3x3_x512.h"

/* One output row of one channel block. rp: the 3 input rows' first pixel (a row outside the input:
 * zrow, a whole row of input_zp bytes and 64 more; every row steps C bytes a pixel). Weights: 5
 * pairs P0..P4 = (w0,w3) (w1,w4) (w2,w5) (w6,w7) and (w8,0) when d4 == 1, else (0,w8) (tap t = 3*fy
 * + fx), for each pair [c][2]. With V(j) = pairs of rows 0 and 1 at input column j and H(j) = pairs
 * of row 2 at columns j, j+1, the pixel whose window starts at column j - 1 is V(j-1).P0 + V(j).P1
 * + V(j+1).P2 + H(j-1).P3 + H(j+d4).P4; along a row each V and H serves several pixels and is built
 * once (stride 1: d4 = 0; stride 2: d4 = 1, H(j+1) is the next pixel's H(j'-1)). A column outside
 * the input reads zrow; interior pixels (x_lo..x_hi-1: the columns j-1..j+1+d4 inside the row; none
 * above stride 2, where every pixel takes the checked path: one interior loop fewer in each block
 * kind) need no check: this does xa..x_hi-1 of them (the packed ZMM rows do the first ones,
 * ec_x86_dw3_row_p). VT: the vector type; KT the block kind's constants (ky: 256-bit, kz: 512-bit);
 * PAIRS, MAC, STORE its functions. */
#define EC_X86_DW3_ROW(NAME, VT, KT, PAIRS, MAC, STORE)                                        \
EC_X86_DW_INLINE void NAME(const ec_x86_dw3_geom *g, const int8_t *const rp[3],                \
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
                p[i][d] = (col < 0 || col >= in_w) ? zrow + c : rp[i] + col * C + c;           \
            }                                                                                  \
        for (d = 0; d < 3; ++d) PAIRS(p[0][d], p[1][d], V[d], NH);                             \
        PAIRS(p[2][0], p[2][1], H[0], NH);                                                     \
        PAIRS(p[2][1 + d4], p[2][2 + d4], H[1], NH);                                           \
        MAC(k, V[0], V[1], V[2], H[0], H[1], acc, NH);                                         \
        STORE(yrow + (size_t)ox * C + c, acc, k, NH, FAST);                                    \
    }                                                                                          \
    if (xa < g->x_hi) { /* interior pixels xa..: pointers at each row's column j - 1 */        \
        const int j0 = xa * sw - g->pad_l;                                                     \
        const int8_t *p0 = rp[0] + j0 * C + c, *p1 = rp[1] + j0 * C + c;                       \
        const int8_t *p2 = rp[2] + j0 * C + c;                                                 \
        const ptrdiff_t c0 = C, c1 = C, c2 = C; /* every row (zrow too) steps C */             \
        int8_t *yp = yrow + (size_t)xa * C + c;                                                \
        const int n = g->x_hi - xa;                                                            \
        VT Vm[2], V0[2], Vp[2], Hm[2], Hp[2], acc[2];                                          \
        if (sw == 1) {                                                                         \
            PAIRS(p0, p1, Vm, NH);                                                             \
            PAIRS(p0 + c0, p1 + c1, V0, NH);                                                   \
            PAIRS(p2, p2 + c2, Hm, NH);                                                        \
            for (ox = 0; ox < n; ++ox) {                                                       \
                PAIRS(p0 + 2 * c0, p1 + 2 * c1, Vp, NH);                                       \
                PAIRS(p2 + c2, p2 + 2 * c2, Hp, NH);                                           \
                MAC(k, Vm, V0, Vp, Hm, Hp, acc, NH);                                           \
                STORE(yp, acc, k, NH, FAST);                                                   \
                for (h = 0; h < NH; ++h) Vm[h] = V0[h], V0[h] = Vp[h], Hm[h] = Hp[h];          \
                p0 += c0, p1 += c1, p2 += c2, yp += C;                                         \
            }                                                                                  \
        } else { /* stride 2 (above 2 no pixel is interior: x_lo == x_hi == out_w) */          \
            PAIRS(p0, p1, Vm, NH);                                                             \
            PAIRS(p2, p2 + c2, Hm, NH);                                                        \
            for (ox = 0; ox < n; ++ox) {                                                       \
                PAIRS(p0 + c0, p1 + c1, V0, NH);                                               \
                PAIRS(p0 + 2 * c0, p1 + 2 * c1, Vp, NH);                                       \
                PAIRS(p2 + 2 * c2, p2 + 3 * c2, Hp, NH);                                       \
                MAC(k, Vm, V0, Vp, Hm, Hp, acc, NH);                                           \
                STORE(yp, acc, k, NH, FAST);                                                   \
                for (h = 0; h < NH; ++h) Vm[h] = Vp[h], Hm[h] = Hp[h];                         \
                p0 += 2 * c0, p1 += 2 * c1, p2 += 2 * c2, yp += C;                             \
            }                                                                                  \
        }                                                                                      \
    }                                                                                          \
}

#if EC_X86_512
/* Stride 1 with C = 8 or 16 channels: 32 input bytes are 32 / C neighbouring pixels, so a ZMM
 * pair (lo/hi) holds P = 32 / C output pixels x C channels. Interior pixels x_lo.. in groups of
 * P (the return value: the first pixel left to ec_x86_dw3_row_y); each group reads the 32 bytes at
 * columns j-1, j, j+1 of rows 0 and 1 (V0..V2) and j-1, j, j+1 of row 2 (H0 = (j-1, j),
 * H1 = (j, j+1), P4 = (0, w8)), all inside the row. */
EC_X86_DW_INLINE int ec_x86_dw3_row_p(const ec_x86_dw3_geom *g, const int8_t *const rp[3],
                              int8_t *yrow, const ec_x86_dw_kz *k, int FAST,
                              int C) {
    const int P = 32 / C, j0 = g->x_lo - g->pad_l;
    const int n = (g->x_hi - g->x_lo) / P;
    const ptrdiff_t c0 = C, c1 = C, c2 = C;  /* every row (zrow too) steps C */
    const int8_t *p0 = rp[0] + j0 * c0, *p1 = rp[1] + j0 * c1, *p2 = rp[2] + j0 * c2;
    int8_t *yp = yrow + (size_t)g->x_lo * C;
    int i;
    if (g->x_lo >= g->x_hi) return g->x_hi;
    for (i = 0; i < n; ++i) {
#define EC_X86_DW_W(p) _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(const void *)(p)))
        const __m512i a0 = EC_X86_DW_W(p0), a1 = EC_X86_DW_W(p0 + c0), a2 = EC_X86_DW_W(p0 + 2 * c0);
        const __m512i b0 = EC_X86_DW_W(p1), b1 = EC_X86_DW_W(p1 + c1), b2 = EC_X86_DW_W(p1 + 2 * c1);
        const __m512i d0 = EC_X86_DW_W(p2), d1 = EC_X86_DW_W(p2 + c2), d2 = EC_X86_DW_W(p2 + 2 * c2);
#undef EC_X86_DW_W
        __m512i v0[2], v1[2], v2[2], h0[2], h1[2], acc[2];
        v0[0] = _mm512_unpacklo_epi16(a0, b0), v0[1] = _mm512_unpackhi_epi16(a0, b0);
        v1[0] = _mm512_unpacklo_epi16(a1, b1), v1[1] = _mm512_unpackhi_epi16(a1, b1);
        v2[0] = _mm512_unpacklo_epi16(a2, b2), v2[1] = _mm512_unpackhi_epi16(a2, b2);
        h0[0] = _mm512_unpacklo_epi16(d0, d1), h0[1] = _mm512_unpackhi_epi16(d0, d1);
        h1[0] = _mm512_unpacklo_epi16(d1, d2), h1[1] = _mm512_unpackhi_epi16(d1, d2);
        ec_x86_dw_kz_mac(k, v0, v1, v2, h0, h1, acc, 2);
        ec_x86_dw_kz_store(yp, acc, k, 2, FAST);
        p0 += P * c0, p1 += P * c1, p2 += P * c2, yp += 32;
    }
    return g->x_lo + n * P;
}
#endif

EC_X86_DW3_ROW(ec_x86_dw3_row_y, __m256i, ec_x86_dw_ky, ec_x86_dw_ky_pairs, ec_x86_dw_ky_mac,
               ec_x86_dw_ky_store)
#if EC_X86_512
EC_X86_DW3_ROW(ec_x86_dw3_row_z, __m512i, ec_x86_dw_kz, ec_x86_dw_kz_pairs, ec_x86_dw_kz_mac,
               ec_x86_dw_kz_store)
EC_X86_DW3_ROW(ec_x86_dw3_row_w, __m512i, ec_x86_dw_kz, ec_x86_dw_kw_pairs, ec_x86_dw_kw_mac,
               ec_x86_dw_kw_store)
#endif

/* Every row of every batch for the block of channels c.. of a kind (NH 1: 8 channels, 2: 16, 3:
 * 32 on ZMM, 4 / 6: the whole layer of 8 / 16 channels, stride 1, pixels packed on ZMM, 5: 64 on
 * ZMM as VPDPBUSD quads, 7: 16 on one ZMM): the block's constants are loaded once. NH is a
 * constant in every inlined copy, and so are the loops and arrays it sizes. */
EC_X86_DW_INLINE void ec_x86_dw3_block(const ec_x86_dw3_geom *g, const int8_t *x, int8_t *y,
                               const int16_t *w, const int32_t *bias, const ec_x86_rq *q,
                               const int8_t *zrow, int c, int NH,
                               int FAST) {
    const int C = g->chans;
    const size_t row = (size_t)g->in_w * C;
    int b, oy, i;
#if EC_X86_512
    ec_x86_dw_kz kz;
    ec_x86_dw_kq kk;
    if (NH == 3 || NH == 4 || NH == 6) ec_x86_dw_kz_load(&kz, w, bias, q, C, c, FAST);
    if (NH == 5) ec_x86_dw_kq_load(&kk, w, bias, q, C, g->d4, c, FAST);
    if (NH == 7) ec_x86_dw_kw_load(&kz, w, bias, q, C, c, FAST);
#endif
    ec_x86_dw_ky ky;
    if (NH < 3 || NH == 4 || NH == 6)
        ec_x86_dw_ky_load(&ky, w, bias, q, C, c, NH == 4 ? 1 : NH == 6 ? 2 : NH, FAST);
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
                ec_x86_dw3_row_q(g, rp, yrow, zrow, &kk, c, FAST);
                continue;
            }
            if (NH == 3) {
                ec_x86_dw3_row_z(g, rp, yrow, zrow, &kz, c, 2, FAST, g->x_lo);
                continue;
            }
            if (NH == 7) {
                ec_x86_dw3_row_w(g, rp, yrow, zrow, &kz, c, 1, FAST, g->x_lo);
                continue;
            }
            if (NH == 4 || NH == 6) {
                xa = ec_x86_dw3_row_p(g, rp, yrow, &kz, FAST, NH == 4 ? 8 : 16);
                ec_x86_dw3_row_y(g, rp, yrow, zrow, &ky, 0, NH == 4 ? 1 : 2, FAST, xa);
                continue;
            }
#endif
            ec_x86_dw3_row_y(g, rp, yrow, zrow, &ky, c, NH, FAST, xa);
        }
    }
}

/* Each kind of block (NH) and requantization path (FAST) as its own function: one function
 * holding them all would share one register allocation, and spill. Not specialised per call
 * site by GCC (noipa): a clone for a layer that never runs a kind would be warned about for
 * reads past that layer's (dummy) arrays. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#define EC_X86_DW3_NOIPA __attribute__((noipa))
#else
#define EC_X86_DW3_NOIPA
#endif
#define EC_X86_DW3_BLK(NAME, NH, FAST)                                                        \
    static __attribute__((noinline, unused)) EC_X86_DW3_NOIPA void NAME(                      \
        const ec_x86_dw3_geom *g, const int8_t *x, int8_t *y, const int16_t *w,               \
        const int32_t *bias, const ec_x86_rq *q, const int8_t *zrow,                          \
        int c) {                                                                              \
        const ec_x86_dw3_geom gl = *g; /* not reloaded after each int8 store */               \
        ec_x86_dw3_block(&gl, x, y, w, bias, q, zrow, c, NH, FAST);                           \
    }
EC_X86_DW3_BLK(ec_x86_dw3_blk_1_0, 1, 0)
EC_X86_DW3_BLK(ec_x86_dw3_blk_1_1, 1, 1)
EC_X86_DW3_BLK(ec_x86_dw3_blk_2_0, 2, 0)
EC_X86_DW3_BLK(ec_x86_dw3_blk_2_1, 2, 1)
#if EC_X86_512
EC_X86_DW3_BLK(ec_x86_dw3_blk_3_0, 3, 0)
EC_X86_DW3_BLK(ec_x86_dw3_blk_3_1, 3, 1)
EC_X86_DW3_BLK(ec_x86_dw3_blk_4_0, 4, 0)
EC_X86_DW3_BLK(ec_x86_dw3_blk_4_1, 4, 1)
EC_X86_DW3_BLK(ec_x86_dw3_blk_5_0, 5, 0)
EC_X86_DW3_BLK(ec_x86_dw3_blk_5_1, 5, 1)
EC_X86_DW3_BLK(ec_x86_dw3_blk_6_0, 6, 0)
EC_X86_DW3_BLK(ec_x86_dw3_blk_6_1, 6, 1)
EC_X86_DW3_BLK(ec_x86_dw3_blk_7_0, 7, 0)
EC_X86_DW3_BLK(ec_x86_dw3_blk_7_1, 7, 1)
#endif
#undef EC_X86_DW3_BLK

/* Every channel block of a layer in the order of its channel plan PLAN
 * (edgecc/lower/vec/depthwise.py dw3_plan: 1: C % 64 == 0; 2: C % 32 == 0; 5: C % 16 == 0; 3: C ==
 * 8 and 4: C == 16 at stride 1; 0: any other C from 16; 6: any other C below 16; 7, 8, 9: plans 2,
 * 5, 0 below 64 channels, no block of 64 quads). PLAN is a constant in each caller, so a layer's
 * code references only the block kinds its plan runs at each level. The last channels of C not a
 * multiple of the block: a block ending at channel C - 1 (overlapping channels are computed and
 * stored twice, the same values): no read or write past a pixel. */
EC_X86_DW_INLINE void ec_x86_dw3_all(const ec_x86_dw3_geom *g, const int8_t *x, int8_t *y,
                             const int16_t *w, const int32_t *bias, const ec_x86_rq *q,
                             const int8_t *zrow, int FAST, int PLAN) {
    /* blocks of 32 on ZMM for channels a multiple of 32 or 16 (plans 2, 5, 7); the others take
     * their rests in blocks of 16 (as fast: cv_se_mbv2 184.2 vs 184.6 us), one kind fewer */
    const int C = g->chans, QUADS = PLAN < 7, Z32 = PLAN == 2 || PLAN == 5 || PLAN == 7;
    int c = 0;
/* the block kind's two functions: f1 the fast requantization, f0 the exact one */
#define EC_X86_DW3_B(f1, f0, c0)                                                               \
    do {                                                                                       \
        if (FAST) f1(g, x, y, w, bias, q, zrow, (c0));                                         \
        else f0(g, x, y, w, bias, q, zrow, (c0));                                              \
    } while (0)
    (void)QUADS, (void)Z32;  /* 512-bit builds only */
    PLAN = PLAN == 7 ? 2 : PLAN == 8 ? 5 : PLAN == 9 ? 0 : PLAN;
#if EC_X86_512
    if (PLAN == 3) {  /* 8 channels, stride 1: pixels packed on ZMM */
        EC_X86_DW3_B(ec_x86_dw3_blk_4_1, ec_x86_dw3_blk_4_0, 0);
        return;
    }
    if (PLAN == 4) {  /* 16 channels, stride 1 */
        EC_X86_DW3_B(ec_x86_dw3_blk_6_1, ec_x86_dw3_blk_6_0, 0);
        return;
    }
    if (PLAN != 6) {  /* 64 as VPDPBUSD quads, then 32 and 16 on ZMM */
        if (QUADS)
            for (; c + 64 <= C; c += 64) EC_X86_DW3_B(ec_x86_dw3_blk_5_1, ec_x86_dw3_blk_5_0, c);
        if (PLAN == 1) return;
        if (Z32)
            for (; c + 32 <= C; c += 32) EC_X86_DW3_B(ec_x86_dw3_blk_3_1, ec_x86_dw3_blk_3_0, c);
        if (PLAN == 2) return;
        for (; c + 16 <= C; c += 16) EC_X86_DW3_B(ec_x86_dw3_blk_7_1, ec_x86_dw3_blk_7_0, c);
        if (PLAN == 0 && c < C) EC_X86_DW3_B(ec_x86_dw3_blk_7_1, ec_x86_dw3_blk_7_0, C - 16);  /* C >= 16 in plan 0 */
        return;
    }
#else
    if (PLAN == 1 || PLAN == 2 || PLAN == 4 || PLAN == 5) {  /* channels a multiple of 16 */
        for (; c < C; c += 16) EC_X86_DW3_B(ec_x86_dw3_blk_2_1, ec_x86_dw3_blk_2_0, c);
        return;
    }
#endif
    if (PLAN == 3 || PLAN == 6) {  /* 8 to 15 channels: one or two blocks of 8 */
        if (C > 8) EC_X86_DW3_B(ec_x86_dw3_blk_1_1, ec_x86_dw3_blk_1_0, 0);
        EC_X86_DW3_B(ec_x86_dw3_blk_1_1, ec_x86_dw3_blk_1_0, C - 8);
        return;
    }
    for (; c + 16 <= C; c += 16) EC_X86_DW3_B(ec_x86_dw3_blk_2_1, ec_x86_dw3_blk_2_0, c);
    if (c < C) EC_X86_DW3_B(ec_x86_dw3_blk_2_1, ec_x86_dw3_blk_2_0, C - 16);  /* C >= 16 in plans 0 and 9 */
#undef EC_X86_DW3_B
}

/* The plan of C channels at stride sw, as edgecc/lower/vec/depthwise.py dw3_plan. */
EC_X86_DW_INLINE int ec_x86_dw3_plan(int C, int sw) {
    if (C % 64 == 0) return 1;
    if (sw == 1 && (C == 8 || C == 16)) return C == 8 ? 3 : 4;
    if (C % 32 == 0) return C < 64 ? 7 : 2;
    if (C % 16 == 0) return C < 64 ? 8 : 5;
    return C < 16 ? 6 : C < 64 ? 9 : 0;
}

/* 3x3 depthwise, dilation 1, depth multiplier 1, at least 8 channels, any stride (1 and 2 share
 * input pairs between neighbouring pixels). Channel block by channel block (64 channels as
 * VPDPBUSD quads then 32 on ZMM, 16 or 8 on YMM), row by row: weights, bias and requantization
 * constants stay in registers; border pixels check their columns, interior ones do not. No arena
 * scratch. */
EC_X86_SHARED void ec_x86_depthwise_conv_2d_3x3_s8(const ec_x86_dw3_geom *g, const int8_t *x, int8_t *y,
                                const int16_t *w, const int32_t *bias, const ec_x86_rq *q,
                                const int8_t *zrow) {
    /* a local copy: the int8 output stores may alias anything, *g would be reloaded after each */
    const ec_x86_dw3_geom gl = *g;
    const int fast = q->fast != 0;
#define EC_X86_DW3_P(P)                                                                     \
    case P:                                                                                 \
        if (fast) ec_x86_dw3_all(&gl, x, y, w, bias, q, zrow, 1, P);                        \
        else ec_x86_dw3_all(&gl, x, y, w, bias, q, zrow, 0, P);                             \
        break;
    switch (ec_x86_dw3_plan(gl.chans, gl.stride_w)) {
        EC_X86_DW3_P(1) EC_X86_DW3_P(2) EC_X86_DW3_P(3) EC_X86_DW3_P(4) EC_X86_DW3_P(5)
        EC_X86_DW3_P(6) EC_X86_DW3_P(7) EC_X86_DW3_P(8) EC_X86_DW3_P(9) default: EC_X86_DW3_P(0)
    }
#undef EC_X86_DW3_P
}

/* The same for a layer whose requantization path (FAST: q->fast) and channel plan are known when
 * the C is generated (edgecc/lower/vec/depthwise.py dw3_plan, the channel count C and stride; see
 * ec_x86_dw3_all). Each names the kinds its plan runs, so a model holds the block kinds its
 * layers run, not all fourteen. */
#define EC_X86_DW3_PLAN(NAME, PLAN, FAST)                                                         \
    EC_X86_SHARED void NAME(                                                                      \
        const ec_x86_dw3_geom *g, const int8_t *x, int8_t *y, const int16_t *w,                   \
        const int32_t *bias, const ec_x86_rq *q, const int8_t *zrow) {                            \
        const ec_x86_dw3_geom gl = *g;                                                            \
        ec_x86_dw3_all(&gl, x, y, w, bias, q, zrow, FAST, PLAN);                                  \
    }
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p00_s8, 0, 0)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p01_s8, 0, 1)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p10_s8, 1, 0)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p11_s8, 1, 1)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p20_s8, 2, 0)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p21_s8, 2, 1)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p30_s8, 3, 0)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p31_s8, 3, 1)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p40_s8, 4, 0)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p41_s8, 4, 1)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p50_s8, 5, 0)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p51_s8, 5, 1)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p60_s8, 6, 0)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p61_s8, 6, 1)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p70_s8, 7, 0)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p71_s8, 7, 1)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p80_s8, 8, 0)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p81_s8, 8, 1)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p90_s8, 9, 0)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p91_s8, 9, 1)
#undef EC_X86_DW3_PLAN

#endif /* __AVX2__ */
#endif /* EDGECC_X86_DEPTHWISE_CONV_2D_3X3_H */
