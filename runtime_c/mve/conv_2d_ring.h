/* edgecc Helium (MVE) kernel: int8 CONV_2D, 3x3 filters at stride 1 or 2 with in_c a multiple
 * of 16 (conventions: mve/common.h).
 *
 * The input rows a row of outputs needs are copied into a ring of 3 rows padded with the input
 * zero point on both sides (pw columns: every output's window lies inside a ring row, so no
 * pixel is a border pixel). A block is 4 output pixels of one row x 2 output channels: 8 sums
 * in the 8 even registers VMLADAVA accumulates into. Per filter row and 16-input chunk the block
 * loads the 6 weight vectors (3 taps x 2 channels) once and walks the input vectors of its
 * row segment: pixel p's tap t is the segment's vector s * p + t (s: the stride), so each input
 * vector feeds up to 3 taps x 2 channels. Stride 1: 12 loads per 24 VMLADAVAs; stride 2: 15
 * (the blocks of 2 channels x 3 pixels with copied fields: 15 per 18). The 4 pixels of a channel are then requantized as one vector with
 * that channel's scalar record [bias, m, N, -e] (mve/conv_2d.h's ec_mve_rq_ch) and scattered.
 * One stream per layer, 4-byte aligned (an int32 array): per channel pair its weights
 * [filter row][chunk][tap][channel of the pair][16], then the pair's 2 records (int32 x 8).
 */
#ifndef EDGECC_MVE_CONV_2D_RING_H
#define EDGECC_MVE_CONV_2D_RING_H
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include "conv_2d.h"

/* s: the stride (1 or 2); pw: the ring rows' width in pixels (the last block's windows:
 * s * (out_w rounded up to 4, - 1) + 3; and >= pad_l + in_w). */
typedef struct {
    int32_t batches, in_h, in_w, in_c, out_h, out_w, out_c, s, pad_t, pad_l, pw, pad_val, lo, hi;
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
    for (i = 0; i < n; i += 16) vst1q_s8(d + i, vld1q_s8(xb + i)); /* (n: a multiple of 16) */
}

/* The sums of a block: a<pixel><channel>. */
#define EC_MVE_RING_ACCS a00, a01, a10, a11, a20, a21, a30, a31

#if defined(__OPTIMIZE__) && !defined(__clang__)
/* One filter row's chunk K (of Q per tap) in assembly: the 6 weight vectors (post-incremented
 * w), then the input vectors of the row segment at XR (vector j, chunk K at byte
 * 16 * (j * Q + K)) against the taps they are: G1 at stride 1 (pixel p's tap t: j = p + t),
 * G2 at stride 2 (j = 2p + t). op0: the first product of each sum (VMLAV starts it, VMLAVA
 * adds to it). */
#define EC_MVE_RING_X(J, Q, K, XR) "vldrw.u32 %q[v], [%[" XR "], #(16*(" J "*" Q "+" K "))]\n\t"
#define EC_MVE_RING_MAC(op, p, t) \
    op " %[a" p "0], %q[v], %q[w" t "0]\n\t" op " %[a" p "1], %q[v], %q[w" t "1]\n\t"
#define EC_MVE_RING_W \
    "vldrb.u8 %q[w00], [%[w]], #16\n\t" "vldrb.u8 %q[w01], [%[w]], #16\n\t" \
    "vldrb.u8 %q[w10], [%[w]], #16\n\t" "vldrb.u8 %q[w11], [%[w]], #16\n\t" \
    "vldrb.u8 %q[w20], [%[w]], #16\n\t" "vldrb.u8 %q[w21], [%[w]], #16\n\t"
