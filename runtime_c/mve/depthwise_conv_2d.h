/* edgecc Helium (MVE) kernel: int8 DEPTHWISE_CONV_2D of at most 16 taps
 * (conventions: mve/common.h). */
#ifndef EDGECC_MVE_DEPTHWISE_CONV_2D_H
#define EDGECC_MVE_DEPTHWISE_CONV_2D_H
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include "common.h"

/* ---------------------------------------------------------------------------------------
 * DEPTHWISE_CONV_2D with at most 16 filter taps (3x3, 2x2, 3x5, 4x4, ...), any stride and
 * dilation. Input rows are transposed once into int8 channel planes [channel][k_h ring
 * slots][wp] (zero-point padded; the folded bias cancels it), so one channel's whole filter
 * window is ONE byte gather (offsets < 256 inside the channel's block, one offset vector per
 * ring phase) and one VMLADAVA against the filter's taps (loaded once per output row for four
 * channels). Four channels of one output pixel are requantized together with contiguous
 * per-channel constants and stored as 4 bytes. Per output: 2 instructions of MACs.
 */
typedef struct {
    int32_t batches, in_h, in_w, in_c, out_h, out_w, out_c, dm;
    int32_t k_h, s_h, s_w, pad_t, pad_l, wp, pad_val, lo, hi;
} ec_mve_dw_geom;

EC_MVE_INLINE void ec_mve_fill8(int8_t *d, int32_t v, int32_t n) {
    const int8x16_t z = vdupq_n_s8((int8_t)v);
    int32_t i;
    for (i = 0; i + 16 <= n; i += 16) vst1q_s8(d + i, z);
    if (i < n) vstrbq_p_s8(d + i, z, vctp8q((uint32_t)(n - i)));
}

/* The 4 sums of one pixel's 4 channels (gathers + VMLAV), then an epilogue in assembly that
 * leaves int8 lanes in x and stores them: TFLite's requantization, or (ONNX numerics over the
 * whole int8 range) float32(sum + bias) * scale, VCVTN, + zero point; both saturate to int8. */
#define EC_MVE_DW_TFLITE \
    "vldrw.u32 %q[x], [%[rq], #16]\n\t" \
    "vqrdmulh.s32 %q[x], %q[t], %q[x]\n\t" \
    "vshr.s32 %q[t], %q[t], #31\n\t" \
    "vadd.i32 %q[x], %q[x], %q[t]\n\t" \
    "vldrw.u32 %q[t], [%[rq], #32]\n\t" \
    "vadd.i32 %q[x], %q[x], %q[t]\n\t" \
    "vldrw.u32 %q[t], [%[rq], #48]\n\t" \
    "vshl.s32 %q[x], %q[x], %q[t]\n\t"
#define EC_MVE_DW_ONNX \
    "vcvt.f32.s32 %q[t], %q[t]\n\t" \
    "vldrw.u32 %q[x], [%[rq], #16]\n\t" \
    "vmul.f32 %q[t], %q[t], %q[x]\n\t" \
    "vcvtn.s32.f32 %q[x], %q[t]\n\t" \
    "vldrw.u32 %q[t], [%[rq], #32]\n\t" \
    "vqadd.s32 %q[x], %q[x], %q[t]\n\t"
/* The pixel's last two sums into lanes 1 and 3, the biases, the epilogue, the 4 bytes stored. */
#define EC_MVE_DW_STORE(epilogue) \
    "vmov %q[t][3], %q[t][1], %[a0], %[a1]\n\t" \
    "vldrw.u32 %q[x], [%[rq]]\n\t" \
    "vadd.i32 %q[t], %q[t], %q[x]\n\t" \
    epilogue \
    "vqshl.s32 %q[x], %q[x], #24\n\t" \
    "vshr.s32 %q[x], %q[x], #24\n\t" \
    "vstrb.32 %q[x], [%[y]]\n\t"

/* One 4-channel block of a whole output row (n >= 1 pixels): the 4 filters loaded once into
 * registers, then per pixel 4 gathers + 4 VMLAV (two accumulators, each pair moved into the
 * vector at once), the epilogue, the store, the pointers advanced: all in one assembler loop
 * (compilers spill the filters and re-derive the pointers per block otherwise). The pixel steps
 * (s_w, out_c) wait in the eighth vector register k and come out into the free accumulators, so
 * the loop names 11 general registers and builds with r7 kept as a frame pointer. */
