/* edgecc Cortex-M DSP kernels (Armv7E-M / Armv8-M with the DSP extension: M4, M7, M33, M55).
 *
 * int8 CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED with SMLAD: two 16x16 multiplies and an
 * accumulate per instruction. The compiler (edgecc/ops/_simd.py) prepares everything these
 * functions read: weights re-laid out and packed into aligned int32 words, the input zero point
 * folded into the bias, and per-channel "fast requantization" constants (m, N, e) with which
 *     out = clamp((SMMLAR(2 * acc, m, N) + sign(acc)) >> e)
 * is bit-exact with TFLite Micro's MultiplyByQuantizedMultiplier for every reachable
 * accumulator (the compiler proves it per channel; see _simd.py). The kernels obtain 2 * acc
 * for free by doubling the sign-extended activations (or the int16 weights) and the bias.
 *
 * Sign extension: SXTB16 turns the int8 bytes (b0, b1, b2, b3) of a word into the int16 pairs
 * (b0, b2) and, rotated by 8, (b1, b3). Weights and activations are both split that way, so
 * SMLAD((x0, x2), (w0, w2)) + SMLAD((x1, x3), (w1, w3)) is the 4-tap dot product with no
 * reordering anywhere.
 *
 * Only compiled where the DSP extension exists; on other targets this header is empty.
 * C99, no state, no allocation; ACLE intrinsics (arm_acle.h) and three one-instruction asm
 * helpers for what ACLE lacks (SMMLAR, SXTB16 with rotation, LDRD with post-increment).
 */
#ifndef EDGECC_DSP_H
#define EDGECC_DSP_H
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <stdint.h>
#include <string.h>
#include <arm_acle.h>

/* Kernels shared by every layer of a kind: one copy of the code however many layers call it.
 * gcc's pre-allocation scheduler (active for cores with a pipeline model, e.g. -mcpu=cortex-m33)
 * hoists the loads of the kernels' loops and spills; they are written in a register-friendly
 * order, so keep it. */
#if defined(__GNUC__) && !defined(__clang__)
#define EC_DSP_NOSCHED __attribute__((optimize("no-schedule-insns")))
#else
#define EC_DSP_NOSCHED
#endif
#define EC_DSP_SHARED static __attribute__((noinline, unused)) EC_DSP_NOSCHED

static inline int32_t ec_ld32(const void *p) {
    int32_t v;
    memcpy(&v, p, 4); /* one LDR: unaligned word loads are fine on these cores */
    return v;
}

static inline void ec_st32(void *p, int32_t v) { memcpy(p, &v, 4); }

static inline int32_t ec_sxtb16_r8(int32_t x) {
    int32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
    return r;
}

/* Volatile forms: the compiler keeps them in program order, so a loop written to need few live
 * registers is not "scheduled" into one that spills (gcc hoists every load otherwise). */
#define EC_V_SMLAD(acc, x, w) __asm__ volatile("smlad %0, %1, %2, %0" : "+r"(acc) : "r"(x), "r"(w))
#define EC_V_SXTB16(d, s) __asm__ volatile("sxtb16 %0, %1" : "=r"(d) : "r"(s))
#define EC_V_SXTB16_R8(d, s) __asm__ volatile("sxtb16 %0, %1, ror #8" : "=r"(d) : "r"(s))
#define EC_V_LDRD_PI(p, a, b) \
    __asm__ volatile("ldrd %0, %1, [%2], #8" : "=r"(a), "=r"(b), "+r"(p) \
                     : "m"(*(const int32_t (*)[2])(p)))

/* One unit's 8 MACs: weight words wa, wb (int8 x4 each) against x0..x3 (int16 pairs). */
#define EC_FC_UNIT(acc, wp, x0, x1, x2, x3) do { \
        int32_t wa_, wb_, t_; \
        EC_V_LDRD_PI(wp, wa_, wb_); \
        EC_V_SXTB16(t_, wa_); EC_V_SMLAD(acc, x0, t_); \
        EC_V_SXTB16_R8(t_, wa_); EC_V_SMLAD(acc, x1, t_); \
        EC_V_SXTB16(t_, wb_); EC_V_SMLAD(acc, x2, t_); \
        EC_V_SXTB16_R8(t_, wb_); EC_V_SMLAD(acc, x3, t_); \
    } while (0)

/* a, b = the two words at p (word aligned); p += 8 bytes. */
#define EC_LDRD_PI(p, a, b) \
    __asm__("ldrd %0, %1, [%2], #8" : "=r"(a), "=r"(b), "+r"(p) : "m"(*(const int32_t (*)[2])(p)))

/* The fast requantization up to the clamp (see the header comment), of an accumulator the
 * kernel already holds doubled (its inputs or weights were scaled by 2 at extension time). */
static inline int32_t ec_dsp_rq(int32_t a, int32_t m, int32_t n, int32_t e) {
    int32_t t;
    __asm__("smmlar %0, %1, %2, %3" : "=r"(t) : "r"(a), "r"(m), "r"(n));
    return (t + (a >> 31)) >> e;
}

/* (x0,x2), (x1,x3) of the int8 word v, each halfword doubled (the accumulator's 2^L, L = 1). */
static inline void ec_dsp_ext2(int32_t v, int32_t *even, int32_t *odd) {
    const int32_t a = __sxtb16(v), b = ec_sxtb16_r8(v);
    *even = __sadd16(a, a);
    *odd = __sadd16(b, b);
}