#define EC_MVE_RING_ADD "vmlava.s8"
#define EC_MVE_RING_G1(op0, Q, K, XR) EC_MVE_RING_W \
    EC_MVE_RING_X("0", Q, K, XR) EC_MVE_RING_MAC(op0, "0", "0") \
    EC_MVE_RING_X("1", Q, K, XR) EC_MVE_RING_MAC(op0, "1", "0") EC_MVE_RING_MAC(EC_MVE_RING_ADD, "0", "1") \
    EC_MVE_RING_X("2", Q, K, XR) EC_MVE_RING_MAC(op0, "2", "0") EC_MVE_RING_MAC(EC_MVE_RING_ADD, "1", "1") \
    EC_MVE_RING_MAC(EC_MVE_RING_ADD, "0", "2") \
    EC_MVE_RING_X("3", Q, K, XR) EC_MVE_RING_MAC(op0, "3", "0") EC_MVE_RING_MAC(EC_MVE_RING_ADD, "2", "1") \
    EC_MVE_RING_MAC(EC_MVE_RING_ADD, "1", "2") \
    EC_MVE_RING_X("4", Q, K, XR) EC_MVE_RING_MAC(EC_MVE_RING_ADD, "3", "1") \
    EC_MVE_RING_MAC(EC_MVE_RING_ADD, "2", "2") \
    EC_MVE_RING_X("5", Q, K, XR) EC_MVE_RING_MAC(EC_MVE_RING_ADD, "3", "2")
#define EC_MVE_RING_G2(op0, Q, K, XR) EC_MVE_RING_W \
    EC_MVE_RING_X("0", Q, K, XR) EC_MVE_RING_MAC(op0, "0", "0") \
    EC_MVE_RING_X("1", Q, K, XR) EC_MVE_RING_MAC(EC_MVE_RING_ADD, "0", "1") \
    EC_MVE_RING_X("2", Q, K, XR) EC_MVE_RING_MAC(EC_MVE_RING_ADD, "0", "2") EC_MVE_RING_MAC(op0, "1", "0") \
    EC_MVE_RING_X("3", Q, K, XR) EC_MVE_RING_MAC(EC_MVE_RING_ADD, "1", "1") \
    EC_MVE_RING_X("4", Q, K, XR) EC_MVE_RING_MAC(EC_MVE_RING_ADD, "1", "2") EC_MVE_RING_MAC(op0, "2", "0") \
    EC_MVE_RING_X("5", Q, K, XR) EC_MVE_RING_MAC(EC_MVE_RING_ADD, "2", "1") \
    EC_MVE_RING_X("6", Q, K, XR) EC_MVE_RING_MAC(EC_MVE_RING_ADD, "2", "2") EC_MVE_RING_MAC(op0, "3", "0") \
    EC_MVE_RING_X("7", Q, K, XR) EC_MVE_RING_MAC(EC_MVE_RING_ADD, "3", "1") \
    EC_MVE_RING_X("8", Q, K, XR) EC_MVE_RING_MAC(EC_MVE_RING_ADD, "3", "2")
/* The chunks of one filter row, Q = 1..5 (immediate offsets end at 508: stride 2, Q <= 3). */
#define EC_MVE_RING_CHUNKS1(G, op0, XR) G(op0, "1", "0", XR)
#define EC_MVE_RING_CHUNKS2(G, op0, XR) G(op0, "2", "0", XR) G(EC_MVE_RING_ADD, "2", "1", XR)
#define EC_MVE_RING_CHUNKS3(G, op0, XR) G(op0, "3", "0", XR) G(EC_MVE_RING_ADD, "3", "1", XR) \
    G(EC_MVE_RING_ADD, "3", "2", XR)
#define EC_MVE_RING_CHUNKS4(G, op0, XR) G(op0, "4", "0", XR) G(EC_MVE_RING_ADD, "4", "1", XR) \
    G(EC_MVE_RING_ADD, "4", "2", XR) G(EC_MVE_RING_ADD, "4", "3", XR)
#define EC_MVE_RING_CHUNKS5(G, op0, XR) G(op0, "5", "0", XR) G(EC_MVE_RING_ADD, "5", "1", XR) \
    G(EC_MVE_RING_ADD, "5", "2", XR) G(EC_MVE_RING_ADD, "5", "3", XR) \
    G(EC_MVE_RING_ADD, "5", "4", XR)
/* One filter row of a block against one channel pair (x: its segment in a ring row; w
 * advances past the row's weights). */
