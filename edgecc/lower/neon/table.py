"""The AArch64 NEON kernel table: every NEON entry, in the order the chooser tries them.

Owns: the order (read top to bottom; among one op's entries the first that applies and builds
runs) and each entry's runtime headers. The convolution, depthwise and fully connected entries
also take ONNX-numerics nodes (onnx=True): their kernels have one body with either epilogue.
"""
from __future__ import annotations

from edgecc.lower.neon import conv, depthwise, eltwise, eltwise_onnx, fc
from edgecc.lower.table import Candidate
from edgecc.lower.vec import conv as vec_conv, depthwise as vec_dw, fc as vec_fc
from edgecc.lower.vec.eltwise import add_applies

ISA = "neon"

TABLE: list[Candidate] = [
    Candidate("CONV_2D", ISA, "conv-4px", vec_conv.conv_applies, conv.lower_conv,
              ("neon/conv_2d.h",), onnx=True),
    # (its kernel is this table's CONV_2D entry's, which names its headers)
    Candidate("DEPTHWISE_CONV_2D", ISA, "dw-as-conv", vec_dw.as_conv_applies,
              depthwise.as_conv(lambda: TABLE), ("neon/conv_2d.h",), onnx=True),
    Candidate("DEPTHWISE_CONV_2D", ISA, "dw", vec_dw.dw_applies, depthwise.lower_dw,
              ("neon/depthwise_conv_2d.h",), onnx=True),
    Candidate("FULLY_CONNECTED", ISA, "fc", vec_fc.fc_applies, fc.lower_fc,
              ("neon/fully_connected.h",), onnx=True),
    Candidate("FULLY_CONNECTED", ISA, "fc-pc", vec_fc.fc_pc_applies, fc.lower_fc_pc,
              ("neon/fully_connected.h",), onnx=True),
    Candidate("ADD", ISA, "add-onnx", eltwise_onnx.add_onnx_applies, eltwise_onnx.lower_add_onnx,
              ("neon/add.h",), onnx=True),
    Candidate("ADD", ISA, "add-exact", add_applies, eltwise.lower_add, ("neon/add.h",)),
    Candidate("MUL", ISA, "mul-onnx", eltwise_onnx.mul_onnx_applies, eltwise_onnx.lower_mul_onnx,
              ("neon/mul.h",), onnx=True),
]
