/* edgecc runtime: int8 ADD on AArch64 NEON, TFLite's arithmetic exactly (ec_neon_add_exact_s8).
 *
 * TFLite Micro's int8 ADD (reference_integer_ops::AddFunc) per element:
 *     r_i = RoundingDivideByPOT(SaturatingRoundingDoublingHighMul((x_i + off_i) << left, m_i), e_i)
 *     y   = RoundingDivideByPOT(SRDHM(r_1 + r_2, m_o), e_o) + zp, clamped to [lo, hi].
 * NEON has both roundings as instructions: SQRDMULH is SRDHM bit for bit (including the
 * INT32_MIN * INT32_MIN saturation: TFLite's round-half-away nudge followed by truncation equals
 * floor((a*b + 2^30) / 2^31)); SRSHL by -e rounds half up, so negative values first take -1
 * (TFLite's RoundingDivideByPOT rounds half away from zero), the fix-up TFLite's own NEON code
 * uses. (x + off) << left stays inside int32 (|x + off| <= 255, left = 20).
 *
 * 16 elements per step; a partial last step runs on zero-padded copies on the stack. Each step
 * reads both inputs before writing, so the output may alias either input (ADD runs in place).
 * C99, no state, no allocation. Only compiled for AArch64 with NEON.
 *
 * ONNX numerics (ec_neon_add_fma_s8): onnxruntime's QLinearAdd, y = sat(rne(fma(a, r_a,
 * fma(b, r_b, k)))) in float32 (edgecc/ops/_onnx_elt.py; a's term first when a is the broadcast
 * operand), FMLA on 4 lanes, over `outer` rows of `inner` elements (an operand either the whole
 * tensor or one row repeated, as ec_neon_mul_rows_s8). The portable kernel computes each fused
 * multiply-add in double and rounds it to float; the compiler uses this kernel only where it
 * proved that double sum exact on every input (edgecc/lower/neon/eltwise_onnx.py), so the two
 * round the same value once.
 */
#ifndef EDGECC_NEON_ADD_H
#define EDGECC_NEON_ADD_H
#if defined(__ARM_NEON) && defined(__aarch64__)
#include <stdint.h>
#include <string.h>
#include <arm_neon.h>

typedef struct {
    int32_t n;              /* elements */
    int32_t left;           /* left shift of (x + off) */
    int32_t off1, m1, e1;   /* input 1: -zero point, multiplier, right shift */
    int32_t off2, m2, e2;   /* input 2 */
    int32_t mo, eo, zp;     /* output multiplier, right shift, zero point */
    int32_t lo, hi;         /* fused activation range */
} ec_neon_add_geom;

/* RoundingDivideByPOT(SRDHM(x, m), e) on 4 lanes; e in 0..31. */
static inline int32x4_t ec_neon_add_mbqm(int32x4_t x, int32_t m, int32_t e) {
    const int32x4_t s = vqrdmulhq_n_s32(x, m);
    const int32x4_t shift = vdupq_n_s32(-e);
    const int32x4_t fixup = vshrq_n_s32(vandq_s32(s, shift), 31); /* -1 where s < 0 and e > 0 */
    return vrshlq_s32(vqaddq_s32(s, fixup), shift);
}

static inline int32x4_t ec_neon_add4(const ec_neon_add_geom *g, int16x4_t a, int16x4_t b) {
    const int32x4_t left = vdupq_n_s32(g->left);
    const int32x4_t va = vshlq_s32(vaddq_s32(vmovl_s16(a), vdupq_n_s32(g->off1)), left);
    const int32x4_t vb = vshlq_s32(vaddq_s32(vmovl_s16(b), vdupq_n_s32(g->off2)), left);
    const int32x4_t s = vaddq_s32(ec_neon_add_mbqm(va, g->m1, g->e1),
                                  ec_neon_add_mbqm(vb, g->m2, g->e2));
    const int32x4_t r = vaddq_s32(ec_neon_add_mbqm(s, g->mo, g->eo), vdupq_n_s32(g->zp));
    return vminq_s32(vmaxq_s32(r, vdupq_n_s32(g->lo)), vdupq_n_s32(g->hi));
}

typedef struct {
    int32_t outer, inner;   /* rows, elements per row */
    int32_t a_step, b_step; /* elements between an operand's rows: inner, or 0 (one row) */
    float ra, rb, k;        /* s_a / s_y, s_b / s_y, z_y - (r_a z_a + r_b z_b), all float32 */
    int32_t a_first;        /* a's term into k first (a is the broadcast operand), else b's */
    int32_t lo, hi;         /* fused activation range */
} ec_neon_add_fma_geom;

