/* edgecc x86 kernel: int8 FULLY_CONNECTED over weight quads (any depth) (conventions:
 * x86/common.h). */
#ifndef EDGECC_X86_FULLY_CONNECTED_H
#define EDGECC_X86_FULLY_CONNECTED_H
#if defined(__AVX2__)
#include "common.h"

/* ------------------------------------------------------------------------- FULLY_CONNECTED */

/* y[b][u] for every batch row, read in place (a last partial quad of the row from a 4-byte
 * copy): VNNI 32 units (4 blocks of 8) at a time, AVX2 16; then 8 at a time. bias_u / bias_x as
 * for the convolution. No arena scratch. */
EC_X86_SHARED void ec_x86_fully_connected_quads_s8(int batches, int depth, int kp, int units, int ocp,
                               const int8_t *x, int8_t *y, const int8_t *w, const int32_t *bias_u,
                               const int32_t *bias_x, const ec_x86_rq *q) {
    const int kq = kp / 4, full = depth / 4;
    int bt;
    for (bt = 0; bt < batches; ++bt, x += depth, y += units) {
        int8_t tail[4] = {0, 0, 0, 0};
        int c = 0;
        memcpy(tail, x + 4 * full, (size_t)(depth - 4 * full));
#define EC_X86_FC_X(k) ((k) < full ? x + 4 * (k) : tail)
#if EC_X86_VNNI
        {
        const __m256i flip = _mm256_set1_epi8((char)0x80);
        (void)bias_x;
        for (; c + 32 <= ocp; c += 32) {
            const int8_t *w0 = w + (size_t)c * kp;
            __m256i a0 = EC_LD256(bias_u + c), a1 = EC_LD256(bias_u + c + 8);
            __m256i a2 = EC_LD256(bias_u + c + 16), a3 = EC_LD256(bias_u + c + 24);
            int k;
            for (k = 0; k < kq; ++k) {
                const __m256i u = EC_X86_U(EC_X86_FC_X(k));
                a0 = ec_dpbusd(a0, u, EC_LD256(w0 + 32 * k));
                a1 = ec_dpbusd(a1, u, EC_LD256(w0 + 8 * kp + 32 * k));
                a2 = ec_dpbusd(a2, u, EC_LD256(w0 + 16 * kp + 32 * k));
                a3 = ec_dpbusd(a3, u, EC_LD256(w0 + 24 * kp + 32 * k));
            }
            ec_x86_out16(y + c, a0, a1, q, c, units - c);
            ec_x86_out16(y + c + 16, a2, a3, q, c + 16, units - c - 16);
        }
        for (; c < ocp; c += 8) {
            const int8_t *w0 = w + (size_t)c * kp;
            __m256i a0 = EC_LD256(bias_u + c), a1 = _mm256_setzero_si256();
            int k;
            for (k = 0; k + 2 <= kq; k += 2) {  /* two chains: the adds do not wait on each other */
                a0 = ec_dpbusd(a0, EC_X86_U(EC_X86_FC_X(k)), EC_LD256(w0 + 32 * k));
                a1 = ec_dpbusd(a1, EC_X86_U(EC_X86_FC_X(k + 1)), EC_LD256(w0 + 32 * k + 32));
            }
            if (k < kq) a0 = ec_dpbusd(a0, EC_X86_U(EC_X86_FC_X(k)), EC_LD256(w0 + 32 * k));
            ec_x86_out8(y + c, _mm256_add_epi32(a0, a1), q, c, units - c);
        }
        }
#else
        (void)bias_u;
        for (; c + 16 <= ocp; c += 16) {
            const int8_t *w0 = w + (size_t)c * kp, *w1 = w0 + 8 * kp;
            const __m256i z = _mm256_setzero_si256();
            __m256i l0 = z, h0 = z, l1 = z, h1 = z;
            int k;
            for (k = 0; k < kq; ++k) {
                const __m256i u = EC_X86_X(EC_X86_FC_X(k));
                l0 = _mm256_add_epi32(l0, _mm256_madd_epi16(u, _mm256_cvtepi8_epi16(EC_LD128(w0 + 32 * k))));
                h0 = _mm256_add_epi32(h0, _mm256_madd_epi16(u, _mm256_cvtepi8_epi16(EC_LD128(w0 + 32 * k + 16))));
                l1 = _mm256_add_epi32(l1, _mm256_madd_epi16(u, _mm256_cvtepi8_epi16(EC_LD128(w1 + 32 * k))));
                h1 = _mm256_add_epi32(h1, _mm256_madd_epi16(u, _mm256_cvtepi8_epi16(EC_LD128(w1 + 32 * k + 16))));
            }
            ec_x86_out16(y + c, _mm256_add_epi32(EC_LD256(bias_x + c), ec_x86_fold8(l0, h0)),
                          _mm256_add_epi32(EC_LD256(bias_x + c + 8), ec_x86_fold8(l1, h1)), q, c, units - c);
        }
        for (; c < ocp; c += 8) {
            const int8_t *w0 = w + (size_t)c * kp;
            const __m256i z = _mm256_setzero_si256();
            __m256i l0 = z, h0 = z;
            int k;
            for (k = 0; k < kq; ++k) {
                const __m256i u = EC_X86_X(EC_X86_FC_X(k));
                l0 = _mm256_add_epi32(l0, _mm256_madd_epi16(u, _mm256_cvtepi8_epi16(EC_LD128(w0 + 32 * k))));
                h0 = _mm256_add_epi32(h0, _mm256_madd_epi16(u, _mm256_cvtepi8_epi16(EC_LD128(w0 + 32 * k + 16))));
            }
            ec_x86_out8(y + c, _mm256_add_epi32(EC_LD256(bias_x + c), ec_x86_fold8(l0, h0)), q, c, units - c);
        }
#endif
#undef EC_X86_FC_X
    }
}

#endif /* __AVX2__ */
#endif /* EDGECC_X86_FULLY_CONNECTED_H */