#define EC_MVE_RING_ROW(q, G, op0) EC_MVE_RING_CHUNKS##q(G, op0, "x")
/* The sums ("Te": even registers, as VMLAVA needs; io: "=&" starts them, "+" adds), the 7
 * vector registers, the weights: 10 general registers a statement (-O2 with a frame pointer
 * cannot free 12). */
#define EC_MVE_RING_OPS(io) \
    [a00] io(a00), [a01] io(a01), [a10] io(a10), [a11] io(a11), [a20] io(a20), \
    [a21] io(a21), [a30] io(a30), [a31] io(a31), [w00] "=&w"(w00_), [w01] "=&w"(w01_), \
    [w10] "=&w"(w10_), [w11] "=&w"(w11_), [w20] "=&w"(w20_), [w21] "=&w"(w21_), [v] "=&w"(v_)
/* A block's 3 filter rows (xa, xb, xc: its segments; the first row starts the sums). */
#define EC_MVE_RING_CALL(q, G, xa, xb, xc, wp) do { \
        int8x16_t w00_, w01_, w10_, w11_, w20_, w21_, v_; \
        __asm__(EC_MVE_RING_ROW(q, G, "vmlav.s8") \
                : EC_MVE_RING_OPS("=&Te"), [w] "+&r"(wp) : [x] "r"(xa) : "memory"); \
        __asm__(EC_MVE_RING_ROW(q, G, EC_MVE_RING_ADD) \
                : EC_MVE_RING_OPS("+Te"), [w] "+&r"(wp) : [x] "r"(xb) : "memory"); \
        __asm__(EC_MVE_RING_ROW(q, G, EC_MVE_RING_ADD) \
                : EC_MVE_RING_OPS("+Te"), [w] "+&r"(wp) : [x] "r"(xc) : "memory"); \
    } while (0)

/* Channel c's 4 sums (lanes: pixels) requantized with its record ([bias, m, N, -e], next in
 * the weight stream, loaded into the sums' own registers) over the whole int8 range into X
 * (v: the input vector's register, free after the products). */
#define EC_MVE_RING_EPI(c, X) \
    "vmov %q[v][2], %q[v][0], %[a0" c "], %[a2" c "]\n\t" \
    "vmov %q[v][3], %q[v][1], %[a1" c "], %[a3" c "]\n\t" \
    "ldrd %[a0" c "], %[a1" c "], [%[w]], #8\n\t" \
    "ldrd %[a2" c "], %[a3" c "], [%[w]], #8\n\t" \
    "vadd.i32 %q[v], %q[v], %[a0" c "]\n\t" \
    "vqrdmulh.s32 %q[" X "], %q[v], %[a1" c "]\n\t" \
    "vshr.s32 %q[v], %q[v], #31\n\t" \
    "vadd.i32 %q[" X "], %q[" X "], %q[v]\n\t" \
    "vadd.i32 %q[" X "], %q[" X "], %[a2" c "]\n\t" \
    "vshl.s32 %q[" X "], %[a3" c "]\n\t" \
    "vqshl.s32 %q[" X "], %q[" X "], #24\n\t" \
    "vshr.s32 %q[" X "], %q[" X "], #24\n\t"
/* Whole blocks over the whole int8 range, an even channel count: every channel pair of the
 * block in one assembler loop of 10 general registers: the 8 sums, the weight stream w, and
 * one row pointer loaded from memory (xs) before each filter row. The output is addressed
 * from w: off = the 4 pixels' offsets + (y - w), stepped by 2 - (a pair's bytes) each pair;
 * the stream's end is read from memory into a free sum register. */
#define EC_MVE_RING_PAIRS_ASM(q, G) \
    "1:\n\t" \
    "ldr %[x], %[xs0]\n\t" EC_MVE_RING_ROW(q, G, "vmlav.s8") \
    "ldr %[x], %[xs1]\n\t" EC_MVE_RING_ROW(q, G, EC_MVE_RING_ADD) \
    "ldr %[x], %[xs2]\n\t" EC_MVE_RING_ROW(q, G, EC_MVE_RING_ADD) \
    EC_MVE_RING_EPI("0", "w01") EC_MVE_RING_EPI("1", "w11") \
    "vstrb.32 %q[w01], [%[w], %q[off]]\n\t" \
    "adds %[a00], %[w], #1\n\t" \
    "vstrb.32 %q[w11], [%[a00], %q[off]]\n\t" \
    "movw %[a00], #(288*" #q "+30)\n\t" \
    "vsub.i32 %q[off], %q[off], %[a00]\n\t" \
    "ldr %[a00], %[e]\n\t" \
    "cmp %[w], %[a00]\n\t" \
    "bne 1b\n\t"
