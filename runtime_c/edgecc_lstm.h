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

/* Logistic on a Q3.12 int16 (TFLite's power-of-two case: input * 3, no shift); Q0.15 out. */
static inline int16_t ec_sigmoid16(int16_t x, const uint16_t *tab) {
    const int32_t v = (int32_t)x * 3;
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

/* One int8 FC row requantized into int16: clamp16(mbqm(bias + sum(x[d] * w[d]))). The bias
 * already holds -zero_point * sum(w) (and the gate bias for the input FC). */
static inline int32_t ec_fc_row16(const int8_t *x, const int8_t *w, int n, int32_t bias,
                                  int32_t mult, int shift) {
    int32_t acc = bias;
    int d;
    for (d = 0; d < n; ++d) {
        acc += (int32_t)x[d] * (int32_t)w[d];
    }
    return ec_clamp(ec_mbqm(acc, mult, shift), -32768, 32767);
}

/* A gate's pre-activation (Q3.12): sat16(FC(x) + FC(h)); h == 0 means the reset hidden state,
 * whose recurrent FC is exactly 0. */
static inline int16_t ec_lstm_gate(const int8_t *x, const int8_t *wx, int nx, int32_t bx,
                                   int32_t mx, int sx, const int8_t *h, const int8_t *wh, int nh,
                                   int32_t bh, int32_t mh, int sh) {
    int32_t acc = ec_fc_row16(x, wx, nx, bx, mx, sx);
    if (h != 0) {
        acc += ec_fc_row16(h, wh, nh, bh, mh, sh);
    }
    return ec_sat16(acc);
}

/* MulElementwise: clamp(zp + mbqm(a * b)). */
static inline int32_t ec_mul16(int16_t a, int16_t b, int32_t mult, int shift, int32_t zp,
                               int32_t lo, int32_t hi) {
    return ec_clamp(zp + ec_mbqm((int32_t)a * (int32_t)b, mult, shift), lo, hi);
}

#endif /* EDGECC_LSTM_H */
