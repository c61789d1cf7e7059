"""Shared pieces of the elementwise and data-movement ops (RELU family, PAD, TRANSPOSE, ...).

Owns: the "same shape, same dtype" inference, the C element type of a value, and padding a shape
or a list of strides to a fixed rank with leading unit dimensions, the way TFLite's
RuntimeShape::ExtendedShape does, so that templates loop over a fixed number of dimensions.
"""
from __future__ import annotations

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import in_type, out_type

INT_DTYPES = (DType.INT8, DType.INT16, DType.INT32)


def same_as_input(g: Graph, n: Node) -> list[TensorType | None]:
    x = in_type(g, n)
    return [TensorType(tuple(x.shape), out_type(g, n).dtype)]


def extend_shape(shape, rank: int) -> list[int]:
    shape = [int(s) for s in shape]
    if len(shape) > rank:
        raise ValueError(f"rank {len(shape)} > {rank}")
    return [1] * (rank - len(shape)) + shape


def strides_of(shape) -> list[int]:
    """Row-major element strides."""
    out, acc = [], 1
    for s in reversed([int(x) for x in shape]):
        out.append(acc)
        acc *= s
    return list(reversed(out))
