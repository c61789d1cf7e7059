"""Offset assignment: put buffers with fixed lifetimes into one arena, as small as possible.

Owns: the placement strategies and the choice among them. Every strategy is "take the buffers in
some order, put each at an offset that does not overlap any already placed buffer whose lifetime
intersects its own"; they differ in the order and in which free gap they pick:

- first fit (lowest aligned offset) over several orders: size (TFLite Micro's greedy planner),
  buffers alive at the peak step first, lifetime start, conflict degree (bytes of the buffers it
  shares a step with), area (size x lifetime), longest lifetime;
- best fit: size order, each buffer into the smallest gap that holds it;
- a seeded local search that swaps buffers in the best order found so far;
- an exact branch and bound for small buffer sets (below).

The result is compared with `aligned_lower_bound` (no placement can be smaller); the search stops
as soon as a strategy reaches it. Offsets are multiples of each buffer's alignment, sizes are the
real byte counts, and the arena is the highest buffer end, not rounded: a buffer whose size is not
a multiple of the alignment only costs padding when another buffer must start above it.

Exact search: any optimal placement can be normalized by sliding every buffer down until it
touches 0 or a buffer it lives with. Sorted by offset, each buffer of a normalized placement sits
at the lowest feasible offset not below the previous buffer's offset. So a depth-first search that
picks the next buffer (any unplaced one) and puts it at that lowest offset enumerates every
normalized placement; it is pruned by the best arena so far and by the bound "current floor +
bytes of unplaced buffers alive at one step", and identical buffers are tried once.
"""
from __future__ import annotations

import random
from typing import Callable

from edgecc.plan.liveness import Buffer, aligned_lower_bound

EXACT_MAX_BUFFERS = 18
EXACT_BUDGET = 60000  # search nodes; beyond it the best heuristic result is kept


