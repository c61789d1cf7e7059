/* edgecc Cortex-M DSP kernel: int8 FULLY_CONNECTED (conventions: dsp/common.h). */
#ifndef EDGECC_DSP_FULLY_CONNECTED_H
#define EDGECC_DSP_FULLY_CONNECTED_H
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include "common.h"
#include "fully_connected_8u.h"

/* One unit's 8 MACs: weight words wa, wb (int8 x4 each) against x0..x3 (int16 pairs). */
#define EC_DSP_FC_UNIT(acc, wp, x0, x1, x2, x3) do { \
        int32_t wa_, wb_, t_; \
        EC_DSP_V_LDRD_PI(wp, wa_, wb_); \
        EC_DSP_V_SXTB16(t_, wa_); EC_DSP_V_SMLAD(acc, x0, t_); \
        EC_DSP_V_SXTB16_R8(t_, wa_); EC_DSP_V_SMLAD(acc, x1, t_); \
        EC_DSP_V_SXTB16(t_, wb_); EC_DSP_V_SMLAD(acc, x2, t_); \
        EC_DSP_V_SXTB16_R8(t_, wb_); EC_DSP_V_SMLAD(acc, x3, t_); \
    } while (0)

/* ---------------------------------------------------------------------------------------
 * FULLY_CONNECTED: the input row is sign-extended into scratch ((x0,x2),(x1,x3) words) a chunk
 * of cp inputs at a time (cp a multiple of 8; the depth padded to dp, a multiple of 8); units
 * go 4 at a time, their weights interleaved [unit block][8 inputs][4 units][8 bytes], so unit
 * block u's weights for chunk c0 start at word (u / 4) * dp + c0. With several chunks the
 * units' partial sums wait in scratch between chunks (the scratch stays 2 * cp + 8 + 4 * up
 * bytes however deep the row). Per-tensor requantization constants. 38 instructions per 32
 * MACs in the inner loop.
 * Scratch layout: [0, 2 cp) the extended chunk, [2 cp, 2 cp + 8) the row's zero-padded tail,
 * then (cp < dp only) up int32 partial sums.
 */
typedef struct {
    int32_t batches, depth, dp, units, up; /* up: units padded to a multiple of 4 */
    int32_t m, n, e, lo, hi;
    int32_t cp;                            /* inputs per chunk: a multiple of 8, <= dp */
} ec_dsp_fc_geom;

/* One pass's units' (doubled) accumulators -> output bytes (inlined: a call per pass
 * cost more than its loop's set-up). */
static inline __attribute__((always_inline)) void ec_dsp_fc_out(
        const ec_dsp_fc_geom *g, const int32_t *accs, int8_t *yo, int32_t nu) {
    const int32_t m = g->m, n = g->n, e = g->e, lo = g->lo, hi = g->hi, n4 = nu & ~3;
    int32_t i;
    if (lo == -128 && hi == 127) {
        for (i = 0; i < n4; i += 4) {
            yo[i] = (int8_t)__ssat(ec_dsp_rq(accs[i], m, n, e), 8);
            yo[i + 1] = (int8_t)__ssat(ec_dsp_rq(accs[i + 1], m, n, e), 8);
            yo[i + 2] = (int8_t)__ssat(ec_dsp_rq(accs[i + 2], m, n, e), 8);
            yo[i + 3] = (int8_t)__ssat(ec_dsp_rq(accs[i + 3], m, n, e), 8);
        }
        for (; i < nu; ++i) yo[i] = (int8_t)__ssat(ec_dsp_rq(accs[i], m, n, e), 8);
    } else {
        for (i = 0; i < nu; ++i) yo[i] = ec_dsp_clamp8(ec_dsp_rq(accs[i], m, n, e), lo, hi);
    }
}

/* One chunk's pass over all units: xs holds the chunk's cl extended inputs, wp its weights in
 * unit block 0 (the next block's are skip words further on), src the sums so far (the doubled
 * bias for the first chunk). last (a constant at each call site): requantize into y, else store
 * the partial sums into part. */
