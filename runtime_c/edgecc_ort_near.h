/* edgecc: the near-tie path of the Conv QDQ groups onnxruntime runs in float32 (default
 * --onnx-numerics x86; edgecc/numerics/ort_near.py derives the bound). A kernel computes each
 * output's exact int32 accumulator and its float32 estimate e in output steps; when e lies
 * within delta of a rounding boundary, the output is recomputed here in onnxruntime's order
 * (edgecc/numerics/ort_order.py: the im2col column in (channel, ky, kx) order, fused multiply-add
 * chains over slices of seg_sk taps, each slice added to the sum; + bias, / y_scale, rounded
 * half to even). Build with -ffp-contract=off. */
#ifndef EDGECC_ORT_NEAR_H
#define EDGECC_ORT_NEAR_H
#include "edgecc_rt.h" /* ec_fmaf, ec_onnx_round */
#include "edgecc_math.h" /* ec_sqrtf */

/* the near-tie path is rare: kept out of the kernels' loops */
#if defined(__GNUC__)
#define EC_ORTN_COLD __attribute__((noinline, unused))
#else
#define EC_ORTN_COLD
#endif

typedef struct {
    int32_t in_h, in_w, in_c, out_w, k_h, k_w, s_h, s_w, d_h, d_w, pad_t, pad_l, ksize, in_zp;
    float sx, ys;                 /* input and output scales */
    const int32_t *wmax;          /* per output channel: max |w| (portable kernel; DSP: 0) */
    const float *kt, *kb;         /* delta = wmax * (sum of |x - zx| over the field) * kt + kb */
    const float *sw, *bias;       /* weight scale and float32 bias (DequantizeLinear's) */
    const int32_t *seg_end, *seg_sk; /* onnxruntime's thread segments: end pixel, slice taps */
    /* a kernel deriving kt and kb (DSP records): kt = h * ckt from half the estimate's scale h,
     * kb = |bias in output steps| * ckb + cslack, each rounded up enough to stay bounds */
    float ckt, ckb, cslack;
    int32_t out_zp;
} ec_ortn_conv;

/* sum |px[i] - zx| over the c bytes of one tap (a kernel may pass its own SIMD twin). */
typedef int32_t (*ec_ortn_tap_abs)(const int8_t *px, int32_t c, int32_t zx);

static inline int32_t ec_ortn_tap_abs_c(const int8_t *px, int32_t c, int32_t zx) {
    int32_t s = 0, ci;
    for (ci = 0; ci < c; ++ci) {
        const int32_t d = (int32_t)px[ci] - zx;
        s += d < 0 ? -d : d;
    }
    return s;
}

/* Runs the statements after it once per tap (fy, fx) of output pixel pix that lies inside the
 * input (padding taps read the zero point: they add 0), with off the tap's first input byte. */
#define EC_ORTN_FIELD_TAPS(L, pix)                                                                \
    for (int32_t fy = 0, iy0_ = (pix) / (L)->out_w * (L)->s_h - (L)->pad_t,                       \
                 ix0_ = (pix) % (L)->out_w * (L)->s_w - (L)->pad_l; fy < (L)->k_h; ++fy)          \
        for (int32_t fx = 0, iy_ = iy0_ + fy * (L)->d_h; fx < (L)->k_w; ++fx)                      \
            for (int32_t ix_ = ix0_ + fx * (L)->d_w, off = (iy_ * (L)->in_w + ix_) * (L)->in_c,   \
                         once_ = iy_ >= 0 && iy_ < (L)->in_h && ix_ >= 0 && ix_ < (L)->in_w;      \
                 once_; once_ = 0)

/* The sum of |x - zx| over output pixel pix's receptive field, tap by tap with `tap` (inlined,
 * the pointer is a constant). */
static inline int32_t ec_ortn_field_sum(const ec_ortn_conv *L, const int8_t *x, int32_t pix,
                                        ec_ortn_tap_abs tap) {
    int32_t s = 0;
    EC_ORTN_FIELD_TAPS(L, pix) s += tap(x + off, L->in_c, L->in_zp);
    return s;
}

/* Whether estimate e lies within delta of a rounding boundary; *r: e rounded half to even. */
static inline int ec_ortn_near(float e, float delta, int32_t *r) {
    float f;
    if (!(e > -32768.0f)) e = -32768.0f;
    if (e > 32767.0f) e = 32767.0f;
    *r = ec_onnx_round(e);
    f = e - (float)*r;
    return (f < 0.0f ? -f : f) >= 0.5f - delta;
}

/* Output (pix, o) in onnxruntime's float32 order, rounded half to even (before the zero point);
 * w: channel o's int8 weights in (ky, kx, channel) order. The taps inside the input are a row
 * mask times a column mask (k_w <= 32, the compiler keeps it), so the (channel, ky, kx) walk
 * tests one bit per tap. A padding tap's fused multiply-add adds 0 (at most the sign of a zero
 * sum changes, which no rounding sees): only its place in the slice counts, so a filter row that
 * ends inside the current slice runs without the slice test. */
