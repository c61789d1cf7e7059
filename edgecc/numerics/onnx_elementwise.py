"""ONNX's elementwise float functions as onnxruntime computes them in float32, for the int8
tables of DequantizeLinear -> f -> QuantizeLinear groups (edgecc/ops/lookup.py).

Owns: `function(op_type, attrs, c)`, f over a float32 array for the unary ops (Neg, Abs, Relu,
Clip, LeakyRelu, HardSigmoid, HardSwish, Sigmoid, Tanh, Erf, Gelu, Elu, Selu, Softplus, Exp,
Sqrt, Reciprocal ...) and the binary ones with one constant operand `c` (PRelu's slope, Max,
Min, Sub, Div, Pow by a constant; `swap`: the constant is the first operand). The piecewise
linear ones are exact in float32 (one rounding per operation, in onnxruntime's order); the
transcendental ones (Tanh, Erf, Gelu, Exp ...) use the correctly rounded float64 function
rounded to float32, where onnxruntime's MLAS approximations may differ in the last bit: a table
entry then lands one quantization step away (verify counts such values).
"""
from __future__ import annotations

import math

import numpy as np

F = np.float32


def _erf(v: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(np.asarray(v, np.float64))


def _gelu(v: np.ndarray, approximate: str) -> np.ndarray:
    x = np.asarray(v, np.float64)
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def _hard_sigmoid(v, alpha: float, beta: float):
    return np.maximum(F(0), np.minimum(F(1), (v * F(alpha)).astype(F) + F(beta)))


def _unary(op: str, a: dict):
    alpha = a.get("alpha")
    f64 = {
        "Sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
        "Tanh": np.tanh, "Erf": _erf, "Exp": np.exp, "Sqrt": np.sqrt,
        "Softplus": lambda x: np.log1p(np.exp(x)),
        "Gelu": lambda x: _gelu(x, str(a.get("approximate", "none"))),
        "Elu": lambda x: np.where(x >= 0, x, (1.0 if alpha is None else alpha) * np.expm1(x)),
        "Selu": lambda x: a.get("gamma", 1.0507009873554805) * np.where(
            x > 0, x, a.get("alpha", 1.6732632423543772) * np.expm1(x)),
    }.get(op)
    if f64 is not None:
        return lambda v: np.asarray(f64(np.asarray(v, np.float64))).astype(F)
    f32 = {
        "Neg": lambda v: -v, "Abs": np.abs, "Relu": lambda v: np.maximum(v, F(0)),
        "Identity": lambda v: v, "Reciprocal": lambda v: F(1) / v,
        "LeakyRelu": lambda v: np.where(v >= 0, v, (v * F(0.01 if alpha is None else alpha))),
        "HardSigmoid": lambda v: _hard_sigmoid(v, a.get("alpha", 0.2), a.get("beta", 0.5)),
        "HardSwish": lambda v: (v * _hard_sigmoid(v, 1 / 6, 0.5)).astype(F),
    }.get(op)
    return f32


def _binary(op: str, c: float, swap: bool):
    c = F(c)
    fns = {
        "PRelu": lambda v: np.where(v < 0, (v * c).astype(F), v),
        "Max": lambda v: np.maximum(v, c), "Min": lambda v: np.minimum(v, c),
        "Sub": (lambda v: c - v) if swap else (lambda v: v - c),
        "Div": (lambda v: c / v) if swap else (lambda v: v / c),
        "Mul": lambda v: v * c, "Add": lambda v: v + c,
        "Pow": (lambda v: np.power(c, v)) if swap else (lambda v: np.power(v, c)),
    }
    return fns.get(op)


UNARY = ("Neg", "Abs", "Relu", "Identity", "Reciprocal", "LeakyRelu", "HardSigmoid", "HardSwish",
         "Sigmoid", "Tanh", "Erf", "Exp", "Sqrt", "Softplus", "Gelu", "Elu", "Selu")
WITH_CONSTANT = ("PRelu", "Max", "Min", "Sub", "Div", "Mul", "Add", "Pow")


def function(op: str, attrs: dict, c: float | None = None, swap: bool = False,
             clips: tuple = ()):
    """f (float32 array -> float32 array) of `op`, or None when edgecc has no table for it;
    c: the constant operand of a binary op; clips: (lo, hi) pairs of fused Relu / Clip."""
    f = _unary(op, attrs) if c is None else _binary(op, c, swap)
    if f is None:
        return None

    def g(v: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            y = np.asarray(f(np.asarray(v, F))).astype(F)
        for lo, hi in clips:
            y = y if lo is None else np.maximum(y, F(lo))
            y = y if hi is None else np.minimum(y, F(hi))
        return y
    return g
