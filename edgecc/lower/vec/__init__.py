"""The vector kernels x86 and AArch64 NEON share (runtime_c/vec/common.h, runtime_c/x86/,
runtime_c/neon/): one lowering, one weight layout, the C per ISA.

Owns nothing itself: common.py the folded biases and requantization arrays, conv.py /
depthwise.py / fc.py each op's lowering beside its geometry records. The tables
(edgecc/lower/x86/table.py, edgecc/lower/neon/table.py) name these through their ISA's own
op modules.
"""
