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

#include "startup_init.h"

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

__attribute__((weak)) void SystemInit(void) {}

__attribute__((weak)) void edgecc_main_returned(int status) {
    (void)status;
    for (;;) {
        __asm volatile("wfi");
    }
}

void Reset_Handler(void) {
    SystemInit();
    edgecc_startup_init();
    __libc_init_array();
    edgecc_main_returned(main());
    for (;;) {
    }
}

void Default_Handler(void) {
    for (;;) {
    }
}
