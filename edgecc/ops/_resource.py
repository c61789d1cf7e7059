"""What READ_VARIABLE and ASSIGN_VARIABLE share: both copy one input's bytes (the variable out of
the state region, or a value into it) with one memcpy template."""
from __future__ import annotations

import numpy as np

from edgecc.ops import Kernel, in_type


def byte_copy(src: int, template: str, reason: str):
    """(reference, lower) of an op whose one result is a copy of input `src`."""
    def reference(g, n, ins: list) -> list[np.ndarray]:
        return [np.array(ins[src], copy=True)]

    def lower(g, n, target) -> Kernel:
        return Kernel(template, dict(nbytes=in_type(g, n, src).nbytes), reason=reason)
    return reference, lower
