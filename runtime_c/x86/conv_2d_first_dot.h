/* edgecc x86 kernel: int8 CONV_2D with few input channels, the products per register width
 * (conventions: x86/conv_2d_first.h). */
#ifndef EDGECC_X86_CONV_2D_FIRST_DOT_H
#define EDGECC_X86_CONV_2D_FIRST_DOT_H
#if defined(__AVX2__)
#include "conv_2d_first_common.h"

#if EC_X86_VNNI
#if EC_X86_512
/* VNNI, 512-bit: whole groups of 4 blocks of 16 channels; returns the first block left. */
static inline int ec_x86_first_dot_x512_b64(const ec_x86_first_geom *g, int ow, const int8_t *col,
                                        int8_t *yr, const int8_t *wq, const int32_t *bias_u,
                                        const ec_x86_rq *q) {
    const int kpp = g->kpp, oc = g->out_c, kq = kpp / 4;
    int cb = 0, ox, k;
    /* 64 channels (4 blocks) x 4 pixels: each broadcast feeds 4 VPDPBUSD, 16 independent chains,
     * and a pixel's 64 output bytes leave in one store */
    for (; cb + 4 <= g->nb16; cb += 4) {
        const int c = 16 * cb, n = oc - c < 64 ? oc - c : 64;
        const int8_t *wb = wq + (size_t)c * kpp;
        const size_t bs = (size_t)16 * kpp;  /* from one block's weights to the next */
        ec_x86_first_rqz rz[4];
        __m512i bb[4];
        int j;
        for (j = 0; j < 4; ++j) {
            rz[j] = ec_x86_first_rqz16(q, c + 16 * j);
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
                EC_X86_FIRST_IN_REGZ(w0);
                EC_X86_FIRST_IN_REGZ(w1);
                EC_X86_FIRST_IN_REGZ(w2);
                EC_X86_FIRST_IN_REGZ(w3);
                u = EC_X86_FIRST_BC32Z((p0 + 4 * k));
                a00 = _mm512_dpbusd_epi32(a00, u, w0);
                a01 = _mm512_dpbusd_epi32(a01, u, w1);
                a02 = _mm512_dpbusd_epi32(a02, u, w2);
                a03 = _mm512_dpbusd_epi32(a03, u, w3);
                u = EC_X86_FIRST_BC32Z((p1 + 4 * k));
                a10 = _mm512_dpbusd_epi32(a10, u, w0);
                a11 = _mm512_dpbusd_epi32(a11, u, w1);
                a12 = _mm512_dpbusd_epi32(a12, u, w2);
                a13 = _mm512_dpbusd_epi32(a13, u, w3);
                u = EC_X86_FIRST_BC32Z((p2 + 4 * k));
                a20 = _mm512_dpbusd_epi32(a20, u, w0);
                a21 = _mm512_dpbusd_epi32(a21, u, w1);
                a22 = _mm512_dpbusd_epi32(a22, u, w2);
                a23 = _mm512_dpbusd_epi32(a23, u, w3);
                u = EC_X86_FIRST_BC32Z((p3 + 4 * k));
                a30 = _mm512_dpbusd_epi32(a30, u, w0);
                a31 = _mm512_dpbusd_epi32(a31, u, w1);
                a32 = _mm512_dpbusd_epi32(a32, u, w2);
                a33 = _mm512_dpbusd_epi32(a33, u, w3);
            }
#define EC_X86_FIRST_OUT64(i, x0, x1, x2, x3)                                                    \
            _mm512_mask_storeu_epi8(yp + (size_t)(i) * oc, keep, ec_x86_first_pack4(             \
                ec_x86_first_rq512(x0, q, &rz[0], c, c + 8),                                     \
                ec_x86_first_rq512(x1, q, &rz[1], c + 16, c + 24),                               \
                ec_x86_first_rq512(x2, q, &rz[2], c + 32, c + 40),                               \
                ec_x86_first_rq512(x3, q, &rz[3], c + 48, c + 56), q))
            EC_X86_FIRST_OUT64(0, a00, a01, a02, a03);
            if (np > 1) EC_X86_FIRST_OUT64(1, a10, a11, a12, a13);
            if (np > 2) EC_X86_FIRST_OUT64(2, a20, a21, a22, a23);
            if (np > 3) EC_X86_FIRST_OUT64(3, a30, a31, a32, a33);
#undef EC_X86_FIRST_OUT64
        }
    }

    return cb;
}

