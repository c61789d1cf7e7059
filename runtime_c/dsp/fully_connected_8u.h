/* edgecc Cortex-M DSP kernels: the 8-unit step of the offset-byte FULLY_CONNECTED kernels
 * (dsp/fully_connected.h's -ub, dsp/fully_connected_rd.h's -rd; conventions: dsp/common.h).
 *
 * 8 units x 4 inputs per step (units in blocks of 8 while 8 remain, weights interleaved
 * [8-unit block][4 inputs][8 units][4 bytes]): one input word's (P, Q) pairs serve 8 units.
 * The step needs 14 registers (8 sums, 2 pairs, 2 weight words, 2 pointers): every register but
 * sp and pc. r7 is the Thumb frame pointer in a build with -fno-omit-frame-pointer and r9 the
 * platform register of some ABIs (-ffixed-r9, RWPI), so the compiler may have only 12: the asm
 * names 12 operands pinned to r0-r6, r8, r10-r12 and lr (explicit register variables: the
 * compiler moves its own values out of them, never fails to allocate) and uses r7 (the second
 * weight word) and r9 (the Q pair) itself, pushed and popped around the statement. Builds
 * with gcc and clang (whose allocator failed on 14 free operands) at every -O level, with or
 * without a frame pointer. An unoptimized build (-O0, no __OPTIMIZE__) takes the C/ACLE twin
 * (EC_FC8_C_UNITS, the same sums).
 */
#ifndef EDGECC_DSP_FULLY_CONNECTED_8U_H
#define EDGECC_DSP_FULLY_CONNECTED_8U_H
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include "common.h"

/* units a, b: one LDRD of their weight words (%[wa], r7), 2 SMLAD each against the pairs
 * (%[pa], r9) */
#define EC_FC8_ASM_UNITS(a, b) \
        "ldrd %[wa], r7, [%[wp]], #8\n\t" \
        "smlad " a ", %[pa], %[wa], " a "\n\t" \
        "uxtb16 %[wa], %[wa]\n\t" \
        "smlad " a ", r9, %[wa], " a "\n\t" \
        "smlad " b ", %[pa], r7, " b "\n\t" \
        "uxtb16 r7, r7\n\t" \
        "smlad " b ", r9, r7, " b "\n\t"
#define EC_FC8_ASM_OUTS \
        [a0] "+r"(a0_), [a1] "+r"(a1_), [a2] "+r"(a2_), [a3] "+r"(a3_), \
        [a4] "+r"(a4_), [a5] "+r"(a5_), [a6] "+r"(a6_), [a7] "+r"(a7_), \
        [pa] "+r"(pa_), [wa] "=&r"(wa_), [xp] "+r"(xp_), [wp] "+r"(wp_)

/* The same units in C: weight words k, k + 1 of the step. */
#define EC_FC8_C_UNITS(a, b, k) \
        wa = wp[k]; wb = wp[(k) + 1]; \
        a = __smlad(qa, __uxtb16(wa), __smlad(pa, wa, a)); \
        b = __smlad(qa, __uxtb16(wb), __smlad(pa, wb, b))

/* The 8 units' sums a0..a7 over the n inputs at xp (n a positive multiple of 8; xsh: "" when xp
 * advances a byte per input, ", lsl #1" when 2), step an asm string of 4 inputs x 8 units: an odd
 * 8-input block alone, an odd 16-input block, then 32 inputs a loop turn. One asm statement (gcc's
 * allocator loops forever on two in a row with every register pinned), no memory operand (clang
 * needs a register for one): pa brings n, whose bits 3 and 4 go to the N and C flags, which the
 * steps leave alone; the end, computed first, waits on the stack beside r7's and r9's saved
 * values (no register is left). The text is written out in full (no .rept: the compilers place
 * literal pools by its length), past the 4095 characters C99 promises, which clang's -pedantic
 * flags. cload: the same step's input pairs (pa, qa) in C, for the twin. */
#if defined(__clang__)
#define EC_FC8_LONG_TEXT_BEGIN \
    _Pragma("clang diagnostic push") _Pragma("clang diagnostic ignored \"-Woverlength-strings\"")
