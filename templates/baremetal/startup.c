/* edgecc bare-metal startup for Cortex-M under QEMU: the test build (semihosting). A firmware's
 * device build links startup_device.c instead.
 *
 * Vector table, Reset_Handler and one fault handler. Reset_Handler enables the FPU (and Helium MVE,
 * which shares the CP10/CP11 enable) through CPACR, copies .data from flash, zeroes .bss and the
 * arena section (startup_init.h, shared with the device startup), opens the semihosting stdio
 * handles (newlib rdimon), runs the C++-style constructors and calls exit(main()). The linker
 * script (generated from the board's memory regions by edgecc/build/cross.py) provides every
 * __symbol used here.
 *
 * Any fault (HardFault, MemManage, BusFault, UsageFault, SecureFault) prints one line
 *   "F fault exc=<n> cfsr=0x.. hfsr=0x.. bfar=0x.. mmfar=0x.. pc=0x.. lr=0x.."
 * through semihosting and exits with status EDGECC_FAULT_EXIT, so a crash is readable and
 * distinguishable from a program that returned an error.
 */
#include <stdint.h>
#include <stdlib.h>

#include "startup_init.h"

#define EDGECC_FAULT_EXIT 250

extern int main(void);
extern void initialise_monitor_handles(void);
extern void __libc_init_array(void);

void Reset_Handler(void) __attribute__((noreturn));
void Fault_Handler(void) __attribute__((naked));
void Default_Handler(void);
void edgecc_fault_report(const uint32_t *frame, uint32_t exc_return) __attribute__((noreturn, used));

typedef void (*vector_t)(void);

/* Initial SP, then the 15 system exceptions; no device interrupts are enabled. */
__attribute__((section(".vectors"), used))
const vector_t edgecc_vectors[16] = {
    (vector_t)(uintptr_t)__StackTop,
    Reset_Handler,
    Default_Handler, /* NMI */
    Fault_Handler,   /* HardFault */
    Fault_Handler,   /* MemManage */
    Fault_Handler,   /* BusFault */
    Fault_Handler,   /* UsageFault */
    Fault_Handler,   /* SecureFault (v8-M) */
    0, 0, 0,
    Default_Handler, /* SVCall */
    Default_Handler, /* DebugMonitor */
    0,
    Default_Handler, /* PendSV */
    Default_Handler, /* SysTick */
};

#define SCB_CCR   0xE000ED14u
#define SCB_SHCSR 0xE000ED24u
#define SCB_CFSR  0xE000ED28u
#define SCB_HFSR  0xE000ED2Cu
#define SCB_MMFAR 0xE000ED34u
#define SCB_BFAR  0xE000ED38u

void Reset_Handler(void) {
    edgecc_startup_init();
#if defined(__ARM_ARCH_6M__)
    /* Armv6-M faults on every unaligned access (its CCR.UNALIGN_TRP reads as one); the Cortex-M3
     * that QEMU runs Armv6-M builds on does so only with the bit set: set it, so a misaligned
     * word or halfword load of the generated C faults here as it would on the part. */
    REG32(SCB_CCR) |= 1u << 3;
#else
    /* MemManage, BusFault, UsageFault as their own exceptions: CFSR names the cause either way.
     * (Armv6-M has only HardFault; its code runs here on a Cortex-M3 under QEMU, where CFSR still
     * names the cause.) */
    REG32(SCB_SHCSR) |= 7u << 16;
#endif
    initialise_monitor_handles();
    __libc_init_array();
    exit(main());
}

void Default_Handler(void) {
    for (;;) {
    }
}

/* Pick the stacked frame (MSP or PSP from EXC_RETURN bit 2), drop the v8-M stack limit so the
 * report itself cannot fault again, then report in C. */
void Fault_Handler(void) {
#if defined(__ARM_ARCH_6M__)
    /* Armv6-M: no IT blocks, TST takes low registers, B reaches only +-2 KiB. */
    __asm volatile(
        "movs r0, #4\n\t"
        "mov r1, lr\n\t"
        "tst r1, r0\n\t"
        "bne 1f\n\t"
        "mrs r0, msp\n\t"
        "b 2f\n"
        "1:\n\t"
        "mrs r0, psp\n"
        "2:\n\t"
        "ldr r2, =__StackTop\n\t"
        "mov sp, r2\n\t"
        "ldr r2, =edgecc_fault_report\n\t"
        "bx r2\n\t"
        ".ltorg\n\t");
#else
    __asm volatile(
        "tst lr, #4\n\t"
        "ite eq\n\t"
        "mrseq r0, msp\n\t"
        "mrsne r0, psp\n\t"
        "mov r1, lr\n\t"
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
        "movs r2, #0\n\t"
        "msr msplim, r2\n\t"
#endif
        "ldr r2, =__StackTop\n\t"
        "mov sp, r2\n\t"
        "b edgecc_fault_report\n\t"
        ".ltorg\n\t");
#endif
}

static uint32_t semihost(uint32_t op, const void *arg) {
    register uint32_t r0 __asm("r0") = op;
    register const void *r1 __asm("r1") = arg;
    __asm volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static char *put_hex(char *p, const char *label, uint32_t v) {
    int i;
    while (*label) *p++ = *label++;
    *p++ = '0';
    *p++ = 'x';
    for (i = 28; i >= 0; i -= 4) *p++ = "0123456789abcdef"[(v >> i) & 15u];
    return p;
}

void edgecc_fault_report(const uint32_t *frame, uint32_t exc_return) {
    char line[160], *p = line;
    uint32_t ipsr, args[3];
    int frame_ok = (uintptr_t)frame >= (uintptr_t)__StackLimit &&
                   (uintptr_t)frame + 32 <= (uintptr_t)__StackTop;
    __asm volatile("mrs %0, ipsr" : "=r"(ipsr));
    p = put_hex(p, "F fault exc=", ipsr & 0x1FFu);
    p = put_hex(p, " cfsr=", REG32(SCB_CFSR));
    p = put_hex(p, " hfsr=", REG32(SCB_HFSR));
    p = put_hex(p, " bfar=", REG32(SCB_BFAR));
    p = put_hex(p, " mmfar=", REG32(SCB_MMFAR));
    p = put_hex(p, " pc=", frame_ok ? frame[6] : 0u);
    p = put_hex(p, " lr=", frame_ok ? frame[5] : exc_return);
    *p++ = '\n';
    *p = 0;
    /* SYS_OPEN ":tt" for writing (mode 4) is the stdout handle rdimon's printf uses, so the
     * report lands in the same stream as the program's output; then SYS_WRITE. */
    args[0] = (uint32_t)(uintptr_t)":tt";
    args[1] = 4;
    args[2] = 3;
    args[0] = semihost(0x01, args);
    args[1] = (uint32_t)(uintptr_t)line;
    args[2] = (uint32_t)(p - line);
    semihost(0x05, args);
    /* SYS_EXIT_EXTENDED {ADP_Stopped_ApplicationExit, status}: QEMU exits with that status. */
    args[0] = 0x20026u;
    args[1] = EDGECC_FAULT_EXIT;
    semihost(0x20, args);
    for (;;) {
    }
}
