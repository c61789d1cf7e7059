"""float32 paths of activations and broadcasting arithmetic (TFLite's reference float kernels).

Each is a `FloatPath` (edgecc/ops/_float.py) the op module joins to its integer path with `twin`.
TFLite's reference float arithmetic, which the numpy references reproduce bit for bit (host libm):
  SOFTMAX:     per row, max = max(lowest, x...); e_c = exp((x_c - max) * float(beta)); sum += e_c
               in order; y_c = e_c / sum.
  LOG_SOFTMAX: per row, sum += exp(x_c - max) in order; y_c = x_c - max - log(sum).
  LOGISTIC:    x > 16.619047164916992188 -> 1; x < -9 -> exp(x); else 1 / (1 + exp(-x)).
               (ONNX numerics, ONNX's Sigmoid: 1 / (1 + exp(-x)) everywhere.)
  TANH:        tanh(x).   ELU: x < 0 ? expm1(x) : x.   RSQRT: 1 / sqrt(x).
  RELU:        x < 0 ? 0 : x.   RELU6: x > 6 ? 6 : (x < 0 ? 0 : x).
  HARD_SWISH:  x * min(6, max(0, x + 3)) / 6 (std::min/max, left to right).
  ADD, DIV:    a + b, a / b with numpy broadcasting, then the fused activation's clamp
               (NONE clamps to the finite float range, as CalculateActivationRange<float>).
  FLOOR_DIV:   floor(a / b), no clamp.   FLOOR_MOD: t = fmod(a, b); t != 0 and sign(t) != sign(b)
               ? t + b : t, no clamp.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.ops import Kernel, in_type
from edgecc.ops import _arith as ew
from edgecc.ops._arith import c_float
from edgecc.ops._float import (F32, LOWEST, FloatPath, act_params, activate, all_float32,
                               float_activation, libm_f, rows, seq_sum, unary_kernel)
from edgecc.ops._loops import loop_text

LOGISTIC_UPPER = F32(16.619047164916992188)
LOGISTIC_LOWER = F32(-9.0)


def nonempty_rows(g: Graph, n: Node) -> bool:
    """float32: input must have at least one dimension and a non-empty last axis"""
    shape = in_type(g, n).shape
    return len(shape) >= 1 and shape[-1] > 0


def _softmax(g: Graph, n: Node, ins: list, log: bool) -> list[np.ndarray]:
    r, d = rows(g, n)
    x = np.asarray(ins[0], F32).reshape(r, d)
    mx = np.maximum(F32(LOWEST), x.max(axis=1, keepdims=True))
    diff = (x - mx).astype(F32)
    if log:
        lsum = libm_f("logf")(seq_sum(libm_f("expf")(diff), axis=1))[:, None]
        y = (diff - lsum).astype(F32)
    else:
        beta = F32(n.attrs.get("beta", 1.0))
        e = libm_f("expf")((diff * beta).astype(F32))
        y = (e / seq_sum(e, axis=1)[:, None]).astype(F32)
    return [y.reshape(in_type(g, n).shape)]


def _softmax_kernel(g: Graph, n: Node, log: bool) -> Kernel:
    r, d = rows(g, n)
    return Kernel("softmax_float.c.j2", params=dict(rows=r, depth=d, log=log, lowest=c_float(LOWEST),
                                                    beta=c_float(n.attrs.get("beta", 1.0))),
                  variant="float32", derived=dict(op="LOG_SOFTMAX" if log else "SOFTMAX",
                                                  body="softmax_log" if log else "softmax_exp"))


SOFTMAX = FloatPath(lambda g, n, ins: _softmax(g, n, ins, False),
                    lambda g, n, t: _softmax_kernel(g, n, False), [all_float32, nonempty_rows])
LOG_SOFTMAX = FloatPath(lambda g, n, ins: _softmax(g, n, ins, True),
                        lambda g, n, t: _softmax_kernel(g, n, True), [all_float32, nonempty_rows])


def _logistic(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    x = np.asarray(ins[0], F32)
    exp = libm_f("expf")
    mid = (F32(1) / (F32(1) + exp(-x))).astype(F32)
    if n.numerics.qlinear:  # ONNX's Sigmoid: the formula everywhere, no cut-offs
        return [mid]
    return [np.where(x > LOGISTIC_UPPER, F32(1), np.where(x < LOGISTIC_LOWER, exp(x), mid))
            .astype(F32)]


def _logistic_kernel(g: Graph, n: Node) -> Kernel:
    if n.numerics.qlinear:
        return unary_kernel(g, n, "1.0f / (1.0f + ec_expf(-v))")
    return unary_kernel(g, n, f"v > {c_float(LOGISTIC_UPPER)} ? 1.0f : (v < "
                              f"{c_float(LOGISTIC_LOWER)} ? ec_expf(v) : 1.0f / (1.0f + ec_expf(-v)))")


# LOGISTIC: TFLite's, or ONNX's Sigmoid for a node with ONNX numerics (frontends/onnx/mixed.py)
LOGISTIC = FloatPath(_logistic, lambda g, n, t: _logistic_kernel(g, n), [all_float32],
                     dtypes="float32")
TANH = FloatPath(lambda g, n, ins: [libm_f("tanhf")(ins[0])],
                 lambda g, n, t: unary_kernel(g, n, "ec_tanhf(v)"), [all_float32])


def _elu(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    x = np.asarray(ins[0], F32)
    return [np.where(x < 0, libm_f("expm1f")(x), x).astype(F32)]


ELU = FloatPath(_elu, lambda g, n, t: unary_kernel(g, n, "v < 0.0f ? ec_expm1f(v) : v"),
                [all_float32])


def unary(fn, expr: str) -> FloatPath:
    """The float path of an elementwise op: fn(x) in numpy (rounding as TFLite's C++), `expr`
    of `v` in C."""
    def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
        with np.errstate(all="ignore"):
            return [np.asarray(fn(np.asarray(ins[0], F32)), F32)]
    return FloatPath(reference, lambda g, n, t: unary_kernel(g, n, expr), [all_float32])


def _hard_swish(x: np.ndarray) -> np.ndarray:
    t = (x + F32(3)).astype(F32)
    t = np.where(F32(0) < t, t, F32(0))
    t = np.where(t < F32(6), t, F32(6))
    return ((x * t).astype(F32) / F32(6)).astype(F32)


RELU = unary(lambda x: np.where(x < 0, F32(0), x), "v < 0.0f ? 0.0f : v")
RELU6 = unary(lambda x: np.where(x > 6, F32(6), np.where(x < 0, F32(0), x)),
              "v > 6.0f ? 6.0f : (v < 0.0f ? 0.0f : v)")
HARD_SWISH = unary(_hard_swish, "v * ((0.0f < v + 3.0f ? v + 3.0f : 0.0f) < 6.0f ? "
                                "(0.0f < v + 3.0f ? v + 3.0f : 0.0f) : 6.0f) / 6.0f")
RSQRT = unary(lambda x: F32(1) / np.sqrt(x), "1.0f / ec_sqrtf(v)")


# ---- broadcasting binary ops ---------------------------------------------------------------

def binary(fn, expr: str, clamp: bool = True) -> FloatPath:
    """The float path of a broadcasting binary op computing fn(a, b) (C: `expr` of va, vb),
    followed by the fused activation when `clamp` (ops without one do not clamp at all)."""
    def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
        with np.errstate(all="ignore"):
            y = np.asarray(fn(np.asarray(ins[0], F32), np.asarray(ins[1], F32)), F32)
        return [activate(y, n) if clamp else y]

    def lower(g: Graph, n: Node, target) -> Kernel:
        params = dict(ew.loop_params(g, n), expr=expr, ctype="float", out_ctype="float",
                      **(act_params(n) if clamp else {}))
        # the store clamps to the fused activation's range (templates/c/binary_expr.c.j2)
        return Kernel("binary_expr.c.j2", params=params, consts=ew.const_inputs(g, n),
                      variant="float32",
                      derived=dict(loop_text(params), store="store_clamped" if clamp else "store"))
    return FloatPath(reference, lower, [all_float32, ew.shapes_broadcast, ew.rank_at_most_5,
                                        float_activation])


ADD = binary(np.add, "va + vb")
DIV = binary(np.divide, "va / vb")
FLOOR_DIV = binary(lambda a, b: np.floor(np.divide(a, b)), "ec_floorf(va / vb)", clamp=False)


def _floor_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    t = np.fmod(a, b).astype(F32)  # exact, as std::fmod
    return np.where((t != 0) & ((b < 0) != (t < 0)), (t + b).astype(F32), t)


FLOOR_MOD = binary(_floor_mod, "ec_floor_modf(va, vb)", clamp=False)
