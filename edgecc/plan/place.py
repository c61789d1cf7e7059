"""Offset assignment: put buffers with fixed lifetimes into one arena, as small as possible.

Owns: the placement strategies and the choice among them. Every strategy is "take the buffers in
some order, put each at an offset that does not overlap any already placed buffer whose lifetime
intersects its own"; they differ in the order and in which free gap they pick:

- first fit (lowest aligned offset) over several orders: size (TFLite Micro's greedy planner),
  buffers alive at the peak step first, lifetime start, conflict degree (bytes of the buffers it
  shares a step with), area (size x lifetime), longest lifetime;
- best fit: each buffer into the smallest gap that holds it;
- two-sided: for a target arena, buffers that cannot sit at 0 go to the top end when they fit
  there (chains alternate between the ends instead of climbing);
- a seeded local search that swaps buffers in the best order found so far;
- an exact branch and bound for small buffer sets (below).

Streaming pairs (an output allowed to sit partly over the input it consumes, stream.py) change
one rule: for such a pair "no overlap" becomes "no overlap, or the output at most d_max bytes
above the input's offset"; `_conflicts` expresses every rule as an interval to avoid.

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

from dataclasses import replace
from typing import Callable

from edgecc.plan.liveness import Buffer, aligned_lower_bound
from edgecc.plan.search import arena_of as _arena, local_search as _local_search
from edgecc.plan.stream import aligned, saving

EXACT_MAX_BUFFERS = 18
EXACT_BUDGET = 60000  # search nodes; beyond it the best heuristic result is kept


def _up(x: int, a: int) -> int:
    return -(-x // a) * a


def _conflicts(bufs: list[Buffer]) -> list[list[tuple[int, int, int]]]:
    """For each buffer i, the buffers it lives with as (j, a, c): i may not sit at an offset x
    with x + size_i > off_j + a and x < off_j + c. Plain pairs: (0, size_j), i.e. no overlap;
    a streaming pair (stream.py, shift bound d) lets the output sit lower over its input:
    output over input (max(0, d + size_out), size_in), input under output (0, min(size_out, -d))."""
    # Buffers that live together are found by a sweep over their first steps (each buffer meets
    # only those still alive when it starts), so the work is the number of such pairs, not n^2.
    out: list[list[tuple[int, int, int]]] = [[] for _ in bufs]
    order = sorted(range(len(bufs)), key=lambda k: (bufs[k].first, k))
    alive: list[int] = []
    for i in order:
        b = bufs[i]
        alive = [j for j in alive if bufs[j].last >= b.first]
        for j in alive:
            _pair(bufs, out, i, j)
            _pair(bufs, out, j, i)
        alive.append(i)
    for row in out:
        row.sort()  # in buffer order, as the placement heuristics read them
    return out


def _pair(bufs: list[Buffer], out: list, i: int, j: int) -> None:
    b, o = bufs[i], bufs[j]
    if o.name in b.shifts:
        out[i].append((j, max(0, b.shifts[o.name] + b.size), o.size))
    elif b.name in o.shifts:
        out[i].append((j, 0, min(o.size, -o.shifts[b.name])))
    else:
        out[i].append((j, 0, o.size))


def _occupied(offs: list[int], conf_i: list[tuple[int, int, int]]) -> list[tuple[int, int]]:
    """The intervals (lo, hi) buffer i must avoid ([x, x + size) may not reach above lo while x
    is below hi), sorted by lo, from the placed buffers it lives with."""
    return sorted((offs[j] + a, offs[j] + c) for j, a, c in conf_i if offs[j] >= 0)


def _lowest(b: Buffer, placed: list[tuple[int, int]], start: int = 0) -> int:
    """The lowest aligned offset >= start (aligned) where b avoids every interval."""
    at = start
    for lo, hi in placed:
        if at + b.size <= lo:
            break
        if hi > at:
            at = _up(hi, b.align)
    return at


def _first_fit(bufs: list[Buffer], order: list[int], conf: list[list[int]]) -> list[int]:
    offs = [-1] * len(bufs)
    for i in order:
        offs[i] = _lowest(bufs[i], _occupied(offs, conf[i]))
    return offs


def _best_fit(bufs: list[Buffer], order: list[int], conf: list[list[int]]) -> list[int]:
    offs = [-1] * len(bufs)
    for i in order:
        b = bufs[i]
        placed = _occupied(offs, conf[i])
        best: tuple[int, int] | None = None  # (slack, offset)
        at = 0
        for lo, hi in placed:
            if at + b.size <= lo and (best is None or lo - at - b.size < best[0]):
                best = (lo - at - b.size, at)
            if hi > at:
                at = _up(hi, b.align)
        offs[i] = best[1] if best is not None else at
    return offs


def _two_sided(bufs: list[Buffer], order: list[int], conf: list[list[int]],
               limit: int) -> list[int]:
    """Fill an arena of `limit` bytes from both ends: each buffer goes to the bottom when it can
    sit at 0, else to the top when it can touch the limit, else to the lowest feasible offset. A
    chain of buffers then alternates between the two ends and needs only max(s[k] + s[k+1])."""
    offs = [-1] * len(bufs)
    for i in order:
        b = bufs[i]
        placed = _occupied(offs, conf[i])
        at = _lowest(b, placed)
        top = _highest(b, placed, limit - b.size)
        touches_top = top >= 0 and top + b.size > limit - b.align
        offs[i] = at if at == 0 or not touches_top else top
    return offs


def _highest(b: Buffer, placed: list[tuple[int, int]], cap: int) -> int:
    """The highest aligned offset <= cap where b avoids every interval (negative: none)."""
    top = cap // b.align * b.align
    for lo, hi in reversed(placed):
        if top < 0:
            break
        if lo < top + b.size and top < hi:
            top = (lo - b.size) // b.align * b.align
    return top


def _drift(bufs: list[Buffer], order: list[int], conf: list[list[tuple[int, int, int]]],
           limit: int, inputs_low: bool = False) -> list[int]:
    """Streaming chains from the top of an arena of `limit` bytes: a streaming output goes as
    high as its shift bound lets it overlap its input (chains of outputs that must start below
    their inputs drift down from the top); any other buffer goes to the highest offset where it
    fits under the limit (with `inputs_low`, buffers alive from step 0 go to the lowest, leaving
    the top to what follows them); when nothing fits, to the lowest feasible offset."""
    pos = {b.name: k for k, b in enumerate(bufs)}
    offs = [-1] * len(bufs)
    for i in order:
        b = bufs[i]
        placed = _occupied(offs, conf[i])
        at = -1
        for x, d in b.shifts.items():
            j = pos.get(x)
            if j is not None and offs[j] >= 0:
                at = max(at, _highest(b, placed, min(offs[j] + d, limit - b.size)))
        if at < 0 and not (inputs_low and b.first == 0):
            at = _highest(b, placed, limit - b.size)
        if at < 0:
            at = _lowest(b, placed)
        offs[i] = at
    return offs


def _drift_back(bufs: list[Buffer], order: list[int],
                conf: list[list[tuple[int, int, int]]]) -> list[int]:
    """Streaming chains from the bottom, backwards in time: buffers by decreasing death step,
    each at its lowest feasible offset, a streaming input no lower than its (placed) output's
    offset minus the shift bound, so that chains climb from the end of the program."""
    outs: dict[str, list[tuple[int, int]]] = {}
    for k, b in enumerate(bufs):
        for x, d in b.shifts.items():
            outs.setdefault(x, []).append((k, d))
    offs = [-1] * len(bufs)
    for i in order:
        b = bufs[i]
        floor = max([offs[k] - d for k, d in outs.get(b.name, []) if offs[k] >= 0], default=0)
        offs[i] = _lowest(b, _occupied(offs, conf[i]), _up(max(floor, 0), b.align))
    return offs


def _orders(bufs: list[Buffer], conf: list[list[int]]) -> dict[str, list[int]]:
    idx = list(range(len(bufs)))
    steps = max((b.last for b in bufs), default=0) + 1
    live = [0] * steps
    for b in bufs:
        for s in range(b.first, b.last + 1):
            live[s] += b.size
    peak = max(range(steps), key=lambda s: live[s]) if bufs else 0
    degree = [sum(bufs[j].size for j, _, _ in conf[i]) for i in idx]
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
    # streaming pairs per step (output, input, bytes they may share): the bound below must not
    # count shared bytes twice
    pos = {b.name: k for k, b in enumerate(bufs)}
    pairs: list[list[tuple[int, int, int]]] = [[] for _ in range(steps)]
    for k, b in enumerate(bufs):
        for x, d in b.shifts.items():
            if x in pos:
                pairs[b.first].append((k, pos[x], saving(bufs[pos[x]].size, b.size,
                                                         aligned(d, b.align))))
    offs = [-1] * n
    found: list[int] | None = None
    nodes = 0
    bound = best

    def lowest(i: int, floor: int) -> int:
        b = bufs[i]
        at = _up(floor, b.align)
        for lo, hi in _occupied(offs, conf[i]):
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
        rest = max(sum(bufs[i].size for i in a if offs[i] < 0)
                   - sum(sv for o, x, sv in pairs[st] if offs[o] < 0 or offs[x] < 0)
                   for st, a in enumerate(alive))
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
        out[f"two-sided by {oname}"] = _two_sided(bufs, order, conf, aligned_lower_bound(bufs))
    if bufs:
        exact = _exact(bufs, conf, _arena(bufs, out["first-fit by size"]) + 1, 0, budget=2000)
        if exact is not None:
            out["exact search"] = exact
    return out


def critical_shifts(bufs: list[Buffer]) -> list[Buffer]:
    """Copies of the buffers keeping only the streaming pairs of steps that need them: a step
    whose buffers fit the bound side by side is no reason to chain its pair (every pair used
    constrains where its neighbours can go)."""
    target = aligned_lower_bound(bufs)
    steps = max(b.last for b in bufs) + 1
    plain = [0] * steps
    for b in bufs:
        for st in range(b.first, b.last + 1):
            plain[st] += _up(b.size, b.align)
    return [replace(b, shifts={x: d for x, d in b.shifts.items() if plain[b.first] > target})
            for b in bufs]


def place(bufs: list[Buffer], exact: bool = True, seed: int = 0) -> tuple[int, str]:
    """Set every buffer's offset; return (arena bytes, name of the strategy that won)."""
    if not bufs:
        return 0, "empty"
    if any(b.shifts for b in bufs):
        work = critical_shifts(bufs)
        arena, name = _place(work, exact, seed)
        for b, w in zip(bufs, work):
            b.offset = w.offset
        return arena, name
    return _place(bufs, exact, seed)