#define EC_MVE_RING_PAIRS(q, G, xa, xb, xc, wp, yp, end) do { \
        int8x16_t w00_, w01_, w10_, w11_, w20_, w21_, v_; \
        int32_t EC_MVE_RING_ACCS; \
        const int8_t *xs_[3], *xr_; \
        uint32x4_t off_ = vaddq_n_u32(yoff, (uint32_t)((yp) - (wp)) - (288 * (q) + 32)); \
        xs_[0] = (xa); xs_[1] = (xb); xs_[2] = (xc); \
        __asm__ volatile(EC_MVE_RING_PAIRS_ASM(q, G) \
                         : EC_MVE_RING_OPS("=&Te"), [w] "+&r"(wp), \
                           [x] "=&r"(xr_), [off] "+&w"(off_) \
                         : [xs0] "m"(xs_[0]), [xs1] "m"(xs_[1]), [xs2] "m"(xs_[2]), \
                           [e] "m"(end) \
                         : "memory", "cc"); \
    } while (0)
#else
/* Unoptimized builds (and clang): the same sums in intrinsics (the assembly names more
 * registers than -O0 frees). */
EC_MVE_INLINE int8x16_t ec_mve_ring_ld(const int8_t *p) {
    return vreinterpretq_s8_s32(vldrwq_s32((const int32_t *)(const void *)p));
}
#define EC_MVE_RING_G1 1
#define EC_MVE_RING_G2 2
#define EC_MVE_RING_CALL(q, G, xa, xb, xc, wp) do { \
        const int8_t *rows_[3]; \
        int32_t r_, k_, t_; \
        rows_[0] = (xa); rows_[1] = (xb); rows_[2] = (xc); \
        a00 = a01 = a10 = a11 = a20 = a21 = a30 = a31 = 0; \
        for (r_ = 0; r_ < 3; ++r_) { \
            for (k_ = 0; k_ < (q); ++k_) { \
                for (t_ = 0; t_ < 3; ++t_, wp += 32) { \
                    const int8x16_t u_ = ec_mve_ring_ld(wp), z_ = ec_mve_ring_ld(wp + 16); \
                    const int8_t *s_ = rows_[r_] + 16 * (t_ * (q) + k_); \
                    int8x16_t v_ = ec_mve_ring_ld(s_); \
                    a00 = vmladavaq_s8(a00, v_, u_); a01 = vmladavaq_s8(a01, v_, z_); \
                    v_ = ec_mve_ring_ld(s_ + 16 * (G) * (q)); \
                    a10 = vmladavaq_s8(a10, v_, u_); a11 = vmladavaq_s8(a11, v_, z_); \
                    v_ = ec_mve_ring_ld(s_ + 32 * (G) * (q)); \
                    a20 = vmladavaq_s8(a20, v_, u_); a21 = vmladavaq_s8(a21, v_, z_); \
                    v_ = ec_mve_ring_ld(s_ + 48 * (G) * (q)); \
                    a30 = vmladavaq_s8(a30, v_, u_); a31 = vmladavaq_s8(a31, v_, z_); \
                } \
            } \
        } \
    } while (0)
/* (the assembly loop's C equivalent) */
#define EC_MVE_RING_PAIRS(q, G, xa, xb, xc, wp, yp, end) do { \
        int32_t EC_MVE_RING_ACCS; \
        while (wp != (end)) { \
            EC_MVE_RING_CALL(q, G, xa, xb, xc, wp); \
            ec_mve_ring_store(yp, yoff, ec_mve_vec4(a00, a10, a20, a30), \
                              (const int32_t *)(const void *)wp, 1, lo, hi, 4); \
            ec_mve_ring_store(yp + 1, yoff, ec_mve_vec4(a01, a11, a21, a31), \
                              (const int32_t *)(const void *)wp + 4, 1, lo, hi, 4); \
            wp += 32; \
            yp += 2; \
        } \
    } while (0)
