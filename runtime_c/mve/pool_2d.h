/* edgecc Helium (MVE) kernel: int8 AVERAGE_POOL_2D / MAX_POOL_2D (conventions: mve/common.h). */
#ifndef EDGECC_MVE_POOL_2D_H
#define EDGECC_MVE_POOL_2D_H
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include "common.h"
#include "../dsp/pool_2d.h" /* ec_dsp_pool_geom, the window and the rounding division */

/* ---------------------------------------------------------------------------------------
 * AVERAGE_POOL_2D / MAX_POOL_2D, int8 (geometry: dsp/pool_2d.h's ec_dsp_pool_geom; the window is
 * clipped to the input). Average: 16 channels summed in two int16x8 vectors (windows of at
 * most 256 taps), then TFLite's rounding division per channel. Max: VMAX.S8 on 16 channels.
 */
EC_MVE_SHARED void ec_mve_pool_2d_avg_s8(const ec_dsp_pool_geom *g, const int8_t *x, int8_t *y) {
    const int32_t cn = g->c;
    int16_t sums[16];
    int32_t b, oy, ox, fy, fx, c, i;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + b * g->in_h * g->in_w * cn;
        for (oy = 0; oy < g->out_h; ++oy) {
            for (ox = 0; ox < g->out_w; ++ox, y += cn) {
                EC_DSP_POOL_WINDOW(g, oy, ox);
                const int32_t count = (fy1 - fy0) * (fx1 - fx0);
                const int8_t *w0 = xb + ((y0_ + fy0) * g->in_w + x0_ + fx0) * cn;
                for (c = 0; c < cn; c += 16) {
                    const mve_pred16_t p0 = vctp16q((uint32_t)(cn - c));
                    const mve_pred16_t p1 = vctp16q((uint32_t)(cn - c > 8 ? cn - c - 8 : 0));
                    int16x8_t s0 = vdupq_n_s16(0), s1 = vdupq_n_s16(0);
                    const int8_t *row = w0 + c;
                    const int32_t nv = cn - c < 16 ? cn - c : 16;
                    for (fy = fy0; fy < fy1; ++fy, row += g->in_w * cn) {
                        const int8_t *p = row;
                        for (fx = fx0; fx < fx1; ++fx, p += cn) {
                            s0 = vaddq_s16(s0, vldrbq_z_s16(p, p0));
                            s1 = vaddq_s16(s1, vldrbq_z_s16(p + 8, p1));
                        }
                    }
                    vst1q_s16(sums, s0);
                    vst1q_s16(sums + 8, s1);
                    for (i = 0; i < nv; ++i) y[c + i] = ec_dsp_pool_avg(sums[i], count, g->lo, g->hi);
                }
            }
        }
    }
}

EC_MVE_SHARED void ec_mve_pool_2d_max_s8(const ec_dsp_pool_geom *g, const int8_t *x, int8_t *y) {
    const int32_t cn = g->c;
    const int8x16_t lo = vdupq_n_s8((int8_t)g->lo), hi = vdupq_n_s8((int8_t)g->hi);
    int32_t b, oy, ox, fy, fx, c;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + b * g->in_h * g->in_w * cn;
        for (oy = 0; oy < g->out_h; ++oy) {
            for (ox = 0; ox < g->out_w; ++ox, y += cn) {
                EC_DSP_POOL_WINDOW(g, oy, ox);
                const int8_t *w0 = xb + ((y0_ + fy0) * g->in_w + x0_ + fx0) * cn;
                for (c = 0; c < cn; c += 16) {
                    const mve_pred16_t p = vctp8q((uint32_t)(cn - c));
                    int8x16_t m = vdupq_n_s8(-128);
                    const int8_t *row = w0 + c;
                    for (fy = fy0; fy < fy1; ++fy, row += g->in_w * cn) {
                        const int8_t *q = row;
                        for (fx = fx0; fx < fx1; ++fx, q += cn) m = vmaxq_s8(m, vldrbq_z_s8(q, p));
                    }
                    vstrbq_p_s8(y + c, vminq_s8(vmaxq_s8(m, lo), hi), p);
                }
            }
        }
    }
}

#endif /* __ARM_FEATURE_MVE */
#endif /* EDGECC_MVE_POOL_2D_H */
