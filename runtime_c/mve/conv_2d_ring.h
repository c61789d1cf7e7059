/* edgecc Helium (MVE) kernel: int8 CONV_2D, 3x3 filters at stride 1 with in_c a multiple of 16
 * (conventions: mve/common.h).
 *
 * The input rows a row of outputs needs are copied into a ring of 3 rows padded with the input
 * zero point on both sides (pw columns: every output's window lies inside a ring row, so no
 * pixel is a border pixel). A block is 4 output pixels of one row x 2 output channels: 8 sums
 * in the 8 even registers VMLADAVA accumulates into. Per filter row and 16-input chunk the block
 * loads the 6 weight vectors (3 taps x 2 channels) once and walks the 6 input vectors of its
 * row segment: pixel p's tap t is the segment's vector p + t, so each input vector feeds up to
 * 3 taps x 2 channels. 12 loads per 24 VMLADAVAs (the blocks of 2 channels x 3 pixels with
 * copied fields: 15 per 18). The 4 pixels of a channel are then requantized as one vector with
 * that channel's scalar record [bias, m, N, -e] (mve/conv_2d.h's ec_mve_rq_ch) and scattered.
 * Weights [channel pair][filter row][chunk][tap][channel of the pair][16].
 */
#ifndef EDGECC_MVE_CONV_2D_RING_H
#define EDGECC_MVE_CONV_2D_RING_H
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include "conv_2d.h"

/* pw: the ring rows' width in pixels (>= out_w rounded up to 4, plus 2; >= pad_l + in_w). */
typedef struct {
    int32_t batches, in_h, in_w, in_c, out_h, out_w, out_c, pad_t, pad_l, pw, pad_val, lo, hi;
} ec_mve_conv_ring_geom;

/* Input row iy (or the zero point, outside the input) into its ring row's columns
 * [pad_l, pad_l + in_w); the columns around it keep the zero point the ring was filled with. */
EC_MVE_INLINE void ec_mve_ring_load(const ec_mve_conv_ring_geom *g, const int8_t *xb, int32_t iy,
                                    int8_t *row) {
    const int32_t n = g->in_w * g->in_c;
    int8_t *d = row + g->pad_l * g->in_c;
    int32_t i;
    if (iy < 0 || iy >= g->in_h) {
        const int8x16_t zp = vdupq_n_s8((int8_t)g->pad_val);
        for (i = 0; i < n; i += 16) vst1q_s8(d + i, zp);
        return;
    }
    xb += iy * n;
    for (i = 0; i < n; i += 32) { /* (n: a multiple of 16) */
        const int8x16_t a = vld1q_s8(xb + i);
        if (i + 16 < n) vst1q_s8(d + i + 16, vld1q_s8(xb + i + 16));
        vst1q_s8(d + i, a);
    }
}

/* The sums of a block: a<pixel><channel>. */
#define EC_MVE_RING_ACCS a00, a01, a10, a11, a20, a21, a30, a31

#if defined(__OPTIMIZE__) && !defined(__clang__)
/* One filter row's chunk K (of Q per tap) in assembly: the 6 weight vectors (post-incremented
 * w), then the 6 input vectors of the row segment at x (pixel p's tap t: vector p + t, chunk K
 * of it at byte 16 * ((p + t) * Q + K)). op0: the first product of each sum (VMLAV starts it,
 * VMLAVA adds to it). */
