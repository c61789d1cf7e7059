/* edgecc x86 kernel for int8 CONV_2D layers with few input channels (in_c <= 4, typically a
 * model's first layer): ec_x86_conv_2d_first_s8.
 *
 * With 1 to 4 input channels a pixel's taps come in short runs (9 bytes a filter row for 3x3x3,
 * 4 for 10x4x1), which ec_x86_conv_2d_avx2 would pad to 4 bytes each and gather at every border
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
 * of 8); the plain AVX2 path widens each block's quads to int16 [kpp/2][16][2] ([kpp/2][8][2])
 * on the stack once per band, and its VPMADDWD then sums each channel's tap pair straight into
 * its own int32 lane (the patches are widened to int16 once per band too). Taps past
 * k_h * k_w * in_c meet zero weights. Biases and the
 * requantization are those of ec_x86_conv_2d_avx2 (bias_u for u8 activations, bias_x for x itself;
 * ec_x86_rq), so every path sums the same products in int32 and agrees bit for bit with
 * TFLite Micro.
 *
 * Register widths: EC_X86_512 builds run 64 channels x 4 pixels (layers with 4+ blocks of 16),
 * 16 channels x 8 pixels, and the block of 8 as 8 pixels x 8 channels x 2 quads, all in ZMM,
 * and requantize 16 lanes at a time with the ZMM form of ec_x86_fast8 (the same operations
 * lane for lane; the exact path goes through ec_x86_requant8), packing 64 output bytes per
 * step. 256-bit VNNI and plain AVX2 builds run 4 pixels x 16 (or 8) channels in YMM and store
 * through ec_x86_out16 / ec_x86_out8.
 *
 * No arena scratch: the rows (at most EC_X86_FIRST_MAX_ROWS bytes) and a band's patches
 * (EC_X86_FIRST_MAX_COL bytes; twice that as int16 without VNNI, and a block's int16 weights,
 * 16 * EC_X86_FIRST_MAX_KPP) live on the stack; the compiler only takes this kernel when they
 * fit. C99 + intrinsics, no state, no allocation.
 */
#ifndef EDGECC_X86_CONV_2D_FIRST_H
#define EDGECC_X86_CONV_2D_FIRST_H
#if defined(__AVX2__)
#include "conv_2d_first_dot.h"

/* The layer: per batch image, bands of output rows: the band's input rows padded on the stack
 * once, each row's patches copied after the band's previous rows', then the band's pixels
 * (consecutive in the output) as one run of products. wq: the weight quads (every level). No
 * arena scratch. */
EC_X86_SHARED void ec_x86_conv_2d_first_s8(const ec_x86_first_geom *g, const int8_t *x, int8_t *y,
                                       const int8_t *wq,
                                       const int32_t *bias_u, const int32_t *bias_x,
                                       const ec_x86_rq *q) {
    int8_t rows[EC_X86_FIRST_MAX_ROWS];
    int8_t col[EC_X86_FIRST_MAX_COL + 16];
#if !EC_X86_VNNI
    int16_t col16[EC_X86_FIRST_MAX_COL + 16];
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
            ec_x86_first_rows(g, xb, oy0 * g->stride_h - g->pad_t,
                          (nr - 1) * g->stride_h + (g->k_h - 1) * g->dil_h + 1, rows);
            for (r = 0; r < nr; ++r)
                ec_x86_first_patches(g, rows + (size_t)r * g->stride_h * g->row_b,
                                 col + (size_t)r * row_px);
#if !EC_X86_VNNI
            {
                const int n16 = (nr * g->out_w + 8) * g->kpp;  /* with the spare pixels */
                int i;
                for (i = 0; i < n16; i += 16)
                    _mm256_storeu_si256((__m256i *)(void *)(col16 + i),
                                        _mm256_cvtepi8_epi16(EC_LD128(col + i)));
            }
#endif
            ec_x86_first_dot(g, nr * g->out_w, col, col16,
                         y + ((size_t)b * g->out_h + oy0) * g->out_w * g->out_c, wq, bias_u,
                         bias_x, q);
        }
    }
}

#endif /* __AVX2__ */
#endif /* EDGECC_X86_CONV_2D_FIRST_H */
