"""Declarative local rewrites and the engine that runs them to a fixed point.

Owns: `Rule` (a pattern that finds candidate subgraphs, a check that returns the reason a candidate
must NOT be rewritten, and the rewrite itself), `Rewrite` (the edit a rule produces: nodes removed,
nodes added, uses redirected, values replaced, and a sentence saying why it is exact), and
`run_rules`, which applies rules until none applies and reports every rewrite and every refusal.

The engine sweeps the nodes in order; for each node it tries the rules anchored on its op. A
candidate whose check returns a reason is recorded as refused (the reason is kept for `inspect`);
otherwise the rewrite is applied at once and the sweep resumes at the first changed position.
Sweeps repeat until one changes nothing. Rules must shrink the graph or move it toward a normal
form, so this terminates; a hard cap turns a looping rule into an error naming it.

Invariants the engine enforces on every rewrite (so rules stay small): graph inputs and outputs
are never renamed or removed, added nodes go where the last removed node was (all their inputs are
defined before that point), and with EDGECC_DEBUG=1 `ir.verify` runs after every rewrite and names
the rule that broke the graph.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from edgecc.ir import Graph, IRError, Node, Value, verify


@dataclass
class Match:
    """A candidate found by a rule's pattern: named nodes plus anything the check computed."""

    nodes: dict[str, Node]
    info: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Node:
        return self.nodes[key]


@dataclass
class Rewrite:
    remove: list[Node]
    add: list[Node] = field(default_factory=list)
    replace_uses: dict[str, str] = field(default_factory=dict)  # old value -> new value
    values: dict[str, Value] = field(default_factory=dict)     # values created or replaced
    why: str = ""


@dataclass
class Ctx:
    """The graph being rewritten with its producer/consumer maps (kept up to date by every
    rewrite: drop / note)."""

    g: Graph
    producer: dict[str, Node] = field(default_factory=dict)
    consumers: dict[str, list[Node]] = field(default_factory=dict)

    def refresh(self) -> None:
        self.producer = self.g.producer()
        self.consumers = self.g.consumers()

    def drop(self, n: Node) -> None:
        """Forget node n (removed from the graph) in the maps."""
        for o in n.outputs:
            if self.producer.get(o) is n:
                del self.producer[o]
        for i in n.inputs:
            users = self.consumers.get(i)
            if i is not None and users:
                users[:] = [u for u in users if u is not n]
                if not users:
                    del self.consumers[i]

    def note(self, n: Node) -> None:
        """Record node n (added to the graph, or its inputs changed) in the maps."""
        for o in n.outputs:
            self.producer[o] = n
        for i in n.inputs:
            if i is not None:
                self.consumers.setdefault(i, []).append(n)

    def only_consumer(self, value: str) -> Node | None:
        users = self.consumers.get(value, [])
        return users[0] if len(users) == 1 else None

    def is_graph_io(self, value: str) -> bool:
        return value in self.g.outputs or value in self.g.inputs


@dataclass
class Rule:
    """pattern(ctx, node) -> Match | None: structure only (None: nothing to talk about).
    check(ctx, match) -> str | None: the reason the rewrite would NOT be exact, or None.
    rewrite(ctx, match) -> Rewrite."""

    name: str
    ops: tuple[str, ...]  # anchor ops; ("*",) for every op
    pattern: Callable[[Ctx, Node], Match | None]
    check: Callable[[Ctx, Match], str | None]
    rewrite: Callable[[Ctx, Match], Rewrite]


@dataclass
class RuleReport:
    applied: list[str] = field(default_factory=list)   # "rule: why"
    refused: list[str] = field(default_factory=list)   # "rule at node: reason"


class RuleError(RuntimeError):
    """A rule produced an invalid graph or did not converge: a bug in edgecc, not in the model."""


def _position(nodes: list[Node], n: Node, near: int) -> int:
    """The position of node n (by identity), searched outward from `near` (a rule's nodes sit
    beside the node it matched on, so this is O(1) for the usual rewrite); -1 when absent."""
    for d in range(len(nodes) + 1):
        for k in (near - d, near + d):
            if 0 <= k < len(nodes) and nodes[k] is n:
                return k
        if near - d < 0 and near + d >= len(nodes):
            break
    return -1