static inline __attribute__((always_inline)) void ec_dsp_fc_units(
        const ec_dsp_fc_geom *g, const int32_t *xs, int32_t cl, const int32_t *wp, int32_t skip,
        const int32_t *src, int32_t *part, int8_t *yb, const int last) {
    const int32_t *xend = xs + cl / 2;
    const int odd = (cl / 8) & 1;
    int32_t accs[16];
    int32_t u, u0;
    for (u0 = 0; u0 < g->up; u0 += 16) {
        /* up to 16 units: their raw sums first, then one tight requantization loop with the
         * constants in registers */
        const int32_t u1 = g->up - u0 < 16 ? g->up : u0 + 16;
        int32_t *ap = last ? accs : part + u0;
        for (u = u0; u < u1; u += 4) {
            int32_t a0 = src[u], a1 = src[u + 1], a2 = src[u + 2], a3 = src[u + 3];
            const int32_t *xp = xs;
            int32_t x0, x1, x2, x3;
            if (odd) goto second_half; /* an odd number of 8-input steps */
            do {
                EC_DSP_V_LDRD_PI(xp, x0, x1);
                EC_DSP_V_LDRD_PI(xp, x2, x3);
                EC_DSP_FC_UNIT(a0, wp, x0, x1, x2, x3);
                EC_DSP_FC_UNIT(a1, wp, x0, x1, x2, x3);
                EC_DSP_FC_UNIT(a2, wp, x0, x1, x2, x3);
                EC_DSP_FC_UNIT(a3, wp, x0, x1, x2, x3);
            second_half:
                EC_DSP_V_LDRD_PI(xp, x0, x1);
                EC_DSP_V_LDRD_PI(xp, x2, x3);
                EC_DSP_FC_UNIT(a0, wp, x0, x1, x2, x3);
                EC_DSP_FC_UNIT(a1, wp, x0, x1, x2, x3);
                EC_DSP_FC_UNIT(a2, wp, x0, x1, x2, x3);
                EC_DSP_FC_UNIT(a3, wp, x0, x1, x2, x3);
            } while (xp != xend);
            wp += skip;
            ap[0] = a0;
            ap[1] = a1;
            ap[2] = a2;
            ap[3] = a3;
            ap += 4;
        }
        if (last) ec_dsp_fc_out(g, accs, yb + u0, (u1 < g->units ? u1 : g->units) - u0);
    }
}

/* ec_dsp_fully_connected_4u_s8's rows. qmn == 0 (a constant at each call site): per-tensor
 * constants from the geometry, requantized as the last chunk's sums come out. Else per-channel
 * weights: every chunk's sums go to the partial sums in scratch (up int32 after the chunk and
 * tail, however shallow the row), then each unit requantizes with its own (m, n) pair in qmn and
 * shift in qe. */