#define EC_MVE_RING_X(J, Q, K) "vldrw.u32 %q[v], [%[x], #(16*(" J "*" Q "+" K "))]\n\t"
#define EC_MVE_RING_MAC(op, acc, wv) op " %[" acc "], %q[v], %q[" wv "]\n\t"
#define EC_MVE_RING_GROUP(op0, Q, K) \
    "vldrw.u32 %q[w0], [%[w]], #16\n\t" "vldrw.u32 %q[w1], [%[w]], #16\n\t" \
    "vldrw.u32 %q[w2], [%[w]], #16\n\t" "vldrw.u32 %q[w3], [%[w]], #16\n\t" \
    "vldrw.u32 %q[w4], [%[w]], #16\n\t" "vldrw.u32 %q[w5], [%[w]], #16\n\t" \
    EC_MVE_RING_X("0", Q, K) \
    EC_MVE_RING_MAC(op0, "a00", "w0") EC_MVE_RING_MAC(op0, "a01", "w1") \
    EC_MVE_RING_X("1", Q, K) \
    EC_MVE_RING_MAC(op0, "a10", "w0") EC_MVE_RING_MAC(op0, "a11", "w1") \
    EC_MVE_RING_MAC("vmlava.s8", "a00", "w2") EC_MVE_RING_MAC("vmlava.s8", "a01", "w3") \
    EC_MVE_RING_X("2", Q, K) \
    EC_MVE_RING_MAC(op0, "a20", "w0") EC_MVE_RING_MAC(op0, "a21", "w1") \
    EC_MVE_RING_MAC("vmlava.s8", "a10", "w2") EC_MVE_RING_MAC("vmlava.s8", "a11", "w3") \
    EC_MVE_RING_MAC("vmlava.s8", "a00", "w4") EC_MVE_RING_MAC("vmlava.s8", "a01", "w5") \
    EC_MVE_RING_X("3", Q, K) \
    EC_MVE_RING_MAC(op0, "a30", "w0") EC_MVE_RING_MAC(op0, "a31", "w1") \
    EC_MVE_RING_MAC("vmlava.s8", "a20", "w2") EC_MVE_RING_MAC("vmlava.s8", "a21", "w3") \
    EC_MVE_RING_MAC("vmlava.s8", "a10", "w4") EC_MVE_RING_MAC("vmlava.s8", "a11", "w5") \
    EC_MVE_RING_X("4", Q, K) \
    EC_MVE_RING_MAC("vmlava.s8", "a30", "w2") EC_MVE_RING_MAC("vmlava.s8", "a31", "w3") \
    EC_MVE_RING_MAC("vmlava.s8", "a20", "w4") EC_MVE_RING_MAC("vmlava.s8", "a21", "w5") \
    EC_MVE_RING_X("5", Q, K) \
    EC_MVE_RING_MAC("vmlava.s8", "a30", "w4") EC_MVE_RING_MAC("vmlava.s8", "a31", "w5")
#define EC_MVE_RING_VMLA "vmlava.s8"
/* the chunks of one filter row: Q = 1..5 (immediate offsets end at 508) */
#define EC_MVE_RING_CHUNKS1(op0) EC_MVE_RING_GROUP(op0, "1", "0")
#define EC_MVE_RING_CHUNKS2(op0) EC_MVE_RING_GROUP(op0, "2", "0") \
    EC_MVE_RING_GROUP(EC_MVE_RING_VMLA, "2", "1")
#define EC_MVE_RING_CHUNKS3(op0) EC_MVE_RING_GROUP(op0, "3", "0") \
    EC_MVE_RING_GROUP(EC_MVE_RING_VMLA, "3", "1") EC_MVE_RING_GROUP(EC_MVE_RING_VMLA, "3", "2")
#define EC_MVE_RING_CHUNKS4(op0) EC_MVE_RING_GROUP(op0, "4", "0") \
    EC_MVE_RING_GROUP(EC_MVE_RING_VMLA, "4", "1") EC_MVE_RING_GROUP(EC_MVE_RING_VMLA, "4", "2") \
    EC_MVE_RING_GROUP(EC_MVE_RING_VMLA, "4", "3")
#define EC_MVE_RING_CHUNKS5(op0) EC_MVE_RING_GROUP(op0, "5", "0") \
    EC_MVE_RING_GROUP(EC_MVE_RING_VMLA, "5", "1") EC_MVE_RING_GROUP(EC_MVE_RING_VMLA, "5", "2") \
    EC_MVE_RING_GROUP(EC_MVE_RING_VMLA, "5", "3") EC_MVE_RING_GROUP(EC_MVE_RING_VMLA, "5", "4")
