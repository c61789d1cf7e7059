"""TFLite's int8 ADD on NEON (runtime_c/neon/add.h, templates/neon/add_exact.c.j2).

Owns: its geometry record and constants: TFLite's three roundings (SQRDMULH, SRSHL), 16 per
step. When it applies is the x86 ADD's test (edgecc/lower/vec/eltwise.py); the ONNX ADD / MUL
are edgecc/lower/neon/eltwise_onnx.py.
"""
from __future__ import annotations

from edgecc.ir import Graph, Node
from edgecc.lower.layout import record
from edgecc.ops import Kernel, in_type
from edgecc.ops.add import LEFT_SHIFT, add_quant

# runtime_c/neon/add.h's struct, field for field
AddGeom = record("ec_neon_add_geom", "n left off1 m1 e1 off2 m2 e2 mo eo zp lo hi")


def lower_add(g: Graph, n: Node, target) -> Kernel:
    """int8 ADD of two same-shape activations (the preconditions are x86's: edgecc/lower/vec/
    eltwise.py add_applies), TFLite's arithmetic in NEON form: ec_neon_add_exact_s8."""
    q = add_quant(g, n)
    geom = AddGeom(in_type(g, n, 0).numel, LEFT_SHIFT, q["in1_off"], q["m1"], -q["s1"],
                   q["in2_off"], q["m2"], -q["s2"], q["mo"], -q["so"], q["out_zp"],
                   q["act_min"], q["act_max"])
    return Kernel("neon/add_exact.c.j2", params=dict(geom=geom), variant="neon-add-exact",
                  reason="NEON: TFLite's three roundings (SQRDMULH, SRSHL), 16 per step")
