"""The AArch64 NEON kernel table (dot product instructions where the target has them).

Owns: which NEON kernels exist, for which op, in which order they are tried, and the NEON-only
lowerings (ADD; ONNX-numerics ADD and MUL in neon_onnx.py). The convolution, depthwise and fully connected lowerings are shared with x86
(vec.py, vec_dw.py). The C is runtime_c/neon/, the calls
templates/neon/.

ONNX numerics (edgecc/ops/_onnx_rq.py): the convolution, depthwise and fully connected entries
also take ONNX-numerics nodes (Candidate.onnx); their kernels have one body with either epilogue
(runtime_c/neon/common.h), and `with_epilogue` names the one a layer calls.
"""
from __future__ import annotations

from dataclasses import replace

from edgecc.ir import Graph, Node
from edgecc.lower import neon_onnx, vec, vec_dw
from edgecc.lower.geom import record
from edgecc.lower.table import Build, Candidate
from edgecc.lower.x86_elt import add_applies
from edgecc.ops import Kernel, in_type
from edgecc.ops.add import LEFT_SHIFT, add_quant

ISA = "neon"


def with_epilogue(build: Build) -> Build:
    """`build`, its Kernel told which epilogue its C runs: TFLite's (ec_neon_<op>_<variant>_s8)
    or, for an ONNX-numerics layer (vec.requant_arrays gave params onnx=1 and float32 `scale`),
    onnxruntime's (..._onnx_s8); templates/neon/_rq.j2 has one ec_neon_rq initializer for each."""
    def run(g: Graph, n: Node, target) -> Kernel:
        k = build(g, n, target)
        onnx = bool(k.params.get("onnx"))
        k.params.update(epilogue="onnx" if onnx else "tflite", suffix="_onnx" if onnx else "")
        if onnx:
            k.reason += "; onnxruntime's float32 epilogue (FMUL, FCVTNS)"
        return k
    return run


def onnx_too(c: Candidate) -> Candidate:
    """A conv-like entry of vec.py / vec_dw.py offered ONNX-numerics nodes as well."""
    return replace(c, build=with_epilogue(c.build), onnx=True)


CONV = [onnx_too(vec.conv_entry(ISA))]



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


TABLE: list[Candidate] = CONV + [onnx_too(c) for c in vec_dw.dw_entries(ISA, CONV)] + [
    onnx_too(vec.fc_entry(ISA)),
    onnx_too(vec.fc_pc_entry(ISA)),
    Candidate("ADD", ISA, "add-onnx", neon_onnx.add_onnx_applies, neon_onnx.lower_add_onnx,
              onnx=True),
    Candidate("ADD", ISA, "add-exact", add_applies, lower_add),
    Candidate("MUL", ISA, "mul-onnx", neon_onnx.mul_onnx_applies, neon_onnx.lower_mul_onnx,
              onnx=True),
]