#endif

/* The np (< 4, or any epilogue) pixels' requantized sums of one channel, scattered. */
EC_MVE_INLINE void ec_mve_ring_store(int8_t *y, uint32x4_t yoff, int32x4_t acc, const int32_t *r,
                                     int full, int32x4_t lo, int32x4_t hi, int32_t np) {
    vstrbq_scatter_offset_p_s32(y, yoff, ec_mve_rq_ch(acc, r, full, lo, hi),
                                vctp32q((uint32_t)np));
}

/* The blocks of one output row (rows: the ring rows of its 3 filter rows). full: the epilogue
 * (mve/conv_2d.h ec_mve_rq_ch: 0 clamp, 1 int8 range, 2/3 ONNX numerics). Whole blocks over
 * the whole int8 range of an even channel count: the assembly loop; any other block
 * requantizes in C and stores only its pixels and channels. */
#define EC_MVE_RING_OUT_ROW(q, G, rows, y, full) do { \
        int32_t ox_, oc_; \
        for (ox_ = 0; ox_ < out_w; ox_ += 4) { \
            const int32_t np_ = out_w - ox_ < 4 ? out_w - ox_ : 4; \
            const int8_t *x0_ = rows[0] + ox_ * xstep, *x1_ = rows[1] + ox_ * xstep; \
            const int8_t *x2_ = rows[2] + ox_ * xstep, *wp_ = w; \
            int8_t *yp_ = (y) + ox_ * out_c; \
            if ((full) == 1 && np_ == 4 && !(out_c & 1)) { \
                EC_MVE_RING_PAIRS(q, G, x0_, x1_, x2_, wp_, yp_, wend); \
                continue; \
            } \
            for (oc_ = 0; oc_ < out_c; oc_ += 2, yp_ += 2) { \
                const int32_t *r_; \
                int32_t EC_MVE_RING_ACCS; \
                EC_MVE_RING_CALL(q, G, x0_, x1_, x2_, wp_); \
                r_ = (const int32_t *)(const void *)wp_; \
                wp_ += 32; \
                ec_mve_ring_store(yp_, yoff, ec_mve_vec4(a00, a10, a20, a30), r_, (full), lo, \
                                  hi, np_); \
                if (oc_ + 1 < out_c) { \
                    ec_mve_ring_store(yp_ + 1, yoff, ec_mve_vec4(a01, a11, a21, a31), r_ + 4, \
                                      (full), lo, hi, np_); \
                } \
            } \
        } \
    } while (0)

/* scratch: 3 * pw * in_c bytes (the ring). Writes whole output rows in order; output row oy is
 * written after the last input row its windows read was copied into the ring, so each pass
 * reads all its input first (Kernel.streams = (1, 0, 1)). run: the body, entry / entry_onnx the
 * kernels with TFLite's / ONNX's epilogue: ec_mve_conv_2d_ring<q>_s8 (stride 1) or
 * ec_mve_conv_2d_ring<q>s2_s8. */
