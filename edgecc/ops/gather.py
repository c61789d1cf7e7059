"""GATHER: out[b, o, k, i] = params[b, o, indices[b, k], i] along `axis` with `batch_dims`.

Any element type for params (raw copy), int32 or int64 indices, each a constant (an embedding
table, fixed positions) or a run-time tensor. The C copies one contiguous inner run per index.
TFLite Micro fails the invoke on an index outside [0, axis size); the generated C has no error
path there and clamps the index into range instead, so it never reads outside the tensor.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops._arith import const_inputs


def _axes(g: Graph, n: Node) -> tuple[int, int]:
    rank, irank = len(in_type(g, n).shape), len(in_type(g, n, 1).shape)
    axis = int(n.attrs.get("axis", 0))
    bd = int(n.attrs.get("batch_dims", 0))
    return (axis + rank if axis < 0 else axis), (bd + irank if bd < 0 else bd)


def _sizes(g: Graph, n: Node) -> tuple[int, int, int, int, int]:
    shape, ishape = in_type(g, n).shape, in_type(g, n, 1).shape
    axis, bd = _axes(g, n)
    prod = lambda s: int(np.prod(s, dtype=np.int64))  # noqa: E731
    return prod(shape[:bd]), prod(shape[bd:axis]), shape[axis], prod(shape[axis + 1:]), prod(ishape[bd:])


def int_indices(g: Graph, n: Node) -> bool:
    """indices must be int32 or int64"""
    return in_type(g, n, 1).dtype in (DType.INT32, DType.INT64)


def valid_axes(g: Graph, n: Node) -> bool:
    """axis must be inside params' rank, batch_dims <= axis, and the batch dims of params and indices must agree"""
    shape, ishape = in_type(g, n).shape, in_type(g, n, 1).shape
    axis, bd = _axes(g, n)
    return (0 <= axis < len(shape) and 0 <= bd <= axis and bd <= len(ishape)
            and tuple(shape[:bd]) == tuple(ishape[:bd]))


def constant_indices_in_range(g: Graph, n: Node) -> bool:
    """constant indices must lie in [0, params.shape[axis])"""
    v = g.value(n.inputs[1])
    if not v.is_const:
        return True
    size = in_type(g, n).shape[_axes(g, n)[0]]
    return bool(np.all((v.data >= 0) & (v.data < size)))


def same_dtype(g: Graph, n: Node) -> bool:
    """output must have the params' element type"""
    return in_type(g, n).dtype == out_type(g, n).dtype


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    shape, ishape = in_type(g, n).shape, in_type(g, n, 1).shape
    axis, bd = _axes(g, n)
    out = tuple(shape[:axis]) + tuple(ishape[bd:]) + tuple(shape[axis + 1:])
    return [TensorType(out, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    b, o, a, i, k = _sizes(g, n)
    x = ins[0].reshape(b, o, a, i)
    idx = np.clip(ins[1].astype(np.int64).reshape(b, k), 0, a - 1)
    y = np.stack([x[bb][:, idx[bb], :] for bb in range(b)])  # (b, o, k, i)
    return [y.reshape(out_type(g, n).shape)]


def lower(g: Graph, n: Node, target) -> Kernel:
    b, o, a, i, k = _sizes(g, n)
    dt = in_type(g, n).dtype
    return Kernel("gather.c.j2", params=dict(batch=b, outer=o, axis_size=a, inner=i, coords=k,
                                             ctype=dt.c, itype=in_type(g, n, 1).dtype.c,
                                             bytes=i * dt.size),
                  consts=const_inputs(g, n), variant="copy", derived=dict(last=a - 1))


OP = register(OpDef("GATHER", infer, reference, lower,
                    [int_indices, valid_axes, constant_indices_in_range, same_dtype],
                    dtypes="any params, int32/int64 indices (raw copy)"))
