"""Dead code elimination: whole-graph work, plain code (not rules).

Owns: dropping every node none of whose outputs reaches a graph output (nodes that update a
variable tensor stay: the next run reads it), and dropping values that no
node and no graph input/output mentions any more (folded intermediates, unused weights), reporting
both. A node with several outputs stays as long as one of them is used: the kernels write all
their outputs, so an unused output keeps its buffer (listed in the report).
"""
from __future__ import annotations

from edgecc.ir import Graph
from edgecc.ops import get_op, is_supported


def dead_code(g: Graph) -> tuple[Graph, list[str]]:
    """(graph without dead nodes and unreferenced values, notes on what went)."""
    needed = set(g.outputs)
    keep = []
    notes = []
    for n in reversed(g.nodes):
        # a node that updates a variable (ASSIGN_VARIABLE) matters to the next run
        if any(o in needed for o in n.outputs) or (is_supported(n.op) and get_op(n.op).updates):
            keep.append(n)
            needed.update(i for i in n.inputs if i is not None)
            unused = [o for o in n.outputs if o not in needed]
            if unused:
                notes.append(f"{n.name}: outputs {unused} are unused (kept: the kernel writes them)")
        else:
            notes.append(f"removed {n.name} ({n.op}): no graph output depends on it")
    out = g.copy()
    out.nodes = list(reversed(keep))
    used = set(g.inputs) | set(g.outputs)
    for n in out.nodes:
        used.update(v for v in [*n.inputs, *n.outputs] if v is not None)
    dropped = [k for k in out.values if k not in used]
    for k in dropped:
        del out.values[k]
    if dropped:
        notes.append(f"dropped {len(dropped)} unreferenced values")
    return out, list(reversed(notes))