static inline __attribute__((always_inline)) void ec_dsp_fc_rows(
        const ec_dsp_fc_geom *g, const int8_t *x, int8_t *y, const int32_t *w,
        const int32_t *bias, const int32_t *qmn, const int32_t *qe, uint8_t *scratch) {
    int32_t *xs = (int32_t *)(void *)scratch;
    int8_t *tail = (int8_t *)(scratch + 2 * g->cp);
    int32_t *part = (int32_t *)(void *)(scratch + 2 * g->cp + 8);
    const int32_t d4 = g->depth & ~3, dp = g->dp;
    int32_t b, i, c0;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + b * g->depth;
        int8_t *yb = y + b * g->units;
        ec_dsp_fill8(tail, 0, 8);
        ec_dsp_copy8(tail, xb + d4, g->depth - d4);
        for (c0 = 0; c0 < dp; c0 += g->cp) {
            const int32_t cl = dp - c0 < g->cp ? dp - c0 : g->cp;
            const int32_t c1 = c0 + cl, cf = c1 < d4 ? c1 : d4;
            const int32_t *src = c0 == 0 ? bias : part;
            for (i = c0; i < cf; i += 4) {
                ec_dsp_ext2(ec_dsp_ld32(xb + i), xs + (i - c0) / 2, xs + (i - c0) / 2 + 1);
            }
            for (; i < c1; i += 4) {
                ec_dsp_ext2(ec_dsp_ld32(tail + (i - d4)), xs + (i - c0) / 2, xs + (i - c0) / 2 + 1);
            }
            if (c1 == dp && qmn == 0) ec_dsp_fc_units(g, xs, cl, w + c0, dp - cl, src, part, yb, 1);
            else ec_dsp_fc_units(g, xs, cl, w + c0, dp - cl, src, part, yb, 0);
        }
        if (qmn != 0) {
            for (i = 0; i < g->units; ++i) {
                yb[i] = ec_dsp_clamp8(ec_dsp_rq(part[i], qmn[2 * i], qmn[2 * i + 1], qe[i]),
                                      g->lo, g->hi);
            }
        }
    }
}

EC_DSP_SHARED void ec_dsp_fully_connected_4u_s8(const ec_dsp_fc_geom *g, const int8_t *x, int8_t *y,
                             const int32_t *w, const int32_t *bias, uint8_t *scratch) {
    ec_dsp_fc_rows(g, x, y, w, bias, 0, 0, scratch);
}

/* FULLY_CONNECTED with per-channel weights (one scale per unit): the per-unit epilogue. */
EC_DSP_SHARED void ec_dsp_fully_connected_4u_pc_s8(const ec_dsp_fc_geom *g, const int8_t *x,
                                                   int8_t *y, const int32_t *w,
                                                   const int32_t *bias, const int32_t *qmn,
                                                   const int32_t *qe, uint8_t *scratch) {
    ec_dsp_fc_rows(g, x, y, w, bias, qmn, qe, scratch);
}

/* ---------------------------------------------------------------------------------------
 * FULLY_CONNECTED with offset weight bytes: 3 instructions per 4 MACs instead of 4, for layers
 * whose accumulators stay below 2^23 in magnitude (the compiler checks). Each weight word holds
 * (w0 + 128, w1, w2 + 128, w3): read as int16 halfwords it is (256 w1 + w0 + 128, ...), and
 * UXTB16 of it is (w0 + 128, w2 + 128). With the inputs prepared once per row as
 *     P = (x1 - 127, x3 - 127),  Q = (256 x0 - x1 + 127, 256 x2 - x3 + 127)   (both fit int16)
 * SMLAD(P, W) + SMLAD(Q, UXTB16(W)) = 256 (x0 w0 + x1 w1 + x2 w2 + x3 w3)
 *                                     - 256 * 127 (w1 + w3) + 32768 (x0 + x2).
 * The weight term is folded into the bias at compile time (bias256 = 256 * bias +
 * 256 * 127 * sum of odd-input weights), the input term (32768 * sum of even inputs) is
 * subtracted once per row for all units, and the sum is 256 * acc: 2 * acc = sum >> 7.
 */

/* One unit's 8 MACs in offset-byte form against (P, Q) pairs pa, qa (inputs 0-3), pb, qb. */
/* The 4-unit inner loop is written in assembly so that no compiler spills a pointer out of the
 * 13 registers it needs (4 sums, 4 input words, 2 weight words, 3 pointers). One step: 8 inputs
 * x 4 units = 32 MACs in 30 instructions. */
#define EC_FCU_ASM_UNIT(a) \
        "ldrd %[wa], %[wb], [%[wp]], #8\n\t" \
        "smlad " a ", %[pa], %[wa], " a "\n\t" \
        "uxtb16 %[wa], %[wa]\n\t" \
        "smlad " a ", %[qa], %[wa], " a "\n\t" \
        "smlad " a ", %[pb], %[wb], " a "\n\t" \
        "uxtb16 %[wb], %[wb]\n\t" \
        "smlad " a ", %[qb], %[wb], " a "\n\t"
