"""The ONNX epilogue of the x86 convolution, depthwise and fully connected kernels.

Owns: turning an x86 kernel lowered for a node's accumulator (edgecc/lower/vec/, x86/fc.py:
the same int32 accumulator for TFLite and ONNX numerics) into one that ends in
onnxruntime's float32 requantization (edgecc/numerics/qlinear.py) for an ONNX-numerics node: the
float32 scale per output channel (`fscale`, runtime_c/x86/common.h: ec_x86_onnx8) replaces the
fixed-point constants, and the kernels take their non-fast path, where ec_x86_exact8 reads it.
The kernel bodies stay one: the epilogue is chosen by q->fscale. TFLite nodes pass unchanged.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.lower.table import Candidate, Refused
from edgecc.ops import Kernel, out_type
from edgecc.numerics.qlinear import onnx_scales


def onnx_epilogue(k: Kernel, g: Graph, n: Node) -> Kernel:
    """k unchanged for a TFLite node; for an ONNX-numerics one, k with fscale (the padded
    float32 scales), fast = 0 (one constant set per unit: uni = 0) and the fixed-point arrays
    zeroed (never read on that path)."""
    if not n.numerics.qlinear:
        return k
    if k.template.endswith("3x3.c.j2"):
        raise Refused("ONNX numerics: the 3x3 depthwise kernel has TFLite's epilogue only")
    channels = int(out_type(g, n).shape[-1])
    length = len(k.consts.get("bias_u", k.consts.get("bias")))
    scale = np.zeros(length, np.float32)
    scale[:channels] = onnx_scales(g, n, channels)
    zeros = np.zeros(length, np.int32)
    consts = dict(k.consts, fscale=scale, mult=zeros, left=zeros, right=zeros)
    consts.pop("c64", None)
    params = dict(k.params, fast=0, L=0, onnx=1)
    if "uni" in params:
        params["uni"] = 0
    return replace(k, params=params, consts=consts,
                   reason=k.reason + "; ONNX numerics: onnxruntime's float32 epilogue (scale per "
                   "channel, round half to even)")


def onnx_entry(c: Candidate) -> Candidate:
    """The table entry c, offered ONNX-numerics nodes too, its kernels ending in their epilogue."""
    return Candidate(c.op, c.isa, c.variant, c.applies,
                     lambda g, n, t: onnx_epilogue(c.build(g, n, t), g, n), c.headers, onnx=True)
