"""DEPTHWISE_CONV_2D on x86 (runtime_c/x86/depthwise_conv_2d.h, depthwise_conv_2d_3x3.h;
templates/x86/depthwise_conv_2d_*.c.j2): the shared depthwise lowering
(edgecc/lower/vec/depthwise.py: tap pairs, and 3x3 rows on x86); a layer over one input channel
runs as the table's convolution.
"""
from __future__ import annotations

from typing import Callable

from edgecc.ir import Graph, Node
from edgecc.lower.table import Build, Candidate
from edgecc.lower.vec.depthwise import lower_as_conv, lower_depthwise
from edgecc.ops import Kernel


def lower_dw(g: Graph, n: Node, target) -> Kernel:
    """16 channels x tap pairs per step, or the 3x3 row kernel."""
    return lower_depthwise(g, n, "x86")


def as_conv(table: Callable[[], list[Candidate]]) -> Build:
    """The build of a layer over one input channel: the first of the table's CONV_2D entries
    (`table()`, read when a layer is lowered) that runs the equivalent CONV_2D."""
    def run(g: Graph, n: Node, target) -> Kernel:
        return lower_as_conv(g, n, target, table())
    return run
