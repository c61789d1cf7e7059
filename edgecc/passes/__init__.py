"""Graph passes: each a function Graph -> Graph; `optimize` runs the target-independent pipeline.

Owns: the pass list and its order, and running `ir.verify` after every pass in debug mode
(EDGECC_DEBUG=1, and always in the tests).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable

from edgecc.ir import Graph, verify


@dataclass
class PassResult:
    name: str
    changed: bool
    removed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)


def dead_code(g: Graph) -> Graph:
    """Drop nodes none of whose outputs reach a graph output."""
    needed = set(g.outputs)
    keep = []
    for n in reversed(g.nodes):
        if any(o in needed for o in n.outputs):
            keep.append(n)
            needed.update(i for i in n.inputs if i is not None)
    out = g.copy()
    out.nodes = list(reversed(keep))
    return out


PIPELINE: list[tuple[str, Callable[[Graph], Graph]]] = [("dead_code", dead_code)]


def optimize(g: Graph, debug: bool | None = None) -> tuple[Graph, list[PassResult]]:
    debug = os.environ.get("EDGECC_DEBUG") == "1" if debug is None else debug
    results = []
    for name, fn in PIPELINE:
        before = [nd.name for nd in g.nodes]
        g = fn(g)
        after = [nd.name for nd in g.nodes]
        removed = [x for x in before if x not in set(after)]
        added = [x for x in after if x not in set(before)]
        results.append(PassResult(name, before != after, removed, added))
        if debug:
            verify(g)
    return g, results
