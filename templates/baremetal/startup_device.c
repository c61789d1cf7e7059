/* edgecc startup for a Cortex-M device: vendor-neutral, no semihosting, no debugger needed.
 *
 * The device build of `edgecc compile --board B --emit cmake|make` links this file with the
 * linker script of the board's real memory map (board/B.ld) and newlib-nano without a host
 * (--specs=nosys.specs): printf reaches whatever `_write` the firmware provides (a UART driver).
 *
 * Vector table: the initial stack pointer, Reset_Handler and the 14 system exceptions, each a
 * weak alias of Default_Handler that a firmware overrides by defining a function of the same
 * name (SysTick_Handler, HardFault_Handler, ...). Device interrupts are the vendor's: a firmware
 * that uses them brings its vendor's table (section .vectors) instead of this one, or copies
 * this one to RAM and points VTOR there.
 *
 * Reset_Handler: calls SystemInit() (weak; a CMSIS system_<device>.c sets up clocks there),
 * enables the FPU (and Helium MVE, which shares the CP10/CP11 enable) when the build has one,
 * sets the v8-M stack limit, copies .data from flash, zeroes .bss and the arena section, runs the
 * constructors and calls main(). If main returns, edgecc_main_returned(status) is called: weak,
 * it waits for interrupts forever; a test firmware may override it (to report and reset).
 */
#include <stdint.h>

extern uint32_t __StackTop[], __StackLimit[];
extern uint32_t __data_load[], __data_start[], __data_end[];
extern uint32_t __bss_start__[], __bss_end__[];
extern uint32_t __arena_start[], __arena_end[];

extern int main(void);
extern void __libc_init_array(void);

void Reset_Handler(void) __attribute__((noreturn));
void Default_Handler(void);
void SystemInit(void);
void edgecc_main_returned(int status);

#define EDGECC_WEAK_HANDLER(name) void name(void) __attribute__((weak, alias("Default_Handler")))
EDGECC_WEAK_HANDLER(NMI_Handler);
EDGECC_WEAK_HANDLER(HardFault_Handler);
EDGECC_WEAK_HANDLER(MemManage_Handler);
EDGECC_WEAK_HANDLER(BusFault_Handler);
EDGECC_WEAK_HANDLER(UsageFault_Handler);
EDGECC_WEAK_HANDLER(SecureFault_Handler);
EDGECC_WEAK_HANDLER(SVC_Handler);
EDGECC_WEAK_HANDLER(DebugMon_Handler);
EDGECC_WEAK_HANDLER(PendSV_Handler);
EDGECC_WEAK_HANDLER(SysTick_Handler);

typedef void (*vector_t)(void);

__attribute__((section(".vectors"), used))
const vector_t edgecc_vectors[16] = {
    (vector_t)(uintptr_t)__StackTop,
    Reset_Handler,
    NMI_Handler,
    HardFault_Handler,
    MemManage_Handler,
    BusFault_Handler,
    UsageFault_Handler,
    SecureFault_Handler, /* v8-M; reserved on v7-M */
    0, 0, 0,
    SVC_Handler,
    DebugMon_Handler,
    0,
    PendSV_Handler,
    SysTick_Handler,
};

#define REG32(a) (*(volatile uint32_t *)(a))
#define SCB_CPACR 0xE000ED88u

__attribute__((weak)) void SystemInit(void) {}

__attribute__((weak)) void edgecc_main_returned(int status) {
    (void)status;
    for (;;) {
        __asm volatile("wfi");
    }
}

void Reset_Handler(void) {
    uint32_t *s, *d;
    SystemInit();
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
    __libc_init_array();
    edgecc_main_returned(main());
    for (;;) {
    }
}

void Default_Handler(void) {
    for (;;) {
    }
}

/* -nostartfiles drops crti/crtn; newlib's __libc_init_array still calls _init. */
void _init(void);
void _fini(void);
void _init(void) {}
void _fini(void) {}
