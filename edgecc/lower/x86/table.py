"""The x86 kernel table: every x86 entry, in the order the chooser tries them.

Owns: the order (read top to bottom; among one op's entries the first that applies and builds
runs) and each entry's runtime headers (every x86 layer includes x86/kernels.h: the kernels at
each instruction-set level and the run-time choice). `onnx_entry`: the kernel also takes
ONNX-numerics nodes, ending in onnxruntime's epilogue (edgecc/lower/x86/onnx.py); every entry
then learns whether its layer dispatches (edgecc/lower/x86/dispatch.py).
"""
from __future__ import annotations

from edgecc.lower.table import Candidate
from edgecc.lower.vec import conv as vec_conv, depthwise as vec_dw, fc as vec_fc
from edgecc.lower.vec.eltwise import add_applies
from edgecc.lower.x86 import conv, depthwise, dispatch, eltwise, fc, pool
from edgecc.lower.x86.onnx import onnx_entry

ISA = "x86"
H = ("x86/kernels.h",)

ENTRIES: list[Candidate] = [
    Candidate("CONV_2D", ISA, "conv-first", conv.first_applies, conv.lower_conv_2d_first, H),
    onnx_entry(Candidate("CONV_2D", ISA, "conv-4px", vec_conv.conv_applies, conv.lower_conv, H)),
    # (the table's CONV_2D entries above, without the dispatch gate: the outer entry's applies)
    Candidate("DEPTHWISE_CONV_2D", ISA, "dw-as-conv", vec_dw.as_conv_applies,
              depthwise.as_conv(lambda: ENTRIES), H),
    onnx_entry(Candidate("DEPTHWISE_CONV_2D", ISA, "dw", vec_dw.dw_applies, depthwise.lower_dw,
                         H)),
    onnx_entry(Candidate("FULLY_CONNECTED", ISA, "fc16", vec_fc.fc_applies, fc.lower_fc, H)),
    onnx_entry(Candidate("FULLY_CONNECTED", ISA, "fc", vec_fc.fc_applies, fc.lower_fc_quads, H)),
    onnx_entry(Candidate("FULLY_CONNECTED", ISA, "fc16-pc", vec_fc.fc_pc_applies, fc.lower_fc_pc,
                         H)),
    onnx_entry(Candidate("FULLY_CONNECTED", ISA, "fc-pc", vec_fc.fc_pc_applies,
                         fc.lower_fc_quads_pc, H)),
    Candidate("ADD", ISA, "add-lin", add_applies, eltwise.lower_add_lin, H),
    Candidate("ADD", ISA, "add-exact", add_applies, eltwise.lower_add_exact, H),
    Candidate("AVERAGE_POOL_2D", ISA, "avgpool", pool.avgpool_applies, pool.lower_avgpool, H),
]

TABLE: list[Candidate] = [dispatch.gated(c) for c in ENTRIES]
