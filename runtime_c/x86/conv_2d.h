/* edgecc x86 kernel: int8 CONV_2D, 4 output pixels at a time; the 512-bit form where the build has
 * it (conventions: x86/common.h). */
#ifndef EDGECC_X86_CONV_2D_H
#define EDGECC_X86_CONV_2D_H
#if defined(__AVX2__)
#include "common.h"
#include "conv_2d_x512.h"

/* Convolution as blocks of 4 output pixels x 16 output channels (VNNI) or x 8 (AVX2).
 * Pixels whose window lies inside the input are read in place, segment by segment; the others
 * (borders) are gathered, zero-point padded, into a stack buffer. A last partial block repeats
 * its last pixel (computed, not stored). bias_u is the bias for u8 = x + 128 (VNNI), bias_x the
 * one for x itself (AVX2). No arena scratch. */
EC_X86_SHARED void ec_x86_conv_2d_avx2(const ec_vec_conv_geom *g, const int8_t *x, int8_t *y,
                                 const int8_t *w, const int32_t *bias_u, const int32_t *bias_x,
                                 const ec_x86_rq *q) {
    const int kp = g->kp, qs = g->seg_p / 4;
    int8_t buf[4 * EC_VEC_MAX_KP];
    ptrdiff_t soff[EC_VEC_MAX_SEGS];  /* segment s's first byte, from the window's first byte */
    ptrdiff_t goff[EC_VEC_MAX_SEGS];  /* the same in a gathered field */
    ec_vec_pos pos = {0, 0, 0};       /* the next pixel's position */
    int p0, s;
    ec_vec_segments(g, soff, goff);
    for (p0 = 0; p0 < g->pixels; p0 += 4) {
        const int np = g->pixels - p0 < 4 ? g->pixels - p0 : 4;
        const int8_t *base[4];
        const ptrdiff_t *off[4];
        int c;
        ec_vec_block(g, x, &pos, np, buf, soff, goff, base, off);
#if EC_X86_VNNI
        (void)bias_x;
        for (c = 0; c < g->ocp; c += 16) {
            const __m256i flip = _mm256_set1_epi8((char)0x80);
            const int8_t *wk = w + (size_t)c * kp;
            int k;
            if (c + 8 < g->ocp) {
                __m256i a00 = EC_LD256(bias_u + c), a01 = EC_LD256(bias_u + c + 8);
                __m256i a10 = a00, a11 = a01, a20 = a00, a21 = a01, a30 = a00, a31 = a01;
                for (s = 0; s < g->segs; ++s) {
                    const int8_t *f0 = base[0] + off[0][s], *f1 = base[1] + off[1][s];
                    const int8_t *f2 = base[2] + off[2][s], *f3 = base[3] + off[3][s];
                    for (k = 0; k < qs; ++k, wk += 64) {
                        __m256i v0 = EC_LD256(wk), v1 = EC_LD256(wk + 32);
                        EC_X86_IN_REG(v0);
                        EC_X86_IN_REG(v1);
                        __m256i u = EC_X86_U(f0 + 4 * k);
                        a00 = ec_dpbusd(a00, u, v0);
                        a01 = ec_dpbusd(a01, u, v1);
                        u = EC_X86_U(f1 + 4 * k);
                        a10 = ec_dpbusd(a10, u, v0);
                        a11 = ec_dpbusd(a11, u, v1);
                        u = EC_X86_U(f2 + 4 * k);
                        a20 = ec_dpbusd(a20, u, v0);
                        a21 = ec_dpbusd(a21, u, v1);
                        u = EC_X86_U(f3 + 4 * k);
                        a30 = ec_dpbusd(a30, u, v0);
                        a31 = ec_dpbusd(a31, u, v1);
                    }
                }
                {
                    const int n = g->out_c - c;
                    int8_t *yp = y + (size_t)p0 * g->out_c + c;
                    ec_x86_out16(yp, a00, a01, q, c, n);
                    if (np > 1) ec_x86_out16(yp + g->out_c, a10, a11, q, c, n);
                    if (np > 2) ec_x86_out16(yp + 2 * g->out_c, a20, a21, q, c, n);
                    if (np > 3) ec_x86_out16(yp + 3 * g->out_c, a30, a31, q, c, n);
                }
            } else {
                __m256i a0 = EC_LD256(bias_u + c), a1 = a0, a2 = a0, a3 = a0;
                for (s = 0; s < g->segs; ++s) {
                    const int8_t *f0 = base[0] + off[0][s], *f1 = base[1] + off[1][s];
                    const int8_t *f2 = base[2] + off[2][s], *f3 = base[3] + off[3][s];
                    for (k = 0; k < qs; ++k, wk += 32) {
                        __m256i v0 = EC_LD256(wk);
                        EC_X86_IN_REG(v0);
                        a0 = ec_dpbusd(a0, EC_X86_U(f0 + 4 * k), v0);
                        a1 = ec_dpbusd(a1, EC_X86_U(f1 + 4 * k), v0);
                        a2 = ec_dpbusd(a2, EC_X86_U(f2 + 4 * k), v0);
                        a3 = ec_dpbusd(a3, EC_X86_U(f3 + 4 * k), v0);
                    }
                }
                {
                    const int n = g->out_c - c;
                    int8_t *yp = y + (size_t)p0 * g->out_c + c;
                    ec_x86_out8(yp, a0, q, c, n);
                    if (np > 1) ec_x86_out8(yp + g->out_c, a1, q, c, n);
                    if (np > 2) ec_x86_out8(yp + 2 * g->out_c, a2, q, c, n);
                    if (np > 3) ec_x86_out8(yp + 3 * g->out_c, a3, q, c, n);
                }
            }
        }
#else
        (void)bias_u;
        for (c = 0; c < g->ocp; c += 8) {
            /* channels c..c+7: a half of a 16-channel block (64-byte steps) or the last block */
            const int whole = (c & ~15) + 16 <= g->ocp, step = whole ? 64 : 32;
            const int8_t *wk = w + (size_t)(c & ~15) * kp + (whole && (c & 8) ? 32 : 0);
            const __m256i z = _mm256_setzero_si256();
            __m256i l0 = z, h0 = z, l1 = z, h1 = z, l2 = z, h2 = z, l3 = z, h3 = z, b;
            int k;
            for (s = 0; s < g->segs; ++s) {
                const int8_t *f0 = base[0] + off[0][s], *f1 = base[1] + off[1][s];
                const int8_t *f2 = base[2] + off[2][s], *f3 = base[3] + off[3][s];
                for (k = 0; k < qs; ++k, wk += step) {
                    const __m256i vl = _mm256_cvtepi8_epi16(EC_LD128(wk));
                    const __m256i vh = _mm256_cvtepi8_epi16(EC_LD128(wk + 16));
                    __m256i u = EC_X86_X(f0 + 4 * k);
                    l0 = _mm256_add_epi32(l0, _mm256_madd_epi16(u, vl));
                    h0 = _mm256_add_epi32(h0, _mm256_madd_epi16(u, vh));
                    u = EC_X86_X(f1 + 4 * k);
                    l1 = _mm256_add_epi32(l1, _mm256_madd_epi16(u, vl));
                    h1 = _mm256_add_epi32(h1, _mm256_madd_epi16(u, vh));
                    u = EC_X86_X(f2 + 4 * k);
                    l2 = _mm256_add_epi32(l2, _mm256_madd_epi16(u, vl));
                    h2 = _mm256_add_epi32(h2, _mm256_madd_epi16(u, vh));
                    u = EC_X86_X(f3 + 4 * k);
                    l3 = _mm256_add_epi32(l3, _mm256_madd_epi16(u, vl));
                    h3 = _mm256_add_epi32(h3, _mm256_madd_epi16(u, vh));
                }
            }
            b = EC_LD256(bias_x + c);
            {
                const int n = g->out_c - c;
                int8_t *yp = y + (size_t)p0 * g->out_c + c;
                ec_x86_out8(yp, _mm256_add_epi32(b, ec_x86_fold8(l0, h0)), q, c, n);
                if (np > 1) ec_x86_out8(yp + g->out_c, _mm256_add_epi32(b, ec_x86_fold8(l1, h1)), q, c, n);
                if (np > 2) ec_x86_out8(yp + 2 * g->out_c, _mm256_add_epi32(b, ec_x86_fold8(l2, h2)), q, c, n);
                if (np > 3) ec_x86_out8(yp + 3 * g->out_c, _mm256_add_epi32(b, ec_x86_fold8(l3, h3)), q, c, n);
            }
        }
#endif
    }
}

