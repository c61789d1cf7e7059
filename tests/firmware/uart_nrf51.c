/* A firmware's own console for the nRF51 device build (microbit): newlib's printf writes through
 * _write to the nRF51 UART (0x40002000: TASKS_STARTTX at +0x008, EVENTS_TXDRDY at +0x11C,
 * ENABLE at +0x500 (4: enabled), PSELTXD at +0x50C, TXD at +0x51C, BAUDRATE at +0x524). On the
 * micro:bit, TX is P0.24 (the interface chip's serial port); QEMU's microbit sends the UART to
 * -serial 0. When main returns, the status is printed and the core asks for a system reset
 * (AIRCR SYSRESETREQ), which ends QEMU when it runs with -no-reboot. */
#include "uart_console.h"

#define UART0 0x40002000u
#define UART_STARTTX (UART0 + 0x008u)
#define UART_TXDRDY (UART0 + 0x11Cu)
#define UART_ENABLE (UART0 + 0x500u)
#define UART_PSELTXD (UART0 + 0x50Cu)
#define UART_TXD (UART0 + 0x51Cu)
#define UART_BAUDRATE (UART0 + 0x524u)

static void uart_init(void) {
    static int done;
    if (done) return;
    done = 1;
    REG32(UART_PSELTXD) = 24u;                 /* P0.24 */
    REG32(UART_BAUDRATE) = 0x01D7E000u;        /* 115200 baud */
    REG32(UART_ENABLE) = 4u;
    REG32(UART_STARTTX) = 1u;
}

static void uart_putc(uint8_t c) {
    REG32(UART_TXDRDY) = 0u;
    REG32(UART_TXD) = c;
    while (!REG32(UART_TXDRDY)) {
    }
}