static inline int32_t ec_ortn_conv_recompute(const ec_ortn_conv *L, const int8_t *x,
                                             const int8_t *w, int32_t pix, int32_t o) {
    const int32_t iy0 = pix / L->out_w * L->s_h - L->pad_t, ix0 = pix % L->out_w * L->s_w - L->pad_l;
    const int32_t c = L->in_c, dy = L->d_h * L->in_w * c, dx = L->d_w * c, wrow = L->k_w * c;
    const int32_t kw = L->k_w, zx = L->in_zp;
    const float sw = L->sw[o], sx = L->sx;
    uint32_t cols = 0;
    int32_t seg = 0, sk, left, first = 1, ci, fy, fx;
    float sum = 0.0f, a = 0.0f, v;
    while (pix >= L->seg_end[seg]) ++seg;
    sk = L->seg_sk[seg];
    left = sk; /* taps left in the current slice of the K sum */
    for (fx = 0; fx < kw; ++fx) {
        const int32_t ix = ix0 + fx * L->d_w;
        if (ix >= 0 && ix < L->in_w) cols |= 1u << fx;
    }
    for (ci = 0; ci < c; ++ci) {
        const int8_t *xr = x + (iy0 * L->in_w + ix0) * c + ci, *wr = w + ci;
        for (fy = 0; fy < L->k_h; ++fy, xr += dy, wr += wrow) {
            const int32_t iy = iy0 + fy * L->d_h;
            const uint32_t m = iy >= 0 && iy < L->in_h ? cols : 0u;
            if (left > kw) { /* the row stays inside the slice */
                for (fx = 0; fx < kw; ++fx)
                    if ((m >> fx) & 1u)
                        a = ec_fmaf((float)wr[fx * c] * sw,
                                    (float)((int32_t)xr[fx * dx] - zx) * sx, a);
                left -= kw;
                continue;
            }
            for (fx = 0; fx < kw; ++fx) {
                if ((m >> fx) & 1u)
                    a = ec_fmaf((float)wr[fx * c] * sw, (float)((int32_t)xr[fx * dx] - zx) * sx,
                                a);
                if (--left == 0) { /* a slice of the K sum ends: added to the running sum */
                    sum = first ? a : sum + a;
                    first = 0;
                    a = 0.0f;
                    left = sk;
                }
            }
        }
    }
    if (left != sk) sum = first ? a : sum + a;
    v = (sum + L->bias[o]) / L->ys;
    if (!(v > -32768.0f)) v = -32768.0f;
    if (v > 32767.0f) v = 32767.0f;
    return ec_onnx_round(v);
}

/* ec_ortn_conv_recompute out of the kernels' loops (a kernel that computed the exact bound
 * itself). */
static EC_ORTN_COLD int32_t ec_ortn_conv_redo(const ec_ortn_conv *L, const int8_t *x,
                                              const int8_t *w, int32_t pix, int32_t o) {
    return ec_ortn_conv_recompute(L, x, w, pix, o);
}

/* sum |px[i] - zx| * |wp[i]| over the c bytes of one tap. */
static inline uint32_t ec_ortn_tap_dot_c(const int8_t *px, const int8_t *wp, int32_t c,
                                         int32_t zx) {
    uint32_t t = 0;
    int32_t ci;
    for (ci = 0; ci < c; ++ci) {
        const int32_t d = (int32_t)px[ci] - zx, q = wp[ci];
        t += (uint32_t)((d < 0 ? -d : d) * (q < 0 ? -q : q));
    }
    return t;
}

/* Output (pix, o) from its estimate e, which a kernel's cheap bound (max|w| times the field's
 * sum of |x - zx|) found near a boundary: the exact bound (T = the sum of |x - zx| * |w|, tap
 * by tap) first, onnxruntime's order only if e is still near; rounded half to even,
 * before the zero point. */
static EC_ORTN_COLD int32_t ec_ortn_conv_out(const ec_ortn_conv *L, const int8_t *x,
                                             const int8_t *w, int32_t pix, int32_t o, float e,
                                             float kt, float kb) {
    uint32_t t = 0; /* exact: the compiler keeps ksize * 255 * 128 < 2^32 */
    int32_t r;
    EC_ORTN_FIELD_TAPS(L, pix)
        t += ec_ortn_tap_dot_c(x + off, w + (fy * L->k_w + fx) * L->in_c, L->in_c, L->in_zp);
    if (!ec_ortn_near(e, (float)t * kt + kb, &r)) return r;
    return ec_ortn_conv_recompute(L, x, w, pix, o);
}

