"""float32 paths of ops whose module owns an integer path too, and the float arithmetic they share.

Owns: `FloatPath` (a float32 variant's constraints, reference, lowering and dtype note) and
`twin(op, path)`, which joins it to an op's integer OpDef so that float32 nodes take the float path
and every other node the op's own; the host libm functions TFLite Micro's float kernels call
(std::exp, std::log, std::tanh, std::expm1), applied element by element so the numpy references
round exactly as TFLM does; TFLite's float activation clamp (ActivationFunctionWithMinMax over
CalculateActivationRange, NONE clamping to the finite float range); and sequential float32 sums
(TFLM's `total += ...` loops; numpy's pairwise np.sum would round differently).

The generated C computes exp/log/tanh with runtime_c/edgecc_math.h (no libm), so its float outputs
are within 1e-5 relative of TFLM (edgecc/verify/tolerance.py), not bit-identical.
"""
from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from edgecc.ir import DType, Graph, Node
from edgecc.ops import Kernel, OpDef, in_type, out_type
from edgecc.ops._arith import c_float, clamp_float, float_act_range
from edgecc.ops._elementwise import same_as_input
from edgecc.ops._lut import libm

F32 = np.float32
LOWEST = float(np.finfo(np.float32).min)


# ---- joining a float path to an op -----------------------------------------------------------

def is_float(g: Graph, n: Node) -> bool:
    """The node computes in float32 (its first input or its output is float32)."""
    ts = [out_type(g, n)] + ([in_type(g, n)] if n.inputs and n.inputs[0] is not None else [])
    return any(t.dtype == DType.FLOAT32 for t in ts)


@dataclass
class FloatPath:
    reference: Callable
    lower: Callable
    constraints: list = field(default_factory=list)
    dtypes: str = "float32"
    applies: Callable[[Graph, Node], bool] = is_float


def _unless(c, path: FloatPath):
    """Constraint c for the nodes the float path does not take (same message)."""
    @functools.wraps(c)
    def check(g: Graph, n: Node) -> bool:
        return path.applies(g, n) or c(g, n)
    return check


def _only(c, path: FloatPath):
    @functools.wraps(c)
    def check(g: Graph, n: Node) -> bool:
        return not path.applies(g, n) or c(g, n)
    return check


def twin(op: OpDef, path: FloatPath, keep=()) -> OpDef:
    """op with `path` taking its float32 nodes: the op's constraints then apply to the other
    nodes only, the path's to the float32 nodes only; those in `keep` (geometry and options)
    or in both lists are checked on every node, once."""
    ref, low = op.reference, op.lower
    op.reference = lambda g, n, ins: (path.reference if path.applies(g, n) else ref)(g, n, ins)
    op.lower = lambda g, n, t: (path.lower if path.applies(g, n) else low)(g, n, t)
    shared = [c for c in op.constraints if c in keep or c in path.constraints]
    op.constraints = ([c if c in shared else _unless(c, path) for c in op.constraints]
                      + [_only(c, path) for c in path.constraints if c not in shared])
    op.dtypes = f"{op.dtypes}; {path.dtypes}"
    return op


def all_float32(g: Graph, n: Node) -> bool:
    """float32: every input and output must be float32"""
    return all(g.type(v).dtype == DType.FLOAT32 for v in [*n.inputs, *n.outputs] if v is not None)


def float_activation(g: Graph, n: Node) -> bool:
    """float32: fused activation must be NONE, RELU, RELU_N1_TO_1 or RELU6"""
    return int(n.attrs.get("fused_activation_function", 0)) in (0, 1, 2, 3)


# ---- arithmetic as TFLite's float kernels do it ----------------------------------------------

_LIBM_F: dict[str, Callable] = {}


def libm_f(name: str) -> Callable[[np.ndarray], np.ndarray]:
    """The host libm's float function `name` (expf, logf, tanhf, expm1f) over an array, element
    by element: the function TFLite Micro's std:: calls resolve to on this host."""
    if name not in _LIBM_F:
        f = getattr(libm(), name)
        f.restype, f.argtypes = ctypes.c_float, [ctypes.c_float]
        vec = np.frompyfunc(lambda v: f(float(v)), 1, 1)
        _LIBM_F[name] = lambda x: np.asarray(vec(np.asarray(x, F32)), dtype=F32)
    return _LIBM_F[name]


def act_bounds(n: Node) -> tuple[float, float]:
    """CalculateActivationRange<float> of the node's fused activation (edgecc/ops/_arith.py)."""
    return float_act_range(int(n.attrs.get("fused_activation_function", 0)))


def activate(x: np.ndarray, n: Node) -> np.ndarray:
    """ActivationFunctionWithMinMax: std::min(std::max(x, lo), hi)."""
    return clamp_float(x, int(n.attrs.get("fused_activation_function", 0)))


def act_params(n: Node) -> dict:
    """The activation bounds as C float literals (fmin, fmax)."""
    lo, hi = act_bounds(n)
    return dict(fmin=c_float(lo), fmax=c_float(hi))


def seq_sum(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Sum along `axis` in float32 from 0.0f, one element after another (a C `+=` loop)."""
    x = np.asarray(x, F32)
    zero = np.zeros_like(np.take(x, [0], axis=axis)) if x.shape[axis] else None
    if zero is None:
        return np.zeros(np.delete(x.shape, axis % x.ndim), F32)
    return np.take(np.cumsum(np.concatenate([zero, x], axis=axis), axis=axis, dtype=F32),
                   -1, axis=axis)


def rows(g: Graph, n: Node) -> tuple[int, int]:
    """(rows, depth) of an op over the last axis."""
    shape = in_type(g, n).shape
    depth = int(shape[-1]) if len(shape) else 1
    return in_type(g, n).numel // max(depth, 1), depth


# ---- elementwise unary float kernels ---------------------------------------------------------

def unary_kernel(g: Graph, n: Node, expr: str) -> Kernel:
    """y[i] = expr(x[i]) over every element (templates/c/float_unary.c.j2); `expr` is C with `v`
    the input value, e.g. "ec_expf(v)"."""
    return Kernel("float_unary.c.j2", params=dict(count=in_type(g, n).numel, expr=expr),
                  variant="float32")


def float_op(name: str, infer, path: FloatPath, **kw) -> OpDef:
    """The OpDef of an op edgecc supports in float32 only."""
    return OpDef(name, infer, path.reference, path.lower, list(path.constraints),
                 dtypes=path.dtypes, **kw)


def float_in_out(g: Graph, n: Node) -> bool:
    """input and output must both be float32"""
    return in_type(g, n).dtype == DType.FLOAT32 and out_type(g, n).dtype == DType.FLOAT32


def same_shape(g: Graph, n: Node) -> bool:
    """output must have the input's shape"""
    return tuple(in_type(g, n).shape) == tuple(out_type(g, n).shape)


def unary_float_op(name: str, fn: Callable[[np.ndarray], np.ndarray], expr: str) -> OpDef:
    """The OpDef of a float32 elementwise op: y = fn(x) in numpy (as TFLite rounds it),
    `expr` of `v` in C (templates/c/float_unary.c.j2)."""

    def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
        with np.errstate(all="ignore"):
            return [np.asarray(fn(np.asarray(ins[0], F32)), F32)]
    return OpDef(name, same_as_input, reference, lambda g, n, t: unary_kernel(g, n, expr),
                 [float_in_out, same_shape], dtypes="float32", inplace=((0, 0),))
