/* edgecc: what both Cortex-M startups do before main (startup.c for QEMU tests, startup_device.c
 * for the device): the linker script's symbols, the core's setup and the C memory image.
 * Included once per program, by its startup file only. */
#ifndef EDGECC_STARTUP_INIT_H
#define EDGECC_STARTUP_INIT_H
#include <stdint.h>

extern uint32_t __StackTop[], __StackLimit[];
extern uint32_t __data_load[], __data_start[], __data_end[];
extern uint32_t __bss_start__[], __bss_end__[];
extern uint32_t __arena_start[], __arena_end[];

#define REG32(a) (*(volatile uint32_t *)(a))
#define SCB_CPACR 0xE000ED88u

/* Enable the FPU (and Helium MVE, which shares the CP10/CP11 enable) when the build has one, set
 * the v8-M stack limit, copy .data from flash, zero .bss and the arena section. */
static inline void edgecc_startup_init(void) {
    uint32_t *s, *d;
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
    /* CP10 + CP11 full access: the FPU and, on Armv8.1-M, the MVE register file. */
    REG32(SCB_CPACR) |= 0xFu << 20;
    __asm volatile("dsb\n\tisb" ::: "memory");
#endif
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
    /* v8-M checks the stack limit in hardware: a stack overflow becomes a UsageFault (STKOF). */
    __asm volatile("msr msplim, %0" :: "r"(__StackLimit));
#endif
    for (s = __data_load, d = __data_start; d < __data_end;) *d++ = *s++;
    for (d = __bss_start__; d < __bss_end__;) *d++ = 0;
    for (d = __arena_start; d < __arena_end;) *d++ = 0;
}

/* -nostartfiles drops crti/crtn; newlib's __libc_init_array still calls _init. */
void _init(void);
void _fini(void);
void _init(void) {}
void _fini(void) {}

#endif