def _place(bufs: list[Buffer], exact: bool, seed: int) -> tuple[int, str]:
    conf = _conflicts(bufs)
    target = aligned_lower_bound(bufs)
    orders = _orders(bufs, conf)
    Fit = Callable[[list[int]], list[int]]
    # best result per fit family: (arena, name, offsets, order, fit)
    best: dict[str, tuple[int, str, list[int], list[int], Fit]] = {}

    def attempt(family: str, name: str, order: list[int], fit: Fit) -> bool:
        offs = fit(order)
        arena = _arena(bufs, offs)
        if family not in best or arena < best[family][0]:
            best[family] = (arena, name, offs, order, fit)
        return arena <= target

    def fits(limit: int) -> dict[str, Fit]:
        return {"first-fit": lambda o: _first_fit(bufs, o, conf),
                "best-fit": lambda o: _best_fit(bufs, o, conf),
                "two-sided": lambda o: _two_sided(bufs, o, conf, limit)}

    done = False
    for fname, fit in fits(target).items():
        for oname, order in orders.items():
            if attempt(fname, f"{fname} by {oname}", order, fit):
                done = True
                break
        if done:
            break
    if not done:  # two-sided with looser limits: between the bound and what we have
        top = min(r[0] for r in best.values())
        for limit in sorted({(target + top) // 2, top - 1}):
            for oname in ("start", "size", "peak-first"):
                attempt("two-sided", f"two-sided by {oname}", orders[oname],
                        fits(limit)["two-sided"])
    if not done and any(b.shifts for b in bufs):
        # streaming chains drift: from the bottom backwards in time, or from the top forwards
        # with the smallest limit (from the bound up) at which they fit
        back = sorted(range(len(bufs)), key=lambda i: (-bufs[i].last, -bufs[i].size,
                                                       bufs[i].name))
        done = attempt("drift-back", "drift back from the end", back,
                       lambda o: _drift_back(bufs, o, conf))
        top = min(r[0] for r in best.values())
        for k in range(8):
            limit = target + (top - target) * k // 8
            for low in (False, True):
                name = "drift by start" + (", inputs low" if low else "")
                done = attempt("drift", name, orders["start"],
                               lambda o, m=limit, lw=low: _drift(bufs, o, conf, m, lw))
                if done:
                    break
            if done:
                break
    arena, name, offs, _, _ = min(best.values(), key=lambda r: r[0])
    if arena > target:  # local search from the best result of each family, keep the best
        for fam in sorted(best, key=lambda f: best[f][0]):
            a, nm, o = _local_search(bufs, best[fam][4], best[fam][3], *best[fam][:2],
                                     best[fam][2], target, seed)
            if a < arena:
                arena, name, offs = a, nm, o
            if arena <= target:
                break
    if arena > target and exact and len(bufs) <= EXACT_MAX_BUFFERS:
        better = _exact(bufs, conf, arena, target)
        if better is not None:
            arena, name, offs = _arena(bufs, better), "exact search", better
    for b, o in zip(bufs, offs):
        b.offset = o
    return arena, name
