/* edgecc x86 kernels: the one header the x86 layers include. It compiles every kernel header
 * (x86/pass.h) at the level of the build flags and again, under target attributes, at each higher
 * level the compiler supports up to EDGECC_X86_MAX (x86/levels.h), each copy under its own names
 * (x86/names_l<level>.h: NAME_l<level>, written out, never pasted together), and defines the entry
 * points the layers call: each runs the copy of the best level this CPU has (ec_x86_level(), a few
 * loads of the compiler's CPU model at each call). A binary built with the x86-avx2 target's -mavx2
 * -mfma thus runs AVX-512 VNNI kernels on such a CPU, AVX-VNNI ones on another and AVX2 elsewhere;
 * the x86-avx512 target's flags give level 2 at compile time, one copy, no check. Every level
 * computes the same bytes. */
#ifndef EDGECC_X86_KERNELS_H
#define EDGECC_X86_KERNELS_H
#if defined(__AVX2__)
#include "levels.h"

/* The copy at the flags' level (capped by EDGECC_X86_MAX). EC_X86_BASE_CALL(f0, f1, f2, args)
 * calls it, f0, f1, f2 being a kernel's names at levels 0, 1, 2. */
#define EC_X86_LVL EC_X86_BASE_LVL
#if EC_X86_BASE_LVL == 2
#include "names_l2.h"
#define EC_X86_BASE_CALL(f0, f1, f2, args) f2 args
#elif EC_X86_BASE_LVL == 1
#include "names_l1.h"
#define EC_X86_BASE_CALL(f0, f1, f2, args) f1 args
#else
#include "names_l0.h"
#define EC_X86_BASE_CALL(f0, f1, f2, args) f0 args
#endif
#include "pass.h"
#include "names_off.h"

#if EC_X86_HAS_L1
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,avxvnni"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,avxvnni")
#endif
#define EC_X86_LVL 1
#include "names_l1.h"
#include "pass.h"
#include "names_off.h"
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#define EC_X86_TRY1(f1, args) if (lvl == 1) { f1 args; return; }
#else
#define EC_X86_TRY1(f1, args)
#endif

#if EC_X86_HAS_L2
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")
#endif
#define EC_X86_LVL 2
#include "names_l2.h"
#include "pass.h"
#include "names_off.h"
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#define EC_X86_TRY2(f2, args) if (lvl == 2) { f2 args; return; }
#else
#define EC_X86_TRY2(f2, args)
#endif

/* The entry points keep their own names: f runs the copy of the best level this CPU has, fb
 * (f's _base) the build flags' level; f0, f1, f2 are f's copies at levels 0, 1, 2. */
#define EC_X86_ENTRY(f, fb, f0, f1, f2, params, args)                  \
    static inline void f params {                                      \
        const int lvl = ec_x86_level();                                \
        (void)lvl;                                                     \
        EC_X86_TRY2(f2, args)                                          \
        EC_X86_TRY1(f1, args)                                          \
        EC_X86_BASE_CALL(f0, f1, f2, args);                            \
    }                                                                  \
    /* a layer with few MACs runs the build flags' level, no dispatch */ \
    static inline void fb params { EC_X86_BASE_CALL(f0, f1, f2, args); }

EC_X86_ENTRY(ec_x86_conv_2d_4px_s8, ec_x86_conv_2d_4px_s8_base, ec_x86_conv_2d_4px_s8_l0,
             ec_x86_conv_2d_4px_s8_l1, ec_x86_conv_2d_4px_s8_l2,
             (const ec_vec_conv_geom *g, const ec_x86_band_512 *bd, const int8_t *x, int8_t *y,
              const int8_t *w, const int32_t *bias_u, const int32_t *bias_x, const ec_x86_rq *q),
             (g, bd, x, y, w, bias_u, bias_x, q))
#define EC_X86_CONV_KIND(f, fb, f0, f1, f2)                                                       \
    EC_X86_ENTRY(f, fb, f0, f1, f2,                                                               \
                 (const ec_vec_conv_geom *g, const ec_x86_band_512 *bd, const int8_t *x,          \
                  int8_t *y, const int8_t *w, const int32_t *bias_u, const int32_t *bias_x,       \
                  const ec_x86_rq *q),                                                            \
                 (g, bd, x, y, w, bias_u, bias_x, q))