/* 4 outputs: b's term into k first, then a's (one rounding each), clamp, half to even
 * (ec_neon_add_fma_s8 swaps the operands when a's term goes first). */
static inline int32x4_t ec_neon_add_fma4(const ec_neon_add_fma_geom *g, int16x4_t a,
                                          int16x4_t b) {
    const float32x4_t fa = vcvtq_f32_s32(vmovl_s16(a)), fb = vcvtq_f32_s32(vmovl_s16(b));
    float32x4_t v = vfmaq_n_f32(vfmaq_n_f32(vdupq_n_f32(g->k), fb, g->rb), fa, g->ra);
    v = vminq_f32(vmaxq_f32(v, vdupq_n_f32(-32768.0f)), vdupq_n_f32(32767.0f));
    return vminq_s32(vmaxq_s32(vcvtnq_s32_f32(v), vdupq_n_s32(g->lo)), vdupq_n_s32(g->hi));
}

/* 16 outputs from 16 bytes of each input (clamped to [lo, hi] within int8 before narrowing):
 * TFLite's arithmetic (g an ec_neon_add_geom) or, when `onnx` (a constant), onnxruntime's (an
 * ec_neon_add_fma_geom). */
#define EC_NEON_ADD4(a, b) (onnx ? ec_neon_add_fma4((const ec_neon_add_fma_geom *)g, (a), (b)) \
                                 : ec_neon_add4((const ec_neon_add_geom *)g, (a), (b)))
static inline __attribute__((always_inline)) int8x16_t ec_neon_add16(const void *g,
                                                                     const int8_t *a,
                                                                     const int8_t *b, int onnx) {
    const int8x16_t x = vld1q_s8(a), z = vld1q_s8(b);
    const int16x8_t xl = vmovl_s8(vget_low_s8(x)), xh = vmovl_s8(vget_high_s8(x));
    const int16x8_t zl = vmovl_s8(vget_low_s8(z)), zh = vmovl_s8(vget_high_s8(z));
    const int16x8_t lo = vcombine_s16(
        vmovn_s32(EC_NEON_ADD4(vget_low_s16(xl), vget_low_s16(zl))),
        vmovn_s32(EC_NEON_ADD4(vget_high_s16(xl), vget_high_s16(zl))));
    const int16x8_t hi = vcombine_s16(
        vmovn_s32(EC_NEON_ADD4(vget_low_s16(xh), vget_low_s16(zh))),
        vmovn_s32(EC_NEON_ADD4(vget_high_s16(xh), vget_high_s16(zh))));
    return vcombine_s8(vmovn_s16(lo), vmovn_s16(hi));
}
#undef EC_NEON_ADD4

/* n outputs, 16 per step (the last one on zero-padded copies on the stack), ec_neon_add16's. */
static inline __attribute__((always_inline)) void ec_neon_add_run(const void *g, int n,
                                                                  const int8_t *a,
                                                                  const int8_t *b, int8_t *y,
                                                                  int onnx) {
    int i;
    for (i = 0; i + 16 <= n; i += 16)
        vst1q_s8(y + i, ec_neon_add16(g, a + i, b + i, onnx));
    if (i < n) {
        int8_t ta[16] = {0}, tb[16] = {0}, ty[16];
        memcpy(ta, a + i, (size_t)(n - i));
        memcpy(tb, b + i, (size_t)(n - i));
        vst1q_s8(ty, ec_neon_add16(g, ta, tb, onnx));
        memcpy(y + i, ty, (size_t)(n - i));
    }
}

static __attribute__((noinline, unused)) void ec_neon_add_exact_s8(const ec_neon_add_geom *g,
                                                                    const int8_t *a,
                                                                    const int8_t *b, int8_t *y) {
    ec_neon_add_run(g, g->n, a, b, y, 0);
}

static __attribute__((noinline, unused)) void ec_neon_add_fma_s8(const ec_neon_add_fma_geom *g,
                                                                   const int8_t *a,
                                                                   const int8_t *b, int8_t *y) {
    ec_neon_add_fma_geom h = *g;  /* h's b: the operand whose term goes first */
    const int8_t *x = a, *z = b;
    int xs = g->a_step, zs = g->b_step, row;
    if (g->a_first) {
        x = b, z = a, xs = g->b_step, zs = g->a_step;
        h.ra = g->rb, h.rb = g->ra;
    }
    for (row = 0; row < g->outer; ++row, x += xs, z += zs, y += g->inner)
        ec_neon_add_run(&h, g->inner, x, z, y, 1);
}

#endif /* __ARM_NEON && __aarch64__ */
#endif /* EDGECC_NEON_ADD_H */