#define EC_FCU_ASM_STEP \
        "ldrd %[pa], %[qa], [%[xp]], #8\n\t" \
        "ldrd %[pb], %[qb], [%[xp]], #8\n\t" \
        EC_FCU_ASM_UNIT("%[a0]") EC_FCU_ASM_UNIT("%[a1]") \
        EC_FCU_ASM_UNIT("%[a2]") EC_FCU_ASM_UNIT("%[a3]")
#define EC_FCU_ASM_OUTS \
        [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), \
        [pa] "=&r"(pa), [qa] "=&r"(qa), [pb] "=&r"(pb), [qb] "=&r"(qb), \
        [wa] "=&r"(wa), [wb] "=&r"(wb), [xp] "+r"(xp), [wp] "+r"(wp)

/* the 8-unit step over the extended row: one (P, Q) pair of 4 inputs (%[pa], r9) for 8 units */
#define EC_FCU8_ASM_STEP \
        "ldrd %[pa], r9, [%[xp]], #8\n\t" \
        EC_FC8_ASM_UNITS("%[a0]", "%[a1]") EC_FC8_ASM_UNITS("%[a2]", "%[a3]") \
        EC_FC8_ASM_UNITS("%[a4]", "%[a5]") EC_FC8_ASM_UNITS("%[a6]", "%[a7]")

/* units per pass of the offset-byte kernels: their sums wait in accs[EC_FC_GROUP] on the stack,
 * then one requantization loop (fewer, longer loops: less set-up per unit) */
#ifndef EC_FC_GROUP
#define EC_FC_GROUP 32
#endif

/* ONNX numerics (scale != 0, a constant at each call site): onnxruntime's float32 epilogue per
 * unit of the sums (acc), clamp(round_half_even(float32(acc) * scale[u]) + zp) with zp = g->n,
 * as ec_dsp_onnx_val computes it (VCVTR + QADD with an FPU; without, g->e = 1 where the product
 * is proven inside +-2^15 and ec_onnx_rq's clamp is skipped); else TFLite's fast requantization
 * (m, n, e) of the sums (2 * acc). One body, the epilogue chosen here. The geometry's fields are
 * read once (the int8 stores could alias them). */
static inline __attribute__((always_inline)) void ec_dsp_fc_epilogue(
        const ec_dsp_fc_geom *g, const int32_t *sums, int8_t *yo, int32_t u0, int32_t nu,
        const float *scale) {
    const int32_t zp = g->n, inside = g->e, lo = g->lo, hi = g->hi;
    const float *s = scale + u0;
    int32_t i;
    if (scale == 0) {
        ec_dsp_fc_out(g, sums, yo, nu);
    } else if (lo == -128 && hi == 127) {
        for (i = 0; i < nu; ++i) {
            yo[i] = (int8_t)__ssat(ec_dsp_onnx_val(sums[i], s[i], zp, inside), 8);
        }
    } else {
        for (i = 0; i < nu; ++i) {
            yo[i] = ec_dsp_clamp8(ec_dsp_onnx_val(sums[i], s[i], zp, inside), lo, hi);
        }
    }
}