EC_X86_CONV_KIND(ec_x86_conv_2d_k0_s8, ec_x86_conv_2d_k0_s8_base, ec_x86_conv_2d_k0_s8_l0,
                 ec_x86_conv_2d_k0_s8_l1, ec_x86_conv_2d_k0_s8_l2)
EC_X86_CONV_KIND(ec_x86_conv_2d_k1_s8, ec_x86_conv_2d_k1_s8_base, ec_x86_conv_2d_k1_s8_l0,
                 ec_x86_conv_2d_k1_s8_l1, ec_x86_conv_2d_k1_s8_l2)
EC_X86_CONV_KIND(ec_x86_conv_2d_k2_s8, ec_x86_conv_2d_k2_s8_base, ec_x86_conv_2d_k2_s8_l0,
                 ec_x86_conv_2d_k2_s8_l1, ec_x86_conv_2d_k2_s8_l2)
EC_X86_CONV_KIND(ec_x86_conv_2d_k3_s8, ec_x86_conv_2d_k3_s8_base, ec_x86_conv_2d_k3_s8_l0,
                 ec_x86_conv_2d_k3_s8_l1, ec_x86_conv_2d_k3_s8_l2)
EC_X86_CONV_KIND(ec_x86_conv_2d_k4_s8, ec_x86_conv_2d_k4_s8_base, ec_x86_conv_2d_k4_s8_l0,
                 ec_x86_conv_2d_k4_s8_l1, ec_x86_conv_2d_k4_s8_l2)
EC_X86_CONV_KIND(ec_x86_conv_2d_k5_s8, ec_x86_conv_2d_k5_s8_base, ec_x86_conv_2d_k5_s8_l0,
                 ec_x86_conv_2d_k5_s8_l1, ec_x86_conv_2d_k5_s8_l2)
EC_X86_CONV_KIND(ec_x86_conv_2d_k6_s8, ec_x86_conv_2d_k6_s8_base, ec_x86_conv_2d_k6_s8_l0,
                 ec_x86_conv_2d_k6_s8_l1, ec_x86_conv_2d_k6_s8_l2)
EC_X86_CONV_KIND(ec_x86_conv_2d_k7_s8, ec_x86_conv_2d_k7_s8_base, ec_x86_conv_2d_k7_s8_l0,
                 ec_x86_conv_2d_k7_s8_l1, ec_x86_conv_2d_k7_s8_l2)
EC_X86_CONV_KIND(ec_x86_conv_2d_k8_s8, ec_x86_conv_2d_k8_s8_base, ec_x86_conv_2d_k8_s8_l0,
                 ec_x86_conv_2d_k8_s8_l1, ec_x86_conv_2d_k8_s8_l2)
EC_X86_CONV_KIND(ec_x86_conv_2d_k9_s8, ec_x86_conv_2d_k9_s8_base, ec_x86_conv_2d_k9_s8_l0,
                 ec_x86_conv_2d_k9_s8_l1, ec_x86_conv_2d_k9_s8_l2)
EC_X86_CONV_KIND(ec_x86_conv_2d_k10_s8, ec_x86_conv_2d_k10_s8_base, ec_x86_conv_2d_k10_s8_l0,
                 ec_x86_conv_2d_k10_s8_l1, ec_x86_conv_2d_k10_s8_l2)
EC_X86_CONV_KIND(ec_x86_conv_2d_k11_s8, ec_x86_conv_2d_k11_s8_base, ec_x86_conv_2d_k11_s8_l0,
                 ec_x86_conv_2d_k11_s8_l1, ec_x86_conv_2d_k11_s8_l2)
EC_X86_CONV_KIND(ec_x86_conv_2d_k12_s8, ec_x86_conv_2d_k12_s8_base, ec_x86_conv_2d_k12_s8_l0,
                 ec_x86_conv_2d_k12_s8_l1, ec_x86_conv_2d_k12_s8_l2)
EC_X86_CONV_KIND(ec_x86_conv_2d_k13_s8, ec_x86_conv_2d_k13_s8_base, ec_x86_conv_2d_k13_s8_l0,
                 ec_x86_conv_2d_k13_s8_l1, ec_x86_conv_2d_k13_s8_l2)
EC_X86_CONV_KIND(ec_x86_conv_2d_k14_s8, ec_x86_conv_2d_k14_s8_base, ec_x86_conv_2d_k14_s8_l0,
                 ec_x86_conv_2d_k14_s8_l1, ec_x86_conv_2d_k14_s8_l2)
