"""Lowering: pick a kernel for every node that executes, for one target.

Owns: calling each op's `lower`, resolving its template along the target's ISA search path
(e.g. mve -> dsp -> c, so a missing optimized kernel falls back to the portable one), and recording
which variant was chosen and why. Alias ops (reshape-like) produce no kernel.
"""
from __future__ import annotations

from dataclasses import dataclass

from edgecc.errors import EdgeccError
from edgecc.ir import Graph, Node
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


def lower_graph(g: Graph, target: Target) -> list[Lowered]:
    out = []
    for n in g.nodes:
        op = get_op(n.op)
        if op.alias:
            continue
        try:
            k = op.lower(g, n, target)
            path = resolve_template(target, k.template)
        except EdgeccError:
            raise
        except Exception as e:  # a bug, but the user still gets one line naming the layer
            raise EdgeccError(f"internal error lowering op {n.index} ({n.op}) for {target.name}: "
                              f"{type(e).__name__}: {e}") from e
        out.append(Lowered(n, k, path))
    return out


def alias_ops() -> set[str]:
    from edgecc.ops import all_ops
    return {name for name, op in all_ops().items() if op.alias}
