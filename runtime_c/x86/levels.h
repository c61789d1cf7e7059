/* edgecc x86 kernels: the instruction-set levels and the run-time choice among them.
 *
 * Level 0: AVX2 + FMA (VPMADDWD on sign-extended int16). Level 1: AVX-VNNI (VPDPBUSD on YMM).
 * Level 2: AVX-512 F, BW, VL and VNNI (ZMM kernels). EC_X86_FLAGS_LVL is the level the build
 * flags give (the x86-avx2 target's -mavx2 -mfma: 0; the x86-avx512 target's: 2).
 * x86/kernels.h compiles the kernels once at that level (capped by EDGECC_X86_MAX) and once more
 * for each higher level up to EDGECC_X86_MAX that the compiler can target (functions under
 * __attribute__((target)) through a pragma), and ec_x86_level() picks among them at run time
 * from the CPU (__builtin_cpu_supports; no state of its own, no libc; no CPUID instruction at
 * run time, which a virtual machine may trap at microseconds a call).
 *
 * EDGECC_X86_MAX (0, 1 or 2; default 2) caps the levels compiled: -DEDGECC_X86_MAX=0 builds the
 * AVX2-only code alone, =1 stops at AVX-VNNI (the tests force each path this way); level 1 is
 * compiled only on request (EDGECC_X86_AVXVNNI below). */
#ifndef EDGECC_X86_LEVELS_H
#define EDGECC_X86_LEVELS_H
#if defined(__AVX2__)

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VNNI__)
#define EC_X86_FLAGS_LVL 2
#elif defined(__AVXVNNI__) || (defined(__AVX512VNNI__) && defined(__AVX512VL__))
#define EC_X86_FLAGS_LVL 1
#else
#define EC_X86_FLAGS_LVL 0
#endif

#ifndef EDGECC_X86_MAX
#define EDGECC_X86_MAX 2
#endif

/* The level of the copy built with the flags alone. */
#if EC_X86_FLAGS_LVL < EDGECC_X86_MAX
#define EC_X86_BASE_LVL EC_X86_FLAGS_LVL
#else
#define EC_X86_BASE_LVL EDGECC_X86_MAX
#endif

/* Whether the compiler can build a function for a level above the flags' (target attributes
 * through a pragma, the intrinsics, and __builtin_cpu_supports of the level's features):
 * gcc 12 / clang 16 for AVX-VNNI ("avxvnni"), gcc 8 / clang 9 for AVX-512 VNNI. An older
 * compiler builds the levels it can; the others run the next level down. */
#if defined(__clang__)
#define EC_X86_CC_L1 (__clang_major__ >= 16)
#define EC_X86_CC_L2 (__clang_major__ >= 9)
#elif defined(__GNUC__)
#define EC_X86_CC_L1 (__GNUC__ >= 12)
#define EC_X86_CC_L2 (__GNUC__ >= 8)
#else
#define EC_X86_CC_L1 0
#define EC_X86_CC_L2 0
#endif

/* The extra copies kernels.h compiles. */
/* AVX-VNNI (level 1) is compiled only when asked for: -DEDGECC_X86_MAX=1 (a build for such CPUs)
 * or -DEDGECC_X86_AVXVNNI=1. By default a dispatching build holds AVX2 and AVX-512 VNNI: an
 * AVX-VNNI copy of every kernel cost kws_ref_model +13% flash on its own (the budget is
 * +10% over the AVX2-only build), and AVX-VNNI-only CPUs then run the AVX2 kernels (measured
 * here, AVX-VNNI vs AVX2: kws_ref_model 37 vs 66 us, so -DEDGECC_X86_AVXVNNI=1 pays on them). */
#ifndef EDGECC_X86_AVXVNNI
#define EDGECC_X86_AVXVNNI (EDGECC_X86_MAX == 1)
#endif
#define EC_X86_HAS_L1 (EC_X86_BASE_LVL < 1 && EDGECC_X86_MAX >= 1 && EC_X86_CC_L1 && EDGECC_X86_AVXVNNI)
#define EC_X86_HAS_L2 (EC_X86_BASE_LVL < 2 && EDGECC_X86_MAX >= 2 && EC_X86_CC_L2)

/* The best level compiled that this CPU runs: libgcc's / compiler-rt's CPU model (filled once
 * at start-up, which also checks that the OS saves the YMM / ZMM state), a few loads per call. */
static inline int ec_x86_level(void) {
#if EC_X86_HAS_L2
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni"))
        return 2;
#endif
#if EC_X86_HAS_L1
    if (__builtin_cpu_supports("avxvnni"))
        return 1;
#endif
    return EC_X86_BASE_LVL;
}

#endif /* __AVX2__ */
#endif /* EDGECC_X86_LEVELS_H */