def _up(x: int, a: int) -> int:
    return -(-x // a) * a


def _conflicts(bufs: list[Buffer]) -> list[list[int]]:
    return [[j for j, o in enumerate(bufs) if j != i and b.lives_with(o)]
            for i, b in enumerate(bufs)]


def _first_fit(bufs: list[Buffer], order: list[int], conf: list[list[int]]) -> list[int]:
    offs = [-1] * len(bufs)
    for i in order:
        b = bufs[i]
        placed = sorted((offs[j], offs[j] + bufs[j].size) for j in conf[i] if offs[j] >= 0)
        at = 0
        for lo, hi in placed:
            if at + b.size <= lo:
                break
            if hi > at:
                at = _up(hi, b.align)
        offs[i] = at
    return offs


def _best_fit(bufs: list[Buffer], order: list[int], conf: list[list[int]]) -> list[int]:
    offs = [-1] * len(bufs)
    for i in order:
        b = bufs[i]
        placed = sorted((offs[j], offs[j] + bufs[j].size) for j in conf[i] if offs[j] >= 0)
        best: tuple[int, int] | None = None  # (slack, offset)
        at = 0
        for lo, hi in placed:
            if at + b.size <= lo and (best is None or lo - at - b.size < best[0]):
                best = (lo - at - b.size, at)
            if hi > at:
                at = _up(hi, b.align)
        offs[i] = best[1] if best is not None else at
    return offs


def _arena(bufs: list[Buffer], offs: list[int]) -> int:
    return max((o + b.size for o, b in zip(offs, bufs)), default=0)


def _orders(bufs: list[Buffer], conf: list[list[int]]) -> dict[str, list[int]]:
    idx = list(range(len(bufs)))
    steps = max((b.last for b in bufs), default=0) + 1
    live = [0] * steps
    for b in bufs:
        for s in range(b.first, b.last + 1):
            live[s] += b.size
    peak = max(range(steps), key=lambda s: live[s]) if bufs else 0
    degree = [sum(bufs[j].size for j in conf[i]) for i in idx]
    name = [b.name for b in bufs]
    return {
        "size": sorted(idx, key=lambda i: (-bufs[i].size, bufs[i].first, name[i])),
        "peak-first": sorted(idx, key=lambda i: (not (bufs[i].first <= peak <= bufs[i].last),
                                                 -bufs[i].size, bufs[i].first, name[i])),
        "start": sorted(idx, key=lambda i: (bufs[i].first, -bufs[i].size, name[i])),
        "conflict": sorted(idx, key=lambda i: (-degree[i] - bufs[i].size, name[i])),
        "area": sorted(idx, key=lambda i: (-bufs[i].size * (bufs[i].last - bufs[i].first + 1),
                                           name[i])),
        "lifetime": sorted(idx, key=lambda i: (-(bufs[i].last - bufs[i].first), -bufs[i].size,
                                               name[i])),
    }


def _exact(bufs: list[Buffer], conf: list[list[int]], best: int, target: int,
           budget: int = EXACT_BUDGET) -> list[int] | None:
    """Branch and bound over normalized placements; the offsets of an arena < best, or None."""
    n = len(bufs)
    steps = max(b.last for b in bufs) + 1
    alive = [[i for i in range(n) if bufs[i].first <= s <= bufs[i].last] for s in range(steps)]
    offs = [-1] * n
    found: list[int] | None = None
    nodes = 0
    bound = best

    def lowest(i: int, floor: int) -> int:
        b = bufs[i]
        at = _up(floor, b.align)
        for lo, hi in sorted((offs[j], offs[j] + bufs[j].size) for j in conf[i] if offs[j] >= 0):
            if at + b.size <= lo:
                break
            if hi > at:
                at = _up(hi, b.align)
        return at

    def rec(k: int, floor: int, top: int) -> bool:
        nonlocal nodes, found, bound
        if k == n:
            if top < bound:
                bound, found = top, list(offs)
            return bound <= target
        nodes += 1
        if nodes > budget:
            return True
        # Every unplaced buffer lies at or above `floor`, disjoint from the others of its step.
        rest = max(sum(bufs[i].size for i in a if offs[i] < 0) for a in alive)
        if max(top, floor + rest) >= bound:
            return False
        tried: set[tuple[int, int, int, int]] = set()
        cands = sorted((lowest(i, floor), -bufs[i].size, i) for i in range(n) if offs[i] < 0)
        for at, _, i in cands:
            key = (bufs[i].size, bufs[i].first, bufs[i].last, at)
            if key in tried:
                continue
            tried.add(key)
            offs[i] = at
            stop = rec(k + 1, at, max(top, at + bufs[i].size))
            offs[i] = -1
            if stop:
                return True
        return False

    rec(0, 0, 0)
    return found


def all_strategies(bufs: list[Buffer]) -> dict[str, list[int]]:
    """Offsets from every heuristic strategy (for tests and reports); buffers are not changed."""
    conf = _conflicts(bufs)
    out = {}
    for oname, order in _orders(bufs, conf).items():
        out[f"first-fit by {oname}"] = _first_fit(bufs, order, conf)
        out[f"best-fit by {oname}"] = _best_fit(bufs, order, conf)
    if bufs:
        exact = _exact(bufs, conf, _arena(bufs, out["first-fit by size"]) + 1, 0, budget=2000)
        if exact is not None:
            out["exact search"] = exact
    return out


def place(bufs: list[Buffer], exact: bool = True, seed: int = 0) -> tuple[int, str]:
    """Set every buffer's offset; return (arena bytes, name of the strategy that won)."""
    if not bufs:
        return 0, "empty"
    conf = _conflicts(bufs)
    target = aligned_lower_bound(bufs)
    results: list[tuple[int, str, list[int], list[int]]] = []
    fits: dict[str, Callable] = {"first-fit": _first_fit, "best-fit": _best_fit}
    for oname, order in _orders(bufs, conf).items():
        for fname, fit in fits.items():
            offs = fit(bufs, order, conf)
            results.append((_arena(bufs, offs), f"{fname} by {oname}", offs, order))
            if results[-1][0] <= target:
                break
        if min(r[0] for r in results) <= target:
            break
    arena, name, offs, order = min(results, key=lambda r: r[0])
    if arena > target:
        arena, name, offs = _local_search(bufs, conf, order, arena, name, offs, target, seed)
    if arena > target and exact and len(bufs) <= EXACT_MAX_BUFFERS:
        better = _exact(bufs, conf, arena, target)
        if better is not None:
            arena, name, offs = _arena(bufs, better), "exact search", better
    for b, o in zip(bufs, offs):
        b.offset = o
    return arena, name


def _local_search(bufs: list[Buffer], conf: list[list[int]], order: list[int], arena: int,
                  name: str, offs: list[int], target: int,
                  seed: int) -> tuple[int, str, list[int]]:
    """Swap two buffers of the order, keep the swap when first fit gets no worse. Seeded and
    bounded by a count (never by time) so that the same model always gets the same plan."""
    n = len(bufs)
    if n < 3:
        return arena, name, offs
    rng = random.Random(seed)
    iters = max(50, min(2000, 2_000_000 // (n * n)))
    cur, cur_arena, improved = list(order), arena, False
    for _ in range(iters):
        i, j = rng.randrange(n), rng.randrange(n)
        if i == j:
            continue
        cand = list(cur)
        cand[i], cand[j] = cand[j], cand[i]
        o = _first_fit(bufs, cand, conf)
        a = _arena(bufs, o)
        if a <= cur_arena:
            if a < arena:
                arena, offs, improved = a, o, True
            cur, cur_arena = cand, a
            if a <= target:
                break
    return arena, (name + " + local search" if improved else name), offs