static inline int8_t ec_dsp_clamp8(int32_t v, int32_t lo, int32_t hi) {
    return (int8_t)(v < lo ? lo : (v > hi ? hi : v));
}

/* ---------------------------------------------------------------------------------------
 * Convolution as a matrix product. Each output pixel's receptive field (kh x kw x in_c bytes,
 * zero-point padded, then zero-padded to kp, a multiple of 8) is sign-extended once into a
 * block of 4 pixels laid out [kp/4][4 pixels][(x0,x2),(x1,x3)]; every output channel then reads
 * its kp weight bytes once per block and feeds 4 pixels with them (4 accumulators).
 * 31 instructions per 32 MACs in the inner loop.
 */
typedef struct {
    int32_t pixels;            /* batches * out_h * out_w */
    int32_t in_h, in_w, in_c;
    int32_t out_h, out_w, out_c;
    int32_t k_h, k_w, s_h, s_w, d_h, d_w, pad_t, pad_l;
    int32_t kp;                /* filter volume padded to a multiple of 8 */
    int32_t direct;            /* 1x1, no padding: a pixel's field is in_c contiguous bytes */
    int32_t pad_val;           /* input zero point: what a padded tap reads */
    int32_t lo, hi;            /* output clamp range */
} ec_dsp_conv_geom;

/* Scratch bytes ec_dsp_conv needs (the compiler computes the same number). */
#define EC_DSP_CONV_SCRATCH(kp, out_c) (8 * (kp) + (kp) + 4 * (out_c))

static inline void ec_copy8(int8_t *d, const int8_t *s, int32_t n) {
    const int32_t n4 = n & ~3;
    int32_t i;
    for (i = 0; i < n4; i += 4) ec_st32(d + i, ec_ld32(s + i));
    for (; i < n; ++i) d[i] = s[i];
}

static inline void ec_fill8(int8_t *d, int32_t v, int32_t n) {
    int32_t n4 = n & ~3, word = (int32_t)(0x01010101u * (uint8_t)v);
    int32_t i;
    __asm__("" : "+r"(word)); /* a plain loop: fills here are short, a memset call costs more */
    for (i = 0; i < n4; i += 4) ec_st32(d + i, word);
    for (; i < n; ++i) d[i] = (int8_t)v;
}

/* The receptive field of output pixel `pix` as kp contiguous int8 bytes: straight from the
 * input when the layer is `direct` and the read stays inside it, else gathered into `col`
 * (taps outside the input read the zero point). */
static inline EC_DSP_NOSCHED const int8_t *ec_dsp_field(const ec_dsp_conv_geom *g,
                                                        const int8_t *x, int32_t pix,
                                                        int8_t *col) {
    const int32_t hw = g->out_h * g->out_w, c = g->in_c;
    const int32_t b = pix / hw, rem = pix - b * hw;
    const int32_t oy = rem / g->out_w, ox = rem - oy * g->out_w;
    const int32_t iy0 = oy * g->s_h - g->pad_t, ix0 = ox * g->s_w - g->pad_l;
    const int32_t plane = g->in_h * g->in_w * c;
    const int8_t *xb = x + b * plane;
    int32_t fy, fx, k = 0;
    if (g->direct) {
        const int32_t off = (iy0 * g->in_w + ix0) * c;
        if ((b + 1) * plane - b * plane - off >= g->kp) return xb + off;
        ec_copy8(col, xb + off, c); /* bytes past the field meet zero weights: left as they are */
        return col;
    }
    for (fy = 0; fy < g->k_h; ++fy) {
        const int32_t iy = iy0 + fy * g->d_h;
        if (iy < 0 || iy >= g->in_h) {
            ec_fill8(col + k, g->pad_val, g->k_w * c);
            k += g->k_w * c;
        } else if (g->d_w == 1) { /* the row's taps are one run: pad, copy, pad */
            int32_t f0 = ix0 < 0 ? -ix0 : 0;
            int32_t f1 = g->in_w - ix0 < g->k_w ? g->in_w - ix0 : g->k_w;
            if (f1 < f0) f1 = f0;
            ec_fill8(col + k, g->pad_val, f0 * c);
            ec_copy8(col + k + f0 * c, xb + (iy * g->in_w + ix0 + f0) * c, (f1 - f0) * c);
            ec_fill8(col + k + f1 * c, g->pad_val, (g->k_w - f1) * c);
            k += g->k_w * c;
        } else {
            for (fx = 0; fx < g->k_w; ++fx, k += c) {
                const int32_t ix = ix0 + fx * g->d_w;
                if (ix < 0 || ix >= g->in_w) ec_fill8(col + k, g->pad_val, c);
                else ec_copy8(col + k, xb + (iy * g->in_w + ix) * c, c);
            }
        }
    }
    return col; /* bytes k..kp-1 meet zero weights: left as they are */
}

/* Sign-extend (and double) kp bytes into one pixel slot of the 4-pixel block xs. */
static inline void ec_dsp_extend(int32_t *xs, const int8_t *src, int32_t kp) {
    int32_t i;
    for (i = 0; i < kp; i += 4) {
        ec_dsp_ext2(ec_ld32(src + i), xs, xs + 1);
        xs += 8;
    }
}

