"""The Helium (MVE, Cortex-M55) kernels, tried before the DSP ones (edgecc/lower/dsp/).

Owns nothing itself: table.py lists the entries in the order they are tried; conv.py,
depthwise.py, fc.py, eltwise.py hold each kernel's lowering beside its geometry record;
blocks.py the weight blocks and requantization records the VMLADAVA kernels walk; onnx.py the
ONNX-numerics epilogue and ADD. The pools are the DSP table's (edgecc/lower/dsp/pool.py). The
C is runtime_c/mve/, the calls templates/mve/.
"""
