/* A firmware's own console for the STM32F4 device build (no semihosting): newlib's printf writes
 * through _write to USART1 (0x40011000: SR at +0x00, TXE bit 7; DR at +0x04; BRR at +0x08;
 * CR1 at +0x0C, UE bit 13, TE bit 3), clocked by RCC_APB2ENR bit 4 (0x40023844). On the board,
 * USART1 TX is PA9 (alternate function 7); QEMU's netduinoplus2 sends USART1 to -serial 0.
 * When main returns, the status is printed and the core asks for a system reset (AIRCR
 * SYSRESETREQ), which ends QEMU when it runs with -no-reboot. */
#include "uart_console.h"

#define RCC_AHB1ENR 0x40023830u
#define RCC_APB2ENR 0x40023844u
#define GPIOA_MODER 0x40020000u
#define GPIOA_AFRH 0x40020024u
#define USART1 0x40011000u
#define USART_SR (USART1 + 0x00u)
#define USART_DR (USART1 + 0x04u)
#define USART_BRR (USART1 + 0x08u)
#define USART_CR1 (USART1 + 0x0Cu)

static void uart_init(void) {
    static int done;
    if (done) return;
    done = 1;
    REG32(RCC_AHB1ENR) |= 1u << 0;                                    /* GPIOA clock */
    REG32(RCC_APB2ENR) |= 1u << 4;                                    /* USART1 clock */
    REG32(GPIOA_MODER) = (REG32(GPIOA_MODER) & ~(3u << 18)) | (2u << 18); /* PA9: AF */
    REG32(GPIOA_AFRH) = (REG32(GPIOA_AFRH) & ~(15u << 4)) | (7u << 4);    /* AF7: USART1 */
    REG32(USART_BRR) = 0x8Bu;                      /* 115200 baud at the 16 MHz reset clock */
    REG32(USART_CR1) = (1u << 13) | (1u << 3);                         /* UE + TE */
}

static void uart_putc(uint8_t c) {
    while (!(REG32(USART_SR) & (1u << 7))) {
    }
    REG32(USART_DR) = c;
}