/* 4 pixels x all output channels. y[p * out_c + oc] for p < 4. w: [out_c][kp] bytes, packed. */
static inline EC_DSP_NOSCHED void ec_dsp_mm4(const int32_t *xs, const int32_t *w,
                                              const int32_t *bias, const int32_t *qmn,
                                              const int8_t *qe, const ec_dsp_conv_geom *g,
                                              int8_t *y) {
    const int32_t *xend = xs + 2 * g->kp;
    const int32_t oc_n = g->out_c, lo = g->lo, hi = g->hi;
    const int full = lo == -128 && hi == 127;
    int32_t oc;
    for (oc = 0; oc < oc_n; ++oc) {
        int32_t a0 = bias[oc], a1 = a0, a2 = a0, a3 = a0;
        const int32_t *xp = xs;
        do {
            int32_t wa, wb, x0, x1, t0, t1;
            EC_LDRD_PI(w, wa, wb);
            t0 = __sxtb16(wa);
            t1 = ec_sxtb16_r8(wa);
            EC_LDRD_PI(xp, x0, x1); a0 = __smlad(x0, t0, a0); a0 = __smlad(x1, t1, a0);
            EC_LDRD_PI(xp, x0, x1); a1 = __smlad(x0, t0, a1); a1 = __smlad(x1, t1, a1);
            EC_LDRD_PI(xp, x0, x1); a2 = __smlad(x0, t0, a2); a2 = __smlad(x1, t1, a2);
            EC_LDRD_PI(xp, x0, x1); a3 = __smlad(x0, t0, a3); a3 = __smlad(x1, t1, a3);
            t0 = __sxtb16(wb);
            t1 = ec_sxtb16_r8(wb);
            EC_LDRD_PI(xp, x0, x1); a0 = __smlad(x0, t0, a0); a0 = __smlad(x1, t1, a0);
            EC_LDRD_PI(xp, x0, x1); a1 = __smlad(x0, t0, a1); a1 = __smlad(x1, t1, a1);
            EC_LDRD_PI(xp, x0, x1); a2 = __smlad(x0, t0, a2); a2 = __smlad(x1, t1, a2);
            EC_LDRD_PI(xp, x0, x1); a3 = __smlad(x0, t0, a3); a3 = __smlad(x1, t1, a3);
        } while (xp != xend);
        {
            const int32_t m = qmn[2 * oc], n = qmn[2 * oc + 1], e = qe[oc];
            a0 = ec_dsp_rq(a0, m, n, e);
            a1 = ec_dsp_rq(a1, m, n, e);
            a2 = ec_dsp_rq(a2, m, n, e);
            a3 = ec_dsp_rq(a3, m, n, e);
            if (full) {
                y[0] = (int8_t)__ssat(a0, 8);
                y[oc_n] = (int8_t)__ssat(a1, 8);
                y[2 * oc_n] = (int8_t)__ssat(a2, 8);
                y[3 * oc_n] = (int8_t)__ssat(a3, 8);
            } else {
                y[0] = ec_dsp_clamp8(a0, lo, hi);
                y[oc_n] = ec_dsp_clamp8(a1, lo, hi);
                y[2 * oc_n] = ec_dsp_clamp8(a2, lo, hi);
                y[3 * oc_n] = ec_dsp_clamp8(a3, lo, hi);
            }
            ++y;
        }
    }
}

/* The whole convolution. scratch: EC_DSP_CONV_SCRATCH(kp, out_c) bytes, word aligned. */
/* Output pixel pix's receptive field, sign-extended and doubled into one slot of the block xs.
 * With in_c a multiple of 4 the taps are extended straight from the input (padded taps get the
 * zero point's words); otherwise the field is gathered into col first. */
static inline EC_DSP_NOSCHED void ec_dsp_gather(const ec_dsp_conv_geom *g, const int8_t *x,
                                                int32_t pix, int32_t *xs, int8_t *col) {
    const int32_t c = g->in_c;
    if (g->direct || (c & 3) != 0) {
        ec_dsp_extend(xs, ec_dsp_field(g, x, pix, col), g->kp);
        return;
    }
    {
        const int32_t hw = g->out_h * g->out_w;
        const int32_t b = pix / hw, rem = pix - b * hw;
        const int32_t oy = rem / g->out_w, ox = rem - oy * g->out_w;
        const int32_t iy0 = oy * g->s_h - g->pad_t, ix0 = ox * g->s_w - g->pad_l;
        const int8_t *xb = x + b * g->in_h * g->in_w * c;
        const int32_t run = g->k_w * c;
        int32_t ze, zo, fy, fx, i;
        ec_dsp_ext2((int32_t)(0x01010101u * (uint8_t)g->pad_val), &ze, &zo);
        for (fy = 0; fy < g->k_h; ++fy) {
            const int32_t iy = iy0 + fy * g->d_h;
            if (iy < 0 || iy >= g->in_h) {
                for (i = 0; i < run; i += 4, xs += 8) { xs[0] = ze; xs[1] = zo; }
            } else if (g->d_w == 1 && ix0 >= 0 && ix0 + g->k_w <= g->in_w) {
                ec_dsp_extend(xs, xb + (iy * g->in_w + ix0) * c, run);
                xs += 2 * run;
            } else {
                for (fx = 0; fx < g->k_w; ++fx) {
                    const int32_t ix = ix0 + fx * g->d_w;
                    if (ix < 0 || ix >= g->in_w) {
                        for (i = 0; i < c; i += 4, xs += 8) { xs[0] = ze; xs[1] = zo; }
                    } else {
                        ec_dsp_extend(xs, xb + (iy * g->in_w + ix) * c, c);
                        xs += 2 * c;
                    }
                }
            }
        }
        /* groups past the filter volume meet zero weights: left as they are */
    }
}