def _apply(ctx: Ctx, rw: Rewrite, rule: str, near: int = 0) -> int:
    """Edit ctx.g (and its maps) in place; return the node position where the edit happened.
    `near`: the position of the node the rule matched on."""
    g = ctx.g
    protected = set(g.inputs) | set(g.outputs)
    for old in rw.replace_uses:
        if old in protected:
            raise RuleError(f"rule {rule} tried to redirect graph input/output {old!r}")
    removed_outputs = {o for n in rw.remove for o in n.outputs}
    added_outputs = {o for n in rw.add for o in n.outputs}
    lost = (removed_outputs - added_outputs - set(rw.values)) & set(g.outputs)
    if lost:
        raise RuleError(f"rule {rule} removed the producer of graph output {sorted(lost)}")
    positions = sorted({_position(g.nodes, n, near) for n in rw.remove})
    if len(positions) != len({id(n) for n in rw.remove}) or -1 in positions:
        raise RuleError(f"rule {rule} removed a node that is not in the graph")
    pos = (positions[-1] - len(positions) + 1) if positions else len(g.nodes)
    for k in reversed(positions):  # in place: a rewrite costs what it touches, not the graph
        del g.nodes[k]
    g.nodes[pos:pos] = list(rw.add)
    g.values.update(rw.values)
    # the producer / consumer maps follow the edit (rebuilding them per rewrite made a chain of
    # n fusions O(n^2)); only the readers of a redirected value change their inputs
    for n in rw.remove:
        ctx.drop(n)
    for n in rw.add:
        ctx.note(n)
    if rw.replace_uses:
        readers = {id(n): n for old in rw.replace_uses for n in ctx.consumers.get(old, [])}
        for n in readers.values():
            ctx.drop(n)
            n.inputs = [rw.replace_uses.get(i, i) if i is not None else None for i in n.inputs]
            ctx.note(n)
    return pos


def _check_maps(ctx: Ctx, rule: str) -> None:
    """Debug mode: the maps kept up to date edit by edit equal the ones rebuilt from scratch."""
    fresh = Ctx(ctx.g)
    fresh.refresh()
    same_users = {v: sorted(map(id, u)) for v, u in ctx.consumers.items()} == \
        {v: sorted(map(id, u)) for v, u in fresh.consumers.items()}
    same_producers = {v: id(n) for v, n in ctx.producer.items()} == \
        {v: id(n) for v, n in fresh.producer.items()}
    if not same_producers or not same_users:
        raise RuleError(f"rule {rule} left the producer / consumer maps out of date")


def run_rules(g: Graph, rules: list[Rule], debug: bool = False,
              max_rewrites: int | None = None) -> tuple[Graph, RuleReport]:
    """Apply `rules` to a copy of g until none applies. The input graph is not modified."""
    g = g.copy()
    report = RuleReport()
    refused: dict[tuple[str, str], str] = {}
    by_op: dict[str, list[Rule]] = {}
    for r in rules:
        for op in r.ops:
            by_op.setdefault(op, []).append(r)
    cap = max_rewrites if max_rewrites is not None else 20 * (len(g.nodes) + 10)
    ctx = Ctx(g)
    ctx.refresh()
    count = 0
    changed = True
    while changed:
        changed = False
        refused.clear()  # the last sweep (which changes nothing) re-checks every candidate
        i = 0
        while i < len(g.nodes):
            n = g.nodes[i]
            applied = False
            for rule in by_op.get(n.op, []) + by_op.get("*", []):
                m = rule.pattern(ctx, n)
                if m is None:
                    continue
                reason = rule.check(ctx, m)
                key = (rule.name, n.name)
                if reason:
                    refused[key] = reason
                    continue
                refused.pop(key, None)
                rw = rule.rewrite(ctx, m)
                pos = _apply(ctx, rw, rule.name, i)
                report.applied.append(f"{rule.name}: {rw.why}")
                count += 1
                if count > cap:
                    raise RuleError(f"rule {rule.name} did not converge after {cap} rewrites")
                if debug:
                    try:
                        verify(g)
                    except IRError as e:
                        raise RuleError(f"rule {rule.name} broke the graph: {e}") from None
                    _check_maps(ctx, rule.name)
                i = min(i, pos)
                applied = changed = True
                break
            if not applied:
                i += 1
    names = {n.name for n in g.nodes}
    report.refused = [f"{rule} at {node}: {why}" for (rule, node), why in refused.items()
                      if node in names]
    return g, report


# ---- helpers shared by the rule modules -------------------------------------------------------

def single_use_internal(ctx: Ctx, value: str) -> str | None:
    """Why `value` cannot disappear into a fused node (None when it can)."""
    if value in ctx.g.outputs:
        return f"{value} is a graph output"
    users = ctx.consumers.get(value, [])
    if len(users) != 1:
        return f"{value} has {len(users)} consumers"
    return None


def fused_name(*nodes: Node) -> str:
    return "+".join(n.name for n in nodes)
