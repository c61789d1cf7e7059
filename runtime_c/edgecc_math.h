/* edgecc_math.h: the float32 functions of the float kernels, without libm.
 *
 * The generated C links no math library (only <string.h>/<stdint.h>), so the float kernels
 * (SOFTMAX, LOG_SOFTMAX, LOGISTIC, TANH, ELU, EXP, LOG, SQRT, L2_NORMALIZATION, ...) call these.
 * ec_sqrtf is correctly rounded (IEEE sqrt, as the hardware instruction), the others are within a
 * few ulp of the correctly rounded result: the float paths are checked within 1e-5 relative of
 * TFLite Micro, which calls the host libm. Algorithms:
 *   exp:   x = k ln2 + r (Cody-Waite, |r| <= ln2/2), exp(r) by its Taylor series to r^7, * 2^k.
 *   expm1: the Taylor series to x^10 for |x| < 1/2 (no cancellation), else exp(x) - 1.
 *   tanh:  e = expm1(2|x|), tanh = e / (e + 2), signed; 1 beyond |x| = 9.5 (rounds to 1).
 *   log:   x = 2^e m with m in [sqrt(1/2), sqrt(2)), s = (m-1)/(m+1), log m = 2 atanh(s) by its
 *          odd series to s^13, + e ln2 (split into a high part exact in float and a low part).
 *   sqrt:  the integer square root of the 48-bit scaled mantissa, rounded to nearest.
 *   fmod:  exact (below).
 * And TFLite's integer FLOOR_DIV / FLOOR_MOD (ec_floor_div_s32, ec_floor_mod_s32/_s64).
 * Build with -ffp-contract=off so that no multiply-add is fused (as TFLite Micro's build).
 * Also TFLite's fixed-point 1/sqrt (GetInvSqrtQuantizedMultiplierExp), C twin of
 * inv_sqrt_multiplier_exp in edgecc/ops/rsqrt.py, for the int8 L2_NORMALIZATION.
 */
#ifndef EDGECC_MATH_H
#define EDGECC_MATH_H

#include <stdint.h>
#include "edgecc_rt.h"
#include "edgecc_fixedpoint.h"

static inline float ec_f32_bits(uint32_t u) {
    union { uint32_t u; float f; } v;
    v.u = u;
    return v.f;
}

static inline uint32_t ec_bits_f32(float f) {
    union { uint32_t u; float f; } v;
    v.f = f;
    return v.u;
}

#define EC_INFF (ec_f32_bits(0x7f800000u))
#define EC_NANF (ec_f32_bits(0x7fc00000u))

/* 2^k for k in [-126, 127] */
static inline float ec_pow2i(int k) { return ec_f32_bits((uint32_t)(k + 127) << 23); }

static inline float ec_expf(float x) {
    const float ln2_hi = 0.693145751953125f;       /* 15 significant bits: k * ln2_hi is exact */
    const float ln2_lo = 1.42860682030941723212e-6f;
    float r, p;
    int k;
    if (x != x) return x;
    if (x > 88.72283935546875f) return EC_INFF;
    if (x < -103.972084045410156f) return 0.0f;
    k = (int)(x * 1.44269502162933349609f + (x < 0.0f ? -0.5f : 0.5f));
    r = (x - (float)k * ln2_hi) - (float)k * ln2_lo;
    p = 1.0f + r * (1.0f + r * (0.5f + r * (1.66666671633720397949e-1f + r * (4.16666679084300994873e-2f
        + r * (8.33333376795053482056e-3f + r * (1.38888892251998186111e-3f
        + r * 1.98412701138295233250e-4f))))));
    if (k > 127) { p *= 2.0f; k -= 1; }
    if (k < -126) return p * ec_pow2i(k + 64) * ec_pow2i(-64);
    return p * ec_pow2i(k);
}

static inline float ec_expm1f(float x) {
    if (x > -0.5f && x < 0.5f) {
        return x * (1.0f + x * (0.5f + x * (1.66666671633720397949e-1f + x * (4.16666679084300994873e-2f
            + x * (8.33333376795053482056e-3f + x * (1.38888892251998186111e-3f
            + x * (1.98412701138295233250e-4f + x * (2.48015876168990507722e-5f
            + x * (2.75573188446287531406e-6f + x * 2.75573188446287531406e-7f)))))))));
    }
    return ec_expf(x) - 1.0f;
}

