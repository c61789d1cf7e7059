/* A firmware's own console for the STM32F1 device build (stm32vldiscovery) (no semihosting): newlib's printf writes
 * through _write to USART1 (0x40013800: SR at +0x00, TXE bit 7; DR at +0x04; BRR at +0x08;
 * CR1 at +0x0C, UE bit 13, TE bit 3), clocked by RCC_APB2ENR bit 14 (0x40021018). On the board,
 * USART1 TX is PA9 (alternate push-pull); QEMU's stm32vldiscovery sends USART1 to -serial 0.
 * When main returns, the status is printed and the core asks for a system reset (AIRCR
 * SYSRESETREQ), which ends QEMU when it runs with -no-reboot. */
#include "uart_console.h"

#define RCC_APB2ENR 0x40021018u
#define GPIOA_CRH 0x40010804u
#define USART1 0x40013800u
#define USART_SR (USART1 + 0x00u)
#define USART_DR (USART1 + 0x04u)
#define USART_BRR (USART1 + 0x08u)
#define USART_CR1 (USART1 + 0x0Cu)

static void uart_init(void) {
    static int done;
    if (done) return;
    done = 1;
    REG32(RCC_APB2ENR) |= (1u << 14) | (1u << 2);              /* USART1 + GPIOA clocks */
    REG32(GPIOA_CRH) = (REG32(GPIOA_CRH) & ~(15u << 4)) | (0xBu << 4); /* PA9: AF push-pull */
    REG32(USART_BRR) = 0x45u;                       /* 115200 baud at the 8 MHz reset clock */
    REG32(USART_CR1) = (1u << 13) | (1u << 3);                         /* UE + TE */
}

static void uart_putc(uint8_t c) {
    while (!(REG32(USART_SR) & (1u << 7))) {
    }
    REG32(USART_DR) = c;
}