/* VNNI, 512-bit: the block of 16 channels c.. (n real ones, weights wb). */
static inline void ec_x86_first_dot_x512_b16(const ec_x86_first_geom *g, int ow, const int8_t *col,
                                         int8_t *yr, const int8_t *wb, int c, int n,
                                         const int32_t *bias_u, const ec_x86_rq *q) {
    const int kpp = g->kpp, oc = g->out_c, kq = kpp / 4;
    int ox, k;
    /* 8 pixels x 16 channels: 8 independent VPDPBUSD chains hide the instruction's latency */
    const ec_x86_first_rqz rz = ec_x86_first_rqz16(q, c);
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
            a0 = _mm512_dpbusd_epi32(a0, EC_X86_FIRST_BC32Z(p0), w);
            a1 = _mm512_dpbusd_epi32(a1, EC_X86_FIRST_BC32Z(p0 + kpp), w);
            a2 = _mm512_dpbusd_epi32(a2, EC_X86_FIRST_BC32Z(p0 + 2 * kpp), w);
            a3 = _mm512_dpbusd_epi32(a3, EC_X86_FIRST_BC32Z(p0 + 3 * kpp), w);
            a4 = _mm512_dpbusd_epi32(a4, EC_X86_FIRST_BC32Z(p0 + 4 * kpp), w);
            a5 = _mm512_dpbusd_epi32(a5, EC_X86_FIRST_BC32Z(p0 + 5 * kpp), w);
            a6 = _mm512_dpbusd_epi32(a6, EC_X86_FIRST_BC32Z(p0 + 6 * kpp), w);
            a7 = _mm512_dpbusd_epi32(a7, EC_X86_FIRST_BC32Z(p0 + 7 * kpp), w);
        }
        ec_x86_first_store512(yr + (size_t)ox * oc + c,
                          ec_x86_first_pack4(ec_x86_first_rq512(a0, q, &rz, c, c + 8),
                                         ec_x86_first_rq512(a1, q, &rz, c, c + 8),
                                         ec_x86_first_rq512(a2, q, &rz, c, c + 8),
                                         ec_x86_first_rq512(a3, q, &rz, c, c + 8), q),
                          np < 4 ? np : 4, 16, oc, n);
        if (np > 4)
            ec_x86_first_store512(yr + (size_t)(ox + 4) * oc + c,
                              ec_x86_first_pack4(ec_x86_first_rq512(a4, q, &rz, c, c + 8),
                                             ec_x86_first_rq512(a5, q, &rz, c, c + 8),
                                             ec_x86_first_rq512(a6, q, &rz, c, c + 8),
                                             ec_x86_first_rq512(a7, q, &rz, c, c + 8), q),
                              np - 4, 16, oc, n);
    }

}

/* VNNI, 512-bit: the last block of 8 channels c.. (n real ones, weights wb, bias b). */
static inline void ec_x86_first_dot_x512_tail8(const ec_x86_first_geom *g, int ow, const int8_t *col,
                                           int8_t *yr, const int8_t *wb, int c, int n, __m256i b,
                                           const ec_x86_rq *q) {
    const int kpp = g->kpp, oc = g->out_c, kq2 = kpp / 8;
    int ox, k;
    const ec_x86_first_rqz rz = ec_x86_first_rqz8x2(q, c);
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
                a[i] = _mm512_dpbusd_epi32(a[i], EC_X86_FIRST_BC64Z((p[i] + 8 * k)), w);
        }
        /* pixels 2i, 2i+1 -> [pixel 2i's 8 channels | pixel 2i+1's] */
        for (i = 0; i < 4; ++i)
            r[i] = ec_x86_first_rq512(
                _mm512_add_epi32(b2, _mm512_add_epi32(
                    _mm512_permutex2var_epi32(a[2 * i], ie, a[2 * i + 1]),
                    _mm512_permutex2var_epi32(a[2 * i], io, a[2 * i + 1]))), q, &rz, c, c);
        ec_x86_first_store512(yr + (size_t)ox * oc + c, ec_x86_first_pack4(r[0], r[1], r[2], r[3], q),
                          np, 8, oc, n);
    }

}
#else
/* VNNI, 256-bit: the block of 16 channels c.. (n real ones, weights wb). */
static inline void ec_x86_first_dot_vnni_b16(const ec_x86_first_geom *g, int ow, const int8_t *col,
                                         int8_t *yr, const int8_t *wb, int c, int n,
                                         const int32_t *bias_u, const ec_x86_rq *q) {
    const int kpp = g->kpp, oc = g->out_c, kq = kpp / 4;
    int ox, k;
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
            EC_X86_IN_REG(wl);
            EC_X86_IN_REG(wh);
            u = EC_X86_FIRST_BC32((p0 + 4 * k));
            l0 = ec_dpbusd(l0, u, wl);
            h0 = ec_dpbusd(h0, u, wh);
            u = EC_X86_FIRST_BC32((p1 + 4 * k));
            l1 = ec_dpbusd(l1, u, wl);
            h1 = ec_dpbusd(h1, u, wh);
            u = EC_X86_FIRST_BC32((p2 + 4 * k));
            l2 = ec_dpbusd(l2, u, wl);
            h2 = ec_dpbusd(h2, u, wh);
            u = EC_X86_FIRST_BC32((p3 + 4 * k));
            l3 = ec_dpbusd(l3, u, wl);
            h3 = ec_dpbusd(h3, u, wh);
        }
        ec_x86_out16(yp, l0, h0, q, c, n);
        if (np > 1) ec_x86_out16(yp + oc, l1, h1, q, c, n);
        if (np > 2) ec_x86_out16(yp + 2 * oc, l2, h2, q, c, n);
        if (np > 3) ec_x86_out16(yp + 3 * oc, l3, h3, q, c, n);
    }

}

