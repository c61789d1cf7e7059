/* The part-independent half of the test firmware's console (no semihosting), included first by
 * each uart_<part>.c, which defines uart_init() (clocks, pin, baud, enable) and uart_putc() (one
 * byte out) for its part: newlib's printf writes through _write to uart_putc; when main returns
 * the status is printed ("X status") and the core asks for a system reset (AIRCR SYSRESETREQ),
 * which ends QEMU when it runs with -no-reboot. */
#ifndef UART_CONSOLE_H
#define UART_CONSOLE_H
#include <stdint.h>
#include <stdio.h>

#define REG32(a) (*(volatile uint32_t *)(a))
#define SCB_AIRCR 0xE000ED0Cu

static void uart_init(void);
static void uart_putc(uint8_t c);
int _write(int fd, const char *p, int n);
int _isatty(int fd);
void edgecc_main_returned(int status);

int _write(int fd, const char *p, int n) {
    int i;
    (void)fd;
    uart_init();
    for (i = 0; i < n; ++i) uart_putc((uint8_t)p[i]);
    return n;
}

int _isatty(int fd) {
    (void)fd;
    return 1;
}

void edgecc_main_returned(int status) {
    printf("X %d\n", status);
    fflush(stdout);
    REG32(SCB_AIRCR) = 0x05FA0004u;
    for (;;) {
    }
}
#endif
