"""Graph passes: each a function Graph -> Graph; `optimize` runs the target-independent pipeline.

Owns: the pass list and its order (one pipeline for every target; target-specific fusions belong
to lowering), the per-pass report (`PassResult`: nodes removed/added, every rewrite with the reason
it is exact, every refusal with the reason it is not, time), and running `ir.verify` after every
pass in debug mode (EDGECC_DEBUG=1, set by the tests).

Pipeline (each stage is also a plain Graph -> Graph function: dead_code, fold_constants,
eliminate_noops, fuse_neighbours, drop_dead_channels; `optimize` runs the reporting variants):
  dead_code  drop nodes no graph output depends on
  fold       constant folding (fold.py) to a fixed point
  eliminate  no-op reshapes/transposes/Q-DQ pairs (eliminate.py) + folding, to a fixed point
  fuse       activations and padding into their neighbours (fuse.py), to a fixed point
  channels   channels that only ever meet zero weights dropped (channels.py)
  cleanup    dead code and unreferenced values again
  outputs    every graph output that is a constant or an input copied into its own buffer
Then every remaining node must have a kernel (or be an alias): an op registered without a
lowering (one that exists only to be folded; none does today) that survived is reported as an
EdgeccError naming it.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Callable

from edgecc.errors import UnsupportedModel
from edgecc.ir import Graph, verify
from edgecc.ops import get_op
from edgecc.passes import eliminate, fold, fuse
from edgecc.passes.channels import prune_dead_channels
from edgecc.passes.dce import dead_code as _dead_code
from edgecc.passes.outputs import materialize_outputs
from edgecc.passes.rewrite import Rule, run_rules


@dataclass
class PassResult:
    name: str
    changed: bool
    removed: list[str] = field(default_factory=list)  # node names gone after the pass
    added: list[str] = field(default_factory=list)    # node names new after the pass
    applied: list[str] = field(default_factory=list)  # each rewrite: "rule: why it is exact"
    refused: list[str] = field(default_factory=list)  # each refusal: "rule at node: why not"
    seconds: float = 0.0
    nodes_after: int = 0

    def as_json(self) -> dict:
        return dict(name=self.name, changed=self.changed, removed=self.removed, added=self.added,
                    applied=self.applied, refused=self.refused, nodes_after=self.nodes_after,
                    seconds=round(self.seconds, 6))


Notes = list[str]
PassFn = Callable[[Graph, bool], "tuple[Graph, Notes, Notes]"]


def dead_code(g: Graph) -> Graph:
    """Drop nodes none of whose outputs reach a graph output (and unreferenced values)."""
    return _dead_code(g)[0]


def fold_constants(g: Graph) -> Graph:
    """Evaluate every node whose inputs are known at compile time (see fold.py)."""
    return run_rules(g, [fold.FOLD])[0]


def eliminate_noops(g: Graph) -> Graph:
    """Remove no-op reshapes/transposes/Q-DQ pairs and unused split outputs (see eliminate.py)."""
    return run_rules(g, eliminate.RULES + [fold.FOLD])[0]


def fuse_neighbours(g: Graph) -> Graph:
    """Fuse activations and padding into their neighbours (see fuse.py)."""
    return run_rules(g, fuse.RULES)[0]


def drop_dead_channels(g: Graph) -> Graph:
    """Drop activation channels that only ever meet zero weights (see channels.py)."""
    return prune_dead_channels(g)[0]


def _dce_pass(g: Graph, debug: bool) -> tuple[Graph, Notes, Notes]:
    out, notes = _dead_code(g)
    return out, notes, []


def _channels_pass(g: Graph, debug: bool) -> tuple[Graph, Notes, Notes]:
    out, notes = prune_dead_channels(g)
    return out, notes, []


def _outputs_pass(g: Graph, debug: bool) -> tuple[Graph, Notes, Notes]:
    out, notes = materialize_outputs(g)
    return out, notes, []


def _rules_pass(rules: list[Rule]) -> PassFn:
    def run(g: Graph, debug: bool) -> tuple[Graph, Notes, Notes]:
        out, report = run_rules(g, rules, debug=debug)
        return out, report.applied, report.refused
    return run


def _pipeline() -> list[tuple[str, PassFn]]:
    return [
        ("dead_code", _dce_pass),
        ("fold", _rules_pass([fold.FOLD])),
        ("eliminate", _rules_pass(eliminate.RULES + [fold.FOLD])),
        ("fuse", _rules_pass(fuse.RULES)),
        ("channels", _channels_pass),
        ("cleanup", _dce_pass),
        ("outputs", _outputs_pass),
    ]


def _names(g: Graph) -> list[str]:
    return [n.name for n in g.nodes]


def check_executable(g: Graph) -> None:
    """Every node left must have a kernel or be an alias; name the first that has neither."""
    for n in g.nodes:
        op = get_op(n.op)
        if op.lower is None and not op.alias:
            raise UnsupportedModel(f"{n.op} at op {n.index} ({n.outputs[0] if n.outputs else '?'}) "
                                   f"could not be folded at compile time and has no kernel")


def optimize(g: Graph, debug: bool | None = None,
             stages: list[tuple[str, Graph]] | None = None) -> tuple[Graph, list[PassResult]]:
    """Run the pipeline. With `stages` (a list), append (pass name, graph after it) for inspect."""
    debug = os.environ.get("EDGECC_DEBUG") == "1" if debug is None else debug
    results = []
    for name, fn in _pipeline():
        before = _names(g)
        t0 = time.perf_counter()
        g, applied, refused = fn(g, debug)
        dt = time.perf_counter() - t0
        after = _names(g)
        before_set, after_set = set(before), set(after)
        removed = [x for x in before if x not in after_set]
        added = [x for x in after if x not in before_set]
        results.append(PassResult(name, before != after or bool(applied), removed, added,
                                  applied, refused, dt, len(g.nodes)))
        if debug:
            verify(g)
        if stages is not None:
            stages.append((name, g))
    check_executable(g)
    return g, results
