/* Firmware main for the edgecc example: run the keyword model once on a sample held in flash and
 * print its scores and the winning class over semihosting (the board's startup code opens stdout). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "kws.h"
#include "input.h" /* const int8_t kws_sample[KWS_INPUT0_SIZE]: const, so it stays in flash */

/* The arena: RAM the model works in. Section .bss.arena is where the board's linker script
 * places it (the region the board file names for the arena). */
static uint8_t arena[KWS_ARENA_SIZE] __attribute__((aligned(16), section(".bss.arena")));

int main(void) {
    const int8_t *scores;
    int i, best = 0;
    memcpy(kws_input(arena, 0), kws_sample, KWS_INPUT0_SIZE);
    if (kws_run(arena) != 0) {
        printf("kws: run failed\n");
        return 1;
    }
    scores = (const int8_t *)kws_output(arena, 0);
    for (i = 1; i < KWS_OUTPUT0_SIZE; ++i)
        if (scores[i] > scores[best]) best = i;
    printf("kws: class %d scores", best);
    for (i = 0; i < KWS_OUTPUT0_SIZE; ++i) printf(" %d", scores[i]);
    printf("\n");
    return 0;
}
