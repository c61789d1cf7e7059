"""The Cortex-M DSP kernel table: every DSP entry, in the order the chooser tries them.

Owns: the order (read top to bottom; among one op's entries the first that applies and builds
runs) and each entry's runtime headers. What an entry's kernel does, when it applies and its
constants are in the module of its op. On a Cortex-M55 the Helium table (edgecc/lower/mve/)
is tried first.
"""
from __future__ import annotations

from edgecc.lower.dsp import conv, depthwise, eltwise, eltwise_onnx, fc, near, pool
from edgecc.lower.table import Candidate

ISA = "dsp"

TABLE: list[Candidate] = [
    Candidate("CONV_2D", ISA, "conv-6px", conv.conv_applies, conv.lower_conv,
              ("dsp/conv_2d.h",), onnx=True),
    # onnxruntime's x86 float groups: the same blocks with the near-tie epilogue
    Candidate("CONV_2D", ISA, "conv-6px-near", conv.conv_near_applies, conv.lower_conv,
              ("dsp/conv_2d_near.h",), near=True),
    # no scratch: one input channel, 4 taps per pair
    Candidate("DEPTHWISE_CONV_2D", ISA, "dw-one", depthwise.dw_one_applies,
              depthwise.lower_dw_one, ("dsp/depthwise_conv_2d_direct.h",)),
    Candidate("DEPTHWISE_CONV_2D", ISA, "dw-as-conv", depthwise.dw_as_conv_applies,
              depthwise.lower_dw_as_conv, ("dsp/conv_2d.h",)),
    # no scratch: read in place, where the planes kernel is no better
    Candidate("DEPTHWISE_CONV_2D", ISA, "dw-direct", depthwise.dw_direct_applies,
              depthwise.lower_dw_direct, ("dsp/depthwise_conv_2d_direct.h",), onnx=True),
    Candidate("DEPTHWISE_CONV_2D", ISA, "dw", depthwise.dw_common, depthwise.lower_dw,
              ("dsp/depthwise_conv_2d.h",), onnx=True),
    # the extended-input scratch where it is dead, else the input read in place
    Candidate("FULLY_CONNECTED", ISA, "fc-4u-fits", fc.fc_rd_applies, fc.lower_fc_fits,
              ("dsp/fully_connected.h",), onnx=True),
    Candidate("FULLY_CONNECTED", ISA, "fc-4u-rd", fc.fc_rd_applies, fc.lower_fc_rd,
              ("dsp/fully_connected_rd.h",), onnx=True),
    Candidate("FULLY_CONNECTED", ISA, "fc-4u", fc.fc_applies, fc.lower_fc,
              ("dsp/fully_connected.h",)),
    Candidate("FULLY_CONNECTED", ISA, "fc-4u-pc", fc.fc_pc_applies, fc.lower_fc_pc,
              ("dsp/fully_connected.h",)),
    # ONNX numerics: onnxruntime's QLinearAdd / QLinearMul
    Candidate("ADD", ISA, "add-onnx", eltwise_onnx.add_onnx_applies, eltwise_onnx.lower_add_onnx,
              ("dsp/add.h",), onnx=True),
    Candidate("ADD", ISA, "add-onnx-row", eltwise_onnx.add_row_applies,
              eltwise_onnx.lower_add_row, ("dsp/add.h",), onnx=True),
    Candidate("MUL", ISA, "mul-onnx", eltwise_onnx.mul_onnx_applies, eltwise_onnx.lower_mul_onnx,
              ("dsp/mul.h",), onnx=True),
    # the QDQ groups onnxruntime runs in float32 (default mode)
    Candidate("ADD", ISA, "add-ortf", near.add_ortf_applies, near.lower_add_ortf, ("dsp/add.h",),
              near=True),
    Candidate("FULLY_CONNECTED", ISA, "fc-near", near.fc_near_applies, near.lower_fc_near,
              ("dsp/fc_near.h",), near=True),
    Candidate("ADD", ISA, "add-lut", eltwise.add_applies, eltwise.lower_add, ("dsp/add.h",)),
    Candidate("AVERAGE_POOL_2D", ISA, "avgpool", pool.pool_applies, pool.lower_pool,
              ("dsp/pool_2d.h",)),
    Candidate("MAX_POOL_2D", ISA, "maxpool", pool.pool_applies, pool.lower_pool,
              ("dsp/pool_2d.h",)),
]
