"""The x86 kernels (AVX2, with AVX-VNNI / AVX-512 paths chosen in the C at build or run time).

Owns nothing itself: table.py lists the entries in the order they are tried; conv.py,
depthwise.py, fc.py, eltwise.py, pool.py hold each kernel's lowering (the convolution,
depthwise and quads fully connected lowerings are shared with NEON, edgecc/lower/vec/);
onnx.py gives the convolution, depthwise and fully connected kernels onnxruntime's epilogue;
dispatch.py decides which layers call the run-time level choice. The C is runtime_c/x86/
(x86/kernels.h: every level, chosen at run time), the calls templates/x86/.
"""
