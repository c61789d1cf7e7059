/* edgecc: the ISA-independent half of the x86 AVX2 and AArch64 NEON convolution kernels
 * (runtime_c/x86/, runtime_c/neon/): a layer's geometry, its taps as
 * segments, stepping output pixels without divisions, and gathering a border pixel's taps
 * (zero-point padded) into a buffer; for the depthwise kernels (x86/ and neon/depthwise_conv_2d.h),
 * a window's tap pointers. Empty unless the build targets AVX2 or NEON. C99, no state.
 */
#ifndef EDGECC_VEC_COMMON_H
#define EDGECC_VEC_COMMON_H
#if defined(__AVX2__) || defined(__ARM_NEON)
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* n bytes copied / set: byte loops the compiler vectorizes, inline for the short runs of
 * few-channel layers (a 10x4 filter over 1 channel copies 4 bytes a row). */
static inline void ec_vec_copy(int8_t *dst, const int8_t *src, int n) {
    int i;
    for (i = 0; i < n; ++i) dst[i] = src[i];
}

static inline void ec_vec_fill(int8_t *dst, int v, int n) {
    int i;
    for (i = 0; i < n; ++i) dst[i] = (int8_t)v;
}

/* ---------------------------------------------------------------------------------- CONV_2D */

#define EC_VEC_MAX_SEGS 64

/* A pixel's taps come in "segments": one per filter row (k_w * in_c contiguous input bytes) when
 * dil_w == 1, else one per filter tap (in_c bytes). Each segment is padded to seg_p bytes (a
 * multiple of 4) in the packed weights (zero weights), so a quad never straddles two segments
 * and a pixel whose taps all lie inside the input is read in place, 4 bytes at a time. */
typedef struct {
    int32_t pixels;                 /* batches * out_h * out_w */
    int32_t in_h, in_w, in_c, out_h, out_w, out_c;
    int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_t, pad_l;
    int32_t segs, seg_len, seg_p;   /* segments per pixel, real bytes, padded bytes */
    int32_t kp;                     /* segs * seg_p */
    int32_t ocp;                    /* out_c rounded up to a multiple of 8 */
    int32_t in_zp;                  /* what a tap outside the input reads */
    int32_t batches;
    int32_t mode;                   /* EC_VEC_GENERAL, EC_VEC_IN_PLACE or EC_VEC_LINEAR */
} ec_vec_conv_geom;

/* What the compiler proved about a layer's pixels: nothing (borders are checked per pixel),
 * every window inside the input (no checks), or a 1x1 stride-1 unpadded layer whose pixels are
 * consecutive runs of in_c bytes (no position arithmetic either). */
#define EC_VEC_GENERAL 0
#define EC_VEC_IN_PLACE 1
#define EC_VEC_LINEAR 2

/* An output pixel's position, stepped along the output (no divisions in the pixel loop). */
typedef struct {
    int b, oy, ox;
} ec_vec_pos;

static inline void ec_vec_next(const ec_vec_conv_geom *g, ec_vec_pos *t) {
    if (++t->ox == g->out_w) {
        t->ox = 0;
        if (++t->oy == g->out_h) {
            t->oy = 0;
            ++t->b;
        }
    }
}

/* The first input byte the window of the pixel at t reads (its row/column may lie outside the
 * image: then only the offset is used, never dereferenced), and the window's top-left (iy0, ix0). */
static inline ptrdiff_t ec_vec_origin(const ec_vec_conv_geom *g, const ec_vec_pos *t, int *iy0,
                                       int *ix0) {
    *iy0 = t->oy * g->stride_h - g->pad_t;
    *ix0 = t->ox * g->stride_w - g->pad_l;
    return (((ptrdiff_t)t->b * g->in_h + *iy0) * g->in_w + *ix0) * g->in_c;
}

/* Pixel p read in place: every tap inside the image, and the padding bytes of the last segment
 * still inside the input tensor (they meet zero weights, but must be readable). */
