"""The Helium (MVE) kernel table: every Helium entry, in the order the chooser tries them.

Owns: the order (read top to bottom; among one op's entries the first that applies and builds
runs) and each entry's runtime headers. A Cortex-M55 tries this table before the DSP one
(edgecc/lower/dsp/table.py), whose entries take what these refuse.
"""
from __future__ import annotations

from edgecc.lower.dsp import eltwise as dsp_eltwise, fc as dsp_fc
from edgecc.lower.dsp.conv import conv_applies
from edgecc.lower.dsp.pool import pool_applies
from edgecc.lower.mve import conv, depthwise, eltwise, fc, onnx, pool
from edgecc.lower.table import Candidate

ISA = "mve"

# (onnx: the conv / depthwise / FC kernels also run ONNX numerics, edgecc/lower/mve/onnx.py)
TABLE: list[Candidate] = [
    Candidate("CONV_2D", ISA, "conv-ring", conv.ring_applies, conv.lower_ring,
              ("mve/conv_2d_ring.h",), onnx=True),
    Candidate("CONV_2D", ISA, "conv", conv_applies, conv.lower_conv, ("mve/conv_2d.h",),
              onnx=True),
    Candidate("DEPTHWISE_CONV_2D", ISA, "dw-as-conv", depthwise.dw_one_channel_applies,
              depthwise.lower_dw_as_conv, ("mve/conv_2d.h",), onnx=True),
    Candidate("DEPTHWISE_CONV_2D", ISA, "dw-gather", depthwise.dw_applies, depthwise.lower_dw,
              ("mve/depthwise_conv_2d.h",), onnx=True),
    Candidate("FULLY_CONNECTED", ISA, "fc-4u", dsp_fc.fc_applies, fc.lower_fc,
              ("mve/fully_connected.h",), onnx=True),
    Candidate("FULLY_CONNECTED", ISA, "fc-4u-pc", dsp_fc.fc_pc_applies, fc.lower_fc_pc,
              ("mve/fully_connected.h",), onnx=True),
    Candidate("ADD", ISA, "add-onnx", onnx.add_applies, onnx.lower_add, ("mve/add.h",),
              onnx=True),
    Candidate("ADD", ISA, "add-lut", dsp_eltwise.add_applies, eltwise.lower_add, ("mve/add.h",)),
    Candidate("AVERAGE_POOL_2D", ISA, "avgpool", pool_applies, pool.lower_pool,
              ("mve/pool_2d.h",)),
    Candidate("MAX_POOL_2D", ISA, "maxpool", pool_applies, pool.lower_pool, ("mve/pool_2d.h",)),
]
