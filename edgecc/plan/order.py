"""Operator order: among the topological orders of the graph, the one with the smallest peak.

Owns: the peak of a given order (with the planner's aliasing, in-place and scratch rules), the
search for a better order, and applying an order to a graph.

Algorithm: the bytes alive after a set S of executed nodes depend only on S (a group lives when it
was produced in S, or is a graph input, and is a graph output or still has a consumer outside S).
Running node n next costs, during its step, live(S) + its new outputs + its scratch - the outputs it
writes in place over an input that dies at n, and what a streaming pair overlaps when its input
dies at n (also a function of S). So the best peak over orders
is a dynamic program over the "down-sets" S of the graph, processed by size: f(S + n) =
min(max(f(S), step(S, n))). A chain has one down-set per size and residual blocks a few, so the
DP is exact for the models we meet; when a size has more down-sets than the beam (BEAM, less on
big graphs so that the work stays bounded), only those with the smallest (peak, live bytes)
survive (a beam search: the result is still a valid order, just not proven best).
"""
from __future__ import annotations

from edgecc.ir import Graph
from edgecc.plan.liveness import StaticGroups, inplace_candidates, static_groups
from edgecc.plan.stream import aligned, saving, stream_pair

BEAM = 4000
WORK = 1_000_000  # beam x nodes x nodes: keeps the search about a second on any graph


class OrderModel:
    """Per-node facts the DP needs, as bit masks over node positions of `g`."""

    def __init__(self, g: Graph, scratch: dict[int, int], alias_ops: set[str], inplace: bool,
                 streams: dict[int, tuple] | None = None, align: int = 16):
        self.g = g
        self.n = len(g.nodes)
        sg: StaticGroups = static_groups(g, alias_ops)
        self.sg = sg
        roots = list(sg.size)
        self.gid = {r: k for k, r in enumerate(roots)}
        self.size = [sg.size[r] for r in roots]
        self.is_out = [r in sg.outputs for r in roots]
        self.cons = [0] * len(roots)        # consumers of each group (bit mask of nodes)
        self.pred = [0] * self.n            # nodes each node must follow
        self.succ: list[set[int]] = [set() for _ in range(self.n)]  # nodes that read its outputs
        prod: dict[str, int] = {}
        for i, nd in enumerate(g.nodes):
            for o in nd.outputs:
                prod[o] = i
        self.new = [0] * self.n             # bytes of groups a node creates
        self.reads: list[list[int]] = [[] for _ in range(self.n)]
        self.born: list[list[int]] = [[] for _ in range(self.n)]
        for i, nd in enumerate(g.nodes):
            for v in nd.inputs:
                if v is None:
                    continue
                if v in prod:
                    self.pred[i] |= 1 << prod[v]
                    self.succ[prod[v]].add(i)
                if v in sg.root:
                    k = self.gid[sg.root[v]]
                    self.cons[k] |= 1 << i
                    if k not in self.reads[i]:
                        self.reads[i].append(k)
            for o in nd.outputs:
                if o in sg.root and sg.root[o] == o:
                    self.born[i].append(self.gid[o])
                    self.new[i] += sg.size[o]
        self.scratch = [scratch.get(i, 0) for i in range(self.n)]
        self.inplace = [[(self.gid[o], self.gid[r]) for o, r in inplace_candidates(g, nd, sg,
                                                                                   alias_ops)]
                        if inplace else [] for nd in g.nodes]
        # streaming pairs (output group, input group, bytes saved when the input dies here)
        self.streams: list[list[tuple[int, int, int]]] = [[] for _ in range(self.n)]
        for i, decl in (streams or {}).items():
            pair = stream_pair(g, g.nodes[i], decl) if i < self.n else None
            if pair is None or pair[0] not in sg.root or pair[1] not in sg.root:
                continue
            o, x = self.gid[sg.root[pair[0]]], self.gid[sg.root[pair[1]]]
            if o != x and not self.is_out[x]:
                self.streams[i].append((o, x, saving(self.size[x], self.size[o],
                                                     aligned(pair[2], align))))
        self.start = sum(self.size[self.gid[r]] for r in sg.inputs)
        self.inputs = [self.gid[r] for r in sg.inputs]

    def dies(self, k: int, done: int) -> bool:
        return not self.is_out[k] and self.cons[k] & ~done == 0

    def step(self, live: int, done: int, i: int) -> tuple[int, int]:
        """(peak during node i, live bytes after it) when `done` (including i) has run."""
        save = 0
        used: set[int] = set()
        for o, r in self.inplace[i]:
            if r not in used and o not in used and self.dies(r, done):
                save += self.size[o]
                used.update((r, o))
        for o, r, sv in self.streams[i]:
            if r not in used and o not in used and self.dies(r, done):
                save += sv
                used.update((r, o))
        peak = live + self.new[i] + self.scratch[i] - save
        after = live + self.new[i]
        for k in self.reads[i]:
            if self.dies(k, done):
                after -= self.size[k]
        for k in self.born[i]:
            if self.dies(k, done):
                after -= self.size[k]
        if done == 1 << i:  # first step: graph inputs nobody reads die now
            for k in self.inputs:
                if self.cons[k] == 0 and not self.is_out[k]:
                    after -= self.size[k]
        return peak, after

    def peak_of(self, order: list[int]) -> int:
        live, done, peak = self.start, 0, self.start if self.n == 0 else 0
        for i in order:
            done |= 1 << i
            p, live = self.step(live, done, i)
            peak = max(peak, p)
        return peak


