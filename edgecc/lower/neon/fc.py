"""FULLY_CONNECTED on NEON (runtime_c/neon/fully_connected.h,
templates/neon/fully_connected_quads.c.j2): the shared quads kernel (edgecc/lower/vec/fc.py), 16
units at a time, with NEON's epilogue names (edgecc/lower/neon/conv.py with_epilogue).
"""
from __future__ import annotations

from edgecc.ir import Graph, Node
from edgecc.lower.neon.conv import ISA, with_epilogue
from edgecc.lower.vec.fc import lower_fc as vec_fc, per_channel_kernel
from edgecc.ops import Kernel


def _fc(g: Graph, n: Node, target) -> Kernel:
    return vec_fc(g, n, ISA)


def _fc_pc(g: Graph, n: Node, target) -> Kernel:
    return per_channel_kernel(vec_fc(g, n, ISA))


lower_fc = with_epilogue(_fc)
lower_fc_pc = with_epilogue(_fc_pc)
