/* edgecc Cortex-M DSP kernel: int8 AVERAGE_POOL_2D / MAX_POOL_2D (conventions: dsp/common.h). */
#ifndef EDGECC_DSP_POOL_2D_H
#define EDGECC_DSP_POOL_2D_H
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include "common.h"

/* ---------------------------------------------------------------------------------------
 * AVERAGE_POOL_2D / MAX_POOL_2D, int8. The window is clipped to the input (TFLite Micro never
 * reads padding). Average: per output pixel, 8 channels at a time summed in int16 halves with
 * SXTAB16 (windows of at most 256 taps cannot overflow: the compiler checks), then TFLite's
 * rounding division (half away from zero, C truncation) per channel. Max: SSUB8 + SEL, the
 * per-byte signed maximum of 4 channels in two instructions.
 */
typedef struct {
    int32_t batches, in_h, in_w, c, out_h, out_w, fh, fw, s_h, s_w, pad_h, pad_w, lo, hi;
} ec_dsp_pool_geom;

static inline int32_t ec_dsp_sxtab16_r8(int32_t acc, int32_t x) {
    int32_t r;
    __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(acc), "r"(x));
    return r;
}

static inline int8_t ec_dsp_pool_avg(int32_t sum, int32_t count, int32_t lo, int32_t hi) {
    const int32_t avg = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
    return ec_dsp_clamp8(avg, lo, hi);
}

/* The clipped window of output (oy, ox): rows [fy0, fy1), columns [fx0, fx1). */
#define EC_DSP_POOL_WINDOW(g, oy, ox) \
    const int32_t y0_ = (oy) * (g)->s_h - (g)->pad_h, x0_ = (ox) * (g)->s_w - (g)->pad_w; \
    const int32_t fy0 = y0_ < 0 ? -y0_ : 0; \
    const int32_t fy1 = (g)->in_h - y0_ < (g)->fh ? (g)->in_h - y0_ : (g)->fh; \
    const int32_t fx0 = x0_ < 0 ? -x0_ : 0; \
    const int32_t fx1 = (g)->in_w - x0_ < (g)->fw ? (g)->in_w - x0_ : (g)->fw

EC_DSP_SHARED void ec_dsp_pool_2d_avg_s8(const ec_dsp_pool_geom *g, const int8_t *x, int8_t *y) {
    const int32_t cn = g->c, c8 = cn & ~7;
    int32_t b, oy, ox, fy, fx, c;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + b * g->in_h * g->in_w * cn;
        for (oy = 0; oy < g->out_h; ++oy) {
            for (ox = 0; ox < g->out_w; ++ox, y += cn) {
                EC_DSP_POOL_WINDOW(g, oy, ox);
                const int32_t count = (fy1 - fy0) * (fx1 - fx0);
                const int8_t *w0 = xb + ((y0_ + fy0) * g->in_w + x0_ + fx0) * cn;
                for (c = 0; c < c8; c += 8) {
                    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
                    const int8_t *row = w0 + c;
                    for (fy = fy0; fy < fy1; ++fy, row += g->in_w * cn) {
                        const int8_t *p = row;
                        for (fx = fx0; fx < fx1; ++fx, p += cn) {
                            const int32_t v0 = ec_dsp_ld32(p), v1 = ec_dsp_ld32(p + 4);
                            a0 = __sxtab16(a0, v0);
                            a1 = ec_dsp_sxtab16_r8(a1, v0);
                            a2 = __sxtab16(a2, v1);
                            a3 = ec_dsp_sxtab16_r8(a3, v1);
                        }
                    }
                    y[c] = ec_dsp_pool_avg((int16_t)a0, count, g->lo, g->hi);
                    y[c + 1] = ec_dsp_pool_avg((int16_t)a1, count, g->lo, g->hi);
                    y[c + 2] = ec_dsp_pool_avg(a0 >> 16, count, g->lo, g->hi);
                    y[c + 3] = ec_dsp_pool_avg(a1 >> 16, count, g->lo, g->hi);
                    y[c + 4] = ec_dsp_pool_avg((int16_t)a2, count, g->lo, g->hi);
                    y[c + 5] = ec_dsp_pool_avg((int16_t)a3, count, g->lo, g->hi);
                    y[c + 6] = ec_dsp_pool_avg(a2 >> 16, count, g->lo, g->hi);
                    y[c + 7] = ec_dsp_pool_avg(a3 >> 16, count, g->lo, g->hi);
                }
                for (; c < cn; ++c) {
                    int32_t sum = 0;
                    for (fy = fy0; fy < fy1; ++fy) {
                        for (fx = fx0; fx < fx1; ++fx) sum += w0[(fy - fy0) * g->in_w * cn +
                                                                 (fx - fx0) * cn + c];
                    }
                    y[c] = ec_dsp_pool_avg(sum, count, g->lo, g->hi);
                }
            }
        }
    }
}

/* Per-byte signed maximum of two words of 4 int8 channels. */
static inline int32_t ec_dsp_max8x4(int32_t a, int32_t b) {
    (void)__ssub8(a, b); /* GE bits: a >= b per byte */
    return __sel(a, b);
}

EC_DSP_SHARED void ec_dsp_pool_2d_max_s8(const ec_dsp_pool_geom *g, const int8_t *x, int8_t *y) {
    const int32_t cn = g->c, c4 = cn & ~3;
    const int32_t lo4 = (int32_t)(0x01010101u * (uint8_t)g->lo);
    const int32_t hi4 = (int32_t)(0x01010101u * (uint8_t)g->hi);
    int32_t b, oy, ox, fy, fx, c;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + b * g->in_h * g->in_w * cn;
        for (oy = 0; oy < g->out_h; ++oy) {
            for (ox = 0; ox < g->out_w; ++ox, y += cn) {
                EC_DSP_POOL_WINDOW(g, oy, ox);
                const int8_t *w0 = xb + ((y0_ + fy0) * g->in_w + x0_ + fx0) * cn;
                for (c = 0; c < c4; c += 4) {
                    int32_t m = (int32_t)0x80808080u, r; /* -128 in every byte */
                    const int8_t *row = w0 + c;
                    for (fy = fy0; fy < fy1; ++fy, row += g->in_w * cn) {
                        const int8_t *p = row;
                        for (fx = fx0; fx < fx1; ++fx, p += cn) m = ec_dsp_max8x4(ec_dsp_ld32(p), m);
                    }
                    r = ec_dsp_max8x4(m, lo4);
                    (void)__ssub8(r, hi4);
                    ec_dsp_st32(y + c, __sel(hi4, r)); /* min(r, hi): hi where r >= hi */
                }
                for (; c < cn; ++c) {
                    int32_t m = -128;
                    for (fy = fy0; fy < fy1; ++fy) {
                        for (fx = fx0; fx < fx1; ++fx) {
                            const int32_t v = w0[(fy - fy0) * g->in_w * cn + (fx - fx0) * cn + c];
                            m = v > m ? v : m;
                        }
                    }
                    y[c] = ec_dsp_clamp8(m, g->lo, g->hi);
                }
            }
        }
    }
}

#endif /* __ARM_FEATURE_DSP */
#endif /* EDGECC_DSP_POOL_2D_H */