def best_order(g: Graph, scratch: dict[int, int], alias_ops: set[str],
               inplace: bool = True, beam: int = BEAM,
               streams: dict[int, tuple] | None = None) -> tuple[list[int], int, bool]:
    """(order as positions in g.nodes, its peak, exact?) with the smallest peak; ties keep g's
    own order."""
    m = OrderModel(g, scratch, alias_ops, inplace, streams)
    own = list(range(m.n))
    own_peak = m.peak_of(own)
    if m.n == 0:
        return own, own_peak, True
    beam = max(8, min(beam, WORK // (m.n * m.n)))
    # state: done mask -> (peak, live, order, ready nodes in position order); only the ready
    # nodes of a state are tried, so a chain costs O(n) steps, not O(n^2)
    first = tuple(i for i in range(m.n) if m.pred[i] == 0)
    # (an order is kept as a linked list (last, rest) so extending it is O(1))
    layer: dict[int, tuple[int, int, tuple | None, tuple[int, ...]]] = {
        0: (0, m.start, None, first)}
    exact = True
    for _ in range(m.n):
        nxt: dict[int, tuple[int, int, tuple | None, tuple[int, ...]]] = {}
        for done, (peak, live, order, ready) in layer.items():
            for i in ready:
                d2 = done | 1 << i
                p, after = m.step(live, d2, i)
                old = nxt.get(d2)
                if old is None or (max(peak, p), after) < old[:2]:
                    now = sorted({*ready, *(j for j in m.succ[i] if m.pred[j] & ~d2 == 0)} - {i})
                    nxt[d2] = (max(peak, p), after, (i, order), tuple(now))
        if len(nxt) > beam:
            exact = False
            nxt = dict(sorted(nxt.items(), key=lambda kv: kv[1][:2])[:beam])
        layer = nxt
    (peak, _, linked, _), = layer.values()
    order = []
    while linked is not None:
        order.append(linked[0])
        linked = linked[1]
    order.reverse()
    if own_peak <= peak:
        return own, own_peak, exact
    return list(order), peak, exact


def apply_order(g: Graph, order: list[int]) -> Graph:
    """The same graph (same Node objects) with its nodes in `order`."""
    return Graph(g.values, [g.nodes[i] for i in order], list(g.inputs), list(g.outputs), g.name)