EC_X86_CONV_KIND(ec_x86_conv_2d_k15_s8, ec_x86_conv_2d_k15_s8_base, ec_x86_conv_2d_k15_s8_l0,
                 ec_x86_conv_2d_k15_s8_l1, ec_x86_conv_2d_k15_s8_l2)
EC_X86_CONV_KIND(ec_x86_conv_2d_k16_s8, ec_x86_conv_2d_k16_s8_base, ec_x86_conv_2d_k16_s8_l0,
                 ec_x86_conv_2d_k16_s8_l1, ec_x86_conv_2d_k16_s8_l2)
#undef EC_X86_CONV_KIND
EC_X86_ENTRY(ec_x86_conv_2d_first_s8, ec_x86_conv_2d_first_s8_base, ec_x86_conv_2d_first_s8_l0,
             ec_x86_conv_2d_first_s8_l1, ec_x86_conv_2d_first_s8_l2,
             (const ec_x86_first_geom *g, const int8_t *x, int8_t *y, const int8_t *wq,
              const int32_t *bias_u, const int32_t *bias_x, const ec_x86_rq *q),
             (g, x, y, wq, bias_u, bias_x, q))
/* the taps depthwise: no level-2 copy (its level-2 build is the same VPMADDWD code in EVEX
 * encodings, no faster: str_ww_ref_model 2.5 KB of flash for nothing); the build flags' level
 * and AVX-VNNI where compiled */
static inline void ec_x86_depthwise_conv_2d_taps_s8(
    const ec_x86_dw_geom *g, const int8_t *x, int8_t *y, const int16_t *w, const int32_t *bias,
    const ec_x86_rq *q, const int8_t *zrow) {
    const int lvl = ec_x86_level();
    (void)lvl;
    EC_X86_TRY1(ec_x86_depthwise_conv_2d_taps_s8_l1, (g, x, y, w, bias, q, zrow))
    EC_X86_BASE_CALL(ec_x86_depthwise_conv_2d_taps_s8_l0, ec_x86_depthwise_conv_2d_taps_s8_l1,
                     ec_x86_depthwise_conv_2d_taps_s8_l2, (g, x, y, w, bias, q, zrow));
}
static inline void ec_x86_depthwise_conv_2d_taps_s8_base(
    const ec_x86_dw_geom *g, const int8_t *x, int8_t *y, const int16_t *w, const int32_t *bias,
    const ec_x86_rq *q, const int8_t *zrow) {
    EC_X86_BASE_CALL(ec_x86_depthwise_conv_2d_taps_s8_l0, ec_x86_depthwise_conv_2d_taps_s8_l1,
                     ec_x86_depthwise_conv_2d_taps_s8_l2, (g, x, y, w, bias, q, zrow));
}
EC_X86_ENTRY(ec_x86_depthwise_conv_2d_3x3_s8, ec_x86_depthwise_conv_2d_3x3_s8_base,
             ec_x86_depthwise_conv_2d_3x3_s8_l0, ec_x86_depthwise_conv_2d_3x3_s8_l1,
             ec_x86_depthwise_conv_2d_3x3_s8_l2,
             (const ec_x86_dw3_geom *g, const int8_t *x, int8_t *y, const int16_t *w,
              const int32_t *bias, const ec_x86_rq *q, const int8_t *zrow),
             (g, x, y, w, bias, q, zrow))
