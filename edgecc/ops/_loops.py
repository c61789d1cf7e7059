"""The C text of the loop nests the portable templates print (templates/c/_loops.j2).

Owns: a nest's loop records (counter names, extents, indentation) and an operand's element
offset inside the nest, so that the templates hold no arithmetic or condition of their own. The
extents and strides come from the op's planning (edgecc/ops/_broadcast.py, _copy.py, _reduce.py,
...); these values are Kernel.derived (the layer's comment keeps listing the planned numbers).
"""
from __future__ import annotations

from typing import Sequence

# strides keys of the broadcast loop nests (edgecc/ops/_broadcast.py params(), batch_matmul.py)
STRIDE_KEYS = ("s0", "s1", "s2", "so", "sl", "sr")


def nest(dims: Sequence[int], v: str = "i") -> dict:
    """A nest over dims (outer to inner) with counters v0, v1, ...: `decl` the counters' one
    declaration (none for an empty nest, whose body runs once), `loops` one record per loop with
    its indentation (the closing braces reuse them inner to outer)."""
    names = [f"{v}{d}" for d in range(len(dims))]
    return dict(decl=[", ".join(names)] if names else [],
                loops=[dict(indent="    " * d, v=names[d], n=n) for d, n in enumerate(dims)])


def index(strides: Sequence[int], base: int = 0, v: str = "i") -> str:
    """An operand's element offset inside a nest: base + sum of v<d> * stride_d (zero strides
    omitted, unit strides without the product; strides may be negative)."""
    terms = [str(base)] if base else []
    terms += [f"{v}{d}" if s == 1 else f"{v}{d} * {s}" for d, s in enumerate(strides) if s]
    return " + ".join(terms) or "0"


def loop_text(params: dict, dims: str = "dims", v: str = "i") -> dict:
    """Kernel.derived of a broadcast loop nest: `nest` over params[dims] and `at`, the offset
    of each operand whose strides params holds (at.s0, at.so, ...)."""
    return dict(nest=nest(params[dims], v),
                at={k: index(params[k], 0, v) for k in STRIDE_KEYS if k in params})