#define EC_MVE_DW_BLOCK(epilogue) \
    __asm__ volatile( \
        "vldrb.u8 %q[w0], [%[w]]\n\t" \
        "vldrb.u8 %q[w1], [%[w], #16]\n\t" \
        "vldrb.u8 %q[w2], [%[w], #32]\n\t" \
        "vldrb.u8 %q[w3], [%[w], #48]\n\t" \
        "1:\n\t" \
        "vldrb.u8 %q[x], [%[p0], %q[off]]\n\t" \
        "vmlav.s8 %[a0], %q[x], %q[w0]\n\t" \
        "vldrb.u8 %q[x], [%[p2], %q[off]]\n\t" \
        "vmlav.s8 %[a1], %q[x], %q[w2]\n\t" \
        "vmov %q[t][2], %q[t][0], %[a0], %[a1]\n\t" \
        "vldrb.u8 %q[x], [%[p1], %q[off]]\n\t" \
        "vmlav.s8 %[a0], %q[x], %q[w1]\n\t" \
        "vldrb.u8 %q[x], [%[p3], %q[off]]\n\t" \
        "vmlav.s8 %[a1], %q[x], %q[w3]\n\t" \
        EC_MVE_DW_STORE(epilogue) \
        "vmov %[a0], %[a1], %q[k][2], %q[k][0]\n\t" \
        "add %[p0], %[p0], %[a0]\n\t" \
        "add %[p1], %[p1], %[a0]\n\t" \
        "add %[p2], %[p2], %[a0]\n\t" \
        "add %[p3], %[p3], %[a0]\n\t" \
        "add %[y], %[y], %[a1]\n\t" \
        "subs %[n], %[n], #1\n\t" \
        "bne 1b\n\t" \
        : [a0] "=&Te"(a0), [a1] "=&Te"(a1), [x] "=&w"(qx), [t] "=&w"(qt), \
          [w0] "=&w"(w0), [w1] "=&w"(w1), [w2] "=&w"(w2), [w3] "=&w"(w3), \
          [p0] "+&r"(p0), [p1] "+&r"(p1), [p2] "+&r"(p2), [p3] "+&r"(p3), \
          [y] "+&l"(yp) /* VSTRB.32 wants a low register */, [n] "+&r"(n) \
        : [off] "w"(offv), [w] "r"(w16), [rq] "r"(rq), [k] "w"(kv) \
        : "memory", "cc")

/* A whole output row of every 4-channel block (dm = 1, whole blocks only) in one assembler
 * loop: per block the 4 filters (w advances past them), per pixel the 4 channels' planes at p,
 * p + blk, p + 2 blk, p + 3 blk; k = {out_w, 4 blk - out_w s_w, 4 - out_w out_c} moves p and y
 * from a block's row end to the next block's start (compilers keep too little in registers
 * across the block loop otherwise). */
#define EC_MVE_DW_ROW(epilogue) \
    __asm__ volatile( \
        "0:\n\t" \
        "vldrb.u8 %q[w0], [%[w]], #16\n\t" \
        "vldrb.u8 %q[w1], [%[w]], #16\n\t" \
        "vldrb.u8 %q[w2], [%[w]], #16\n\t" \
        "vldrb.u8 %q[w3], [%[w]], #16\n\t" \
        "ldr %[n], [%[k]]\n\t" \
        "1:\n\t" \
        "vldrb.u8 %q[x], [%[p], %q[off]]\n\t" \
        "vmlav.s8 %[a0], %q[x], %q[w0]\n\t" \
        "add %[tp], %[p], %[blk], lsl #1\n\t" \
        "vldrb.u8 %q[x], [%[tp], %q[off]]\n\t" \
        "vmlav.s8 %[a1], %q[x], %q[w2]\n\t" \
        "vmov %q[t][2], %q[t][0], %[a0], %[a1]\n\t" \
        "add %[tp], %[p], %[blk]\n\t" \
        "vldrb.u8 %q[x], [%[tp], %q[off]]\n\t" \
        "vmlav.s8 %[a0], %q[x], %q[w1]\n\t" \
        "add %[tp], %[tp], %[blk], lsl #1\n\t" \
        "vldrb.u8 %q[x], [%[tp], %q[off]]\n\t" \
        "vmlav.s8 %[a1], %q[x], %q[w3]\n\t" \
        EC_MVE_DW_STORE(epilogue) \
        "add %[p], %[p], %[sw]\n\t" \
        "add %[y], %[y], %[ys]\n\t" \
        "subs %[n], %[n], #1\n\t" \
        "bne 1b\n\t" \
        "ldr %[tp], [%[k], #4]\n\t" \
        "add %[p], %[p], %[tp]\n\t" \
        "ldr %[tp], [%[k], #8]\n\t" \
        "add %[y], %[y], %[tp]\n\t" \
        "add %[rq], %[rq], #64\n\t" \
        "subs %[m], %[m], #1\n\t" \
        "bne 0b\n\t" \
        : [a0] "=&Te"(a0), [a1] "=&Te"(a1), [x] "=&w"(qx), [t] "=&w"(qt), \
          [w0] "=&w"(w0), [w1] "=&w"(w1), [w2] "=&w"(w2), [w3] "=&w"(w3), \
          [p] "+&r"(p), [tp] "=&r"(tp), [y] "+&l"(yp) /* VSTRB.32 wants a low register */, \
          [w] "+&r"(wq), [rq] "+&r"(rqp), [n] "=&r"(n), [m] "+&r"(m) \
        : [off] "w"(offv), [blk] "r"(blk), [sw] "r"(sw), [ys] "r"(out_c), [k] "r"(k) \
        : "memory", "cc")