#define EC_X86_DW3_PLAN(f, fb, f0, f1, f2)                                                        \
    EC_X86_ENTRY(f, fb, f0, f1, f2,                                                               \
                 (const ec_x86_dw3_geom *g, const int8_t *x, int8_t *y, const int16_t *w,         \
                  const int32_t *bias, const ec_x86_rq *q, const int8_t *zrow),                   \
                 (g, x, y, w, bias, q, zrow))
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p00_s8, ec_x86_depthwise_conv_2d_3x3_p00_s8_base,
                ec_x86_depthwise_conv_2d_3x3_p00_s8_l0, ec_x86_depthwise_conv_2d_3x3_p00_s8_l1,
                ec_x86_depthwise_conv_2d_3x3_p00_s8_l2)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p01_s8, ec_x86_depthwise_conv_2d_3x3_p01_s8_base,
                ec_x86_depthwise_conv_2d_3x3_p01_s8_l0, ec_x86_depthwise_conv_2d_3x3_p01_s8_l1,
                ec_x86_depthwise_conv_2d_3x3_p01_s8_l2)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p10_s8, ec_x86_depthwise_conv_2d_3x3_p10_s8_base,
                ec_x86_depthwise_conv_2d_3x3_p10_s8_l0, ec_x86_depthwise_conv_2d_3x3_p10_s8_l1,
                ec_x86_depthwise_conv_2d_3x3_p10_s8_l2)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p11_s8, ec_x86_depthwise_conv_2d_3x3_p11_s8_base,
                ec_x86_depthwise_conv_2d_3x3_p11_s8_l0, ec_x86_depthwise_conv_2d_3x3_p11_s8_l1,
                ec_x86_depthwise_conv_2d_3x3_p11_s8_l2)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p20_s8, ec_x86_depthwise_conv_2d_3x3_p20_s8_base,
                ec_x86_depthwise_conv_2d_3x3_p20_s8_l0, ec_x86_depthwise_conv_2d_3x3_p20_s8_l1,
                ec_x86_depthwise_conv_2d_3x3_p20_s8_l2)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p21_s8, ec_x86_depthwise_conv_2d_3x3_p21_s8_base,
                ec_x86_depthwise_conv_2d_3x3_p21_s8_l0, ec_x86_depthwise_conv_2d_3x3_p21_s8_l1,
                ec_x86_depthwise_conv_2d_3x3_p21_s8_l2)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p30_s8, ec_x86_depthwise_conv_2d_3x3_p30_s8_base,
                ec_x86_depthwise_conv_2d_3x3_p30_s8_l0, ec_x86_depthwise_conv_2d_3x3_p30_s8_l1,
                ec_x86_depthwise_conv_2d_3x3_p30_s8_l2)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p31_s8, ec_x86_depthwise_conv_2d_3x3_p31_s8_base,
                ec_x86_depthwise_conv_2d_3x3_p31_s8_l0, ec_x86_depthwise_conv_2d_3x3_p31_s8_l1,
                ec_x86_depthwise_conv_2d_3x3_p31_s8_l2)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p40_s8, ec_x86_depthwise_conv_2d_3x3_p40_s8_base,
                ec_x86_depthwise_conv_2d_3x3_p40_s8_l0, ec_x86_depthwise_conv_2d_3x3_p40_s8_l1,
                ec_x86_depthwise_conv_2d_3x3_p40_s8_l2)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p41_s8, ec_x86_depthwise_conv_2d_3x3_p41_s8_base,
                ec_x86_depthwise_conv_2d_3x3_p41_s8_l0, ec_x86_depthwise_conv_2d_3x3_p41_s8_l1,
                ec_x86_depthwise_conv_2d_3x3_p41_s8_l2)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p50_s8, ec_x86_depthwise_conv_2d_3x3_p50_s8_base,
                ec_x86_depthwise_conv_2d_3x3_p50_s8_l0, ec_x86_depthwise_conv_2d_3x3_p50_s8_l1,
                ec_x86_depthwise_conv_2d_3x3_p50_s8_l2)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p51_s8, ec_x86_depthwise_conv_2d_3x3_p51_s8_base,
                ec_x86_depthwise_conv_2d_3x3_p51_s8_l0, ec_x86_depthwise_conv_2d_3x3_p51_s8_l1,
                ec_x86_depthwise_conv_2d_3x3_p51_s8_l2)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p60_s8, ec_x86_depthwise_conv_2d_3x3_p60_s8_base,
                ec_x86_depthwise_conv_2d_3x3_p60_s8_l0, ec_x86_depthwise_conv_2d_3x3_p60_s8_l1,
                ec_x86_depthwise_conv_2d_3x3_p60_s8_l2)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p61_s8, ec_x86_depthwise_conv_2d_3x3_p61_s8_base,
                ec_x86_depthwise_conv_2d_3x3_p61_s8_l0, ec_x86_depthwise_conv_2d_3x3_p61_s8_l1,
                ec_x86_depthwise_conv_2d_3x3_p61_s8_l2)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p70_s8, ec_x86_depthwise_conv_2d_3x3_p70_s8_base,
                ec_x86_depthwise_conv_2d_3x3_p70_s8_l0, ec_x86_depthwise_conv_2d_3x3_p70_s8_l1,
                ec_x86_depthwise_conv_2d_3x3_p70_s8_l2)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p71_s8, ec_x86_depthwise_conv_2d_3x3_p71_s8_base,
                ec_x86_depthwise_conv_2d_3x3_p71_s8_l0, ec_x86_depthwise_conv_2d_3x3_p71_s8_l1,
                ec_x86_depthwise_conv_2d_3x3_p71_s8_l2)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p80_s8, ec_x86_depthwise_conv_2d_3x3_p80_s8_base,
                ec_x86_depthwise_conv_2d_3x3_p80_s8_l0, ec_x86_depthwise_conv_2d_3x3_p80_s8_l1,
                ec_x86_depthwise_conv_2d_3x3_p80_s8_l2)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p81_s8, ec_x86_depthwise_conv_2d_3x3_p81_s8_base,
                ec_x86_depthwise_conv_2d_3x3_p81_s8_l0, ec_x86_depthwise_conv_2d_3x3_p81_s8_l1,
                ec_x86_depthwise_conv_2d_3x3_p81_s8_l2)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p90_s8, ec_x86_depthwise_conv_2d_3x3_p90_s8_base,
                ec_x86_depthwise_conv_2d_3x3_p90_s8_l0, ec_x86_depthwise_conv_2d_3x3_p90_s8_l1,
                ec_x86_depthwise_conv_2d_3x3_p90_s8_l2)
