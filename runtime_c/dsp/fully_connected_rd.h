/* edgecc Cortex-M DSP kernel: int8 FULLY_CONNECTED reading its input in place, no scratch
 * (conventions: dsp/common.h; the offset-byte form and the epilogues: dsp/fully_connected.h). */
#ifndef EDGECC_DSP_FULLY_CONNECTED_RD_H
#define EDGECC_DSP_FULLY_CONNECTED_RD_H
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include "fully_connected.h"

/* ---------------------------------------------------------------------------------------
 * FULLY_CONNECTED reading its int8 input in place (no scratch): the offset weight bytes of
 * ec_dsp_fully_connected_4u_ub_s8, with the input pairs made in registers from each input word
 * v = (x0, x1, x2, x3) instead of a prepared row:
 *     P = SXTB16(v, ROR 8) = (x1, x3),   Q = REV16(v) ^ 0x007F007F = (256 x0 - x1 + 127, ...)
 * (the low byte x1 ^ 0x7F is 127 - x1 in 0..255, so Q is exact in int16), and
 *     SMLAD(P, W) + SMLAD(Q, UXTB16(W)) = 256 (x0 w0 + x1 w1 + x2 w2 + x3 w3)
 *                                         + 32768 (x0 + x2) + 127 (w0 + w2) + 32512.
 * The weight terms are in bias256 (compile time), the input term (32768 * the row's even-input
 * sum) is subtracted once per row. geometry: ec_dsp_fc_geom with dp = the depth rounded down to
 * 8 (the asm loop's inputs: 35 instructions per 32 MACs on word-aligned rows, 36 else), cp = 0;
 * the last depth - dp inputs use the plain int8 weights wt [up][depth - dp]. Accumulators below
 * 2^23 (the compiler checks).
 */
#define EC_FCR_ASM_PAIRS \
        "rev16 %[qa], %[pa]\n\t" \
        "eor %[qa], %[qa], #0x007F007F\n\t" \
        "sxtb16 %[pa], %[pa], ror #8\n\t" \
        "rev16 %[qb], %[pb]\n\t" \
        "eor %[qb], %[qb], #0x007F007F\n\t" \
        "sxtb16 %[pb], %[pb], ror #8\n\t" \
        EC_FCU_ASM_UNIT("%[a0]") EC_FCU_ASM_UNIT("%[a1]") \
        EC_FCU_ASM_UNIT("%[a2]") EC_FCU_ASM_UNIT("%[a3]")
/* one 8-input step; LDRD where the row is word aligned (LDR takes any address) */
#define EC_FCR_ASM_STEP "ldr %[pa], [%[xp]], #4\n\t" "ldr %[pb], [%[xp]], #4\n\t" EC_FCR_ASM_PAIRS
#define EC_FCR_ASM_STEP_AL "ldrd %[pa], %[pb], [%[xp]], #8\n\t" EC_FCR_ASM_PAIRS

/* The 4 units' sums over the row's first dp inputs (steps: dp / 8 > 0): one step alone when
 * their count is odd, then pairs. */
#define EC_FCR_ASM_ROW(step) do { \
        if ((dp >> 3) & 1) __asm__ volatile(step : EC_FCU_ASM_OUTS : : "memory"); \
        if (xp != xend) { \
            __asm__ volatile("1:\n\t" step step "cmp %[xp], %[xe]\n\t" "bne 1b\n\t" \
                             : EC_FCU_ASM_OUTS : [xe] "r"(xend) : "cc", "memory"); \
        } \
    } while (0)

/* the 8-unit step: one input word read in place, its pairs (%[pa], r9) made once for 8 units */
#define EC_FCR8_ASM_STEP \
        "ldr %[pa], [%[xp]], #4\n\t" \
        "rev16 r9, %[pa]\n\t" \
        "eor r9, r9, #0x007F007F\n\t" \
        "sxtb16 %[pa], %[pa], ror #8\n\t" \
        EC_FC8_ASM_UNITS("%[a0]", "%[a1]") EC_FC8_ASM_UNITS("%[a2]", "%[a3]") \
        EC_FC8_ASM_UNITS("%[a4]", "%[a5]") EC_FC8_ASM_UNITS("%[a6]", "%[a7]")

/* EC_FCR8_ASM_STEP's input pairs in C (the twin; REV16 spelled out: gcc's arm_acle.h lacks it) */
#define EC_FCR8_C_PAIRS \
    (pa = (int32_t)ec_dsp_ld32(xp), xp += 4, \
     qa = (int32_t)(((((uint32_t)pa & 0x00FF00FFu) << 8) | (((uint32_t)pa >> 8) & 0x00FF00FFu)) \
                    ^ 0x007F007Fu), \
     pa = ec_dsp_sxtb16_r8(pa))

/* 8 units' sums over the row's first dp inputs (dp a positive multiple of 8), >> sh: accs[0..7]. */
static inline __attribute__((always_inline)) void ec_dsp_fc_rd_8u(
        const int8_t *xb, int32_t dp, const int32_t **wpp, const int32_t *b256, uint32_t c,
        int32_t sh, int32_t *accs) {
    EC_FC8_DECL(b256, c);
    const int8_t *xp = xb;
    const int32_t *wp = *wpp;
    EC_FC8_ASM_RUN(EC_FCR8_ASM_STEP, EC_FCR8_C_PAIRS, dp, "");
    *wpp = wp;
    EC_FC8_STORE(accs, sh);
}

