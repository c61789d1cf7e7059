"""When the x86 and NEON int8 ADD kernels apply (runtime_c/x86/add.h, runtime_c/neon/add.h): the
test both ISAs' TFLite ADD entries share; the kernels are edgecc/lower/x86/eltwise.py and
edgecc/lower/neon/eltwise.py."""
from __future__ import annotations

from edgecc.ir import DType, Graph, Node
from edgecc.ops import const, in_type, out_type
from edgecc.ops.add import add_quant


def add_applies(g: Graph, n: Node, target) -> str | None:
    """Why the x86 / NEON ADD kernels cannot run n (None when they can): int8, two same-shape
    activation inputs, non-degenerate multipliers."""
    if out_type(g, n).dtype != DType.INT8:
        return "int16: portable kernel"
    if in_type(g, n, 0).shape != in_type(g, n, 1).shape or \
            any(const(g, n, i) is not None for i in (0, 1)):
        return "broadcast or constant input: portable kernel"
    q = add_quant(g, n)
    if 0 in (q["m1"], q["m2"], q["mo"]) or min(q["s1"], q["s2"], q["so"]) < -31:
        return "degenerate multiplier: portable kernel"
    return None