EC_X86_DW3_PLAN(ec_x86_depthwise_conv_2d_3x3_p91_s8, ec_x86_depthwise_conv_2d_3x3_p91_s8_base,
                ec_x86_depthwise_conv_2d_3x3_p91_s8_l0, ec_x86_depthwise_conv_2d_3x3_p91_s8_l1,
                ec_x86_depthwise_conv_2d_3x3_p91_s8_l2)
#undef EC_X86_DW3_PLAN
EC_X86_ENTRY(ec_x86_fully_connected_quads_s8, ec_x86_fully_connected_quads_s8_base,
             ec_x86_fully_connected_quads_s8_l0, ec_x86_fully_connected_quads_s8_l1,
             ec_x86_fully_connected_quads_s8_l2,
             (int batches, int depth, int kp, int units, int ocp, const int8_t *x, int8_t *y,
              const int8_t *w, const int32_t *bias_u, const int32_t *bias_x, const ec_x86_rq *q),
             (batches, depth, kp, units, ocp, x, y, w, bias_u, bias_x, q))
EC_X86_ENTRY(ec_x86_fully_connected_stream_s8, ec_x86_fully_connected_stream_s8_base,
             ec_x86_fully_connected_stream_s8_l0, ec_x86_fully_connected_stream_s8_l1,
             ec_x86_fully_connected_stream_s8_l2,
             (int batches, int depth, int kp, int units, int up, int uni, int half, const int8_t *x,
              int8_t *y, const int8_t *w, const int32_t *bias_u, const int32_t *bias_x,
              const ec_x86_rq *q),
             (batches, depth, kp, units, up, uni, half, x, y, w, bias_u, bias_x, q))
EC_X86_ENTRY(ec_x86_add_lin_s8, ec_x86_add_lin_s8_base, ec_x86_add_lin_s8_l0, ec_x86_add_lin_s8_l1,
             ec_x86_add_lin_s8_l2,
             (const ec_x86_add_lin_geom *g, const int8_t *a, const int8_t *b, int8_t *y),
             (g, a, b, y))
EC_X86_ENTRY(ec_x86_add_exact_s8, ec_x86_add_exact_s8_base, ec_x86_add_exact_s8_l0,
             ec_x86_add_exact_s8_l1, ec_x86_add_exact_s8_l2,
             (const ec_x86_add_exact_geom *g, const int8_t *a, const int8_t *b, int8_t *y),
             (g, a, b, y))
EC_X86_ENTRY(ec_x86_pool_2d_avg_s8, ec_x86_pool_2d_avg_s8_base, ec_x86_pool_2d_avg_s8_l0,
             ec_x86_pool_2d_avg_s8_l1, ec_x86_pool_2d_avg_s8_l2,
             (const ec_x86_pool_geom *g, const int8_t *x, int8_t *y),
             (g, x, y))

#endif /* __AVX2__ */
#endif /* EDGECC_X86_KERNELS_H */