/* VNNI, 256-bit: the last block of 8 channels c.. (n real ones, weights wb, bias b). */
static inline void ec_x86_first_dot_vnni_tail8(const ec_x86_first_geom *g, int ow, const int8_t *col,
                                           int8_t *yr, const int8_t *wb, int c, int n, __m256i b,
                                           const ec_x86_rq *q) {
    const int kpp = g->kpp, oc = g->out_c, kq2 = kpp / 8;
    int ox, k;
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
            EC_X86_IN_REG(wl);
            EC_X86_IN_REG(wh);
            u = EC_X86_FIRST_BC64((p0 + 8 * k));
            l0 = ec_dpbusd(l0, u, wl);
            h0 = ec_dpbusd(h0, u, wh);
            u = EC_X86_FIRST_BC64((p1 + 8 * k));
            l1 = ec_dpbusd(l1, u, wl);
            h1 = ec_dpbusd(h1, u, wh);
            u = EC_X86_FIRST_BC64((p2 + 8 * k));
            l2 = ec_dpbusd(l2, u, wl);
            h2 = ec_dpbusd(h2, u, wh);
            u = EC_X86_FIRST_BC64((p3 + 8 * k));
            l3 = ec_dpbusd(l3, u, wl);
            h3 = ec_dpbusd(h3, u, wh);
        }
        ec_x86_out8(yp, _mm256_add_epi32(b, ec_x86_first_fold8(l0, h0)), q, c, n);
        if (np > 1) ec_x86_out8(yp + oc, _mm256_add_epi32(b, ec_x86_first_fold8(l1, h1)), q, c, n);
        if (np > 2) ec_x86_out8(yp + 2 * oc, _mm256_add_epi32(b, ec_x86_first_fold8(l2, h2)), q, c, n);
        if (np > 3) ec_x86_out8(yp + 3 * oc, _mm256_add_epi32(b, ec_x86_first_fold8(l3, h3)), q, c, n);
    }

}
#endif /* EC_X86_512 */

/* VNNI (u8 patches in col, quads wq, bias_u): ow consecutive output pixels of every channel
 * block, to yr. */
static inline void ec_x86_first_dot_vnni(const ec_x86_first_geom *g, int ow, const int8_t *col,
                                     int8_t *yr, const int8_t *wq, const int32_t *bias_u,
                                     const ec_x86_rq *q) {
    const int kpp = g->kpp, oc = g->out_c;
    int cb = 0;
#if EC_X86_512
    cb = ec_x86_first_dot_x512_b64(g, ow, col, yr, wq, bias_u, q);
#endif
    for (; cb < g->nb16; ++cb) {
        const int c = 16 * cb, n = oc - c < 16 ? oc - c : 16;
#if EC_X86_512
        ec_x86_first_dot_x512_b16(g, ow, col, yr, wq + (size_t)c * kpp, c, n, bias_u, q);
#else
        ec_x86_first_dot_vnni_b16(g, ow, col, yr, wq + (size_t)c * kpp, c, n, bias_u, q);
#endif
    }
    if (g->tail8) {
        /* The block of 8 takes 8 taps a step: each channel's two quads side by side (lanes
         * (c, taps 0-3), (c, taps 4-7)) against one 8-byte broadcast of the pixel's taps; the
         * lane pairs are added at the end. */

        const int c = 16 * g->nb16, n = oc - c;
#if EC_X86_512
        ec_x86_first_dot_x512_tail8(g, ow, col, yr, wq + (size_t)c * kpp, c, n, EC_LD256(bias_u + c), q);
#else
        ec_x86_first_dot_vnni_tail8(g, ow, col, yr, wq + (size_t)c * kpp, c, n, EC_LD256(bias_u + c), q);
#endif
    }
}
#else
/* Plain AVX2 (int16 patches in col16, bias_x; VPMADDWD): ow consecutive output pixels of every
 * channel block, to yr. The weights are the VNNI quads wq, each block's widened to int16 tap
 * pairs on the stack first (ec_x86_first_w16): one copy of them in flash for every level. */