/* A one-row Gemm group (edgecc/ops/_ort_near.py): per unit u the exact accumulator acc (x - zx
 * against the unit's int8 weights) and its estimate e = acc * sc[u] + bb[u] in output steps;
 * delta = T' * kt[u] + kb[u], T' the smaller of wmax[u] times the row's sum of |x - zx| and
 * (Cauchy-Schwarz) wnorm[u] = |w| times the row's |x - zx| (both at or above the exact bound). */
typedef struct {
    int32_t units, depth, in_zp, out_zp, lo, hi;
    float sx, ys;
    const int32_t *wmax, *fold;   /* max |w|; -zx * sum(w) (a kernel folding the zero point) */
    const float *sc, *bb, *kt, *kb, *sw, *bias;
    const float *wnorm;           /* the unit's Euclidean norm of w, rounded up (or 0: unused) */
} ec_ortn_fc;

/* The row's sum of (x - zx)^2, exact: the compiler keeps depth * 255^2 < 2^31. */
static inline int32_t ec_ortn_row_sumsq(const int8_t *x, int32_t depth, int32_t zx) {
    int32_t s = 0, d;
    for (d = 0; d < depth; ++d) s += ((int32_t)x[d] - zx) * ((int32_t)x[d] - zx);
    return s;
}

/* The row's Euclidean norm of x - zx from its exact sum of squares, rounded up enough to stay a
 * bound (one rounding to float, one sqrt). */
static inline float ec_ortn_row_norm(int32_t sumsq) {
    return ec_sqrtf((float)sumsq) * 1.0000005f;
}

/* Unit u in onnxruntime's float32 order (MlasSgemmKernelM1Avx: products in groups of 4, then
 * 2, then 1, each group summed left to right and added to the sum; + bias, / y_scale), rounded
 * half to even before the zero point; w: the unit's int8 weights. */
static inline int32_t ec_ortn_fc_recompute(const ec_ortn_fc *L, const int8_t *x, const int8_t *w,
                                           int32_t u) {
    const float sw = L->sw[u], sx = L->sx;
    float s = 0.0f, v;
    int32_t d;
#define EC_ORTN_P(i) ((float)((int32_t)x[i] - L->in_zp) * sx * ((float)w[i] * sw))
    for (d = 0; d + 4 <= L->depth; d += 4)
        s = s + (((EC_ORTN_P(d) + EC_ORTN_P(d + 1)) + EC_ORTN_P(d + 2)) + EC_ORTN_P(d + 3));
    if (L->depth - d >= 2) {
        s = s + (EC_ORTN_P(d) + EC_ORTN_P(d + 1));
        d += 2;
    }
    if (L->depth - d >= 1) s = s + EC_ORTN_P(d);
#undef EC_ORTN_P
    v = (s + L->bias[u]) / L->ys;
    if (!(v > -32768.0f)) v = -32768.0f;
    if (v > 32767.0f) v = 32767.0f;
    return ec_onnx_round(v);
}

/* Unit u from its estimate e, which the row's cheap bound found near a boundary: the exact
 * bound first, onnxruntime's order only if e is still near (as ec_ortn_conv_out). */
static EC_ORTN_COLD int32_t ec_ortn_fc_out(const ec_ortn_fc *L, const int8_t *x, const int8_t *w,
                                           int32_t u, float e) {
    uint32_t t = 0; /* exact: the compiler keeps depth * 255 * 128 < 2^32 */
    int32_t r, d;
    for (d = 0; d < L->depth; ++d) {
        const int32_t a = (int32_t)x[d] - L->in_zp, q = w[d];
        t += (uint32_t)((a < 0 ? -a : a) * (q < 0 ? -q : q));
    }
    if (!ec_ortn_near(e, (float)t * L->kt[u] + L->kb[u], &r)) return r;
    return ec_ortn_fc_recompute(L, x, w, u);
}

/* Unit u's output byte from its exact accumulator (the kernels' shared epilogue); fa: the row's
 * sum of |x - zx| as a float, xn its ec_ortn_row_norm. */
static inline int8_t ec_ortn_fc_byte(const ec_ortn_fc *L, const int8_t *x, const int8_t *w,
                                     int32_t u, int32_t acc, float fa, float xn) {
    const float e = (float)acc * L->sc[u] + L->bb[u];
    const float t1 = (float)L->wmax[u] * fa, t2 = L->wnorm ? L->wnorm[u] * xn : t1;
    int32_t r;
    if (ec_ortn_near(e, (t1 < t2 ? t1 : t2) * L->kt[u] + L->kb[u], &r))
        r = ec_ortn_fc_out(L, x, w, u, e);
    return (int8_t)ec_clamp(r + L->out_zp, L->lo, L->hi);
}

#endif /* EDGECC_ORT_NEAR_H */
