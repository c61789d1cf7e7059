/* edgecc Helium (MVE) kernels for Cortex-M55 and other Armv8.1-M cores with MVE.
 * Only compiled where MVE exists (__ARM_FEATURE_MVE); on other targets this header is empty.
 */
#ifndef EDGECC_MVE_H
#define EDGECC_MVE_H
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <stdint.h>
#include <arm_mve.h>

#endif /* __ARM_FEATURE_MVE */
#endif /* EDGECC_MVE_H */