#define EC_FC8_LONG_TEXT_END _Pragma("clang diagnostic pop")
#else
#define EC_FC8_LONG_TEXT_BEGIN
#define EC_FC8_LONG_TEXT_END
#endif
#if defined(__OPTIMIZE__)
#define EC_FC8_ASM_RUN(step, cload, n, xsh) do { \
        register int32_t a0_ __asm__("r0") = a0, a1_ __asm__("r1") = a1, a2_ __asm__("r2") = a2; \
        register int32_t a3_ __asm__("r3") = a3, a4_ __asm__("r4") = a4, a5_ __asm__("r5") = a5; \
        register int32_t a6_ __asm__("r6") = a6, a7_ __asm__("r8") = a7; \
        register int32_t pa_ __asm__("r10") = (n), wa_ __asm__("r11"); \
        register __typeof__(xp) xp_ __asm__("r12") = xp; \
        register __typeof__(wp) wp_ __asm__("lr") = wp; \
        EC_FC8_LONG_TEXT_BEGIN \
        __asm__ volatile("add %[wa], %[xp], %[pa]" xsh "\n\t" "push {r7, r9, %[wa]}\n\t" \
                         "lsls %[pa], %[pa], #28\n\t" "bpl 2f\n\t" step step \
                         "2:\n\t" "bcc 3f\n\t" step step step step \
                         "3:\n\t" "ldr %[wa], [sp, #8]\n\t" "cmp %[xp], %[wa]\n\t" "beq 4f\n" \
                         "1:\n\t" step step step step step step step step \
                         "ldr %[wa], [sp, #8]\n\t" "cmp %[xp], %[wa]\n\t" "bne 1b\n" \
                         "4:\n\t" "pop {r7, r9, %[wa]}" \
                         : EC_FC8_ASM_OUTS : : "cc", "memory"); \
        EC_FC8_LONG_TEXT_END \
        (void)pa_; (void)wa_; \
        a0 = a0_; a1 = a1_; a2 = a2_; a3 = a3_; a4 = a4_; a5 = a5_; a6 = a6_; a7 = a7_; \
        xp = xp_; wp = wp_; \
    } while (0)
#else
#define EC_FC8_ASM_RUN(step, cload, n, xsh) do { \
        int32_t pa, qa, wa, wb, k_; \
        for (k_ = (n) >> 2; k_ != 0; --k_) { /* a step: 4 inputs */ \
            cload; \
            EC_FC8_C_UNITS(a0, a1, 0); EC_FC8_C_UNITS(a2, a3, 2); \
            EC_FC8_C_UNITS(a4, a5, 4); EC_FC8_C_UNITS(a6, a7, 6); \
            wp += 8; \
        } \
    } while (0)
#endif

/* The 8 sums' declarations, a_i = b[i] - c (partial sums wrap modulo 2^32; the row's final
 * sum fits); and their store, each >> sh, into ap[0..7]. */
#define EC_FC8_DECL(b, c) \
    int32_t a0 = (int32_t)((uint32_t)(b)[0] - (c)), a1 = (int32_t)((uint32_t)(b)[1] - (c)); \
    int32_t a2 = (int32_t)((uint32_t)(b)[2] - (c)), a3 = (int32_t)((uint32_t)(b)[3] - (c)); \
    int32_t a4 = (int32_t)((uint32_t)(b)[4] - (c)), a5 = (int32_t)((uint32_t)(b)[5] - (c)); \
    int32_t a6 = (int32_t)((uint32_t)(b)[6] - (c)), a7 = (int32_t)((uint32_t)(b)[7] - (c))
#define EC_FC8_STORE(ap, sh) do { \
        (ap)[0] = a0 >> (sh); (ap)[1] = a1 >> (sh); (ap)[2] = a2 >> (sh); (ap)[3] = a3 >> (sh); \
        (ap)[4] = a4 >> (sh); (ap)[5] = a5 >> (sh); (ap)[6] = a6 >> (sh); (ap)[7] = a7 >> (sh); \
    } while (0)

#endif /* __ARM_FEATURE_DSP */
#endif /* EDGECC_DSP_FULLY_CONNECTED_8U_H */
