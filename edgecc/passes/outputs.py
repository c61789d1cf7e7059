"""Graph outputs always written: the last pass before lowering.

Owns: giving every graph output its own buffer written by a kernel. After folding, an output may
be a constant (a constant-only path such as a RESHAPE of weights: nothing would write it, and the
caller would read stale arena bytes), or a graph input (the caller's input bytes). Each such
output becomes the result of an EDGECC_COPY node (ops/edgecc_copy.py) into a new value.
"""
from __future__ import annotations

from edgecc.ir import Graph, Node, Value


def materialize_outputs(g: Graph) -> tuple[Graph, list[str]]:
    """(g with a copy in front of every constant or input graph output, one note per copy)."""
    todo = [i for i, v in enumerate(g.outputs) if g.value(v).is_const or v in g.inputs]
    if not todo:
        return g, []
    g = g.copy()
    notes = []
    for i in todo:
        src = g.outputs[i]
        val = g.value(src)
        new = f"{src}_out{i}"
        g.values[new] = Value(new, val.type, None, label=val.label)
        kind = "constant" if val.is_const else "graph input"
        g.nodes.append(Node("EDGECC_COPY", [src], [new], {}, name=f"copy_output{i}",
                            index=-1))
        g.outputs[i] = new
        notes.append(f"output {i} ({src}) is a {kind}: copied into its own buffer by EDGECC_COPY")
    return g, notes
