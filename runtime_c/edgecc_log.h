/* edgecc runtime: TFLite's fixed-point natural log (log_x_for_x_greater_than_or_equal_to_1), C99.
 *
 * C twin of log_x_ge_1 in edgecc/ops/log_softmax.py; used by the int8 LOG_SOFTMAX kernel.
 * Bit-identical with TFLite Micro: a polynomial/rational approximation in Q0.31 around the input
 * scaled into [sqrt(1/2), 1), plus the power of two times log(2), accumulated with one bit of
 * headroom. No state, no libc beyond <stdint.h>.
 */
#ifndef EDGECC_LOG_H
#define EDGECC_LOG_H
#include <stdint.h>
#include "edgecc_rt.h"
#include "edgecc_fixedpoint.h"

static inline int32_t ec_sat_add32(int32_t a, int32_t b) {
    const int64_t s = (int64_t)a + b;
    return (int32_t)(s > INT32_MAX ? INT32_MAX : (s < INT32_MIN ? INT32_MIN : s));
}

static inline int32_t ec_sat_sub32(int32_t a, int32_t b) {
    const int64_t s = (int64_t)a - b;
    return (int32_t)(s > INT32_MAX ? INT32_MAX : (s < INT32_MIN ? INT32_MIN : s));
}

/* log(x) for x >= 1 given as FixedPoint<int32, in_bits>; result FixedPoint<int32, out_bits>. */
static inline int32_t ec_log_x_ge_1(int32_t x, int in_bits, int out_bits) {
    const int acc_bits = out_bits + 1;
    const int32_t shifted_quarter = ec_rdbpot(536870912, acc_bits);            /* 1/4 */
    const int hp1 = ec_clz32((uint32_t)x);
    const int32_t r_a = ec_sat_shl(ec_srdhm(ec_sat_shl(x, hp1 - 1), 1518500250), 1);
    const int32_t za_adj = ec_sat_add32(ec_sat_shl(in_bits - hp1, 31 - acc_bits), shifted_quarter);
    const int32_t z_b = ec_srdhm(x, 1518500250);                               /* * sqrt(1/2) */
    const int zbh = ec_clz32((uint32_t)z_b) - 1;
    const int32_t r_b = ec_sat_shl(x, zbh);
    const int32_t zb_adj = ec_sat_sub32(ec_sat_shl(in_bits - zbh, 31 - acc_bits), shifted_quarter);
    const int32_t r = r_a < r_b ? r_a : r_b;
    const int32_t z_adj = za_adj > zb_adj ? za_adj : zb_adj;
    const int32_t p = ec_rounding_half_sum(r, 1805811301);                     /* sqrt(sqrt(1/2)) */
    int32_t q = ec_wsub(r, 1805811301);
    int32_t sq, num, den;
    q = ec_wadd(q, q);
    sq = ec_srdhm(q, q);
    num = ec_wadd(ec_srdhm(q, r), ec_srdhm(ec_srdhm(q, sq), 117049297));
    den = ec_wadd(ec_srdhm(p, ec_wadd(ec_wadd(1057819769, q), ec_srdhm(127690142, sq))),
                  ec_srdhm(638450708, q));
    return ec_sat_shl(ec_wadd(ec_srdhm(z_adj, 1488522236),                      /* * log(2) */
                              ec_srdhm(ec_rdbpot(num, acc_bits), ec_one_over_one_plus_x(den))),
                      acc_bits - out_bits);
}

#endif /* EDGECC_LOG_H */