#define EC_MVE_RING_VREGS \
    [w0] "=&w"(w0_), [w1] "=&w"(w1_), [w2] "=&w"(w2_), [w3] "=&w"(w3_), [w4] "=&w"(w4_), \
    [w5] "=&w"(w5_), [v] "=&w"(v_)
/* A block's 3 filter rows (x0, x1, x2: its segment in each ring row; w advances past the
 * block's weights); the first row starts the sums. "Te": an even register, as VMLAVA needs. */
#define EC_MVE_RING_ROWS(chunks, xa, xb, xc, wp) do { \
        int8x16_t w0_, w1_, w2_, w3_, w4_, w5_, v_; \
        __asm__(chunks("vmlav.s8") \
                : [a00] "=&Te"(a00), [a01] "=&Te"(a01), [a10] "=&Te"(a10), [a11] "=&Te"(a11), \
                  [a20] "=&Te"(a20), [a21] "=&Te"(a21), [a30] "=&Te"(a30), [a31] "=&Te"(a31), \
                  EC_MVE_RING_VREGS, [w] "+&r"(wp) \
                : [x] "r"(xa) : "memory"); \
        __asm__(chunks(EC_MVE_RING_VMLA) \
                : [a00] "+Te"(a00), [a01] "+Te"(a01), [a10] "+Te"(a10), [a11] "+Te"(a11), \
                  [a20] "+Te"(a20), [a21] "+Te"(a21), [a30] "+Te"(a30), [a31] "+Te"(a31), \
                  EC_MVE_RING_VREGS, [w] "+&r"(wp) \
                : [x] "r"(xb) : "memory"); \
        __asm__(chunks(EC_MVE_RING_VMLA) \
                : [a00] "+Te"(a00), [a01] "+Te"(a01), [a10] "+Te"(a10), [a11] "+Te"(a11), \
                  [a20] "+Te"(a20), [a21] "+Te"(a21), [a30] "+Te"(a30), [a31] "+Te"(a31), \
                  EC_MVE_RING_VREGS, [w] "+&r"(wp) \
                : [x] "r"(xc) : "memory"); \
    } while (0)
#define EC_MVE_RING_CALL(q, x0, x1, x2, w) EC_MVE_RING_ROWS(EC_MVE_RING_CHUNKS##q, x0, x1, x2, w)

/* One channel's 4 sums (lanes: pixels) requantized with its record r ([bias, m, N, -e]) over
 * the whole int8 range and stored to y + yoff (the 4 pixels' bytes). */
#define EC_MVE_RING_RQ(s0, s1, s2, s3, r, y, yoff) do { \
        int32x4_t qt_, qx_; \
        int32_t t0_, t1_, t2_, t3_; \
        __asm__ volatile("vmov %q[t][2], %q[t][0], %[v0], %[v2]\n\t" \
                         "vmov %q[t][3], %q[t][1], %[v1], %[v3]\n\t" \
                         "ldrd %[r0], %[r1], [%[rp]]\n\t" \
                         "ldrd %[r2], %[r3], [%[rp], #8]\n\t" \
                         "vadd.i32 %q[t], %q[t], %[r0]\n\t" \
                         EC_MVE_RQ3_TFLITE \
                         "vqshl.s32 %q[x], %q[x], #24\n\t" \
                         "vshr.s32 %q[x], %q[x], #24\n\t" \
                         "vstrb.32 %q[x], [%[yo], %q[off]]\n\t" \
                         : [t] "=&w"(qt_), [x] "=&w"(qx_), [r0] "=&r"(t0_), [r1] "=&r"(t1_), \
                           [r2] "=&r"(t2_), [r3] "=&r"(t3_) \
                         : [v0] "r"(s0), [v1] "r"(s1), [v2] "r"(s2), [v3] "r"(s3), \
                           [rp] "r"(r), [yo] "r"(y), [off] "w"(yoff) \
                         : "memory"); \
    } while (0)
#else
/* Unoptimized builds (and clang): the same sums in intrinsics (the assembly names more
 * registers than -O0 frees). */