static inline __attribute__((always_inline)) void ec_dsp_fc_rd_rows(
        const ec_dsp_fc_geom *g, const int8_t *x, int8_t *y, const int32_t *w,
        const int32_t *bias256, const int8_t *wt, const float *scale, const int eight) {
    const int32_t dp = g->dp, rest = g->depth - dp, sh = scale == 0 ? 7 : 8;
    int32_t accs[EC_FC_GROUP];
    int32_t b, i, u, u0;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + b * g->depth;
        int8_t *yb = y + b * g->units;
        const int32_t *wp = w;
        int32_t e = 0; /* the row's even-input sum */
        uint32_t c;
        for (i = 0; i < dp; i += 8) { /* dp: a multiple of 8 */
            e = __smlad(__sxtb16(ec_dsp_ld32(xb + i)), 0x00010001, e);
            e = __smlad(__sxtb16(ec_dsp_ld32(xb + i + 4)), 0x00010001, e);
        }
        c = (uint32_t)e << 15;
        for (u0 = 0; u0 < g->up; u0 += EC_FC_GROUP) {
            const int32_t u1 = g->up - u0 < EC_FC_GROUP ? g->up : u0 + EC_FC_GROUP;
            u = u0;
            if (eight && dp != 0 && rest == 0) {
                for (; u + 8 <= u1; u += 8) {
                    ec_dsp_fc_rd_8u(xb, dp, &wp, bias256 + u, c, sh, accs + (u - u0));
                }
            }
            for (; u < u1; u += 4) {
                /* partial sums wrap modulo 2^32; the row's final sum fits */
                int32_t a0 = (int32_t)((uint32_t)bias256[u] - c);
                int32_t a1 = (int32_t)((uint32_t)bias256[u + 1] - c);
                int32_t a2 = (int32_t)((uint32_t)bias256[u + 2] - c);
                int32_t a3 = (int32_t)((uint32_t)bias256[u + 3] - c);
                const int8_t *xp = xb;
                const int8_t *xend = xb + dp;
                int32_t pa, qa, pb, qb, wa, wb;
                if (dp == 0) {
                } else if (((uintptr_t)xb & 3) == 0) {
                    EC_FCR_ASM_ROW(EC_FCR_ASM_STEP_AL);
                } else {
                    EC_FCR_ASM_ROW(EC_FCR_ASM_STEP);
                }
                if (rest) { /* the last depth - dp inputs, 256 * x * w */
                    const int8_t *t = wt + u * rest;
                    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
                    for (i = 0; i < rest; ++i) {
                        const int32_t xi = xend[i];
                        s0 += xi * t[i];
                        s1 += xi * t[rest + i];
                        s2 += xi * t[2 * rest + i];
                        s3 += xi * t[3 * rest + i];
                    }
                    a0 += s0 * 256; a1 += s1 * 256; a2 += s2 * 256; a3 += s3 * 256;
                }
                /* 256 * acc -> 2 * acc (TFLite's epilogue) or acc (ONNX's), exactly */
                accs[u - u0] = a0 >> sh;
                accs[u - u0 + 1] = a1 >> sh;
                accs[u - u0 + 2] = a2 >> sh;
                accs[u - u0 + 3] = a3 >> sh;
            }
            ec_dsp_fc_epilogue(g, accs, yb + u0, u0, (u1 < g->units ? u1 : g->units) - u0, scale);
        }
    }
}

/* The in-place entries, 4u and 8u (the 8-unit step where depth == dp) and onnx as
 * dsp/fully_connected.h's EC_DSP_FC_UB_ENTRIES. */
#define EC_DSP_FC_RD_ENTRIES(name, name_onnx, eight) \
    EC_DSP_SHARED void name( \
            const ec_dsp_fc_geom *g, const int8_t *x, int8_t *y, const int32_t *w, \
            const int32_t *bias256, const int8_t *wt) { \
        ec_dsp_fc_rd_rows(g, x, y, w, bias256, wt, 0, eight); \
    } \
    EC_DSP_SHARED void name_onnx( \
            const ec_dsp_fc_geom *g, const int8_t *x, int8_t *y, const int32_t *w, \
            const int32_t *bias256, const int8_t *wt, const float *scale) { \
        ec_dsp_fc_rd_rows(g, x, y, w, bias256, wt, scale, eight); \
    }
EC_DSP_FC_RD_ENTRIES(ec_dsp_fully_connected_4u_rd_s8, ec_dsp_fully_connected_4u_rd_onnx_s8, 0)
EC_DSP_FC_RD_ENTRIES(ec_dsp_fully_connected_8u_rd_s8, ec_dsp_fully_connected_8u_rd_onnx_s8, 1)

#endif /* __ARM_FEATURE_DSP */
#endif /* EDGECC_DSP_FULLY_CONNECTED_RD_H */
