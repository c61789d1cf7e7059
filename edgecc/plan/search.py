"""The local search that polishes the placement's winning order (edgecc/plan/place.py).

Owns: the arena end of a set of placed buffers and the seeded swap search: swap two buffers of
the winning order, keep the swap when the winning fit gets no worse.
"""
from __future__ import annotations

import random
from typing import Callable

from edgecc.plan.liveness import Buffer


def arena_of(bufs: list[Buffer], offs: list[int]) -> int:
    return max((o + b.size for o, b in zip(offs, bufs)), default=0)


def local_search(bufs: list[Buffer], fit: Callable[[list[int]], list[int]], order: list[int],
                  arena: int, name: str, offs: list[int], target: int,
                  seed: int) -> tuple[int, str, list[int]]:
    """Swap two buffers of the winning order, keep the swap when the winning fit gets no worse.
    Seeded and bounded by a count (never by time): the same model always gets the same plan."""
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
        o = fit(cand)
        a = arena_of(bufs, o)
        if a <= cur_arena:
            if a < arena:
                arena, offs, improved = a, o, True
            cur, cur_arena = cand, a
            if a <= target:
                break
    return arena, (name + " + local search" if improved else name), offs
