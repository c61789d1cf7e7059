/* edgecc typed I/O: the element type codes of NAME_INPUTi_DTYPE / NAME_OUTPUTi_DTYPE and the
 * arithmetic of the generated name_inputI_quantize / name_outputI_dequantize helpers.
 *
 * The C twin of edgecc/numerics/io.py (the same values bit for bit): q = round(x / scale) +
 * zero_point saturated to the type's range, the division in float32 as both references do it;
 * TFLite's QUANTIZE rounds half away from zero, ONNX's QuantizeLinear half to even; NaN (which
 * both leave undefined) gives the zero point. Build without -ffast-math (it may turn the division
 * into a multiplication by the reciprocal, which rounds differently). No libc beyond <stdint.h>.
 */
#ifndef EDGECC_IO_H
#define EDGECC_IO_H
#include <stdint.h>

#define EDGECC_INT8 1
#define EDGECC_UINT8 2
#define EDGECC_INT16 3
#define EDGECC_INT32 4
#define EDGECC_FLOAT32 5
#define EDGECC_INT64 6
#define EDGECC_BOOL 7
#define EDGECC_UINT16 8
#define EDGECC_UINT32 9
#define EDGECC_UINT64 10
#define EDGECC_FLOAT64 11

/* round(x / scale) + zero_point in [qmin, qmax] (an 8- or 16-bit type's range); half_even 0:
 * ties away from zero (TFLite), 1: ties to even (ONNX). */
static inline int32_t ec_io_quantize(float x, float scale, int32_t zero_point, int32_t qmin,
                                     int32_t qmax, int half_even) {
    const float r = x / scale;
    int32_t i, q;
    float frac;
    if (r != r) return zero_point;
    /* beyond the range after rounding: saturate before any conversion to int (also +-inf) */
    if (r <= (float)qmin - (float)zero_point - 1.0f) return qmin;
    if (r >= (float)qmax - (float)zero_point + 1.0f) return qmax;
    i = (int32_t)r;        /* toward zero; |r| < 2^17 here, so r - i is exact */
    frac = r - (float)i;
    if (frac > 0.5f || (frac == 0.5f && (!half_even || (i & 1)))) ++i;
    else if (frac < -0.5f || (frac == -0.5f && (!half_even || (i & 1)))) --i;
    q = i + zero_point;
    return q < qmin ? qmin : (q > qmax ? qmax : q);
}

/* scale x (q - zero_point) for 8- and 16-bit q: q - zero_point converts to float exactly, so
 * this is one float32 rounding of the exact product (TFLite's double product cast to float gives
 * the same, and onnxruntime computes it so). */
static inline float ec_io_dequantize(int32_t q, float scale, int32_t zero_point) {
    return (float)(q - zero_point) * scale;
}

/* The same for int32 q, whose difference may not fit a float: TFLite's double product, then one
 * rounding to float. */
static inline float ec_io_dequantize_wide(int32_t q, float scale, int32_t zero_point) {
    return (float)((double)scale * (double)((int64_t)q - zero_point));
}

#endif /* EDGECC_IO_H */