static inline int ec_vec_in_place(const ec_vec_conv_geom *g, int iy0, int ix0, ptrdiff_t o,
                                   ptrdiff_t last_seg_off) {
    return iy0 >= 0 && ix0 >= 0 && iy0 + (g->k_h - 1) * g->dil_h < g->in_h &&
           ix0 + (g->k_w - 1) * g->dil_w < g->in_w &&
           o + last_seg_off + g->seg_p <= (ptrdiff_t)g->batches * g->in_h * g->in_w * g->in_c;
}

/* The segments of the pixel at t copied to dst (seg_p bytes each; taps outside the input read
 * in_zp). */
static inline __attribute__((always_inline, unused)) void ec_vec_gather(const ec_vec_conv_geom *g, const int8_t *x, const ec_vec_pos *t,
                           int8_t *dst) {
    const int iy0 = t->oy * g->stride_h - g->pad_t, ix0 = t->ox * g->stride_w - g->pad_l;
    const int8_t *xb = x + (size_t)t->b * g->in_h * g->in_w * g->in_c;
    int fy, fx;
    for (fy = 0; fy < g->k_h; ++fy) {
        const int iy = iy0 + fy * g->dil_h;
        const int row_ok = iy >= 0 && iy < g->in_h;
        const int8_t *xr = xb + (size_t)(row_ok ? iy : 0) * g->in_w * g->in_c;
        if (g->dil_w == 1) {
            int8_t *d = dst + fy * g->seg_p;
            int a = ix0 < 0 ? -ix0 : 0;
            int e = ix0 + g->k_w > g->in_w ? g->in_w - ix0 : g->k_w;
            if (!row_ok || e <= a) a = e = 0;
            ec_vec_fill(d, g->in_zp, a * g->in_c);
            if (e > a) ec_vec_copy(d + a * g->in_c, xr + (ptrdiff_t)(ix0 + a) * g->in_c, (e - a) * g->in_c);
            ec_vec_fill(d + e * g->in_c, g->in_zp, (g->k_w - e) * g->in_c);
            ec_vec_fill(d + g->seg_len, 0, g->seg_p - g->seg_len);
        } else {
            for (fx = 0; fx < g->k_w; ++fx) {
                const int ix = ix0 + fx * g->dil_w;
                int8_t *d = dst + (fy * g->k_w + fx) * g->seg_p;
                if (!row_ok || ix < 0 || ix >= g->in_w)
                    ec_vec_fill(d, g->in_zp, g->in_c);
                else
                    ec_vec_copy(d, xr + (ptrdiff_t)ix * g->in_c, g->in_c);
                ec_vec_fill(d + g->in_c, 0, g->seg_p - g->in_c);
            }
        }
    }
}

/* For a block of 4 output pixels starting at *pos (np of them real; the others repeat the last
 * one): each pixel's base pointer and segment offsets, reading in place where the window lies
 * inside the input (soff) and from a gathered copy in buf (kp bytes a pixel, goff) elsewhere.
 * Advances *pos past the block. This and ec_vec_gather are always inlined: x86/kernels.h calls
 * them from one copy of the convolution per instruction-set level, and gcc then kept them out of
 * line (6% more instructions on pretrainedResnet_quant's AVX2 path). */
