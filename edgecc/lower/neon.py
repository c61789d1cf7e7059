"""The AArch64 NEON kernel table (dot product instructions where the target has them).

Owns: which NEON kernels exist, for which op, in which order they are tried, and the NEON-only
lowerings (ADD; ONNX-numerics ADD and MUL in neon_onnx.py). The convolution, depthwise and fully connected lowerings are shared with x86
(vec.py, vec_dw.py). The C is runtime_c/neon/, the calls
templates/neon/.

ONNX numerics (edgecc/numerics/qlinear.py): the convolution, depthwise and fully connected entries
also take ONNX-numerics nodes (Candidate.onnx); their kernels have one body with either epilogue
(runtime_c/neon/common.h), and `with_epilogue` names the one a layer calls.

Streaming (edgecc/plan/stream.py): the convolution and depthwise kernels declare their pass order
(`streaming`), so the planner may put a layer's output over the input it is still reading.
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
from edgecc.plan.stream import STREAM_OPS

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


def conv_pass(g: Graph, n: Node, k: Kernel) -> tuple[int, ...]:
    """The pass order of ec_neon_conv_2d_4px (Kernel.streams): blocks of 4 output pixels in flat
    order over rows and batches, (0, 4); a block writes only its own pixels and reads only its
    pixels' windows (and its stack copy of the border ones). It reads all of them before it
    writes (reads first, (0, 4, 1)) when its outputs fit beside the gathered pixels on the stack
    (kp + out_c <= EC_VEC_MAX_KP, runtime_c/vec/common.h), else writes each channel block as it
    goes."""
    geom = k.params["geom"]
    return (0, 4, 1) if geom.kp + geom.out_c <= vec.MAX_KP else (0, 4)


def streaming(build: Build, dw: bool) -> Build:
    """`build`, its Kernel declaring its pass order: the depthwise kernel's (dw) one output pixel
    at a time, all of its taps read before it is written: (1, 1); the convolution's conv_pass.
    A depthwise layer run as a convolution (dw-as-conv) gets conv_pass, from its own geometry."""
    def run(g: Graph, n: Node, target) -> Kernel:
        k = build(g, n, target)
        k.streams = (1, 1) if dw and k.template.startswith(f"{ISA}/depthwise") else conv_pass(g, n, k)
        return k
    return run


def onnx_too(c: Candidate) -> Candidate:
    """A conv-like entry of vec.py / vec_dw.py offered ONNX-numerics nodes as well, declaring
    its pass order (streaming)."""
    build = with_epilogue(c.build)
    if c.op in STREAM_OPS:
        build = streaming(build, c.op == "DEPTHWISE_CONV_2D")
    return replace(c, build=build, onnx=True)


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