static inline float ec_tanhf(float x) {
    float a = x < 0.0f ? -x : x, e, t;
    if (x != x) return x;
    if (a > 9.5f) t = 1.0f;
    else {
        e = ec_expm1f(2.0f * a);
        t = e / (e + 2.0f);
    }
    return x < 0.0f ? -t : t;
}

static inline float ec_logf(float x) {
    const float ln2_hi = 0.693145751953125f;
    const float ln2_lo = 1.42860682030941723212e-6f;
    uint32_t u;
    int e = 0;
    float m, f, s, z, r;
    if (x != x) return x;
    if (x < 0.0f) return EC_NANF;
    if (x == 0.0f) return -EC_INFF;
    if (x == EC_INFF) return x;
    if (x < 1.17549435082228750797e-38f) { x *= 8388608.0f; e = -23; } /* subnormal: * 2^23 */
    u = ec_bits_f32(x);
    e += (int)(u >> 23) - 127;
    m = ec_f32_bits((u & 0x007fffffu) | 0x3f800000u);  /* [1, 2) */
    if (m > 1.41421353816986083984f) { m *= 0.5f; e += 1; }
    f = m - 1.0f;                                   /* exact */
    s = f / (2.0f + f);
    z = s * s;
    r = 2.0f * s + 2.0f * s * z * (3.33333343267440795898e-1f + z * (2.0e-1f + z * (1.42857149243354797363e-1f
        + z * (1.11111111938953399658e-1f + z * (9.09090936183929443359e-2f + z * 7.69230797886848449707e-2f)))));
    return (float)e * ln2_hi + (r + (float)e * ln2_lo);
}

static inline float ec_sqrtf(float x) {
    uint32_t u = ec_bits_f32(x), m;
    uint64_t big, q = 0, bit, rem;
    int e;
    if (x != x || x == 0.0f || x == EC_INFF) return x;
    if (x < 0.0f) return EC_NANF;
    e = (int)(u >> 23) - 127;
    m = u & 0x007fffffu;
    if ((u >> 23) == 0) {                           /* subnormal: normalize */
        e = -126;
        while (!(m & 0x00800000u)) { m <<= 1; e -= 1; }
    } else {
        m |= 0x00800000u;
    }
    if (e & 1) { m <<= 1; e -= 1; }                 /* even exponent, m in [2^23, 2^25) */
    big = (uint64_t)m << 23;                        /* [2^46, 2^48): its root has 24 bits */
    rem = big;
    for (bit = (uint64_t)1 << 46; bit != 0; bit >>= 2) {  /* bit-by-bit integer square root */
        if (rem >= q + bit) { rem -= q + bit; q = (q >> 1) + bit; }
        else q >>= 1;
    }
    if (rem > q) q += 1;                            /* nearest (no ties: sqrt is never a midpoint) */
    return ec_f32_bits((uint32_t)((e / 2 + 127) << 23) + (uint32_t)(q - ((uint64_t)1 << 23)));
}

/* std::floor / std::ceil: exact, signed zeros kept (|x| >= 2^23 is already an integer) */
static inline float ec_floorf(float x) {
    float t;
    if (!(x < 8388608.0f && x > -8388608.0f) || x == 0.0f) return x;
    t = (float)(int32_t)x;                          /* toward zero */
    return t > x ? t - 1.0f : t;
}

static inline float ec_ceilf(float x) {
    float t;
    if (!(x < 8388608.0f && x > -8388608.0f) || x == 0.0f) return x;
    t = (float)(int32_t)x;
    if (t < x) t += 1.0f;
    return (t == 0.0f && x < 0.0f) ? -0.0f : t;     /* ceil(-0.5) is -0 */
}

/* TFLite's RoundToNearest: half to even */
static inline float ec_roundf_even(float x) {
    const float f = ec_floorf(x), diff = x - f;
    if (diff < 0.5f || (diff == 0.5f && ((int32_t)f) % 2 == 0)) return f;
    return f + 1.0f;
}

/* std::fmod: the exact remainder x - n*y with n = trunc(x/y), sign of x. The mantissas are
 * reduced by shift-and-subtract (long division, one quotient bit per exponent step). */
