"""The AArch64 NEON kernels (dot product instructions where the target has them).

Owns nothing itself: table.py lists the entries in the order they are tried; conv.py,
depthwise.py, fc.py run the vector kernels NEON shares with x86 (edgecc/lower/vec/) with
NEON's epilogue names and pass orders; eltwise.py and eltwise_onnx.py the ADD / MUL kernels.
The C is runtime_c/neon/, the calls templates/neon/.
"""