/* ec_dsp_fc_units for the offset-byte form: c = 32768 * the chunk's even-input sum. */
static inline __attribute__((always_inline)) void ec_dsp_fc_ub_units(
        const ec_dsp_fc_geom *g, const int32_t *xs, int32_t cl, const int32_t *w, int32_t c0,
        const int32_t *src, uint32_t c, int32_t *part, int8_t *yb, const int last,
        const float *scale, const int eight) {
    const int32_t *xend = xs + cl / 2;
    const int odd = (cl / 8) & 1;
    const int32_t skip = g->dp - cl;
    const int sh = last ? (scale == 0 ? 7 : 8) : 0; /* 256 * acc -> 2 * acc or acc, exactly */
    int32_t accs[EC_FC_GROUP];
    int32_t u, u0;
    for (u0 = 0; u0 < g->up; u0 += EC_FC_GROUP) {
        const int32_t u1 = g->up - u0 < EC_FC_GROUP ? g->up : u0 + EC_FC_GROUP;
        int32_t *ap = last ? accs : part + u0;
        /* 8-unit blocks (eight): [4 inputs][8 units][4 bytes], 2 dp words each; the chunk's 2 cl */
        const int32_t *wp = w + (u0 >> 2) * g->dp + 2 * c0;
        const int32_t u8 = eight ? u1 : u0; /* (not `eight &&` in the test: gcc then allocates
                                             * the 8-unit kernel's registers worse) */
        for (u = u0; u + 8 <= u8; u += 8) {
            const int32_t *xp = xs;
            EC_FC8_DECL(src + u, c);
            EC_FC8_ASM_RUN(EC_FCU8_ASM_STEP, (pa = xp[0], qa = xp[1], xp += 2), cl, ", lsl #1");
            wp += 2 * skip;
            EC_FC8_STORE(ap, sh);
            ap += 8;
        }
        wp = w + (u >> 2) * g->dp + c0; /* a last 4-unit block: [8 inputs][4 units][8 bytes] */
        for (; u < u1; u += 4) {
            /* partial sums wrap modulo 2^32; the row's final sum fits */
            int32_t a0 = (int32_t)((uint32_t)src[u] - c);
            int32_t a1 = (int32_t)((uint32_t)src[u + 1] - c);
            int32_t a2 = (int32_t)((uint32_t)src[u + 2] - c);
            int32_t a3 = (int32_t)((uint32_t)src[u + 3] - c);
            const int32_t *xp = xs;
            int32_t pa, qa, pb, qb, wa, wb;
            if (odd) { /* an odd number of 8-input steps: one alone, then pairs */
                __asm__ volatile(EC_FCU_ASM_STEP : EC_FCU_ASM_OUTS : : "memory");
            }
            if (xp != xend) {
                __asm__ volatile("1:\n\t" EC_FCU_ASM_STEP EC_FCU_ASM_STEP
                                 "cmp %[xp], %[xe]\n\t"
                                 "bne 1b\n\t"
                                 : EC_FCU_ASM_OUTS : [xe] "r"(xend) : "cc", "memory");
            }
            wp += skip;
            a0 >>= sh;
            a1 >>= sh;
            a2 >>= sh;
            a3 >>= sh;
            ap[0] = a0;
            ap[1] = a1;
            ap[2] = a2;
            ap[3] = a3;
            ap += 4;
        }
        if (last) {
            ec_dsp_fc_epilogue(g, accs, yb + u0, u0, (u1 < g->units ? u1 : g->units) - u0, scale);
        }
    }
}

/* n input words from x as the offset-byte form's (P, Q) pairs into xs; returns e256 plus
 * 256 * the words' even-input sum. */
static inline __attribute__((always_inline)) int32_t ec_dsp_ub_pairs(
        const int8_t *x, int32_t n, int32_t *xs, int32_t e256) {
    int32_t k7f = 0x007F007F, ones = 0x00010001, mask = (int32_t)0xFF00FF00u;
    const int32_t *xend = xs + 2 * n;
    __asm__("" : "+r"(k7f), "+r"(ones), "+r"(mask)); /* constants kept in registers */
    while (xs != xend) {
        const int32_t v = ec_dsp_ld32(x);
        const int32_t pw = __ssub16(ec_dsp_sxtb16_r8(v), k7f);
        const int32_t ev = (int32_t)(((uint32_t)v << 8) & (uint32_t)mask);
        const int32_t qw = __ssub16(ev, pw);
        e256 = __smlad(ev, ones, e256);
        __asm__("strd %1, %2, [%0], #8" : "+r"(xs) : "r"(pw), "r"(qw) : "memory"); /* xs += 2 */
        x += 4;
    }
    return e256;
}