#define EC_MVE_RING_FN(run, entry, entry_onnx, q, G) \
    EC_MVE_INLINE void run(const ec_mve_conv_ring_geom *g, const int8_t *x, int8_t *y, \
                           const int8_t *w, int8_t *ring, int full) { \
        const int32_t c = g->in_c, rowb = g->pw * c, plane = g->in_h * g->in_w * c; \
        const int32_t out_w = g->out_w, out_c = g->out_c, xstep = g->s * c; \
        const int8_t *wend = w + (out_c + 1) / 2 * (9 * 32 * (q) + 32); /* (pair: weights, records) */ \
        const int32x4_t lo = vdupq_n_s32(g->lo), hi = vdupq_n_s32(g->hi); \
        const uint32x4_t yoff = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)out_c); \
        const int8x16_t zp = vdupq_n_s8((int8_t)g->pad_val); \
        int32_t b, oy, i; \
        for (i = 0; i < 3 * rowb; i += 16) vst1q_s8(ring + i, zp); \
        for (b = 0; b < g->batches; ++b) { \
            const int8_t *xb = x + b * plane; \
            int32_t next = 0; /* the next input row to copy, counted from -pad_t */ \
            for (oy = 0; oy < g->out_h; ++oy, y += out_w * out_c) { \
                const int32_t top = oy * g->s; \
                const int8_t *rows[3]; \
                for (; next <= top + 2; ++next) \
                    ec_mve_ring_load(g, xb, next - g->pad_t, ring + next % 3 * rowb); \
                rows[0] = ring + top % 3 * rowb; \
                rows[1] = ring + (top + 1) % 3 * rowb; \
                rows[2] = ring + (top + 2) % 3 * rowb; \
                if (full == 1) EC_MVE_RING_OUT_ROW(q, G, rows, y, 1); \
                else EC_MVE_RING_OUT_ROW(q, G, rows, y, full); \
            } \
        } \
    } \
    EC_MVE_SHARED void entry(const ec_mve_conv_ring_geom *g, const int8_t *x, int8_t *y, \
                             const int8_t *w, uint8_t *scratch) { \
        run(g, x, y, w, (int8_t *)scratch, g->lo == -128 && g->hi == 127 ? 1 : 0); \
    } \
    EC_MVE_RING_ONNX_FN(run, entry_onnx)

#if (__ARM_FEATURE_MVE & 2)
/* ONNX numerics: per channel [bias, scale bits, zp, 0] (ec_mve_rq_ch). */
#define EC_MVE_RING_ONNX_FN(run, entry_onnx) \
    EC_MVE_SHARED void entry_onnx(const ec_mve_conv_ring_geom *g, const int8_t *x, int8_t *y, \
                                  const int8_t *w, uint8_t *scratch) { \
        run(g, x, y, w, (int8_t *)scratch, g->lo == -128 && g->hi == 127 ? 3 : 2); \
    }
#else
#define EC_MVE_RING_ONNX_FN(run, entry_onnx)
#endif

/* in_c = 16 * q: stride 1, q = 1..5; stride 2, q = 1..3 */
EC_MVE_RING_FN(ec_mve_conv_ring1_run, ec_mve_conv_2d_ring1_s8,
               ec_mve_conv_2d_ring1_onnx_s8, 1, EC_MVE_RING_G1)
EC_MVE_RING_FN(ec_mve_conv_ring2_run, ec_mve_conv_2d_ring2_s8,
               ec_mve_conv_2d_ring2_onnx_s8, 2, EC_MVE_RING_G1)
EC_MVE_RING_FN(ec_mve_conv_ring3_run, ec_mve_conv_2d_ring3_s8,
               ec_mve_conv_2d_ring3_onnx_s8, 3, EC_MVE_RING_G1)
EC_MVE_RING_FN(ec_mve_conv_ring4_run, ec_mve_conv_2d_ring4_s8,
               ec_mve_conv_2d_ring4_onnx_s8, 4, EC_MVE_RING_G1)
EC_MVE_RING_FN(ec_mve_conv_ring5_run, ec_mve_conv_2d_ring5_s8,
               ec_mve_conv_2d_ring5_onnx_s8, 5, EC_MVE_RING_G1)
EC_MVE_RING_FN(ec_mve_conv_ring1s2_run, ec_mve_conv_2d_ring1s2_s8,
               ec_mve_conv_2d_ring1s2_onnx_s8, 1, EC_MVE_RING_G2)
EC_MVE_RING_FN(ec_mve_conv_ring2s2_run, ec_mve_conv_2d_ring2s2_s8,
               ec_mve_conv_2d_ring2s2_onnx_s8, 2, EC_MVE_RING_G2)
EC_MVE_RING_FN(ec_mve_conv_ring3s2_run, ec_mve_conv_2d_ring3s2_s8,
               ec_mve_conv_2d_ring3s2_onnx_s8, 3, EC_MVE_RING_G2)

#endif /* __ARM_FEATURE_MVE */
#endif /* EDGECC_MVE_CONV_2D_RING_H */
