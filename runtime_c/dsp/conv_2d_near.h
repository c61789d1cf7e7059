/* edgecc Cortex-M DSP kernel: a Conv group onnxruntime's x86 CPU provider runs in float32
 * (--onnx-numerics x86, edgecc/ops/_ort_near.py), on dsp/conv_2d.h's blocks: the exact
 * accumulator, onnxruntime's float32 order for the outputs near a rounding boundary (dsp/near.h,
 * runtime_c/edgecc_ort_near.h). Only the kernels of such groups include it, so a TFLite model's
 * output ships none of the near-tie headers (conventions: dsp/common.h). */
#ifndef EDGECC_DSP_CONV_2D_NEAR_H
#define EDGECC_DSP_CONV_2D_NEAR_H
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include "conv_2d.h"
#include "near.h" /* the near-tie path of onnxruntime's float groups and its DSP sums */

/* A float-group layer's records (dsp/conv_2d.h EC_DSP_CONV_REC words): the doubled folded zero
 * point (its bias is float32), the bits of half its estimate's scale h, of its bias in output
 * steps and of max|w| * kt; kt and kb follow from h, the bias and the layer's constants
 * (ec_ortn_conv ckt, ckb, cslack). */

/* The sum of |x - zx| over output pixel pix's receptive field, 4 bytes per USADA8 where the
 * channels allow. */
static inline float ec_dsp_field_abs(const ec_ortn_conv *L, const int8_t *x, int32_t pix) {
    return (float)ec_ortn_field_sum(L, x, pix, L->in_c & 3 ? ec_ortn_tap_abs_c : ec_dsp_tap_abs);
}

/* One accumulator (of slot p) to its output byte. The layer rounds its estimate
 * e = 2 acc * h + bias in output steps; an e within delta (wk * aw[p] + kb, aw[p] the pixel's
 * field sum of |x - zx|, wk = max|w| * kt from the record, kb derived from the bias with the
 * rounding margins of ckb and cslack) of a rounding boundary goes to ec_dsp_near_exact (the
 * exact bound, then onnxruntime's order, kt = h * ckt); slots past the last pixel do not (their
 * outputs are dropped). The estimate stays below 2^30 and is exact to the bound's terms. */
#define EC_DSP_MM6_NEAR_OUT(a, p) do { \
        const float e_ = (float)a * hn + bn; \
        a = ec_dsp_round_f(e_); \
        if (ec_dsp_fabs(e_ - (float)a) + wk * aw[p] >= th && (p) < last) \
            a = ec_dsp_near_exact(nr, x, (const int8_t *)(const void *)w - g->kp, \
                                  xs + 2 * (p), EC_DSP_XS_STEP, pix + (p), \
                                  oc_n - (int32_t)(yend - y), e_, hn * nr->ckt, kb); \
        a += zy; \
        a = full ? __ssat(a, 8) : ec_dsp_clamp_s8(a, lo, hi); \
    } while (0)

#define EC_DSP_MM6_NEAR_EPI() do { \
        float hn = 0.0f, bn = 0.0f, wk = 0.0f, th = 0.0f, kb = 0.0f; \
        int32_t zy = 0, last = 0; \
        memcpy(&hn, rec + 1, 4); \
        memcpy(&bn, rec + 2, 4); \
        memcpy(&wk, rec + 3, 4); \
        kb = ec_dsp_fabs(bn) * nr->ckb + nr->cslack; \
        th = 0.5f - kb; \
        zy = nr->out_zp; \
        last = g->pixels - pix; \
        EC_DSP_MM6_NEAR_OUT(a0, 0); EC_DSP_MM6_NEAR_OUT(a1, 1); EC_DSP_MM6_NEAR_OUT(a2, 2); \
        EC_DSP_MM6_NEAR_OUT(a3, 3); EC_DSP_MM6_NEAR_OUT(a4, 4); EC_DSP_MM6_NEAR_OUT(a5, 5); \
    } while (0)

/* A block (dsp/conv_2d.h EC_DSP_MM6_CHANNELS) with the near-tie epilogue, out of line: it needs
 * registers the caller's loop would keep (measured: inlined, the resnet's float-group convs take
 * 6% more). nr, x (the input), pix (the block's first pixel) and aw (its pixels' field sums of
 * |x - zx|) serve the near-tie test and its exact path. */
static __attribute__((noinline, unused)) EC_DSP_NOSCHED void ec_dsp_mm6_near(
    const int32_t *xs, const int32_t *w, const int32_t *rec, const ec_dsp_conv_geom *g, int8_t *y,
    const ec_ortn_conv *nr, const int8_t *x, int32_t pix, const float *aw) {
    const int odd = (g->kp & 8) != 0;
    EC_DSP_MM6_CHANNELS(EC_DSP_MM6_NEAR_EPI);
}

/* a float group's field sums: a channel count not a multiple of 4 (a first layer) sums the
 * block's slot (a filter volume not a multiple of 4 is gathered into col, whose bytes past it are
 * kept at the zero point here), others tap by tap over the input (4 bytes per USADA8) */
#define EC_DSP_CONV_NEAR_PIXEL(p) do { \
        if (slot_abs) aw[p] = (float)ec_dsp_xs_abs(xs + 2 * (p), ng, EC_DSP_XS_STEP, z2); \
        else aw[p] = ec_dsp_field_abs(nr, x, pix + (p)); \
    } while (0)
#define EC_DSP_CONV_NEAR_MM6(yb) ec_dsp_mm6_near(xs, w, rec, g, yb, nr, x, pix, aw)

/* A Conv group onnxruntime runs in float32: the exact accumulator, onnxruntime's order for the
 * outputs near a rounding boundary (nr). scratch: EC_DSP_CONV_SCRATCH(kp, out_c) bytes, word
 * aligned. */
EC_DSP_SHARED void ec_dsp_conv_2d_6px_near_s8(const ec_dsp_conv_geom *g, const int8_t *x,
                                              int8_t *y, const int32_t *w, const int32_t *rec,
                                              uint8_t *scratch, const ec_ortn_conv *nr) {
    EC_DSP_CONV_STATE;
    float aw[EC_DSP_CONV_PX] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    const int slot_abs = (g->in_c & 3) != 0 && !g->direct;
    const int32_t z2 = (int32_t)(0x00010001u * (uint16_t)(2 * g->pad_val));
    const int32_t ng = (g->k_h * g->k_w * g->in_c + 3) / 4; /* a slot's groups of the field */
    if (slot_abs) ec_dsp_fill8(col + g->k_h * g->k_w * g->in_c, g->pad_val,
                               g->kp - g->k_h * g->k_w * g->in_c);
    EC_DSP_CONV_BLOCKS(EC_DSP_CONV_NEAR_PIXEL, EC_DSP_CONV_NEAR_MM6);
}

#endif /* __ARM_FEATURE_DSP */
#endif /* EDGECC_DSP_CONV_2D_NEAR_H */