static inline __attribute__((always_inline)) void ec_dsp_fc_ub_rows(
        const ec_dsp_fc_geom *g, const int8_t *x, int8_t *y, const int32_t *w,
        const int32_t *bias256, uint8_t *scratch, const float *scale, const int eight) {
    int32_t *xs = (int32_t *)(void *)scratch;
    int8_t *tail = (int8_t *)(scratch + 2 * g->cp);
    int32_t *part = (int32_t *)(void *)(scratch + 2 * g->cp + 8);
    const int32_t d4 = g->depth & ~3, dp = g->dp;
    int32_t b, i, c0;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + b * g->depth;
        int8_t *yb = y + b * g->units;
        ec_dsp_fill8(tail, 0, 8);
        ec_dsp_copy8(tail, xb + d4, g->depth - d4);
        for (c0 = 0; c0 < dp; c0 += g->cp) {
            const int32_t cl = dp - c0 < g->cp ? dp - c0 : g->cp, c1 = c0 + cl;
            const int32_t *src = c0 == 0 ? bias256 : part;
            int32_t e256 = 0; /* 256 * (sum of the chunk's even-index inputs) */
            uint32_t c;
            i = c1 < d4 ? c1 : d4; /* the row's own words, then the zero-padded tail's */
            if (i > c0) e256 = ec_dsp_ub_pairs(xb + c0, (i - c0) / 4, xs, e256);
            if (c1 > i) e256 = ec_dsp_ub_pairs(tail + (i - d4), (c1 - i) / 4, xs + (i - c0) / 2, e256);
            c = (uint32_t)e256 << 7; /* 32768 * sum of the chunk's even inputs */
            if (c1 == dp) ec_dsp_fc_ub_units(g, xs, cl, w, c0, src, c, part, yb, 1, scale, eight);
            else ec_dsp_fc_ub_units(g, xs, cl, w, c0, src, c, part, yb, 0, scale, eight);
        }
    }
}

/* The offset-byte entries, 4u: 4-unit blocks only; 8u: 8-unit blocks with the 8-unit step
 * (dsp/fully_connected_8u.h, ~1.8 KB of code in each entry that has it) while 8 units remain,
 * weights in edgecc/lower/layout.py interleave_fc8's order with eight true. The compiler takes the
 * 8u entries only where the model's weights are large enough to pay for that code
 * (edgecc/lower/dsp/fc.py fc8_why_not). onnx: onnxruntime's epilogue, scale[u] float32 per unit,
 * g->n the output zero point. */
#define EC_DSP_FC_UB_ENTRIES(name, name_onnx, eight) \
    EC_DSP_SHARED void name( \
            const ec_dsp_fc_geom *g, const int8_t *x, int8_t *y, const int32_t *w, \
            const int32_t *bias256, uint8_t *scratch) { \
        ec_dsp_fc_ub_rows(g, x, y, w, bias256, scratch, 0, eight); \
    } \
    EC_DSP_SHARED void name_onnx( \
            const ec_dsp_fc_geom *g, const int8_t *x, int8_t *y, const int32_t *w, \
            const int32_t *bias256, uint8_t *scratch, const float *scale) { \
        ec_dsp_fc_ub_rows(g, x, y, w, bias256, scratch, scale, eight); \
    }
EC_DSP_FC_UB_ENTRIES(ec_dsp_fully_connected_4u_ub_s8, ec_dsp_fully_connected_4u_ub_onnx_s8, 0)
EC_DSP_FC_UB_ENTRIES(ec_dsp_fully_connected_8u_ub_s8, ec_dsp_fully_connected_8u_ub_onnx_s8, 1)

#endif /* __ARM_FEATURE_DSP */
#endif /* EDGECC_DSP_FULLY_CONNECTED_H */