static inline void ec_x86_first_dot_avx2(const ec_x86_first_geom *g, int ow, const int16_t *col16,
                                     int8_t *yr, const int8_t *wq, const int32_t *bias_x,
                                     const ec_x86_rq *q) {
    const int kpp = g->kpp, oc = g->out_c;
    int cb, ox, k;
    const int kh2 = kpp / 2;
    int16_t wb[16 * EC_X86_FIRST_MAX_KPP];

    for (cb = 0; cb < g->nb16; ++cb) {
        const int c = 16 * cb, n = oc - c < 16 ? oc - c : 16;
        ec_x86_first_w16(wq + (size_t)c * kpp, kpp, wb);
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
                EC_X86_IN_REG(wl);
                EC_X86_IN_REG(wh);
                u = EC_X86_FIRST_BC32((p0 + 2 * k));
                l0 = _mm256_add_epi32(l0, _mm256_madd_epi16(u, wl));
                h0 = _mm256_add_epi32(h0, _mm256_madd_epi16(u, wh));
                u = EC_X86_FIRST_BC32((p1 + 2 * k));
                l1 = _mm256_add_epi32(l1, _mm256_madd_epi16(u, wl));
                h1 = _mm256_add_epi32(h1, _mm256_madd_epi16(u, wh));
                u = EC_X86_FIRST_BC32((p2 + 2 * k));
                l2 = _mm256_add_epi32(l2, _mm256_madd_epi16(u, wl));
                h2 = _mm256_add_epi32(h2, _mm256_madd_epi16(u, wh));
                u = EC_X86_FIRST_BC32((p3 + 2 * k));
                l3 = _mm256_add_epi32(l3, _mm256_madd_epi16(u, wl));
                h3 = _mm256_add_epi32(h3, _mm256_madd_epi16(u, wh));
            }
            ec_x86_out16(yp, l0, h0, q, c, n);
            if (np > 1) ec_x86_out16(yp + oc, l1, h1, q, c, n);
            if (np > 2) ec_x86_out16(yp + 2 * oc, l2, h2, q, c, n);
            if (np > 3) ec_x86_out16(yp + 3 * oc, l3, h3, q, c, n);
        }
    }
    if (g->tail8) {
        const int c = 16 * g->nb16, n = oc - c;
        const __m256i b = EC_LD256(bias_x + c);
        ec_x86_first_w16_tail8(wq + (size_t)c * kpp, kpp, wb);
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
                EC_X86_IN_REG(w);
                a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(EC_X86_FIRST_BC32((p0 + 2 * k)), w));
                a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(EC_X86_FIRST_BC32((p1 + 2 * k)), w));
                a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(EC_X86_FIRST_BC32((p2 + 2 * k)), w));
                a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(EC_X86_FIRST_BC32((p3 + 2 * k)), w));
            }
            ec_x86_out8(yp, a0, q, c, n);
            if (np > 1) ec_x86_out8(yp + oc, a1, q, c, n);
            if (np > 2) ec_x86_out8(yp + 2 * oc, a2, q, c, n);
            if (np > 3) ec_x86_out8(yp + 3 * oc, a3, q, c, n);
        }
    }

}
#endif /* EC_X86_VNNI */

/* ow consecutive output pixels (patches in col, or col16 without VNNI) of every channel block,
 * to yr: the build's path (only it reads its own operands). */
static inline void ec_x86_first_dot(const ec_x86_first_geom *g, int ow, const int8_t *col,
                                const int16_t *col16, int8_t *yr, const int8_t *wq,
                                const int32_t *bias_u, const int32_t *bias_x,
                                const ec_x86_rq *q) {
#if EC_X86_VNNI
    (void)col16;
    (void)bias_x;
    ec_x86_first_dot_vnni(g, ow, col, yr, wq, bias_u, q);
#else
    (void)col;
    (void)bias_u;
    ec_x86_first_dot_avx2(g, ow, col16, yr, wq, bias_x, q);
#endif
}

#endif /* __AVX2__ */
#endif /* EDGECC_X86_CONV_2D_FIRST_DOT_H */