static inline __attribute__((always_inline)) void ec_vec_block(const ec_vec_conv_geom *g, const int8_t *x, ec_vec_pos *pos,
                                int np, int8_t *buf, const ptrdiff_t *soff, const ptrdiff_t *goff,
                                const int8_t *base[4], const ptrdiff_t *off[4]) {
    int i;
    if (g->mode == EC_VEC_LINEAR) {
        const int8_t *p = x + ((((ptrdiff_t)pos->b * g->out_h + pos->oy) * g->out_w) + pos->ox) * g->in_c;
        for (i = 0; i < 4; ++i) {
            base[i] = p + (ptrdiff_t)(i < np ? i : np - 1) * g->in_c;
            off[i] = soff;
        }
        for (i = 0; i < np; ++i) ec_vec_next(g, pos);
        return;
    }
    for (i = 0; i < 4; ++i) {
        int iy0, ix0;
        ptrdiff_t o;
        if (i >= np) {
            base[i] = base[np - 1];
            off[i] = off[np - 1];
            continue;
        }
        o = ec_vec_origin(g, pos, &iy0, &ix0);
        if (g->mode == EC_VEC_IN_PLACE || ec_vec_in_place(g, iy0, ix0, o, soff[g->segs - 1])) {
            base[i] = x + o;
            off[i] = soff;
        } else {
            ec_vec_gather(g, x, pos, buf + i * g->kp);
            base[i] = buf + i * g->kp;
            off[i] = goff;
        }
        ec_vec_next(g, pos);
    }
}

/* Segment offsets from a window's first byte (soff) and in a gathered field (goff). */
static inline void ec_vec_segments(const ec_vec_conv_geom *g, ptrdiff_t *soff, ptrdiff_t *goff) {
    int s = 0, fy, fx;
    for (fy = 0; fy < g->k_h; ++fy) {
        if (g->dil_w == 1) {
            soff[s++] = (ptrdiff_t)fy * g->dil_h * g->in_w * g->in_c;
        } else {
            for (fx = 0; fx < g->k_w; ++fx)
                soff[s++] = ((ptrdiff_t)fy * g->dil_h * g->in_w + (ptrdiff_t)fx * g->dil_w) * g->in_c;
        }
    }
    for (s = 0; s < g->segs; ++s) goff[s] = (ptrdiff_t)s * g->seg_p;
}

#define EC_VEC_MAX_KP 2048  /* border pixels are gathered on the stack: 4 * kp bytes */

/* ------------------------------------------------------------------------ DEPTHWISE_CONV_2D */

/* Each tap's offset (k_h * k_w of them, row-major) from a window's first input pixel. */
static inline void ec_vec_dw_offsets(int k_h, int k_w, int dil_h, int dil_w, int in_w, int C,
                                     ptrdiff_t *off) {
    int i, j, t = 0;
    for (i = 0; i < k_h; ++i)
        for (j = 0; j < k_w; ++j)
            off[t++] = ((ptrdiff_t)i * dil_h * in_w + (ptrdiff_t)j * dil_w) * C;
}

/* The input pointers of the window whose top-left is (iy0, ix0) in the image xb: in place when
 * the window lies inside it, else zrow (a row of input_zp bytes) for each tap outside. One more,
 * tp[k_h * k_w] = zrow, partners an odd last tap (whose weight is 0). */
static inline void ec_vec_dw_taps(const int8_t *xb, int in_h, int in_w, int C, int k_h, int k_w,
                                  int dil_h, int dil_w, int iy0, int ix0, const ptrdiff_t *off,
                                  const int8_t *zrow, const int8_t **tp) {
    const int taps = k_h * k_w;
    int t = 0, fy, fx;
    if (iy0 >= 0 && iy0 + (k_h - 1) * dil_h < in_h && ix0 >= 0 && ix0 + (k_w - 1) * dil_w < in_w) {
        const int8_t *base = xb + ((size_t)iy0 * in_w + ix0) * C;
        for (; t < taps; ++t) tp[t] = base + off[t];
    } else {
        for (fy = 0; fy < k_h; ++fy) {
            const int iy = iy0 + fy * dil_h;
            for (fx = 0; fx < k_w; ++fx, ++t) {
                const int ix = ix0 + fx * dil_w;
                tp[t] = (iy < 0 || iy >= in_h || ix < 0 || ix >= in_w)
                            ? zrow : xb + ((size_t)iy * in_w + ix) * C;
            }
        }
    }
    tp[taps] = zrow;
}

#endif /* __AVX2__ || __ARM_NEON */
#endif /* EDGECC_VEC_COMMON_H */
