/* edgecc x86 int8 FULLY_CONNECTED kernel (ec_x86_fully_connected_stream_s8): one weight stream,
 * 16 units per block.
 *
 * The compiler (edgecc/ops/_vec_fc.py) packs the weights in "16-unit blocks": units padded to a
 * multiple of 16 (up), the depth to a multiple of 4 (kp, zero weights); the blocks are taken in
 * passes of 8 blocks (128 units), then one pass each of 4, 2 and 1 blocks for what remains
 * (the binary digits of the remainder). A pass of P blocks stores, for each group of 4 inputs
 * (a "step"), its P blocks' 64 bytes in turn: the 16 units' 4 weights each. A pass therefore
 * reads its weights strictly in order (one stream the prefetchers follow), a step of one block
 * is one ZMM register for VPDPBUSD or two YMM halves (units 0-7, then 8-15), and pass p starts at
 * byte 16 * kp * (its first block). A last single-block pass with at most 8 real units is a
 * "half block" (`half`: 8 units x 4 weights, 32 bytes a step; ec_x86_fc_half), which halves the
 * weights of layers with few units (micro_speech's 4 x 4000).
 *
 * VPDPBUSD multiplies u8 x s8: the row enters as u = x ^ 0x80 = x + 128 (each 4-byte broadcast
 * flipped in its register, read in place; from a zero-padded stack copy when the depth is not a
 * multiple of 4), and the bias is bias_u = bias - (input_zp + 128) * sum(w). Plain AVX2 has no
 * VNNI: the row is sign-extended to int16 on the stack once and VPMADDWD multiplies it by the
 * sign-extended weights (bias_x = bias - input_zp * sum(w)). Padding bytes meet zero weights.
 * Every path sums the same products in int32 with wrap-around, so all agree with TFLite Micro
 * bit for bit (see x86/common.h).
 *
 * ZMM: a pass keeps all its blocks' accumulators in registers and splits the depth over 2 (8
 * blocks) or 4 accumulator chains, so VPDPBUSD's latency never waits on itself; 256-bit paths
 * walk a pass as sub-passes of at most 4 blocks (8 YMM accumulators). With weights streamed
 * from L2 once per inference (ad01_int8: 270 KB) the ZMM kernel runs at about the core's L2
 * read bandwidth. Requantization: 16 units per ZMM with the fast path proven exact by
 * edgecc/ops/_simd.py (fast_requant; the same formula as ec_x86_fast8), or TFLite's two
 * roundings (ec_x86_mbqm8); 256-bit paths use ec_x86_out16. Per-tensor layers on the fast
 * path keep 16 requantization entries for every block (uni), not one per unit.
 * Width by build flags as everywhere on x86: EC_X86_512 (ZMM), EC_X86_VNNI (YMM VPDPBUSD), else
 * plain AVX2. C99 + intrinsics, no state, no allocation, no arena scratch.
 */
#ifndef EDGECC_X86_FULLY_CONNECTED_STREAM_H
#define EDGECC_X86_FULLY_CONNECTED_STREAM_H
#if defined(__AVX2__)
#include "fully_connected_stream_passes.h"

#if EC_X86_VNNI
#define EC_FCH_U(p) _mm256_xor_si256(_mm256_set1_epi32(ec_x86_ld32(p)), flip)
#endif

/* The last pass when it is one half block (units c..c+7: 1..8 real units, 32 bytes a step):
 * 4 (VNNI) or 2 (AVX2) accumulator chains on YMM. row: the u8 row for VPDPBUSD (in place or
 * the stack copy), the int16 row for plain AVX2. */
EC_X86_FC_INL void ec_x86_fc_half(const void *row, int kq, const int8_t *wk, const int32_t *bias,
                                  const ec_x86_rq *q, int8_t *y, int c, int units, int uni) {
    const __m256i z = _mm256_setzero_si256();
    int k;
#if EC_X86_VNNI
    const int8_t *u = (const int8_t *)row;
    const __m256i flip = _mm256_set1_epi8((char)0x80);
    __m256i a0 = EC_LD256(bias + c), a1 = z, a2 = z, a3 = z;
    for (k = 0; k + 4 <= kq; k += 4, u += 16, wk += 128) {
        a0 = ec_dpbusd(a0, EC_FCH_U(u), EC_LD256(wk));
        a1 = ec_dpbusd(a1, EC_FCH_U(u + 4), EC_LD256(wk + 32));
        a2 = ec_dpbusd(a2, EC_FCH_U(u + 8), EC_LD256(wk + 64));
        a3 = ec_dpbusd(a3, EC_FCH_U(u + 12), EC_LD256(wk + 96));
    }
    for (; k < kq; ++k, u += 4, wk += 32) a0 = ec_dpbusd(a0, EC_FCH_U(u), EC_LD256(wk));
    ec_x86_out8(y + c, _mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3)), q,
                 uni ? 0 : c, units - c);
