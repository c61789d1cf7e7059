/* edgecc runtime: gemmlowp's fixed-point math functions as static inline C99.
 *
 * C twins of edgecc/numerics/gemmlowp.py (exp on negative values, 1/(1+x), reciprocal), bit-identical
 * with it and with TensorFlow Lite Micro's quantized SOFTMAX. A FixedPoint<int32, I> value is a
 * raw int32 r meaning r / 2^(31-I). Additions that gemmlowp leaves to wrap are done in uint32 so
 * they wrap without undefined behaviour. No state, no libc beyond <stdint.h>.
 */
#ifndef EDGECC_FIXEDPOINT_H
#define EDGECC_FIXEDPOINT_H
#include <stdint.h>
#include "edgecc_rt.h"

static inline int32_t ec_wadd(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
static inline int32_t ec_wsub(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }

/* x * 2^e (e >= 0) saturated to int32, exactly as gemmlowp SaturatingRoundingMultiplyByPOT. */
static inline int32_t ec_sat_shl(int32_t x, int e) {
    const int32_t thr = (int32_t)(((int64_t)1 << (31 - e)) - 1);
    if (e == 0) return x;
    if (x > thr) return INT32_MAX;
    if (x < -thr) return INT32_MIN;
    return (int32_t)((uint32_t)x << e);
}

/* (a + b) / 2 rounded half away from zero. */
static inline int32_t ec_rounding_half_sum(int32_t a, int32_t b) {
    const int64_t s = (int64_t)a + (int64_t)b;
    return (int32_t)((s + (s >= 0 ? 1 : -1)) / 2);
}

/* exp(a) for a in [-1/4, 0), Q0.31: Taylor expansion around -1/8. */
static inline int32_t ec_exp_quarter(int32_t a) {
    const int32_t c_exp_m18 = 1895147668; /* exp(-1/8) */
    const int32_t c_1_3 = 715827883;      /* 1/3 */
    const int32_t x = ec_wadd(a, 1 << 28);
    const int32_t x2 = ec_srdhm(x, x);
    const int32_t x3 = ec_srdhm(x2, x);
    const int32_t x4 = ec_srdhm(x2, x2);
    const int32_t x4_4 = ec_rdbpot(x4, 2);
    const int32_t poly = ec_rdbpot(ec_wadd(ec_srdhm(ec_wadd(x4_4, x3), c_1_3), x2), 1);
    return ec_wadd(c_exp_m18, ec_srdhm(c_exp_m18, ec_wadd(x, poly)));
}

/* exp(a) for a <= 0 in FixedPoint<int32, int_bits> (0 < int_bits < 31); result Q0.31. */
static inline int32_t ec_exp_on_negative_values(int32_t a, int int_bits) {
    static const int32_t barrel[7] = {1672461947, 1302514674, 790015084, 290630308,
                                      39332535, 720401, 242}; /* exp(-2^k), k = -2..4 */
    const int frac = 31 - int_bits;
    const int32_t quarter = (int32_t)1 << (frac - 2);
    const int32_t a_mod = (a & (quarter - 1)) - quarter;
    const int32_t rem = ec_wsub(a_mod, a);
    int32_t result;
    int k;
    result = ec_exp_quarter(int_bits > 0 ? ec_sat_shl(a_mod, int_bits) : a_mod);
    for (k = -2; k <= 4; ++k) {
        if (int_bits > k && ((rem >> (frac + k)) & 1)) {
            result = ec_srdhm(result, barrel[k + 2]);
        }
    }
    if (int_bits > 5 && a < -((int32_t)1 << (36 - int_bits))) result = 0;
    return a == 0 ? INT32_MAX : result;
}

/* 1 / (1 + a) for a in [0, 1), Q0.31: Newton-Raphson division in Q2.29. */
static inline int32_t ec_one_over_one_plus_x(int32_t a) {
    const int32_t half_den = ec_rounding_half_sum(a, INT32_MAX);
    int32_t x = ec_wadd(1515870810, ec_srdhm(half_den, -1010580540)); /* 48/17 - 32/17 * d */
    int i;
    for (i = 0; i < 3; ++i) {
        const int32_t one_minus = ec_wsub((int32_t)1 << 29, ec_srdhm(half_den, x));
        x = ec_wadd(x, ec_sat_shl(ec_srdhm(x, one_minus), 2));
    }
    return ec_sat_shl(x, 1);
}

static inline int ec_clz32(uint32_t x) {
    int n = 0;
    if (x == 0) return 32;
    while (!(x & 0x80000000u)) {
        x <<= 1;
        ++n;
    }
    return n;
}

/* ec_rdbpot for any exponent e >= 0. SOFTMAX divides by 2^(bits over unit + 31 - output bits),
 * which passes 31 once the sum of exps reaches 2^(output bits) (a C shift out of range, in TFLite
 * too); the rounded quotient of an int32 by 2^32 or more is 0, or -1 for INT32_MIN / 2^32 (-0.5,
 * rounded away from zero), as edgecc/numerics/fixed_point.py computes it. */
static inline int32_t ec_rdbpot_any(int32_t x, int e) {
    if (e < 32) return ec_rdbpot(x, e);
    return (e == 32 && x == INT32_MIN) ? -1 : 0;
}

/* TFLite GetReciprocal: 1/x for x in FixedPoint<int32, int_digits> (x > 0), as a Q0.31 value in
 * [0.5, 1) and the number of bits the true reciprocal lies above it. */
static inline int32_t ec_get_reciprocal(int32_t x, int int_digits, int *bits_over_unit) {
    /* x == 0 (a sum of exps that wrapped around: TFLite shifts by 32 there) counts as 31 zeros,
     * so the shift below stays defined */
    const int hp1 = x == 0 ? 31 : ec_clz32((uint32_t)x);
    *bits_over_unit = int_digits - hp1;
    return ec_one_over_one_plus_x(
        (int32_t)(((uint32_t)x << hp1) - ((uint32_t)1 << 31)));
}

/* TFLite's int16 table lookup (int16 SOFTMAX's exp and 1/(1+x) tables of 513 entries): entry
 * 256 + (v >> 7), plus the slope to the next entry (held in an int16) times the low 7 bits,
 * rounded. Twin of edgecc/ops/_softmax16.py lut_lookup. */
static inline int16_t ec_lut16(int16_t v, const int16_t *lut) {
    const int index = 256 + (v >> 7);
    const int16_t slope = (int16_t)(lut[index + 1] - lut[index]);
    return (int16_t)(lut[index] + ((slope * (v & 0x7F) + 64) >> 7));
}

#endif /* EDGECC_FIXEDPOINT_H */
