/* edgecc x86 kernels: one copy of every kernel at level EC_X86_LVL, under that level's names
 * (x86/kernels.h includes this once per level). Afterwards the headers' guards and the macros
 * whose text depends on the level are undone for the next copy. No include guard. */
#include "conv_2d.h"
#include "conv_2d_first.h"
#include "depthwise_conv_2d.h"
#include "depthwise_conv_2d_3x3.h"
#include "fully_connected.h"
#include "fully_connected_stream.h"
#include "add.h"
#include "pool_2d.h"

#undef EDGECC_X86_COMMON_H
#undef EDGECC_X86_X512_H
#undef EDGECC_X86_CONV_2D_H
#undef EDGECC_X86_CONV_2D_X512_H
#undef EDGECC_X86_CONV_2D_FIRST_H
#undef EDGECC_X86_CONV_2D_FIRST_COMMON_H
#undef EDGECC_X86_CONV_2D_FIRST_DOT_H
#undef EDGECC_X86_DEPTHWISE_CONV_2D_H
#undef EDGECC_X86_DEPTHWISE_CONV_2D_3X3_H
#undef EDGECC_X86_DEPTHWISE_CONV_2D_3X3_COMMON_H
#undef EDGECC_X86_DEPTHWISE_CONV_2D_3X3_X512_H
#undef EDGECC_X86_FULLY_CONNECTED_H
#undef EDGECC_X86_FULLY_CONNECTED_STREAM_H
#undef EDGECC_X86_FULLY_CONNECTED_STREAM_PASSES_H
#undef EDGECC_X86_ADD_H
#undef EDGECC_X86_POOL_2D_H

#undef EC_X86_LVL
#undef EC_X86_VNNI
#undef EC_X86_EVEX
#undef ec_dpbusd
#undef ec_x86_dw_dot
#undef EC_X86_FIRST_FLIP
