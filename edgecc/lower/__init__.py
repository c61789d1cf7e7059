"""Lowering: pick a kernel for every node that executes, for one target.

Owns: calling each op's `lower`, resolving its template along the target's ISA search path
(e.g. mve -> dsp -> c, so a missing optimized kernel falls back to the portable one), and recording
which variant was chosen and why. Alias ops (reshape-like) produce no kernel.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from edgecc.errors import EdgeccError
from edgecc.ir import Graph, Node
from edgecc.lower.headers import headers_for
from edgecc.ops import Kernel, get_op
from edgecc.resources import data_dir
from edgecc.targets import Target


@dataclass
class Lowered:
    node: Node
    kernel: Kernel
    template_path: str  # relative to templates/, e.g. "c/fully_connected.c.j2"


def resolve_template(target: Target, template: str) -> str:
    root = data_dir("templates")
    for isa in target.isa_path:
        if (root / isa / template).is_file():
            return f"{isa}/{template}"
    raise FileNotFoundError(f"no template {template} for target {target.name}")


def lower_node(g: Graph, n: Node, target: Target) -> Lowered:
    op = get_op(n.op)
    try:
        k = op.lower(g, n, target)
        path = resolve_template(target, k.template)
    except EdgeccError:
        raise
    except Exception as e:  # a bug, but the user still gets one line naming the layer
        raise EdgeccError(f"internal error lowering op {n.index} ({n.op}) for {target.name}: "
                          f"{type(e).__name__}: {e}") from e
    if not k.headers:
        k = replace(k, headers=headers_for(path))
    return Lowered(n, k, path)


def lower_graph(g: Graph, target: Target, scratch_budget: dict[int, int] | None = None
                ) -> list[Lowered]:
    """One kernel per executing node. With `scratch_budget` (node position -> bytes dead at that
    step), an optimized kernel whose scratch would not fit there gives way to the portable kernel
    of the same op: speed never costs RAM beyond the activations' own peak."""
    portable = replace(target, isa_path=("c",), features=frozenset())
    out = []
    for i, n in enumerate(g.nodes):
        if get_op(n.op).alias:
            continue
        free = None if scratch_budget is None else scratch_budget.get(i, 0)
        lw = lower_node(g, n, replace(target, scratch_budget=free))
        if free is not None and lw.kernel.scratch > free and not lw.template_path.startswith("c/"):
            alt = lower_node(g, n, replace(portable, scratch_budget=free))
            if alt.kernel.scratch < lw.kernel.scratch:
                alt.kernel.reason = (f"{lw.kernel.variant} needs {lw.kernel.scratch} B scratch, "
                                     f"{free} B are dead at this step: portable kernel")
                lw = alt
        out.append(lw)
    return out


def alias_ops() -> set[str]:
    from edgecc.ops import all_ops
    return {name for name, op in all_ops().items() if op.alias}