/* The whole convolution. scratch: EC_DSP_CONV_SCRATCH(kp, out_c) bytes, word aligned. */
EC_DSP_SHARED void ec_dsp_conv(const ec_dsp_conv_geom *g, const int8_t *x, int8_t *y,
                               const int32_t *w, const int32_t *bias, const int32_t *qmn,
                               const int8_t *qe, uint8_t *scratch) {
    int32_t *xs = (int32_t *)(void *)scratch;
    int8_t *col = (int8_t *)(scratch + 8 * g->kp);
    int8_t *trash = col + g->kp;
    int32_t pix, p;
    for (pix = 0; pix < g->pixels; pix += 4) {
        const int32_t np = g->pixels - pix < 4 ? g->pixels - pix : 4;
        for (p = 0; p < np; ++p) ec_dsp_gather(g, x, pix + p, xs + 2 * p, col);
        if (np == 4) {
            ec_dsp_mm4(xs, w, bias, qmn, qe, g, y + pix * g->out_c);
        } else { /* the last, partial block: slots >= np hold stale pixels; drop their outputs */
            ec_dsp_mm4(xs, w, bias, qmn, qe, g, trash);
            memcpy(y + pix * g->out_c, trash, (size_t)(np * g->out_c));
        }
    }
}

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

/* Up to 16 units' (doubled) accumulators -> output bytes. */
static inline void ec_dsp_fc_out(const ec_dsp_fc_geom *g, const int32_t *accs, int8_t *yo,
                                 int32_t nu) {
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
                EC_V_LDRD_PI(xp, x0, x1);
                EC_V_LDRD_PI(xp, x2, x3);
                EC_FC_UNIT(a0, wp, x0, x1, x2, x3);
                EC_FC_UNIT(a1, wp, x0, x1, x2, x3);
                EC_FC_UNIT(a2, wp, x0, x1, x2, x3);
                EC_FC_UNIT(a3, wp, x0, x1, x2, x3);
            second_half:
                EC_V_LDRD_PI(xp, x0, x1);
                EC_V_LDRD_PI(xp, x2, x3);
                EC_FC_UNIT(a0, wp, x0, x1, x2, x3);
                EC_FC_UNIT(a1, wp, x0, x1, x2, x3);
                EC_FC_UNIT(a2, wp, x0, x1, x2, x3);
                EC_FC_UNIT(a3, wp, x0, x1, x2, x3);
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

/* ec_dsp_fc's rows. qmn == 0 (a constant at each call site): per-tensor constants from the
 * geometry, requantized as the last chunk's sums come out. Else per-channel weights: every
 * chunk's sums go to the partial sums in scratch (up int32 after the chunk and tail, however
 * shallow the row), then each unit requantizes with its own (m, n) pair in qmn and shift in qe. */
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
        ec_fill8(tail, 0, 8);
        ec_copy8(tail, xb + d4, g->depth - d4);
        for (c0 = 0; c0 < dp; c0 += g->cp) {
            const int32_t cl = dp - c0 < g->cp ? dp - c0 : g->cp;
            const int32_t c1 = c0 + cl, cf = c1 < d4 ? c1 : d4;
            const int32_t *src = c0 == 0 ? bias : part;
            for (i = c0; i < cf; i += 4) {
                ec_dsp_ext2(ec_ld32(xb + i), xs + (i - c0) / 2, xs + (i - c0) / 2 + 1);
            }
            for (; i < c1; i += 4) {
                ec_dsp_ext2(ec_ld32(tail + (i - d4)), xs + (i - c0) / 2, xs + (i - c0) / 2 + 1);
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

EC_DSP_SHARED void ec_dsp_fc(const ec_dsp_fc_geom *g, const int8_t *x, int8_t *y,
                             const int32_t *w, const int32_t *bias, uint8_t *scratch) {
    ec_dsp_fc_rows(g, x, y, w, bias, 0, 0, scratch);
}

/* FULLY_CONNECTED with per-channel weights (one scale per unit): the per-unit epilogue. */
EC_DSP_SHARED void ec_dsp_fc_pc(const ec_dsp_fc_geom *g, const int8_t *x, int8_t *y,
                                const int32_t *w, const int32_t *bias, const int32_t *qmn,
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

/* ec_dsp_fc_units for the offset-byte form: c = 32768 * the chunk's even-input sum. */
static inline __attribute__((always_inline)) void ec_dsp_fc_ub_units(
        const ec_dsp_fc_geom *g, const int32_t *xs, int32_t cl, const int32_t *wp, int32_t skip,
        const int32_t *src, uint32_t c, int32_t *part, int8_t *yb, const int last) {
    const int32_t *xend = xs + cl / 2;
    const int odd = (cl / 8) & 1;
    int32_t accs[16];
    int32_t u, u0;
    for (u0 = 0; u0 < g->up; u0 += 16) {
        const int32_t u1 = g->up - u0 < 16 ? g->up : u0 + 16;
        int32_t *ap = last ? accs : part + u0;
        for (u = u0; u < u1; u += 4) {
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
            if (last) { /* 256 * acc -> 2 * acc, exactly */
                a0 >>= 7;
                a1 >>= 7;
                a2 >>= 7;
                a3 >>= 7;
            }
            ap[0] = a0;
            ap[1] = a1;
            ap[2] = a2;
            ap[3] = a3;
            ap += 4;
        }
        if (last) ec_dsp_fc_out(g, accs, yb + u0, (u1 < g->units ? u1 : g->units) - u0);
    }
}

EC_DSP_SHARED void ec_dsp_fc_ub(const ec_dsp_fc_geom *g, const int8_t *x, int8_t *y,
                                const int32_t *w, const int32_t *bias256, uint8_t *scratch) {
    int32_t *xs = (int32_t *)(void *)scratch;
    int8_t *tail = (int8_t *)(scratch + 2 * g->cp);
    int32_t *part = (int32_t *)(void *)(scratch + 2 * g->cp + 8);
    const int32_t d4 = g->depth & ~3, dp = g->dp;
    int32_t b, i, c0;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + b * g->depth;
        int8_t *yb = y + b * g->units;
        ec_fill8(tail, 0, 8);
        ec_copy8(tail, xb + d4, g->depth - d4);
        for (c0 = 0; c0 < dp; c0 += g->cp) {
            const int32_t cl = dp - c0 < g->cp ? dp - c0 : g->cp, c1 = c0 + cl;
            const int32_t *src = c0 == 0 ? bias256 : part;
            int32_t e256 = 0; /* 256 * (sum of the chunk's even-index inputs) */
            uint32_t c;
            for (i = c0; i < c1; i += 4) {
                const int32_t v = ec_ld32(i < d4 ? xb + i : tail + (i - d4));
                const int32_t pw = __ssub16(ec_sxtb16_r8(v), 0x007F007F);
                const int32_t ev = (int32_t)(((uint32_t)v << 8) & 0xFF00FF00u);
                e256 = __smlad(ev, 0x00010001, e256);
                xs[(i - c0) / 2] = pw;
                xs[(i - c0) / 2 + 1] = __ssub16(ev, pw);
            }
            c = (uint32_t)e256 << 7; /* 32768 * sum of the chunk's even inputs */
            if (c1 == dp) ec_dsp_fc_ub_units(g, xs, cl, w + c0, dp - cl, src, c, part, yb, 1);
            else ec_dsp_fc_ub_units(g, xs, cl, w + c0, dp - cl, src, c, part, yb, 0);
        }
    }
}

/* ---------------------------------------------------------------------------------------
 * DEPTHWISE_CONV_2D on channel planes. Each input row is transposed once into k_h ring slots of
 * int16 planes, [slot][channel][wp] (column 0 = input column -pad_l; padding columns and
 * padding rows hold the input zero point, which the folded bias cancels exactly). A channel's
 * filter row then meets consecutive halfwords, so SMLAD takes two taps at once:
 *   3x3 stride 1, outputs j, j+1 from A = (x_j, x_j+1), B = (x_j+2, x_j+3) and the weight
 *     pairs W01 = (w0, w1), W12 = (w1, w2):  out_j += SMLAD(A, W01) + SMLABT(B, W12),
 *     out_j+1 += SMLATB(A, W01) + SMLAD(B, W12);
 *   3x3 stride 2, outputs j, j+2: out_j += SMLAD(A, W01) + SMLABT(B, W12),
 *     out_j+2 += SMLAD(B, W01) + SMLABT(C, W12) with C = (x_j+4, x_j+5);
 *   any other k_h x k_w (any stride, no dilation): one output at a time, taps in pairs
 *     (w0, w1), (w2, w3), ... (k_w padded to even with a zero weight).
 * Per channel the compiler stores one record: the weight words (doubled: the accumulator is
 * 2 * acc, as the requantization wants), then 2 * bias, m, N, e.
 */
typedef struct {
    int32_t batches, in_h, in_w, in_c, out_h, out_w, out_c, dm;
    int32_t k_h, k_w, s_h, s_w, pad_t, pad_l;
    int32_t wp;         /* halfwords per plane row (even) */
    int32_t wpr;        /* weight words per filter row: 2 for the 3x3 kernels, ceil(k_w/2) else */
    int32_t kind;       /* 1: 3x3 stride 1, 2: 3x3 stride 2, 0: general */
    int32_t pad_val, lo, hi;
} ec_dsp_dw_geom;

#define EC_DSP_DW_MAX_KH 8
#define EC_ALWAYS_INLINE static inline __attribute__((always_inline)) EC_DSP_NOSCHED

/* Input row (in_w x in_c NHWC bytes) -> the planes of one slot, columns pad_l .. pad_l+in_w-1. */
static inline EC_DSP_NOSCHED void ec_dsp_dw_load(const ec_dsp_dw_geom *g, const int8_t *row,
                                                 int16_t *slot) {
    const int32_t c_n = g->in_c, w_n = g->in_w, wp = g->wp;
    int32_t c, x;
    if ((c_n & 3) == 0) {
        for (c = 0; c < c_n; c += 4) {
            int16_t *d0 = slot + c * wp + g->pad_l;
            const int8_t *s = row + c;
            for (x = 0; x + 2 <= w_n; x += 2) {
                const int32_t p = ec_ld32(s), q = ec_ld32(s + c_n);
                const int32_t p02 = __sxtb16(p), p13 = ec_sxtb16_r8(p);
                const int32_t q02 = __sxtb16(q), q13 = ec_sxtb16_r8(q);
                ec_st32(d0 + x, (int32_t)(((uint32_t)p02 & 0xFFFFu) | ((uint32_t)q02 << 16)));
                ec_st32(d0 + wp + x, (int32_t)(((uint32_t)p13 & 0xFFFFu) | ((uint32_t)q13 << 16)));
                ec_st32(d0 + 2 * wp + x,
                        (int32_t)(((uint32_t)p02 >> 16) | ((uint32_t)q02 & 0xFFFF0000u)));
                ec_st32(d0 + 3 * wp + x,
                        (int32_t)(((uint32_t)p13 >> 16) | ((uint32_t)q13 & 0xFFFF0000u)));
                s += 2 * c_n;
            }
            if (x < w_n) {
                d0[x] = s[0];
                d0[wp + x] = s[1];
                d0[2 * wp + x] = s[2];
                d0[3 * wp + x] = s[3];
            }
        }
        return;
    }
    for (x = 0; x < w_n; ++x) {
        for (c = 0; c < c_n; ++c) slot[c * wp + g->pad_l + x] = row[x * c_n + c];
    }
}

static inline void ec_dsp_fill16(int16_t *d, int32_t v, int32_t n) { /* n even, d aligned */
    const int32_t word = (int32_t)(((uint32_t)v & 0xFFFFu) * 0x00010001u);
    int32_t i;
    for (i = 0; i < n; i += 2) ec_st32(d + i, word);
}

/* ec_dsp_rq, clamped, with (m, N, e) from q[0..2]. */
EC_ALWAYS_INLINE int8_t ec_dsp_rq_out(int32_t a, const int32_t *q, int full, int32_t lo,
                                      int32_t hi) {
    int32_t t;
    __asm__("smmlar %0, %1, %2, %3" : "=r"(t) : "r"(a), "r"(q[0]), "r"(q[1]));
    t = (t + (a >> 31)) >> q[2];
    return full ? (int8_t)__ssat(t, 8) : ec_dsp_clamp8(t, lo, hi);
}

/* One output row of one channel: rec = its record, p[fy] = its plane row of filter row fy. */
EC_ALWAYS_INLINE void ec_dsp_dw_row(const ec_dsp_dw_geom *g, const int16_t *p0,
                                    const int16_t *p1, const int16_t *p2,
                                    const int16_t *const *p, const int32_t *rec, int8_t *y,
                                    int full) {
    const int32_t step = g->out_c, out_w = g->out_w, lo = g->lo, hi = g->hi;
    int32_t ox = 0;
    if (g->kind == 0) {
        const int32_t kh = g->k_h, wpr = g->wpr, sw = g->s_w, nw = kh * wpr;
        for (; ox < out_w; ++ox) {
            int32_t acc = rec[nw], fy, t;
            const int32_t *wk = rec;
            for (fy = 0; fy < kh; ++fy) {
                const int16_t *r = p[fy] + ox * sw;
                for (t = 0; t < wpr; ++t) acc = __smlad(ec_ld32(r + 2 * t), *wk++, acc);
            }
            *y = ec_dsp_rq_out(acc, rec + nw + 1, full, lo, hi);
            y += step;
        }
        return;
    }
    if (g->kind == 1) {
        for (; ox + 2 <= out_w; ox += 2) {
            int32_t a0 = rec[6], a1 = a0, A, B;
            A = ec_ld32(p0); B = ec_ld32(p0 + 2); p0 += 2;
            a0 = __smlad(A, rec[0], a0); a0 = __smlabt(B, rec[1], a0);
            a1 = __smlatb(A, rec[0], a1); a1 = __smlad(B, rec[1], a1);
            A = ec_ld32(p1); B = ec_ld32(p1 + 2); p1 += 2;
            a0 = __smlad(A, rec[2], a0); a0 = __smlabt(B, rec[3], a0);
            a1 = __smlatb(A, rec[2], a1); a1 = __smlad(B, rec[3], a1);
            A = ec_ld32(p2); B = ec_ld32(p2 + 2); p2 += 2;
            a0 = __smlad(A, rec[4], a0); a0 = __smlabt(B, rec[5], a0);
            a1 = __smlatb(A, rec[4], a1); a1 = __smlad(B, rec[5], a1);
            y[0] = ec_dsp_rq_out(a0, rec + 7, full, lo, hi);
            y[step] = ec_dsp_rq_out(a1, rec + 7, full, lo, hi);
            y += 2 * step;
        }
    } else {
        for (; ox + 2 <= out_w; ox += 2) {
            int32_t a0 = rec[6], a1 = a0, A, B, C;
            A = ec_ld32(p0); B = ec_ld32(p0 + 2); C = ec_ld32(p0 + 4); p0 += 4;
            a0 = __smlad(A, rec[0], a0); a0 = __smlabt(B, rec[1], a0);
            a1 = __smlad(B, rec[0], a1); a1 = __smlabt(C, rec[1], a1);
            A = ec_ld32(p1); B = ec_ld32(p1 + 2); C = ec_ld32(p1 + 4); p1 += 4;
            a0 = __smlad(A, rec[2], a0); a0 = __smlabt(B, rec[3], a0);
            a1 = __smlad(B, rec[2], a1); a1 = __smlabt(C, rec[3], a1);
            A = ec_ld32(p2); B = ec_ld32(p2 + 2); C = ec_ld32(p2 + 4); p2 += 4;
            a0 = __smlad(A, rec[4], a0); a0 = __smlabt(B, rec[5], a0);
            a1 = __smlad(B, rec[4], a1); a1 = __smlabt(C, rec[5], a1);
            y[0] = ec_dsp_rq_out(a0, rec + 7, full, lo, hi);
            y[step] = ec_dsp_rq_out(a1, rec + 7, full, lo, hi);
            y += 2 * step;
        }
    }
    if (ox < out_w) { /* odd width: the last output alone */
        int32_t acc = rec[6];
        acc = __smlad(ec_ld32(p0), rec[0], acc); acc = __smlabt(ec_ld32(p0 + 2), rec[1], acc);
        acc = __smlad(ec_ld32(p1), rec[2], acc); acc = __smlabt(ec_ld32(p1 + 2), rec[3], acc);
        acc = __smlad(ec_ld32(p2), rec[4], acc); acc = __smlabt(ec_ld32(p2 + 2), rec[5], acc);
        *y = ec_dsp_rq_out(acc, rec + 7, full, lo, hi);
    }
}

/* All output rows, all channels (full: the clamp is a plain int8 saturation). */
EC_ALWAYS_INLINE void ec_dsp_dw_rows(const ec_dsp_dw_geom *g, const int8_t *x, int8_t *y,
                                     const int32_t *recs, int16_t *planes, int full) {
    const int32_t slot_n = g->in_c * g->wp, kh = g->k_h, wp = g->wp, dm = g->dm;
    const int32_t rec_n = kh * g->wpr + 4;
    int32_t held[EC_DSP_DW_MAX_KH];
    const int16_t *r[EC_DSP_DW_MAX_KH];
    int32_t b, oy, fy, oc;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + b * g->in_h * g->in_w * g->in_c;
        ec_dsp_fill16(planes, g->pad_val, kh * slot_n);
        for (fy = 0; fy < kh; ++fy) held[fy] = INT32_MIN; /* filled with padding, no row yet */
        for (oy = 0; oy < g->out_h; ++oy) {
            int8_t *yr = y + (b * g->out_h + oy) * g->out_w * g->out_c;
            const int32_t *rec = recs;
            for (fy = 0; fy < kh; ++fy) {
                const int32_t row = oy * g->s_h - g->pad_t + fy;
                const int32_t s = (oy * g->s_h + fy) % kh;
                int16_t *slot = planes + s * slot_n;
                if (held[s] != row) {
                    if (row < 0 || row >= g->in_h) ec_dsp_fill16(slot, g->pad_val, slot_n);
                    else ec_dsp_dw_load(g, xb + row * g->in_w * g->in_c, slot);
                    held[s] = row;
                }
                r[fy] = slot;
            }
            for (oc = 0; oc < g->out_c; ++oc, rec += rec_n) {
                const int32_t off = (dm == 1 ? oc : oc / dm) * wp;
                if (g->kind == 0) {
                    const int16_t *rc[EC_DSP_DW_MAX_KH];
                    for (fy = 0; fy < kh; ++fy) rc[fy] = r[fy] + off;
                    ec_dsp_dw_row(g, rc[0], rc[0], rc[0], rc, rec, yr + oc, full);
                } else {
                    ec_dsp_dw_row(g, r[0] + off, r[1] + off, r[2] + off, r, rec, yr + oc, full);
                }
            }
        }
    }
}

/* The whole depthwise convolution; scratch: k_h * in_c * wp int16, word aligned. */
EC_DSP_SHARED void ec_dsp_dw(const ec_dsp_dw_geom *g, const int8_t *x, int8_t *y,
                             const int32_t *recs, uint8_t *scratch) {
    int16_t *planes = (int16_t *)(void *)scratch;
    if (g->lo == -128 && g->hi == 127) ec_dsp_dw_rows(g, x, y, recs, planes, 1);
    else ec_dsp_dw_rows(g, x, y, recs, planes, 0);
}

/* ---------------------------------------------------------------------------------------
 * ADD of two int8 tensors of the same shape. TFLite rescales each input to a common scale
 * (x - zp) << 20 -> SRDHM -> RDBPOT; with int8 inputs that is a function of 256 values, so the
 * compiler tabulates 2 * r(x) for both inputs (exact by construction) and the kernel adds two
 * table entries and requantizes the doubled sum with the fast requantization (proven exact
 * over the range of sums).
 */
typedef struct {
    int32_t n;
    int32_t m, nn, e, lo, hi;
} ec_dsp_add_geom;

EC_DSP_SHARED void ec_dsp_add(const ec_dsp_add_geom *g, const int8_t *a, const int8_t *b,
                              int8_t *y, const int32_t *ta, const int32_t *tb) {
    const int32_t m = g->m, nn = g->nn, e = g->e, lo = g->lo, hi = g->hi;
    const int32_t *ta0 = ta + 128, *tb0 = tb + 128; /* index by the signed byte */
    int32_t i = 0, n = g->n;
    if (lo == -128 && hi == 127) {
        for (; i + 2 <= n; i += 2) {
            const int32_t s0 = ta0[a[i]] + tb0[b[i]], s1 = ta0[a[i + 1]] + tb0[b[i + 1]];
            y[i] = (int8_t)__ssat(ec_dsp_rq(s0, m, nn, e), 8);
            y[i + 1] = (int8_t)__ssat(ec_dsp_rq(s1, m, nn, e), 8);
        }
    }
    for (; i < n; ++i) y[i] = ec_dsp_clamp8(ec_dsp_rq(ta0[a[i]] + tb0[b[i]], m, nn, e), lo, hi);
}

/* ---------------------------------------------------------------------------------------
 * AVERAGE_POOL_2D / MAX_POOL_2D, int8. The window is clipped to the input (TFLite Micro never
 * reads padding). Average: per output pixel, 8 channels at a time summed in int16 halves with
 * SXTAB16 (windows of at most 256 taps cannot overflow: the compiler checks), then TFLite's
 * rounding division (half away from zero, C truncation) per channel. Max: SSUB8 + SEL, the
 * per-byte signed maximum of 4 channels in two instructions.
 */
typedef struct {
    int32_t batches, in_h, in_w, c, out_h, out_w, fh, fw, s_h, s_w, pad_h, pad_w, lo, hi;
} ec_pool_geom;

static inline int32_t ec_sxtab16_r8(int32_t acc, int32_t x) {
    int32_t r;
    __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(acc), "r"(x));
    return r;
}

static inline int8_t ec_pool_avg(int32_t sum, int32_t count, int32_t lo, int32_t hi) {
    const int32_t avg = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
    return ec_dsp_clamp8(avg, lo, hi);
}

/* The clipped window of output (oy, ox): rows [fy0, fy1), columns [fx0, fx1). */
#define EC_POOL_WINDOW(g, oy, ox) \
    const int32_t y0_ = (oy) * (g)->s_h - (g)->pad_h, x0_ = (ox) * (g)->s_w - (g)->pad_w; \
    const int32_t fy0 = y0_ < 0 ? -y0_ : 0; \
    const int32_t fy1 = (g)->in_h - y0_ < (g)->fh ? (g)->in_h - y0_ : (g)->fh; \
    const int32_t fx0 = x0_ < 0 ? -x0_ : 0; \
    const int32_t fx1 = (g)->in_w - x0_ < (g)->fw ? (g)->in_w - x0_ : (g)->fw

EC_DSP_SHARED void ec_dsp_avgpool(const ec_pool_geom *g, const int8_t *x, int8_t *y) {
    const int32_t cn = g->c, c8 = cn & ~7;
    int32_t b, oy, ox, fy, fx, c;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + b * g->in_h * g->in_w * cn;
        for (oy = 0; oy < g->out_h; ++oy) {
            for (ox = 0; ox < g->out_w; ++ox, y += cn) {
                EC_POOL_WINDOW(g, oy, ox);
                const int32_t count = (fy1 - fy0) * (fx1 - fx0);
                const int8_t *w0 = xb + ((y0_ + fy0) * g->in_w + x0_ + fx0) * cn;
                for (c = 0; c < c8; c += 8) {
                    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
                    const int8_t *row = w0 + c;
                    for (fy = fy0; fy < fy1; ++fy, row += g->in_w * cn) {
                        const int8_t *p = row;
                        for (fx = fx0; fx < fx1; ++fx, p += cn) {
                            const int32_t v0 = ec_ld32(p), v1 = ec_ld32(p + 4);
                            a0 = __sxtab16(a0, v0);
                            a1 = ec_sxtab16_r8(a1, v0);
                            a2 = __sxtab16(a2, v1);
                            a3 = ec_sxtab16_r8(a3, v1);
                        }
                    }
                    y[c] = ec_pool_avg((int16_t)a0, count, g->lo, g->hi);
                    y[c + 1] = ec_pool_avg((int16_t)a1, count, g->lo, g->hi);
                    y[c + 2] = ec_pool_avg(a0 >> 16, count, g->lo, g->hi);
                    y[c + 3] = ec_pool_avg(a1 >> 16, count, g->lo, g->hi);
                    y[c + 4] = ec_pool_avg((int16_t)a2, count, g->lo, g->hi);
                    y[c + 5] = ec_pool_avg((int16_t)a3, count, g->lo, g->hi);
                    y[c + 6] = ec_pool_avg(a2 >> 16, count, g->lo, g->hi);
                    y[c + 7] = ec_pool_avg(a3 >> 16, count, g->lo, g->hi);
                }
                for (; c < cn; ++c) {
                    int32_t sum = 0;
                    for (fy = fy0; fy < fy1; ++fy) {
                        for (fx = fx0; fx < fx1; ++fx) sum += w0[(fy - fy0) * g->in_w * cn +
                                                                 (fx - fx0) * cn + c];
                    }
                    y[c] = ec_pool_avg(sum, count, g->lo, g->hi);
                }
            }
        }
    }
}