EC_MVE_INLINE int8x16_t ec_mve_ring_ld(const int8_t *p) {
    return vreinterpretq_s8_s32(vldrwq_s32((const int32_t *)(const void *)p));
}
#define EC_MVE_RING_CALL(q, x0, x1, x2, w) do { \
        const int8_t *rows_[3]; \
        int32_t r_, k_, t_; \
        rows_[0] = (x0); rows_[1] = (x1); rows_[2] = (x2); \
        a00 = a01 = a10 = a11 = a20 = a21 = a30 = a31 = 0; \
        for (r_ = 0; r_ < 3; ++r_) { \
            for (k_ = 0; k_ < (q); ++k_) { \
                for (t_ = 0; t_ < 3; ++t_, w += 32) { \
                    const int8x16_t u_ = ec_mve_ring_ld(w), z_ = ec_mve_ring_ld(w + 16); \
                    const int8_t *s_ = rows_[r_] + 16 * (t_ * (q) + k_); \
                    int8x16_t v_ = ec_mve_ring_ld(s_); \
                    a00 = vmladavaq_s8(a00, v_, u_); a01 = vmladavaq_s8(a01, v_, z_); \
                    v_ = ec_mve_ring_ld(s_ + 16 * (q)); \
                    a10 = vmladavaq_s8(a10, v_, u_); a11 = vmladavaq_s8(a11, v_, z_); \
                    v_ = ec_mve_ring_ld(s_ + 32 * (q)); \
                    a20 = vmladavaq_s8(a20, v_, u_); a21 = vmladavaq_s8(a21, v_, z_); \
                    v_ = ec_mve_ring_ld(s_ + 48 * (q)); \
                    a30 = vmladavaq_s8(a30, v_, u_); a31 = vmladavaq_s8(a31, v_, z_); \
                } \
            } \
        } \
    } while (0)
/* (the assembly epilogue's C equivalent) */
#define EC_MVE_RING_RQ(s0, s1, s2, s3, r, y, yoff) \
    ec_mve_ring_store(y, yoff, ec_mve_vec4(s0, s1, s2, s3), r, 1, lo, hi, 4)
#endif

/* The blocks of one output row (rows: the ring rows of its 3 filter rows). full: the epilogue
 * (mve/conv_2d.h ec_mve_rq_ch: 0 clamp, 1 int8 range, 2/3 ONNX numerics). */
#define EC_MVE_RING_OUT_ROW(q, rows, y, w, rq, full) do { \
        int32_t ox_, oc_; \
        for (ox_ = 0; ox_ < g->out_w; ox_ += 4) { \
            const int32_t np_ = g->out_w - ox_ < 4 ? g->out_w - ox_ : 4; \
            const int8_t *x0_ = rows[0] + ox_ * c, *x1_ = rows[1] + ox_ * c; \
            const int8_t *x2_ = rows[2] + ox_ * c, *wp_ = (w); \
            const int32_t *r_ = (rq); \
            int8_t *yp_ = (y) + ox_ * g->out_c; \
            for (oc_ = 0; oc_ < g->out_c; oc_ += 2, r_ += 8, yp_ += 2) { \
                int32_t EC_MVE_RING_ACCS; \
                EC_MVE_RING_CALL(q, x0_, x1_, x2_, wp_); \
                if ((full) == 1 && np_ == 4 && oc_ + 1 < g->out_c) { \
                    EC_MVE_RING_RQ(a00, a10, a20, a30, r_, yp_, yoff); \
                    EC_MVE_RING_RQ(a01, a11, a21, a31, r_ + 4, yp_ + 1, yoff); \
                    continue; \
                } \
                ec_mve_ring_store(yp_, yoff, ec_mve_vec4(a00, a10, a20, a30), r_, (full), lo, \
                                  hi, np_); \
                if (oc_ + 1 < g->out_c) { \
                    ec_mve_ring_store(yp_ + 1, yoff, ec_mve_vec4(a01, a11, a21, a31), r_ + 4, \
                                      (full), lo, hi, np_); \
                } \
            } \
        } \
    } while (0)

