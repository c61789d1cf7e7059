"""Which values are known at compile time: constants, tensor shapes, and anything computed only
from those (the SHAPE -> STRIDED_SLICE -> PACK chains converters emit for Keras Reshape/Flatten).

Owns: `known_at_compile_time`, used by the constraints of ops that exist only to be folded (PACK)
and by the constant-folding pass. SHAPE's output depends only on its input's static shape, never on
its data, so it is known even when its input is an activation.
"""
from __future__ import annotations

from edgecc.ir import Graph
from edgecc.ops import SHAPE_ONLY_OPS


def known_at_compile_time(g: Graph, name: str | None) -> bool:
    if name is None:
        return True
    producers = g.producer()
    memo: dict[str, bool] = {}

    def known(v: str | None) -> bool:
        if v is None:
            return True
        if v in memo:
            return memo[v]
        memo[v] = False  # guards cycles in malformed graphs
        if g.value(v).is_const:
            memo[v] = True
        elif v in producers:
            p = producers[v]
            memo[v] = p.op in SHAPE_ONLY_OPS or all(known(i) for i in p.inputs)
        return memo[v]

    return known(name)
