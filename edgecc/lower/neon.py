"""The AArch64 NEON kernel table (dot product instructions where the target has them).

Owns: which NEON kernels exist, for which op, in which order they are tried, and the NEON-only
lowerings (ADD). The convolution, depthwise and fully connected lowerings are shared with x86
(vec.py, vec_dw.py). The C is runtime_c/neon/, the calls
templates/neon/.
"""
from __future__ import annotations

from edgecc.ir import Graph, Node
from edgecc.lower import vec, vec_dw
from edgecc.lower.geom import record
from edgecc.lower.table import Candidate
from edgecc.lower.x86_elt import add_applies
from edgecc.ops import Kernel, in_type
from edgecc.ops.add import LEFT_SHIFT, add_quant

ISA = "neon"

CONV = [vec.conv_entry(ISA)]



# runtime_c/neon/add.h's struct, field for field
AddGeom = record("ec_neon_add_geom", "n left off1 m1 e1 off2 m2 e2 mo eo zp lo hi")


def lower_add(g: Graph, n: Node, target) -> Kernel:
    """int8 ADD of two same-shape activations (the preconditions are x86's: x86_elt.add_applies),
    TFLite's arithmetic in NEON form: ec_neon_add_exact_s8."""
    q = add_quant(g, n)
    geom = AddGeom(in_type(g, n, 0).numel, LEFT_SHIFT, q["in1_off"], q["m1"], -q["s1"],
                   q["in2_off"], q["m2"], -q["s2"], q["mo"], -q["so"], q["out_zp"],
                   q["act_min"], q["act_max"])
    return Kernel("neon/add_exact.c.j2", params=dict(geom=geom), variant="neon-add-exact",
                  reason="NEON: TFLite's three roundings (SQRDMULH, SRSHL), 16 per step")


TABLE: list[Candidate] = CONV + vec_dw.dw_entries(ISA, CONV) + [
    vec.fc_entry(ISA),
    vec.fc_pc_entry(ISA),
    Candidate("ADD", ISA, "add-exact", add_applies, lower_add),
]