/* Per-byte signed maximum of two words of 4 int8 channels. */
static inline int32_t ec_max8x4(int32_t a, int32_t b) {
    (void)__ssub8(a, b); /* GE bits: a >= b per byte */
    return __sel(a, b);
}

EC_DSP_SHARED void ec_dsp_maxpool(const ec_pool_geom *g, const int8_t *x, int8_t *y) {
    const int32_t cn = g->c, c4 = cn & ~3;
    const int32_t lo4 = (int32_t)(0x01010101u * (uint8_t)g->lo);
    const int32_t hi4 = (int32_t)(0x01010101u * (uint8_t)g->hi);
    int32_t b, oy, ox, fy, fx, c;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + b * g->in_h * g->in_w * cn;
        for (oy = 0; oy < g->out_h; ++oy) {
            for (ox = 0; ox < g->out_w; ++ox, y += cn) {
                EC_POOL_WINDOW(g, oy, ox);
                const int8_t *w0 = xb + ((y0_ + fy0) * g->in_w + x0_ + fx0) * cn;
                for (c = 0; c < c4; c += 4) {
                    int32_t m = (int32_t)0x80808080u, r; /* -128 in every byte */
                    const int8_t *row = w0 + c;
                    for (fy = fy0; fy < fy1; ++fy, row += g->in_w * cn) {
                        const int8_t *p = row;
                        for (fx = fx0; fx < fx1; ++fx, p += cn) m = ec_max8x4(ec_ld32(p), m);
                    }
                    r = ec_max8x4(m, lo4);
                    (void)__ssub8(r, hi4);
                    ec_st32(y + c, __sel(hi4, r)); /* min(r, hi): hi where r >= hi */
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
#endif /* EDGECC_DSP_H */
