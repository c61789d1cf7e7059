/* edgecc Helium (MVE) kernel: int8 FULLY_CONNECTED (conventions: mve/common.h). */
#ifndef EDGECC_MVE_FULLY_CONNECTED_H
#define EDGECC_MVE_FULLY_CONNECTED_H
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include "common.h"

/* FULLY_CONNECTED: per-tensor constants (rq: one record) or per-channel (_pc: one per 4 units).
 * A row whose last 16-byte chunk would read past it is copied: rows of at most 64 inputs (held
 * in registers anyway) through 64 bytes of stack, longer ones into scratch (kp bytes); no
 * scratch (NULL) otherwise. */
typedef struct {
    int32_t batches, depth, kp, units, lo, hi;
} ec_mve_fc_geom;

/* The rows of both FULLY_CONNECTED kernels; per_channel (a constant at each call site): rq holds
 * every 4 units' own record, else one record for all. */
EC_MVE_INLINE void ec_mve_fully_connected_rows(const ec_mve_fc_geom *g, const int8_t *x, int8_t *y,
                                               const int8_t *w, const int32_t *bias,
                                               const int32_t *rq, int per_channel,
                                               uint8_t *scratch, int onnx) {
    const int32x4_t lo = vdupq_n_s32(g->lo), hi = vdupq_n_s32(g->hi);
    int32_t b;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + b * g->depth;
        int8_t row[64];
        if (g->depth != g->kp) { /* the row's last chunk would read past it: copy it */
            int8_t *d = g->kp <= 64 ? row : (int8_t *)scratch;
            memcpy(d, xb, (size_t)g->depth);
            xb = d;
        }
        ec_mve_row_any(xb, g->kp, w, bias, rq, per_channel, g->units, lo, hi, y + b * g->units,
                       onnx);
    }
}

EC_MVE_SHARED void ec_mve_fully_connected_4u_s8(const ec_mve_fc_geom *g, const int8_t *x, int8_t *y,
                             const int8_t *w, const int32_t *bias, const int32_t *rq,
                             uint8_t *scratch) {
    ec_mve_fully_connected_rows(g, x, y, w, bias, rq, 0, scratch, 0);
}

/* FULLY_CONNECTED with per-channel weights (one scale per unit): the same passes, rq holding
 * every 4 units' own record [m x4][N x4][-e x4] (the convolutions' per-channel epilogue). */
EC_MVE_SHARED void ec_mve_fully_connected_4u_pc_s8(const ec_mve_fc_geom *g, const int8_t *x,
                                                   int8_t *y, const int8_t *w,
                                                   const int32_t *bias, const int32_t *rq,
                                                   uint8_t *scratch) {
    ec_mve_fully_connected_rows(g, x, y, w, bias, rq, 1, scratch, 0);
}

#if (__ARM_FEATURE_MVE & 2)
/* ONNX numerics: every 4 units' own record [scale bits x4][zp x4][0 x4] (ec_mve_rq4_onnx). */
EC_MVE_SHARED void ec_mve_fully_connected_4u_pc_onnx_s8(const ec_mve_fc_geom *g, const int8_t *x,
                                                     int8_t *y, const int8_t *w,
                                                     const int32_t *bias, const int32_t *rq,
                                                     uint8_t *scratch) {
    ec_mve_fully_connected_rows(g, x, y, w, bias, rq, 1, scratch, 1);
}
#endif

#endif /* __ARM_FEATURE_MVE */
#endif /* EDGECC_MVE_FULLY_CONNECTED_H */
