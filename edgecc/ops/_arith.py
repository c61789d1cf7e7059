"""Pieces shared by the broadcasting arithmetic ops (SUB, MUL, SQUARED_DIFFERENCE, comparisons, ...).

Owns: the constraints they share (element types, per-tensor quantization, broadcasting, fused
activation), their shape inference (numpy broadcast of the inputs), the loop parameters handed to
the templates (from edgecc/ops/_broadcast.py), float and int32 fused-activation clamp ranges, the C
spelling of float parameters, int32 wrap-around, the int32/float32 (unquantized) reference, the
activation parameters and Kernel of SUB and MUL, and constant inputs as kernel constants.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, in_type, out_type
from edgecc.ops._broadcast import (broadcast_loops, broadcast_shape, rank_at_most_5,  # noqa: F401
                                   shapes_broadcast)
from edgecc.ops._loops import loop_text


def c_float(x: float) -> str:
    """A float32 parameter as a C literal that reads back to the same bits."""
    x = float(np.float32(x))
    if np.isinf(x):
        return "(1.0f / 0.0f)" if x > 0 else "(-1.0f / 0.0f)"
    text = f"{x:.9g}"
    return text + ("f" if ("." in text or "e" in text) else ".0f")


def wrap32(x: np.ndarray) -> np.ndarray:
    """int64 -> int32 with C's two's-complement wrap-around."""
    return np.asarray(x, dtype=np.int64).astype(np.int32)


def float_act_range(act: int) -> tuple[float, float]:
    """CalculateActivationRange<float>: NONE is [lowest, max], so an overflow to +-inf comes out as
    +-FLT_MAX (ActivationFunctionWithMinMax clamps it, as TFLite Micro does)."""
    top = float(np.finfo(np.float32).max)
    return {0: (-top, top), 1: (0.0, top), 2: (-1.0, 1.0), 3: (0.0, 6.0)}[act]


def int32_act_range(act: int) -> tuple[int, int]:
    lo, hi = -(1 << 31), (1 << 31) - 1
    return {0: (lo, hi), 1: (0, hi), 2: (-1, 1), 3: (0, 6)}[act]


def clamp_float(x: np.ndarray, act: int) -> np.ndarray:
    """ActivationFunctionWithMinMax: min(max(x, lo), hi) with std::min/max's NaN behaviour."""
    lo, hi = (np.float32(v) for v in float_act_range(act))
    x = np.asarray(x, dtype=np.float32)
    x = np.where(x < lo, lo, x)  # std::max(x, lo) == (x < lo) ? lo : x
    return np.where(hi < x, hi, x).astype(np.float32)


def unquantized_reference(dt: DType, act: int, ins: list, fn) -> np.ndarray:
    """fn(a, b) for int32 (C's wrap-around, clamped to the activation range) or float32 (clamped
    with std::min/std::max): the unquantized paths of the binary arithmetic ops."""
    if dt == DType.FLOAT32:
        with np.errstate(over="ignore"):  # IEEE inf, as the C computes, before the clamp
            return clamp_float(fn(ins[0].astype(np.float32), ins[1].astype(np.float32)), act)
    lo, hi = int32_act_range(act)
    return np.clip(wrap32(fn(ins[0].astype(np.int64), ins[1].astype(np.int64))), lo, hi
                   ).astype(np.int32)


def unquantized_act_params(dt: DType, act: int) -> dict:
    """Template parameters of the fused activation for int32 (act_min, act_max) or float32
    (clamp, fmin, fmax as C literals)."""
    if dt == DType.INT32:
        lo, hi = int32_act_range(act)
        return dict(act_min=lo, act_max=hi)
    lo, hi = float_act_range(act)
    return dict(clamp=True, fmin=c_float(lo), fmax=c_float(hi))


# ---- constraints -----------------------------------------------------------------------------

def same_types(g: Graph, n: Node) -> bool:
    """all inputs and the output must have the same element type"""
    return len({g.type(v).dtype for v in [*n.inputs, *n.outputs] if v is not None}) == 1


def inputs_same_type(g: Graph, n: Node) -> bool:
    """all inputs must have the same element type"""
    return len({g.type(v).dtype for v in n.inputs if v is not None}) == 1


def per_tensor_quantized(g: Graph, n: Node) -> bool:
    """int8/int16 tensors must be quantized per tensor (one scale and zero point)"""
    for v in [*n.inputs, *n.outputs]:
        if v is None:
            continue
        t = g.type(v)
        if t.dtype in (DType.INT8, DType.INT16) and (t.q is None or t.q.per_channel):
            return False
    return True


def supported_activation(g: Graph, n: Node) -> bool:
    """fused activation must be NONE, RELU, RELU_N1_TO_1 or RELU6"""
    return int(n.attrs.get("fused_activation_function", 0)) in (0, 1, 2, 3)


# ---- inference and lowering helpers ----------------------------------------------------------

def infer_broadcast(g: Graph, n: Node, dtype: DType | None = None) -> list[TensorType | None]:
    shape = broadcast_shape(*[g.type(v).shape for v in n.inputs if v is not None])
    if shape is None:
        return [None]
    return [TensorType(shape, dtype or out_type(g, n).dtype)]


def loop_params(g: Graph, n: Node) -> dict:
    """dims, s0.. (input strides) and so (output strides) of the broadcast loop nest."""
    shapes = [g.type(v).shape for v in n.inputs]
    return broadcast_loops(shapes, tuple(out_type(g, n).shape)).params()


def arith_kernel(template: str, g: Graph, n: Node, quantized: tuple[DType, ...],
                 quant_params: Callable[[Graph, Node], dict]) -> Kernel:
    """The Kernel of a broadcasting arithmetic op (SUB, MUL): loop parameters, then
    quant_params(g, n) for the `quantized` dtypes, else the int32/float32 activation's."""
    dt = out_type(g, n).dtype
    params = dict(loop_params(g, n), kind=dt.name.lower(), ctype=dt.c)
    if dt in quantized:
        params.update(quant_params(g, n))
    else:
        params.update(unquantized_act_params(dt, int(n.attrs.get("fused_activation_function", 0))))
    return Kernel(template, params=params, consts=const_inputs(g, n), derived=loop_text(params))


def const_inputs(g: Graph, n: Node) -> dict[str, np.ndarray]:
    """Constant inputs become kernel constants named in<i> (codegen then binds {{ in<i> }})."""
    out = {}
    for i, v in enumerate(n.inputs):
        if v is not None and g.value(v).is_const:
            out[f"in{i}"] = np.ascontiguousarray(g.value(v).data)
    return out


def zp(t: TensorType) -> int:
    return int(t.q.zero_point[0]) if t.q is not None else 0


def scale32(t: TensorType) -> np.float32:
    """The tensor's scale as TfLiteQuantizationParams holds it (a C float)."""
    return np.float32(t.q.scale[0])


def in_zp(g: Graph, n: Node, i: int) -> int:
    return zp(in_type(g, n, i))
