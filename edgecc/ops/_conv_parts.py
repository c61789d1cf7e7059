"""The structure the portable convolution templates print, computed once for them.

Owns: which per-pixel parts a window kernel has (interior pixels, border pixels, both with the
per-pixel test between them: templates/c/_conv_2d.j2 and the depthwise templates) and the runs
of output channels within a group (a main part of `block` channels computed together, then the
rest one by one), with what each run's loop prints. Kernel.derived values: the layer's comment
keeps listing the geometry they come from.
"""
from __future__ import annotations

# params "paths" (which pixels a layer has) -> the template parts, in the order they print
PARTS = {"interior": ["interior"], "border": ["border"],
         "both": ["test", "interior", "otherwise", "border"]}


def oc_runs(per_group: int, main: int, block: int, fic: int, unroll: int = 1) -> list[dict]:
    """The runs of a group's output channels oc (the group's first is gi * per_group): `main`
    channels `block` at a time, then the remaining ones singly. Each run: its loop header, n
    channels computed together (accumulators accs), fic_n weights per input channel, wstep
    weights per `unroll` inputs, and per unrolled input u the (accumulator, weight) pairs."""
    runs = []
    if main:
        runs.append((f"oc = gi * {per_group}; oc < gi * {per_group} + {main}; oc += {block}",
                     block))
    if main < per_group:
        runs.append((f"oc = gi * {per_group} + {main}; oc < (gi + 1) * {per_group}; ++oc", 1))
    return [dict(loop=loop, n=n, accs=list(range(n)), fic_n=fic * n, wstep=n * unroll,
                 units=[dict(u=u, taps=[(j, u * n + j) for j in range(n)]) for u in range(unroll)])
            for loop, n in runs]