#else
    const int16_t *xs = (const int16_t *)row;
    __m256i p0 = z, p1 = z, r0 = z, r1 = z, v;
    for (k = 0; k + 2 <= kq; k += 2, xs += 8, wk += 64) {
        v = _mm256_set1_epi64x(ec_x86_ld64(xs));
        p0 = _mm256_add_epi32(p0, _mm256_madd_epi16(v, _mm256_cvtepi8_epi16(EC_LD128(wk))));
        p1 = _mm256_add_epi32(p1, _mm256_madd_epi16(v, _mm256_cvtepi8_epi16(EC_LD128(wk + 16))));
        v = _mm256_set1_epi64x(ec_x86_ld64(xs + 4));
        r0 = _mm256_add_epi32(r0, _mm256_madd_epi16(v, _mm256_cvtepi8_epi16(EC_LD128(wk + 32))));
        r1 = _mm256_add_epi32(r1, _mm256_madd_epi16(v, _mm256_cvtepi8_epi16(EC_LD128(wk + 48))));
    }
    if (k < kq) {
        v = _mm256_set1_epi64x(ec_x86_ld64(xs));
        p0 = _mm256_add_epi32(p0, _mm256_madd_epi16(v, _mm256_cvtepi8_epi16(EC_LD128(wk))));
        p1 = _mm256_add_epi32(p1, _mm256_madd_epi16(v, _mm256_cvtepi8_epi16(EC_LD128(wk + 16))));
    }
    ec_x86_out8(y + c,
                 _mm256_add_epi32(EC_LD256(bias + c), ec_x86_fc_fold8(_mm256_add_epi32(p0, r0),
                                                                      _mm256_add_epi32(p1, r1))),
                 q, uni ? 0 : c, units - c);
#endif
}
#undef EC_FCH_U

/* y[b][u] for every batch row, then the passes in the packing's order (8 blocks while they
 * last, then 4, 2, 1). The VPDPBUSD paths read the row in place when the depth is a multiple of
 * 4 (each 4-byte broadcast flipped in its register), else from a zero-padded stack copy; plain
 * AVX2 sign-extends the row to int16 on the stack. bias_u for the VPDPBUSD paths, bias_x for
 * plain AVX2 (see the file comment). uni: the requantization arrays hold 16 entries, the same
 * for every unit (per-tensor fast path), instead of one per unit. kp <= EC_X86_FC_MAX_KP. */
EC_X86_SHARED void ec_x86_fully_connected_stream_s8(int batches, int depth, int kp, int units, int up, int uni, int half,
                              const int8_t *x, int8_t *y, const int8_t *w, const int32_t *bias_u,
                              const int32_t *bias_x, const ec_x86_rq *q) {
    const int kq = kp / 4;
    int bt;
#if EC_X86_VNNI || EC_X86_512
    int8_t row[EC_X86_FC_MAX_KP + 16];
    (void)bias_x;
#else
    int16_t row[EC_X86_FC_MAX_KP + 16] __attribute__((aligned(32)));
    (void)bias_u;
#endif
    for (bt = 0; bt < batches; ++bt, x += depth, y += units) {
        const int8_t *wk = w;
        int c = 0, i;
#if EC_X86_VNNI || EC_X86_512
        const int8_t *u = x;
        if (depth != kp) {  /* the last step's missing bytes meet zero weights */
            memcpy(row, x, (size_t)depth);
            memset(row + depth, 0, (size_t)(kp - depth));
            u = row;
        }
        (void)i;
#else
        for (i = 0; i < kp; i += 16) {
            int8_t t[16] = {0};
            memcpy(t, x + i, (size_t)(depth - i >= 16 ? 16 : depth - i));
            _mm256_store_si256((__m256i *)(void *)(row + i), _mm256_cvtepi8_epi16(EC_LD128(t)));
        }
#endif
#if EC_X86_512
        for (; c + 128 <= up; c += 128, wk += (size_t)128 * kp)
            ec_x86_fcz8(u, kq, wk, bias_u, q, y, c, units, uni);
        if (up - c >= 64) {
            ec_x86_fcz4(u, kq, wk, bias_u, q, y, c, units, uni);
            c += 64;
            wk += (size_t)64 * kp;
        }
        if (up - c >= 32) {
            ec_x86_fcz2(u, kq, wk, bias_u, q, y, c, units, uni);
            c += 32;
            wk += (size_t)32 * kp;
        }
        if (up - c >= 16) {
            if (half) ec_x86_fc_half(u, kq, wk, bias_u, q, y, c, units, uni);
            else ec_x86_fcz1(u, kq, wk, bias_u, q, y, c, units, uni);
        }
#else
        while (c < up) {
            /* a pass of np blocks, as sub-passes of 4 / 2 / 1 blocks (8 accumulators each) */
            const int np = up - c >= 128 ? 8 : (up - c >= 64 ? 4 : (up - c >= 32 ? 2 : 1));
            int j = 0;
            if (np == 1 && half) {
#if EC_X86_VNNI
                ec_x86_fc_half(u, kq, wk, bias_u, q, y, c, units, uni);
#else
                ec_x86_fc_half(row, kq, wk, bias_x, q, y, c, units, uni);
#endif
                break;
            }
#if EC_X86_VNNI
            for (; j + 4 <= np; j += 4)
                ec_x86_fcy4(u, kq, wk + 64 * j, np, bias_u, q, y, c + 16 * j, units, uni);
            if (j + 2 <= np) {
                ec_x86_fcy2(u, kq, wk + 64 * j, np, bias_u, q, y, c + 16 * j, units, uni);
                j += 2;
            }
            if (j < np) ec_x86_fcy1(u, kq, wk + 64 * j, np, bias_u, q, y, c + 16 * j, units, uni);
#else
            for (; j + 2 <= np; j += 2)
                ec_x86_fcx2(row, kq, wk + 64 * j, np, bias_x, q, y, c + 16 * j, units, uni);
            if (j < np) ec_x86_fcx1(row, kq, wk + 64 * j, np, bias_x, q, y, c + 16 * j, units, uni);
#endif
            wk += (size_t)16 * np * kp;
            c += 16 * np;
        }
#endif
    }
}

#endif /* __AVX2__ */
#endif /* EDGECC_X86_FULLY_CONNECTED_STREAM_H */
