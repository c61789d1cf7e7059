/* edgecc runtime: int8 MUL with ONNX numerics on AArch64 NEON (ec_neon_mul_rows_s8).
 *
 * onnxruntime's QLinearMul (edgecc/ops/_onnx_elt.py) per element:
 *     y = clamp(rne(float32((a - z_a) * (b - z_b)) * r) + z_c, lo, hi)
 * with r = float32(float32(s_a * s_b) / s_c). The integer product (|.| <= 255 * 255) converts to
 * float32 exactly (SCVTF), FMUL rounds once, the clamp to +-2^15 and FCVTNS (round half to even)
 * are ec_onnx_rq's (edgecc_rt.h): the portable kernel's arithmetic, instruction for instruction.
 *
 * Layout: `outer` rows of `inner` elements; an operand either walks the whole tensor (step =
 * inner) or is one row of `inner` values repeated for every row (step 0: a per-channel scale of
 * an NHWC tensor, as squeeze-and-excitation blocks multiply). 16 elements per step; a row's last
 * partial step runs on zero-padded copies on the stack. Each step reads both inputs before
 * writing, so the output may alias a full-size input. C99, no state, no allocation.
 */
#ifndef EDGECC_NEON_MUL_H
#define EDGECC_NEON_MUL_H
#if defined(__ARM_NEON) && defined(__aarch64__)
#include <stdint.h>
#include <string.h>
#include <arm_neon.h>

typedef struct {
    int32_t outer, inner;   /* rows, elements per row */
    int32_t a_step, b_step; /* elements between an operand's rows: inner, or 0 (one row) */
    int32_t za, zb, zc;     /* zero points */
    int32_t lo, hi;         /* clamp range */
    float r;                /* float32(float32(s_a * s_b) / s_c) */
} ec_neon_mul_rows_geom;

/* 4 outputs from 4 int16 products' factors. */
static inline int32x4_t ec_neon_mul4(const ec_neon_mul_rows_geom *g, int16x4_t a, int16x4_t b) {
    float32x4_t v = vmulq_n_f32(vcvtq_f32_s32(vmull_s16(a, b)), g->r);
    v = vminq_f32(vmaxq_f32(v, vdupq_n_f32(-32768.0f)), vdupq_n_f32(32767.0f));
    const int32x4_t y = vaddq_s32(vcvtnq_s32_f32(v), vdupq_n_s32(g->zc));
    return vminq_s32(vmaxq_s32(y, vdupq_n_s32(g->lo)), vdupq_n_s32(g->hi));
}

/* 8 outputs from 8 bytes of each operand (their zero points taken off in int16). */
static inline int16x8_t ec_neon_mul8(const ec_neon_mul_rows_geom *g, int8x8_t a, int8x8_t b) {
    const int16x8_t x = vsubq_s16(vmovl_s8(a), vdupq_n_s16((int16_t)g->za));
    const int16x8_t z = vsubq_s16(vmovl_s8(b), vdupq_n_s16((int16_t)g->zb));
    return vcombine_s16(vmovn_s32(ec_neon_mul4(g, vget_low_s16(x), vget_low_s16(z))),
                        vmovn_s32(ec_neon_mul4(g, vget_high_s16(x), vget_high_s16(z))));
}

static inline int8x16_t ec_neon_mul16(const ec_neon_mul_rows_geom *g, const int8_t *a,
                                      const int8_t *b) {
    const int8x16_t x = vld1q_s8(a), z = vld1q_s8(b);
    return vcombine_s8(vmovn_s16(ec_neon_mul8(g, vget_low_s8(x), vget_low_s8(z))),
                       vmovn_s16(ec_neon_mul8(g, vget_high_s8(x), vget_high_s8(z))));
}

static __attribute__((noinline, unused)) void ec_neon_mul_rows_s8(const ec_neon_mul_rows_geom *g,
                                                                   const int8_t *a,
                                                                   const int8_t *b, int8_t *y) {
    const int n = g->inner;
    int row;
    for (row = 0; row < g->outer; ++row, a += g->a_step, b += g->b_step, y += n) {
        int i;
        for (i = 0; i + 16 <= n; i += 16)
            vst1q_s8(y + i, ec_neon_mul16(g, a + i, b + i));
        if (i < n) {
            int8_t ta[16] = {0}, tb[16] = {0}, ty[16];
            memcpy(ta, a + i, (size_t)(n - i));
            memcpy(tb, b + i, (size_t)(n - i));
            vst1q_s8(ty, ec_neon_mul16(g, ta, tb));
            memcpy(y + i, ty, (size_t)(n - i));
        }
    }
}

#endif /* __ARM_NEON && __aarch64__ */
#endif /* EDGECC_NEON_MUL_H */
