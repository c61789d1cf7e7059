"""DEPTHWISE_CONV_2D on NEON (runtime_c/neon/depthwise_conv_2d.h,
templates/neon/depthwise_conv_2d_taps.c.j2): the shared depthwise lowering
(edgecc/lower/vec/depthwise.py) with NEON's epilogue names and pass orders
(edgecc/lower/neon/conv.py); a layer over one input channel runs as the table's convolution.
"""
from __future__ import annotations

from typing import Callable

from edgecc.ir import Graph, Node
from edgecc.lower.neon.conv import ISA, streaming, with_epilogue
from edgecc.lower.table import Build, Candidate
from edgecc.lower.vec.depthwise import lower_as_conv, lower_depthwise
from edgecc.ops import Kernel


def _depthwise(g: Graph, n: Node, target) -> Kernel:
    return lower_depthwise(g, n, ISA)


# 16 channels x tap pairs per step; one output pixel at a time, all its taps read first
lower_dw = streaming(with_epilogue(_depthwise), dw=True)


def as_conv(table: Callable[[], list[Candidate]]) -> Build:
    """The build of a layer over one input channel: the first of the table's CONV_2D entries
    (`table()`, read when a layer is lowered) that runs the equivalent CONV_2D."""
    def run(g: Graph, n: Node, target) -> Kernel:
        return lower_as_conv(g, n, target, table())
    return streaming(with_epilogue(run), dw=True)
