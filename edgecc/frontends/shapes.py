"""Shapes from the ops, not from the file: the import-time pass that settles every tensor's shape.

Owns: `settle_shapes`. Converters write placeholder shapes where the Keras model had symbolic dims
(shape_signature -1): `[1, 1, 48, 16]` for a tensor that is really `[1, 48, 48, 16]`, or batch 1
for the `[2, 34, 16]` a SPACE_TO_BATCH_ND makes. TFLite computes those shapes at run time; edgecc
computes them once, at import, walking the nodes in order:

- a node that only computes a shape vector (its outputs int32/int64 without quantization, its
  inputs constants, or a SHAPE, whose result depends only on its input's shape) is evaluated with
  its op's numpy reference and replaced by the constant it yields: SHAPE -> STRIDED_SLICE ->
  PACK/CONCATENATION/GATHER chains and arithmetic on shape vectors become constants, so RESHAPE,
  TILE, BROADCAST_TO, RESIZE_*, EXPAND_DIMS and TRANSPOSE_CONV see constant operands;
- every other node's outputs take the shape its op infers from its (already settled) inputs,
  overriding the file's placeholder.

Each place the file was wrong, and each node folded, is returned as a note (`Graph.notes`, shown by
`edgecc inspect`). A node whose reference or inference cannot run keeps the file's shapes: the
op's constraints then report what is wrong with it.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from edgecc.ir import DType, Graph, TensorType
from edgecc.ops import SHAPE_ONLY_OPS, get_op
from edgecc.passes.fold import STATEFUL_OPS, evaluate

SHAPE_DTYPES = (DType.INT32, DType.INT64)
MAX_SHAPE_VECTOR = 4096  # elements: a shape computation, not a tensor of data


def _computes_shape(g: Graph, n) -> bool:
    """True when n is part of a shape computation that can be evaluated now."""
    if n.op in STATEFUL_OPS or not n.outputs or any(o in g.outputs for o in n.outputs):
        return False
    for o in n.outputs:
        t = g.type(o)
        if t.dtype not in SHAPE_DTYPES or t.q is not None:
            return False
    if n.op in SHAPE_ONLY_OPS:
        return True
    ins = [v for v in n.inputs if v is not None]
    return bool(ins) and all(g.value(v).is_const for v in ins)


def _fold(g: Graph, n) -> dict[str, np.ndarray] | None:
    """The constants n's outputs hold, or None when its reference cannot compute them here."""
    try:
        results = evaluate(g, n)
    except Exception:  # noqa: BLE001 - the op's constraints report a node that cannot run
        return None
    out = {}
    for o, r in zip(n.outputs, results):
        r = np.asarray(r)
        cast = r.astype(g.type(o).dtype.np)
        if r.size > MAX_SHAPE_VECTOR or not np.array_equal(cast, r):
            return None
        out[o] = np.array(cast, order="C")
    return out


def _infer(g: Graph, n) -> list[TensorType | None]:
    try:
        return list(get_op(n.op).infer(g, n))
    except Exception:  # noqa: BLE001 - cannot infer: the file's shape stands, constraints judge
        return [None] * len(n.outputs)


def settle_shapes(g: Graph) -> Graph:
    """g with shape computations folded into constants and every output shape inferred from its
    producer (see the module docstring); the notes say what changed."""
    values = dict(g.values)
    work = Graph(values, [], list(g.inputs), list(g.outputs), g.name)
    nodes, notes = [], list(g.notes)

    def reshape(o: str, shape: tuple[int, ...], why: str, data: np.ndarray | None = None) -> None:
        old = values[o]
        if tuple(shape) != tuple(old.type.shape):
            notes.append(f"{why} {o}{' ' + repr(old.label) if old.label else ''}: the file says "
                         f"{list(old.type.shape)}, the op computes {list(shape)}")
        values[o] = replace(old, type=TensorType(tuple(shape), old.type.dtype, old.type.q),
                            data=data if data is not None else old.data)

    for n in g.nodes:
        where = f"op {n.index} ({n.op})"
        folded = _fold(work, n) if _computes_shape(work, n) else None
        if folded is not None:
            for o, arr in folded.items():
                reshape(o, arr.shape, where, arr)
            notes.append(f"{where} folded at import: " + ", ".join(
                f"{o} = {arr.tolist()}" for o, arr in folded.items()))
            continue
        for o, t in zip(n.outputs, _infer(work, n)):
            if t is not None:
                reshape(o, tuple(t.shape), where)
        nodes.append(n)
    return replace(g, values=values, nodes=nodes, notes=notes)