/* The convolution: 512-bit where the build has it and the layer's band fits, else ec_x86_conv_2d_avx2. */
static inline void ec_x86_conv_2d_4px_s8(const ec_vec_conv_geom *g, const ec_x86_band_512 *bd,
                                    const int8_t *x, int8_t *y, const int8_t *w,
                                    const int32_t *bias_u, const int32_t *bias_x,
                                    const ec_x86_rq *q) {
#if EC_X86_512
    if (bd->P > 0) {
        (void)bias_x;
        ec_x86_conv_2d_x512(g, bd, x, y, w, bias_u, q);
        return;
    }
#else
    (void)bd;
#endif
    ec_x86_conv_2d_avx2(g, x, y, w, bias_u, bias_x, q);
}

/* The convolution of a layer whose 512-bit rows are of kind k (0-15: ec_x86_kind_512, known when
 * the C is generated; N its function, ec_x86_conv_2d_k0_s8 .. k15) or 16 (no band: the 256-bit
 * kernel at every level). x86/kernels.h's entry of the same name picks the level; a model holds
 * the tiles its layers' kinds name, and one band driver. */
#if EC_X86_512
#define EC_X86_CONV_KIND(N, P, STEP, MAIN, REST, ST)                                                  \
    static inline void N(                                                                             \
        const ec_vec_conv_geom *g, const ec_x86_band_512 *bd, const int8_t *x, int8_t *y,             \
        const int8_t *w, const int32_t *bias_u, const int32_t *bias_x, const ec_x86_rq *q) {          \
        static const ec_x86_rowk_512 k = {P, STEP, MAIN, REST, ST};                                   \
        (void)bias_x;                                                                                 \
        ec_x86_conv_512(g, bd, x, y, w, bias_u, q, &k);                                               \
    }
#else
#define EC_X86_CONV_KIND(N, P, STEP, MAIN, REST, ST)                                               \
    static inline void N(                                                                          \
        const ec_vec_conv_geom *g, const ec_x86_band_512 *bd, const int8_t *x, int8_t *y,          \
        const int8_t *w, const int32_t *bias_u, const int32_t *bias_x, const ec_x86_rq *q) {       \
        (void)bd;                                                                                  \
        ec_x86_conv_2d_avx2(g, x, y, w, bias_u, bias_x, q);                                        \
    }
#endif
EC_X86_KINDS_512(EC_X86_CONV_KIND)
#undef EC_X86_CONV_KIND
static inline void ec_x86_conv_2d_k16_s8(
    const ec_vec_conv_geom *g, const ec_x86_band_512 *bd, const int8_t *x, int8_t *y,
    const int8_t *w, const int32_t *bias_u, const int32_t *bias_x, const ec_x86_rq *q) {
    (void)bd;
    ec_x86_conv_2d_avx2(g, x, y, w, bias_u, bias_x, q);
}

#endif /* __AVX2__ */
#endif /* EDGECC_X86_CONV_2D_H */