/* One output row: planes hold its k_h input rows at the slots offv names. w16: [oc][16]
 * filter taps in window-lane order (zero lanes past the filter); rq: per 4 channels the
 * records [bias x4][m x4][N x4][-e x4]; channels padded to 4. full: the epilogue (epi of
 * ec_mve_row, mve/common.h; 3: ONNX numerics over the whole int8 range). Unoptimized builds
 * (EC_MVE_ASM 0) take the per-pixel loop for every block. */
EC_MVE_INLINE void ec_mve_dw_row(const ec_mve_dw_geom *g, const int8_t *planes, int8_t *yr,
                                 const int8_t *w16, const int32_t *rq, uint8x16_t offv,
                                 int full) {
    const int32_t blk = g->k_h * g->wp, sw = g->s_w, out_w = g->out_w, out_c = g->out_c;
    const int32_t dm = g->dm;
    int32_t oc, ox;
    if (EC_MVE_ASM && (full == 1 || full == 3) && dm == 1 && out_c % 4 == 0) {
        const int32_t k[3] = {out_w, 4 * blk - out_w * sw, 4 - out_w * out_c};
        const int8_t *p = planes, *tp, *wq = w16;
        const int32_t *rqp = rq;
        int8_t *yp = yr;
        int32_t a0, a1, n, m = out_c / 4;
        int8x16_t qx, w0, w1, w2, w3;
        int32x4_t qt;
        if (full == 1) EC_MVE_DW_ROW(EC_MVE_DW_TFLITE);
        else EC_MVE_DW_ROW(EC_MVE_DW_ONNX);
        return;
    }
    for (oc = 0; oc < out_c; oc += 4, w16 += 64, rq += 16) {
        const int8_t *p0, *p1, *p2, *p3;
        if (dm == 1) { /* (no divisions on the common path) */
            p0 = planes + oc * blk;
            p1 = p0 + blk;
            p2 = p1 + blk;
            p3 = p2 + blk;
        } else {
            p0 = planes + (oc / dm) * blk;
            p1 = planes + ((oc + 1) / dm) * blk;
            p2 = planes + ((oc + 2) / dm) * blk;
            p3 = planes + ((oc + 3) / dm) * blk;
        }
        const int32_t nv = out_c - oc;
        int8_t *yp = yr + oc;
        if (EC_MVE_ASM && (full == 1 || full == 3) && nv >= 4) {
            /* the whole row of 4 channels in assembly: the requantization with the 4 records'
             * vectors loaded in turn into the two working registers (the filters, the offsets
             * and the two leave one vector register free) */
            int32_t a0, a1, n = out_w;
            const int32x4_t kv = ec_mve_vec4(sw, 0, out_c, 0); /* the pixel steps: 2 registers */
            int8x16_t qx, w0, w1, w2, w3;
            int32x4_t qt;
            if (full == 1) EC_MVE_DW_BLOCK(EC_MVE_DW_TFLITE);
            else EC_MVE_DW_BLOCK(EC_MVE_DW_ONNX);
            continue;
        }
        const int8x16_t w0 = vldrbq_s8(w16), w1 = vldrbq_s8(w16 + 16);
        const int8x16_t w2 = vldrbq_s8(w16 + 32), w3 = vldrbq_s8(w16 + 48);
        for (ox = 0; ox < out_w; ++ox, p0 += sw, p1 += sw, p2 += sw, p3 += sw, yp += out_c) {
            const int32_t a0 = vmladavq_s8(vldrbq_gather_offset_s8(p0, offv), w0);
            const int32_t a1 = vmladavq_s8(vldrbq_gather_offset_s8(p1, offv), w1);
            const int32_t a2 = vmladavq_s8(vldrbq_gather_offset_s8(p2, offv), w2);
            const int32_t a3 = vmladavq_s8(vldrbq_gather_offset_s8(p3, offv), w3);
            const int32x4_t acc = ec_mve_vec4(a0, a1, a2, a3);
            const int32x4_t lo = vdupq_n_s32(g->lo), hi = vdupq_n_s32(g->hi);
            const int32x4_t t = full >= 2 ? ec_mve_rq4_onnx(acc, rq, rq + 4, lo, hi)
                                          : ec_mve_rq4(acc, rq, rq + 4, full, lo, hi);
            if (nv >= 4) vstrbq_s32(yp, t);
            else vstrbq_p_s32(yp, t, vctp32q((uint32_t)nv));
        }
    }
}