static inline float ec_fmodf(float x, float y) {
    uint32_t ux = ec_bits_f32(x), uy = ec_bits_f32(y), mx, my;
    const uint32_t sx = ux & 0x80000000u;
    int ex, ey;
    ux &= 0x7fffffffu;
    uy &= 0x7fffffffu;
    if (uy == 0 || ux >= 0x7f800000u || uy > 0x7f800000u) return EC_NANF;
    if (ux < uy) return x;
    if (ux == uy) return ec_f32_bits(sx);
    ex = (int)(ux >> 23);
    ey = (int)(uy >> 23);
    mx = ux & 0x007fffffu;
    my = uy & 0x007fffffu;
    if (ex == 0) { ex = 1; while (!(mx & 0x00800000u)) { mx <<= 1; --ex; } } else mx |= 0x00800000u;
    if (ey == 0) { ey = 1; while (!(my & 0x00800000u)) { my <<= 1; --ey; } } else my |= 0x00800000u;
    for (; ex > ey; --ex) {                         /* mx < 2 my throughout */
        if (mx >= my) mx -= my;
        mx <<= 1;
    }
    if (mx >= my) mx -= my;
    if (mx == 0) return ec_f32_bits(sx);
    while (!(mx & 0x00800000u)) { mx <<= 1; --ey; }
    if (ey > 0) return ec_f32_bits(sx | ((uint32_t)ey << 23) | (mx & 0x007fffffu));
    return ec_f32_bits(sx | (mx >> (1 - ey)));      /* subnormal: exact */
}

/* TFLite's FloorMod on floats: the fmod remainder moved into the divisor's sign */
static inline float ec_floor_modf(float x, float y) {
    const float t = ec_fmodf(x, y);
    return (t != 0.0f && ((y < 0.0f) != (t < 0.0f))) ? t + y : t;
}

/* TFLite's integer FloorDiv and FloorMod (LiteRT's reference kernels): the floored quotient, and
 * the truncated remainder moved into the divisor's sign. A zero divisor (LiteRT: "Division by
 * zero") gives 0; x / -1 negates with wrap-around (INT32_MIN stays INT32_MIN, as LiteRT's
 * double-to-int conversion gives on its hosts) and x % -1 is 0, without C's overflow. */
static inline int32_t ec_floor_div_s32(int32_t x, int32_t y) {
    if (y == 0) return 0;
    if (y == -1) return (int32_t)(0u - (uint32_t)x);
    return x / y - (int32_t)((x % y != 0) && ((x < 0) != (y < 0)));
}

static inline int32_t ec_floor_mod_s32(int32_t x, int32_t y) {
    int32_t t;
    if (y == 0 || y == -1) return 0;
    t = x % y;
    return (t != 0 && ((y < 0) != (t < 0))) ? t + y : t;
}

static inline int64_t ec_floor_mod_s64(int64_t x, int64_t y) {
    int64_t t;
    if (y == 0 || y == -1) return 0;
    t = x % y;
    return (t != 0 && ((y < 0) != (t < 0))) ? t + y : t;
}

/* GetInvSqrtQuantizedMultiplierExp(x, reverse_shift -1): 1/sqrt(x) = *mult * 2^*shift / 2^31,
 * by five Newton-Raphson steps in Q3.28 (gemmlowp FixedPoint<int32, 3>). */
static inline void ec_inv_sqrt_mult_exp(int32_t x, int32_t *mult, int *shift) {
    int s = 11, pairs, i;
    int32_t half, r = (int32_t)1 << 28;
    const int32_t half_three = ((int32_t)1 << 28) + ((int32_t)1 << 27);
    if (x <= 1) { *mult = INT32_MAX; *shift = 0; return; }
    while (x >= ((int32_t)1 << 29)) { x /= 4; ++s; }
    pairs = (ec_clz32((uint32_t)x) - 1) / 2 - 1;
    s -= pairs;
    x = (int32_t)((uint32_t)x << (2 * pairs));
    half = ec_rdbpot(x >> 1, 1);
    for (i = 0; i < 5; ++i) {
        const int32_t r3 = ec_sat_shl(ec_srdhm(ec_srdhm(r, r), r), 6);   /* Rescale<3> from Q9 */
        r = ec_sat_shl(ec_wsub(ec_srdhm(half_three, r), ec_srdhm(half, r3)), 3);  /* from Q6 */
    }
    r = ec_srdhm(r, 1518500250);                                        /* * sqrt(2)/2 */
    if (s < 0) { r = (int32_t)((uint32_t)r << -s); s = 0; }
    *mult = r;
    *shift = -s;
}

#endif /* EDGECC_MATH_H */
