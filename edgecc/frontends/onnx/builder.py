"""The state of one ONNX import: what each ONNX tensor is so far, and the IR being built.

Owns: the `Rec` record of an ONNX tensor (a constant, an IR activation, the DequantizeLinear of
one, a quantized constant, or a pending DQ -> op group waiting for its QuantizeLinear), the
layout bookkeeping (an activation's IR axes are its ONNX axes permuted by `perm`, so Transposes
only change `perm` and emit no code), and adding IR values and nodes. uint8 tensors enter the IR
as int8 with zero point - 128 (the bytes xor 0x80), which is exact.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from edgecc.errors import UnsupportedModel
from edgecc.ir import DType, Graph, Node, QParams, TensorType, Value
from edgecc.numerics import FIXED_POINT, Numerics, OrtFloatGroup
from edgecc.ops import get_op

NHWC = (0, 2, 3, 1)  # IR axes of an NCHW ONNX tensor


@dataclass
class Rec:
    """One ONNX tensor during import.

    kind "const": `data` (numpy). "act": the IR value `value` (its ONNX axes permuted by `perm`
    give the IR axes). "dq": the float DequantizeLinear of the int8 IR activation `value`.
    "qconst": DequantizeLinear of a constant: int8 `data` (ONNX layout) and `q` (axis in ONNX
    axes). "pend": a DQ -> op group; `op` and `info` say what to emit once its QuantizeLinear
    (or a fused Relu/Clip/bias Add first) arrives."""

    kind: str
    value: str | None = None
    perm: tuple[int, ...] = ()
    data: np.ndarray | None = None
    q: QParams | None = None
    op: str = ""
    info: dict[str, Any] = field(default_factory=dict)


def inverse(p: tuple[int, ...]) -> tuple[int, ...]:
    out = [0] * len(p)
    for i, a in enumerate(p):
        out[a] = i
    return tuple(out)


def is_identity(p: tuple[int, ...]) -> bool:
    return tuple(p) == tuple(range(len(p)))


def same_bytes(shape: tuple[int, ...], perm: tuple[int, ...]) -> bool:
    """Whether permuting the axes of a row-major array of `shape` (ONNX axes) by `perm` keeps
    its bytes in order: true when the axes longer than 1 stay in increasing order."""
    axes = [a for a in perm if shape[a] != 1]
    return axes == sorted(axes)


def to_int8(data: np.ndarray, zp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """uint8 data and zero points as int8 ones: q - 128 and zp - 128 (the same real values)."""
    if data.dtype == np.uint8:
        return (data.astype(np.int16) - 128).astype(np.int8), np.asarray(zp, np.int64) - 128
    return data, np.asarray(zp, np.int64)


class Builder:
    def __init__(self, path, shapes: dict[str, tuple[int, ...]]):
        self.path = path
        self.shapes = shapes
        self.values: dict[str, Value] = {}
        self.nodes: list[Node] = []
        self.recs: dict[str, Rec] = {}
        self.index = -1  # the ONNX node being converted (IR nodes carry it)
        self.trace: dict[str, tuple[str, tuple[int, ...]]] = {}  # IR value -> (ONNX name, perm)
        self.where = ""
        self.ort_fused: dict[int, str] = {}  # QDQ groups onnxruntime fuses (ortfuse.py)
        self.ort_float: set[int] = set()  # QDQ groups it runs in float32 (ortfuse.py)
        # the dialect of those groups: their order and thread count (edgecc/numerics)
        self.float_group = OrtFloatGroup()
        self.readers: dict[str, list] = {}  # ONNX tensor -> the nodes reading it (mixed.py)
        self.graph_outputs: set[str] = set()

    # ---- errors ------------------------------------------------------------------------
    def unsupported(self, why: str) -> UnsupportedModel:
        return UnsupportedModel(f"{self.path}: {self.where}: {why}")

    # ---- IR values and nodes -------------------------------------------------------------
    def new_value(self, ttype: TensorType, label: str = "", data: np.ndarray | None = None) -> str:
        name = f"v{len(self.values)}"
        self.values[name] = Value(name, ttype, data, label=label)
        return name

    def const(self, data: np.ndarray, dtype: DType, q: QParams | None = None, label: str = "") -> str:
        data = np.ascontiguousarray(data.astype(dtype.np))
        return self.new_value(TensorType(tuple(data.shape), dtype, q), label, data)

    def add(self, op: str, inputs: list[str | None], out: TensorType, attrs: dict | None = None,
            label: str = "") -> str:
        y = self.new_value(out, label)
        n = len(self.nodes)
        a = dict(attrs or {})
        # the handlers pass a node's dialect among its attributes (emit.py's _rq_attrs builds
        # both at once); the node keeps it in its typed field, every other node FIXED_POINT
        numerics = a.pop("numerics", FIXED_POINT)
        assert isinstance(numerics, Numerics), numerics
        self.nodes.append(Node(op, inputs, [y], a, name=f"{n}_{op.lower()}", index=self.index,
                               numerics=numerics))
        return y

    def type(self, v: str) -> TensorType:
        return self.values[v].type

    # ---- records -------------------------------------------------------------------------
    def rec(self, name: str) -> Rec:
        if name not in self.recs:
            raise self.unsupported(f"input '{name}' is not available")
        return self.recs[name]

    def onnx_shape(self, r: Rec) -> tuple[int, ...]:
        """The ONNX shape of an activation record (its IR shape un-permuted)."""
        ir = self.type(r.value).shape
        inv = inverse(r.perm)
        return tuple(ir[inv[i]] for i in range(len(ir)))

    def with_perm(self, r: Rec, perm: tuple[int, ...], label: str = "") -> Rec:
        """The record with its IR axes in `perm` order, through a TRANSPOSE when the bytes move
        (a reinterpreting RESHAPE when only size-1 axes move)."""
        if tuple(r.perm) == tuple(perm):
            return r
        shape = self.onnx_shape(r)
        new_shape = tuple(shape[a] for a in perm)
        t = self.type(r.value)
        # IR axes now are shape[r.perm]; we want shape[perm]: IR axis i takes old IR axis j where
        # r.perm[j] == perm[i]
        move = tuple(inverse(r.perm)[a] for a in perm)
        if same_bytes(t.shape, move):
            y = self.reshape(r.value, new_shape, label)
        else:
            y = self.add("TRANSPOSE", [r.value, self.const(np.array(move), DType.INT32)],
                         replace(t, shape=new_shape), label=label)
        return replace(r, value=y, perm=tuple(perm))

    def plain(self, r: Rec, label: str = "") -> Rec:
        """The record in ONNX axis order."""
        return self.with_perm(r, tuple(range(len(r.perm))), label)

    def reshape(self, v: str, shape: tuple[int, ...], label: str = "") -> str:
        t = self.type(v)
        if tuple(t.shape) == tuple(shape):
            return v
        return self.add("RESHAPE", [v, self.const(np.array(shape, np.int64), DType.INT32)],
                        replace(t, shape=tuple(shape)), label=label)

    def qparams_of(self, scale: np.ndarray, zp: np.ndarray | None, axis: int = 0) -> QParams:
        s = np.asarray(scale, np.float32).ravel()
        if s.size == 0 or not np.all(np.isfinite(s)) or np.any(s <= 0):
            raise self.unsupported("quantization scales must be finite and positive")
        z = np.zeros(s.shape, np.int64) if zp is None else np.asarray(zp, np.int64).ravel()
        if z.size == 1 and s.size > 1:
            z = np.repeat(z, s.size)
        return QParams(tuple(float(x) for x in s), tuple(int(x) for x in z), int(axis))

    def add_inferred(self, op: str, inputs: list[str | None], dtype: DType, q: QParams | None,
                     attrs: dict | None = None, label: str = "") -> str:
        """Add a node whose output shape the op's own inference gives."""
        y = self.add(op, inputs, TensorType((), dtype, q), attrs, label)
        n = self.nodes[-1]
        view = Graph(self.values, [], [], [])
        t = get_op(op).infer(view, n)[0]
        if t is None:
            raise self.unsupported(f"cannot infer the shape of {op}")
        self.values[y] = Value(y, TensorType(tuple(t.shape), dtype, q), label=label)
        return y