/* scratch: in_c * k_h * wp bytes (wp: the plane row, as wide as the windows reach). offs:
 * [k_h phases][16] offsets. Output rows in order, each loading only the input rows of its own
 * windows into the ring: the planner may stream it (Kernel.streams = (1,)). */
EC_MVE_INLINE void ec_mve_dw_gather(const ec_mve_dw_geom *g, const int8_t *x, int8_t *y,
                                     const int8_t *w16, const int32_t *rq, const uint8_t *offs,
                                     uint8_t *scratch, int onnx) {
    int8_t *planes = (int8_t *)scratch;
    const int32_t wp = g->wp, kh = g->k_h, blk = kh * wp, c_n = g->in_c;
    const uint16x8_t coff = vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)blk);
    const int full = g->lo == -128 && g->hi == 127;
    int32_t held[16];
    int32_t b, oy, fy, i, c;
    for (b = 0; b < g->batches; ++b) {
        const int8_t *xb = x + b * g->in_h * g->in_w * c_n;
        ec_mve_fill8(planes, g->pad_val, c_n * blk);
        for (fy = 0; fy < kh; ++fy) held[fy] = INT32_MIN; /* every slot holds a padding row */
        for (oy = 0; oy < g->out_h; ++oy) {
            int8_t *yr = y + (b * g->out_h + oy) * g->out_w * g->out_c;
            uint8x16_t offv;
            for (fy = 0; fy < kh; ++fy) {
                const int32_t row = oy * g->s_h - g->pad_t + fy, slot = (oy * g->s_h + fy) % kh;
                int8_t *dst = planes + slot * wp;
                if (held[slot] == row) continue;
                held[slot] = row;
                if (row < 0 || row >= g->in_h) {
                    for (c = 0; c < c_n; ++c) ec_mve_fill8(dst + c * blk, g->pad_val, wp);
                    continue;
                }
                {
                    const int8_t *src = xb + row * g->in_w * c_n;
                    dst += g->pad_l;
                    for (i = 0; i < g->in_w; ++i, src += c_n, ++dst) {
                        int8_t *d = dst;
                        for (c = 0; c + 8 <= c_n; c += 8, d += 8 * blk) {
                            vstrbq_scatter_offset_s16(d, coff, vldrbq_s16(src + c));
                        }
                        if (c < c_n) { /* (predicates only for the last few channels) */
                            const mve_pred16_t p = vctp16q((uint32_t)(c_n - c));
                            vstrbq_scatter_offset_p_s16(d, coff, vldrbq_z_s16(src + c, p), p);
                        }
                    }
                }
            }
            offv = vldrbq_u8(offs + 16 * ((oy * g->s_h) % kh));
            if (onnx && full) ec_mve_dw_row(g, planes, yr, w16, rq, offv, 3);
            else if (onnx) ec_mve_dw_row(g, planes, yr, w16, rq, offv, 2);
            else if (full) ec_mve_dw_row(g, planes, yr, w16, rq, offv, 1);
            else ec_mve_dw_row(g, planes, yr, w16, rq, offv, 0);
        }
    }
}

EC_MVE_SHARED void ec_mve_depthwise_conv_2d_gather_s8(const ec_mve_dw_geom *g, const int8_t *x,
                                                      int8_t *y, const int8_t *w16,
                                                      const int32_t *rq, const uint8_t *offs,
                                                      uint8_t *scratch) {
    ec_mve_dw_gather(g, x, y, w16, rq, offs, scratch, 0);
}

#if (__ARM_FEATURE_MVE & 2)
/* ONNX numerics: rq per 4 channels [bias x4][scale bits x4][zp x4][0 x4] (ec_mve_rq4_onnx). */
EC_MVE_SHARED void ec_mve_depthwise_conv_2d_gather_onnx_s8(const ec_mve_dw_geom *g,
                                                           const int8_t *x, int8_t *y,
                                                           const int8_t *w16, const int32_t *rq,
                                                           const uint8_t *offs,
                                                           uint8_t *scratch) {
    ec_mve_dw_gather(g, x, y, w16, rq, offs, scratch, 1);
}
#endif

#endif /* __ARM_FEATURE_MVE */
#endif /* EDGECC_MVE_DEPTHWISE_CONV_2D_H */
