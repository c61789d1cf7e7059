"""The Helium pools (runtime_c/mve/pool_2d.h, templates/mve/pool_2d.c.j2): 16 channels per
vector. When they apply, their geometry record and Kernel are the DSP pools'
(edgecc/lower/dsp/pool.py, one C struct for both ISAs)."""
from __future__ import annotations

from edgecc.ir import Graph, Node
from edgecc.lower.dsp.pool import pool_kernel
from edgecc.ops import Kernel


def lower_pool(g: Graph, n: Node, target) -> Kernel:
    """The Helium pool kernel of n (AVERAGE_POOL_2D or MAX_POOL_2D)."""
    return pool_kernel(g, n, "mve")