/* The np (< 4, or any epilogue) pixels' requantized sums of one channel, scattered. */
EC_MVE_INLINE void ec_mve_ring_store(int8_t *y, uint32x4_t yoff, int32x4_t acc, const int32_t *r,
                                     int full, int32x4_t lo, int32x4_t hi, int32_t np) {
    vstrbq_scatter_offset_p_s32(y, yoff, ec_mve_rq_ch(acc, r, full, lo, hi),
                                vctp32q((uint32_t)np));
}

/* scratch: 3 * pw * in_c bytes (the ring). Writes whole output rows in order; output row oy is
 * written after the last input row its windows read was copied into the ring, so each pass
 * reads all its input first (Kernel.streams = (1, 0, 1)). */
#define EC_MVE_RING_FN(q) \
    EC_MVE_INLINE void ec_mve_conv_ring##q##_run(const ec_mve_conv_ring_geom *g, const int8_t *x, \
                                                 int8_t *y, const int8_t *w, const int32_t *rq, \
                                                 int8_t *ring, int full) { \
        const int32_t c = g->in_c, rowb = g->pw * c, plane = g->in_h * g->in_w * c; \
        const int32x4_t lo = vdupq_n_s32(g->lo), hi = vdupq_n_s32(g->hi); \
        const uint32x4_t yoff = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)g->out_c); \
        const int8x16_t zp = vdupq_n_s8((int8_t)g->pad_val); \
        int32_t b, oy, i; \
        for (i = 0; i < 3 * rowb; i += 16) vst1q_s8(ring + i, zp); \
        for (b = 0; b < g->batches; ++b) { \
            const int8_t *xb = x + b * plane; \
            ec_mve_ring_load(g, xb, -g->pad_t, ring); \
            ec_mve_ring_load(g, xb, 1 - g->pad_t, ring + rowb); \
            for (oy = 0; oy < g->out_h; ++oy, y += g->out_w * g->out_c) { \
                const int8_t *rows[3]; \
                ec_mve_ring_load(g, xb, oy + 2 - g->pad_t, ring + (oy + 2) % 3 * rowb); \
                rows[0] = ring + oy % 3 * rowb; \
                rows[1] = ring + (oy + 1) % 3 * rowb; \
                rows[2] = ring + (oy + 2) % 3 * rowb; \
                if (full == 1) EC_MVE_RING_OUT_ROW(q, rows, y, w, rq, 1); \
                else EC_MVE_RING_OUT_ROW(q, rows, y, w, rq, full); \
            } \
        } \
    } \
    EC_MVE_SHARED void ec_mve_conv_2d_ring##q##_s8(const ec_mve_conv_ring_geom *g, \
                                                    const int8_t *x, int8_t *y, const int8_t *w, \
                                                    const int32_t *rq, uint8_t *scratch) { \
        ec_mve_conv_ring##q##_run(g, x, y, w, rq, (int8_t *)scratch, \
                                  g->lo == -128 && g->hi == 127 ? 1 : 0); \
    } \
    EC_MVE_RING_ONNX_FN(q)

#if (__ARM_FEATURE_MVE & 2)
/* ONNX numerics: per channel [bias, scale bits, zp, 0] (ec_mve_rq_ch). */
#define EC_MVE_RING_ONNX_FN(q) \
    EC_MVE_SHARED void ec_mve_conv_2d_ring##q##_onnx_s8(const ec_mve_conv_ring_geom *g, \
                                                         const int8_t *x, int8_t *y, \
                                                         const int8_t *w, const int32_t *rq, \
                                                         uint8_t *scratch) { \
        ec_mve_conv_ring##q##_run(g, x, y, w, rq, (int8_t *)scratch, \
                                  g->lo == -128 && g->hi == 127 ? 3 : 2); \
    }
#else
#define EC_MVE_RING_ONNX_FN(q)
#endif

/* in_c = 16 * q: q = 1..5 */
EC_MVE_RING_FN(1)
EC_MVE_RING_FN(2)
EC_MVE_RING_FN(3)
EC_MVE_RING_FN(4)
EC_MVE_RING_FN(5)

#endif /* __ARM_FEATURE_MVE */
#endif /* EDGECC_MVE_CONV_2D_RING_H */
