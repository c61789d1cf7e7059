/* edgecc runtime helpers for the recurrent ops (UNIDIRECTIONAL_SEQUENCE_LSTM), C99, static inline.
 *
 * C twins of edgecc/ops/_lstm_math.py, bit-identical with it and with TensorFlow Lite Micro's
 * int16 Logistic / Tanh and its 8x8->16 LSTM gate arithmetic. The activations interpolate a
 * 256-entry table of sigmoid(i/24) in Q0.16 (tanh(x) = 2*sigmoid(2x) - 1 reads the same table);
 * the table is passed in (`tab`), emitted by Python as const data beside the weights, so a model
 * that does not use these functions carries no copy of it. Needs edgecc_rt.h.
 */
#ifndef EDGECC_LSTM_H
#define EDGECC_LSTM_H
#include <stdint.h>
#include "edgecc_rt.h"

static inline int16_t ec_sat16(int32_t x) {
    return (int16_t)(x < -32768 ? -32768 : (x > 32767 ? 32767 : x));
}

/* The table step of Logistic on an already rescaled input v: index |v| >> 9, 9-bit
 * interpolation fraction, mirrored for v < 0; Q0.15 out. Twin of _lstm_math.sigmoid_lookup16. */
static inline int16_t ec_sigmoid_lookup16(int32_t v, const uint16_t *tab) {
    const uint32_t a = (uint32_t)(v < 0 ? -v : v);
    const uint32_t uh = a >> 9;
    uint32_t r;
    if (uh >= 255) {
        r = (uint32_t)0x7FFF << 10;
    } else {
        const uint32_t ua = tab[uh], ub = tab[uh + 1];
        r = (ua << 9) + (a & 0x1FF) * (ub - ua);
    }
    r = v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1u;
    return (int16_t)(r >> 10);
}

/* Logistic on a Q3.12 int16 (TFLite's power-of-two case: input * 3, no shift); Q0.15 out. */
static inline int16_t ec_sigmoid16(int16_t x, const uint16_t *tab) {
    return ec_sigmoid_lookup16((int32_t)x * 3, tab);
}

/* Logistic on an int16 scaled by mult and a rounding right shift (the general LOGISTIC int16
 * kernel; ec_sigmoid16 is its mult = 3, no-shift case); Q0.15 out. Twin of
 * edgecc/ops/_act16.py logistic16. */
static inline int16_t ec_logistic16(int16_t x, int32_t mult, int rshift, const uint16_t *tab) {
    const int32_t rnd = rshift > 0 ? (1 << (rshift - 1)) : 0;
    return ec_sigmoid_lookup16(((int32_t)x * mult + rnd) >> rshift, tab);
}

/* Tanh on an int16 scaled by mult and a rounding right shift (edgecc computes both from the
 * input's power-of-two scale exactly as TFLM's LSTM does); Q0.15 out. */
static inline int16_t ec_tanh16(int16_t x, int32_t mult, int rshift, const uint16_t *tab) {
    const int32_t rnd = rshift > 0 ? (1 << (rshift - 1)) : 0;
    const int32_t v = ((int32_t)x * mult + rnd) >> rshift;
    const uint32_t a = (uint32_t)(v < 0 ? -v : v);
    const uint32_t uh = a >> 8;
    int32_t r;
    if (uh >= 255) {
        r = (int32_t)((uint32_t)0xFFFF << 8);
    } else {
        const uint32_t ua = tab[uh], ub = tab[uh + 1];
        r = (int32_t)((ua << 8) + (a & 0xFF) * (ub - ua));
    }
    r = v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
    return (int16_t)(r >> 8);
}

/* Four int8 dot products at once over gate-interleaved weights (w4[4*d + k] is gate k's weight
 * for input d): acc[k] += sum_d x[d] * w4[4*d + k]. Reading each x[d] once for the four gates
 * halves the loads of one-row-at-a-time. */
static inline void ec_dot4_s8(const int8_t *x, const int8_t *w4, int n, int32_t *acc) {
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    int d;
    for (d = 0; d < n; ++d) {
        const int32_t xd = x[d];
        a0 += xd * w4[0];
        a1 += xd * w4[1];
        a2 += xd * w4[2];
        a3 += xd * w4[3];
        w4 += 4;
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}

/* A gate's Q3.12 pre-activation from its two FC accumulators: each requantized and clamped to
 * int16 (TFLM's FullyConnected into int16), then added with int16 saturation. has_h == 0 means
 * the reset hidden state, whose recurrent FC is exactly 0. */
static inline int16_t ec_lstm_gate(int32_t acc_x, int32_t mx, int sx, int has_h, int32_t acc_h,
                                   int32_t mh, int sh) {
    int32_t v = ec_clamp(ec_mbqm(acc_x, mx, sx), -32768, 32767);
    if (has_h) {
        v += ec_clamp(ec_mbqm(acc_h, mh, sh), -32768, 32767);
    }
    return ec_sat16(v);
}

/* MulElementwise: clamp(zp + mbqm(a * b)). */
static inline int32_t ec_mul16(int16_t a, int16_t b, int32_t mult, int shift, int32_t zp,
                               int32_t lo, int32_t hi) {
    return ec_clamp(zp + ec_mbqm((int32_t)a * (int32_t)b, mult, shift), lo, hi);
}

#endif /* EDGECC_LSTM_H */
