"""The Helium ADD (runtime_c/mve/add.h, templates/mve/add_lut.c.j2).

Owns: TFLite's int8 ADD on the DSP ADD's tables (edgecc/lower/dsp/eltwise.py add_tables), read
by word gathers, 4 elements per vector. The ONNX ADD is edgecc/lower/mve/onnx.py's.
"""
from __future__ import annotations

from edgecc.ir import Graph, Node
from edgecc.lower.dsp.eltwise import add_tables
from edgecc.ops import Kernel


def lower_add(g: Graph, n: Node, target) -> Kernel:
    """The DSP ADD's tables (edgecc/lower/dsp/eltwise.py add_tables), read by word gathers."""
    geom, ta, tb = add_tables(g, n)
    return Kernel("mve/add_lut.c.j2", params=dict(geom=geom), consts=dict(ta=ta, tb=tb),
                  variant="mve-add-lut",
                  reason="Helium: inputs rescaled through 256-entry tables read by word "
                         "gathers, 4 elements per vector")
