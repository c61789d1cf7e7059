"""Kernel table entries: the `Candidate` record and how a list of them is tried.

Owns: `Candidate` (one optimized kernel of one op on one ISA family: applies -> None or why
not, build -> Kernel, and the runtime_c/ headers its C calls into), the `Refused` signal a
build raises when a proof it needs fails, and `try_candidates`, which keeps every refusal's
reason and hands the chosen Kernel its entry's headers. The tables are
edgecc/lower/<isa>/table.py (dsp, mve, neon, x86), one ordered list per ISA family, as TFLite
Micro keeps kernels/cmsis_nn/<op>.cc beside kernels/<op>.cc; edgecc/lower/choose.py tries them
in the target's order with the portable kernel last.

Adding an ISA kernel: one `Candidate` line in lower/<isa>/table.py and four files in parallel
folders: lower/<isa>/<op>.py, runtime_c/<isa>/<op>.h, templates/<isa>/<op>_<variant>.c.j2, a
test (see docs/architecture.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from edgecc.ir import Graph, Node
from edgecc.ops import Kernel
from edgecc.ops._float import is_float

Applies = Callable[[Graph, Node, object], "str | None"]
Build = Callable[[Graph, Node, object], Kernel]


ONNX_PORTABLE = ("ONNX numerics (onnxruntime's float32 requantization): portable kernel; the "
                 "SIMD kernels implement TFLite's epilogue only")
ORT_FLOAT_PORTABLE = ("a QDQ group onnxruntime runs in float32: portable kernel in its order of "
                      "operations")
FLOAT_PORTABLE = "float32: portable kernel (the SIMD kernels are integer only)"
WEIGHT_ZP_PORTABLE = ("weights with a non-zero zero point (ONNX): portable kernel; the SIMD "
                      "kernels assume zero-point-0 weights")


def refused_by_all(g: Graph, n: Node, onnx: bool = False, near: bool = False) -> str | None:
    """Why no table entry can run n whatever its op, or None: QLinear numerics (onnxruntime's
    epilogue, edgecc/numerics/qlinear.py) unless the entry says it implements
    that epilogue (`onnx`), float32 nodes (edgecc/ops/_float.py), and constant weights with a
    non-zero zero point, which take the portable kernels; the entries were written for TFLite's
    integer arithmetic."""
    if n.numerics.float_group:  # edgecc/ops/_ort_float.py
        # `near`: the entry implements edgecc/ops/_ort_near.py's check, which the group's
        # order must allow
        return None if near and n.numerics.near_checked else ORT_FLOAT_PORTABLE
    if n.numerics.qlinear and not onnx:
        return ONNX_PORTABLE
    if is_float(g, n):  # the twin's test (edgecc/ops/_float.py): the node takes its float path
        return FLOAT_PORTABLE
    if _weight_zero_points(g, n):  # ONNX weights (edgecc/ops/conv_integer.py, BATCH_MATMUL)
        return WEIGHT_ZP_PORTABLE
    return None


_WEIGHTED = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV", "BATCH_MATMUL",
             "CONV_INTEGER")  # ops whose input 1 is weights (other ops' zero points are fine)


def _weight_zero_points(g: Graph, n: Node) -> bool:
    """Whether n's constant weights (input 1) have a non-zero zero point, which no SIMD kernel
    subtracts (the op constraints keep such weights out of CONV_2D / DEPTHWISE_CONV_2D /
    FULLY_CONNECTED today; this keeps any future table entry from ignoring them)."""
    if n.op not in _WEIGHTED or len(n.inputs) < 2 or n.inputs[1] is None:
        return False
    w = g.value(n.inputs[1])
    return w.is_const and w.type.q is not None and any(z != 0 for z in w.type.q.zero_point)


class Refused(Exception):
    """Raised by a candidate's build when the layer turns out not to fit the kernel (a proof
    that needs the packed weights failed, a stack buffer would overflow): the message says why,
    and the chooser goes on with the next candidate."""


@dataclass(frozen=True)
class Candidate:
    """One optimized kernel of one op. `applies` returns None when the kernel can run the node,
    else why not (one line); `build` returns the Kernel (template, constants, scratch, streaming
    declaration) or raises Refused; `headers` are the runtime_c/ headers its C calls into
    (paths relative to runtime_c/, e.g. "dsp/conv_2d.h"), which the Kernel carries."""

    op: str
    isa: str       # the ISA family: "x86" (every x86 path), "neon", "dsp", "mve"
    variant: str   # the kernel family within the op; the Kernel's own variant refines it
    applies: Applies
    build: Build
    headers: tuple[str, ...]
    onnx: bool = False  # also runs ONNX-numerics nodes (its build asks n.numerics.qlinear)
    near: bool = False  # also runs float-group nodes, x86 numerics (edgecc/ops/_ort_near.py)

    @property
    def name(self) -> str:
        return f"{self.isa}-{self.variant}"


@dataclass
class Choice:
    kernel: Kernel
    refused: list[tuple[str, str]] = field(default_factory=list)  # (candidate name, why not)


def try_candidates(cands: list[Candidate], g: Graph, n: Node, target,
                   refused: list[tuple[str, str]]) -> Kernel | None:
    """The first of `cands` (in order) that applies to n and builds, carrying its entry's headers
    unless it names its own (a layer run as another op's kernel keeps that kernel's); the
    others' reasons are appended to `refused`."""
    for c in cands:
        if c.op != n.op:
            continue
        why = refused_by_all(g, n, c.onnx, c.near) or c.applies(g, n, target)
        if why:
            refused.append((c.name, why))
            continue
        try:
            k = c.build(g, n, target)
        except Refused as e:
            refused.append((c.name, str(e)))
            continue
        if not k.headers:
            k.headers = c.headers
        return k
    return None
