"""The chooser: which kernel runs a node on a target, and why the others do not.

Owns: the map from ISA family to kernel table (edgecc/lower/<isa>/table.py) and `choose`,
which tries the tables of the target's families in the target's order (`Target.isa_path`: mve
before dsp on a Cortex-M55; this is the one ISA test of the lowering) and the op's portable
kernel (`ops/<op>.py`'s `lower`) last, keeping every refused candidate's reason for `inspect
--verbose`, `inspect --json` and `report`.
"""
from __future__ import annotations

from edgecc.ir import Graph, Node
from edgecc.lower.dsp.table import TABLE as DSP
from edgecc.lower.mve.table import TABLE as MVE
from edgecc.lower.neon.table import TABLE as NEON
from edgecc.lower.table import Candidate, Choice, try_candidates
from edgecc.lower.x86.table import TABLE as X86
from edgecc.ops import get_op

TABLES: dict[str, list[Candidate]] = {"x86": X86, "neon": NEON, "dsp": DSP, "mve": MVE}


def choose(g: Graph, n: Node, target) -> Choice:
    """The kernel for n on target: the target's tables in its ISA order, then the portable
    kernel, whose reason becomes the last refusal when it has none of its own."""
    refused: list[tuple[str, str]] = []
    for isa in target.isa_path:
        k = try_candidates(TABLES.get(isa, []), g, n, target, refused)
        if k is not None:
            return Choice(k, refused)
    k = get_op(n.op).lower(g, n, target)
    if not k.reason and refused:
        k.reason = refused[-1][1]
    return Choice(k, refused)
