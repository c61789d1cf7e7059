"""The Cortex-M DSP kernels (Armv7E-M / Armv8-M DSP extension: SMLAD, SXTB16, SSUB8 ...).

Owns nothing itself: table.py lists the entries in the order they are tried; conv.py,
depthwise.py, fc.py, eltwise.py, pool.py hold each kernel's lowering beside its geometry
record; eltwise_onnx.py and near.py the ONNX-numerics ADD / MUL and onnxruntime's float
groups. The C is runtime_c/dsp/, the calls templates/dsp/.
"""
