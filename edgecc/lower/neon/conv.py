"""CONV_2D on NEON (runtime_c/neon/conv_2d.h, templates/neon/conv_2d_4px.c.j2), and how every
NEON vector kernel names its epilogue and declares its pass order.

Owns: the NEON build of the shared convolution (edgecc/lower/vec/conv.py): ONNX numerics
(edgecc/numerics/qlinear.py) run the same kernels, whose one body has either epilogue
(runtime_c/neon/common.h), and `with_epilogue` names the one a layer calls; the convolution and
depthwise kernels declare their pass order (`streaming`, edgecc/plan/stream.py), so the planner
may put a layer's output over the input it is still reading.
"""
from __future__ import annotations

from edgecc.ir import Graph, Node
from edgecc.lower.table import Build
from edgecc.lower.vec.conv import MAX_KP, lower_conv_2d
from edgecc.ops import Kernel

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
    return (0, 4, 1) if geom.kp + geom.out_c <= MAX_KP else (0, 4)


def streaming(build: Build, dw: bool) -> Build:
    """`build`, its Kernel declaring its pass order: the depthwise kernel's (dw) one output pixel
    at a time, all of its taps read before it is written: (1, 1); the convolution's conv_pass.
    A depthwise layer run as a convolution (dw-as-conv) gets conv_pass, from its own geometry."""
    def run(g: Graph, n: Node, target) -> Kernel:
        k = build(g, n, target)
        k.streams = (1, 1) if dw and k.template.startswith(f"{ISA}/depthwise") else conv_pass(g, n, k)
        return k
    return run


def _conv(g: Graph, n: Node, target) -> Kernel:
    return lower_conv_2d(g, n, ISA)


# blocks of 4 output pixels x 16 channels over the quads, either epilogue
lower_conv = streaming(with_epilogue(_conv), dw=False)
