"""Validation of every tensor's shape and size (see limits.py for why 2^31 bytes)."""
from __future__ import annotations

from edgecc.ir import Graph, Value
from edgecc.validate.limits import (MAX_ARENA_BYTES, MAX_RANK, MAX_TENSOR_BYTES,
                                   MAX_WEIGHT_BYTES, numel)
from edgecc.validate.registry import graph_check, tensor_check


def _raw_dims(g: Graph, v: Value) -> tuple[int, ...]:
    return tuple(g.source.get("dims", {}).get(v.name, v.type.shape))


@tensor_check
def dims_non_negative(g: Graph, v: Value) -> object:
    """dimensions must be non-negative"""
    dims = _raw_dims(g, v)
    return all(d >= 0 for d in dims) or f"shape {list(dims)}"


@tensor_check
def rank_in_limit(g: Graph, v: Value) -> bool:
    """rank must be at most 8 (limits.MAX_RANK)"""
    return len(v.type.shape) <= MAX_RANK


@tensor_check
def bytes_in_limit(g: Graph, v: Value) -> object:
    """must be smaller than 2^31 bytes (edgecc's limit per tensor, so C offsets fit int32)"""
    size = numel(v.type.shape) * v.type.dtype.size
    return size <= MAX_TENSOR_BYTES or f"{size:,} bytes"


@graph_check
def activations_in_limit(g: Graph) -> object:
    """the model's activations must total less than 2^31 bytes (edgecc's arena limit)"""
    names = dict.fromkeys([*g.inputs, *(o for n in g.nodes for o in n.outputs)])
    total = sum(numel(g.values[v].type.shape) * g.values[v].type.dtype.size
                for v in names if v in g.values)
    return total <= MAX_ARENA_BYTES or f"{total:,} bytes"


@graph_check
def weights_in_limit(g: Graph) -> object:
    total = sum(v.data.nbytes for v in g.values.values() if v.is_const and v.data is not None)
    return total <= MAX_WEIGHT_BYTES or f"{total:,} bytes"


weights_in_limit.__doc__ = f"the model's constants must total at most {MAX_WEIGHT_BYTES:,} bytes"
