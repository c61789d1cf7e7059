/* Firmware main for the edgecc example: run the keyword model once on a sample of float features
 * held in flash, quantized with the generated helper, and print the winning class, its score and
 * all scores over semihosting (the board's startup code opens stdout). */
#include <stdint.h>
#include <stdio.h>
#include "kws.h"
#include "input.h" /* const float kws_features[KWS_INPUT0_ELEMENTS]: const, so it stays in flash */

/* The arena: RAM the model works in. Section .bss.arena is where the board's linker script
 * places it (the region the board file names for the arena). */
static uint8_t arena[KWS_ARENA_SIZE] __attribute__((aligned(16), section(".bss.arena")));

int main(void) {
    int8_t *in = (int8_t *)kws_input(arena, 0);
    const int8_t *scores;
    int i, best = 0;
    kws_reset(arena); /* once after providing the arena (and whenever the stream restarts) */
    for (i = 0; i < KWS_INPUT0_ELEMENTS; ++i) /* real features -> the model's int8 input */
        in[i] = kws_input0_quantize(kws_features[i]);
    if (kws_run(arena) != 0) {
        printf("kws: run failed\n");
        return 1;
    }
    scores = (const int8_t *)kws_output(arena, 0);
    for (i = 1; i < KWS_OUTPUT0_ELEMENTS; ++i)
        if (scores[i] > scores[best]) best = i;
    printf("kws: class %d at %d per mille, scores", best,
           (int)(kws_output0_dequantize(scores[best]) * 1000.0f));
    for (i = 0; i < KWS_OUTPUT0_ELEMENTS; ++i) printf(" %d", scores[i]);
    printf("\n");
    return 0;
}
