/* edgecc x86 kernels: int8 DEPTHWISE_CONV_2D (this file: any filter; 3x3:
 * x86/depthwise_conv_2d_3x3.h).
 *
 * ec_x86_depthwise_conv_2d_taps_s8: any filter, pixel by pixel. ec_x86_depthwise_conv_2d_3x3_s8: 3x3 undilated filters, channel block by
 * channel block and row by row, the input pairs (int16) or quads (u8, AVX-512 VPDPBUSD) of each
 * input column built once for every pixel whose window holds it; 512-bit blocks where EC_X86_512.
 * The compiler (edgecc/lower/vec/depthwise.py) prepares the weights (int16 tap pairs; the 3x3 kernel's
 * 64-channel blocks build their quads from them), the bias with the input offset folded in, and the requantization constants
 * (ec_x86_rq, x86/common.h). Taps outside the input read a constant row of input_zp bytes.
 * No arena scratch. Only compiled where AVX2 exists. C99, no state, no allocation.
 */
#ifndef EDGECC_X86_DEPTHWISE_CONV_2D_H
#define EDGECC_X86_DEPTHWISE_CONV_2D_H
#if defined(__AVX2__)
#include "common.h"

/* ----------------------------------------------------------------------- DEPTHWISE_CONV_2D */

#ifndef EC_X86_ONCE_EC_AVX2_DW_GEOM /* a record the calls name: defined once, not per level */
#define EC_X86_ONCE_EC_AVX2_DW_GEOM
typedef struct {
    int32_t batches, in_h, in_w, chans, out_h, out_w;
    int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_t, pad_l;
    int32_t pairs;                  /* (k_h * k_w + 1) / 2 tap pairs */
} ec_x86_dw_geom;
#endif

#define EC_X86_DW_MAX_TAPS 64

/* Depth multiplier 1, channels a multiple of 8. Weights: for each tap pair t, for each channel
 * c: (w[2t][c], w[2t+1][c]) as int16 (a missing last tap has weight 0). Each output pixel
 * collects its taps' input pointers (zrow, a constant row of input_zp bytes, for a tap outside
 * the input), then runs 16 channels (8 for the last block) over the tap pairs: bytes of two taps
 * interleaved, sign-extended, VPMADDWD against the weight pairs. No arena scratch. */
EC_X86_SHARED void ec_x86_depthwise_conv_2d_taps_s8(const ec_x86_dw_geom *g, const int8_t *x, int8_t *y,
                               const int16_t *w, const int32_t *bias, const ec_x86_rq *q,
                               const int8_t *zrow) {
    const int C = g->chans;
    const int8_t *tp[EC_X86_DW_MAX_TAPS + 1];
    ptrdiff_t off[EC_X86_DW_MAX_TAPS];  /* tap offsets from the window's first pixel */
    int b, oy, ox;
    ec_vec_dw_offsets(g->k_h, g->k_w, g->dil_h, g->dil_w, g->in_w, C, off);
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + (size_t)b * g->in_h * g->in_w * C;
        for (oy = 0; oy < g->out_h; ++oy) {
            const int iy0 = oy * g->stride_h - g->pad_t;
            for (ox = 0; ox < g->out_w; ++ox) {
                const int ix0 = ox * g->stride_w - g->pad_l;
                int8_t *yp = y + (((size_t)b * g->out_h + oy) * g->out_w + ox) * C;
                int c;
                ec_vec_dw_taps(xb, g->in_h, g->in_w, C, g->k_h, g->k_w, g->dil_h, g->dil_w, iy0,
                               ix0, off, zrow, tp);
                for (c = 0; c + 16 <= C; c += 16) {
                    __m256i a0 = EC_LD256(bias + c), a1 = EC_LD256(bias + c + 8);
                    const int16_t *wp = w + 2 * c;
                    int k;
                    for (k = 0; k < g->pairs; ++k, wp += 2 * C) {
                        const __m128i xa = EC_LD128(tp[2 * k] + c), xb2 = EC_LD128(tp[2 * k + 1] + c);
                        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(
                            _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(xa, xb2)), EC_LD256(wp)));
                        a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(
                            _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(xa, xb2)), EC_LD256(wp + 16)));
                    }
                    ec_x86_out16(yp + c, a0, a1, q, c, 16);
                }
                if (c < C) {  /* 8 channels left */
                    __m256i a0 = EC_LD256(bias + c);
                    const int16_t *wp = w + 2 * c;
                    int k;
                    for (k = 0; k < g->pairs; ++k, wp += 2 * C) {
                        const __m128i xa = _mm_loadl_epi64((const __m128i *)(const void *)(tp[2 * k] + c));
                        const __m128i xb2 = _mm_loadl_epi64((const __m128i *)(const void *)(tp[2 * k + 1] + c));
                        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(
                            _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(xa, xb2)), EC_LD256(wp)));
                    }
                    ec_x86_out8(yp + c, a0, q, c, 8);
                }
            }
        }
    }
}

#endif /* __AVX2__ */
#endif /* EDGECC_X86_DEPTHWISE_CONV_2D_H */
