"""The validation stage: every tensor, quantization parameter, option table and index of an
imported graph checked against what the model format defines, before any op's code sees it.

Owns: running the checks of this package (tensors.py, quantization.py, structure.py, options.py)
and turning the failures into one ModelFormatError line naming the tensor or op. Each check is a
small function whose docstring is its message, registered in registry.py, as op constraints are.
A graph that passes has every tensor and the sum of its activations under 2^31 bytes
(limits.py), so the generated C may index any buffer and the arena with `int32_t` without
overflow, and its quantization parameters are finite, positive and inside the dtypes.
"""
from __future__ import annotations

from edgecc.errors import ModelFormatError
from edgecc.ir import Graph
from edgecc.validate import options, quantization, structure, tensors  # noqa: F401 (registers)
from edgecc.validate.registry import failures

MAX_REPORTED = 4  # failures named in the one error line; the rest are counted


def validate_graph(g: Graph) -> Graph:
    """g unchanged when every check passes; else ModelFormatError listing the first failures."""
    found = failures(g)
    if found:
        more = f"; and {len(found) - MAX_REPORTED} more" if len(found) > MAX_REPORTED else ""
        raise ModelFormatError(f"{g.name}: invalid model: " + "; ".join(found[:MAX_REPORTED]) + more)
    return g
