"""FULLY_CONNECTED, int8 activations and weights (per-tensor weight scale), optional int32 bias.

TFLite Micro's reference: acc = bias + sum((x + in_off) * w) with in_off = -input_zp, then
MultiplyByQuantizedMultiplier, + output_zp, clamp to the fused activation range. keep_num_dims only
changes the output shape.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, const, in_type, out_type, register
from edgecc.ops._conv_common import act_range, fc_multiplier, requantize


def int8_activations(g: Graph, n: Node) -> bool:
    """input and output must be int8 (int16 activations are not supported yet)"""
    return in_type(g, n).dtype == DType.INT8 and out_type(g, n).dtype == DType.INT8


def int8_constant_weights(g: Graph, n: Node) -> bool:
    """weights must be a constant int8 tensor of rank 2 with zero point 0"""
    w = g.value(n.inputs[1])
    return (w.is_const and w.type.dtype == DType.INT8 and len(w.type.shape) == 2
            and w.type.q is not None and all(z == 0 for z in w.type.q.zero_point))


def per_tensor_weights(g: Graph, n: Node) -> bool:
    """weights must be quantized per tensor (one scale)"""
    return not in_type(g, n, 1).q.per_channel


def bias_int32_const(g: Graph, n: Node) -> bool:
    """bias, when present, must be a constant int32 tensor"""
    if len(n.inputs) < 3 or n.inputs[2] is None:
        return True
    b = g.value(n.inputs[2])
    return b.is_const and b.type.dtype == DType.INT32


def supported_activation(g: Graph, n: Node) -> bool:
    """fused activation must be NONE, RELU, RELU_N1_TO_1 or RELU6"""
    return int(n.attrs.get("fused_activation_function", 0)) in (0, 1, 2, 3)


def _dims(g: Graph, n: Node) -> tuple[int, int, int]:
    units, depth = in_type(g, n, 1).shape
    batches = in_type(g, n).numel // depth
    return batches, units, depth


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    batches, units, _ = _dims(g, n)
    x = in_type(g, n)
    if n.attrs.get("keep_num_dims"):
        shape = (*x.shape[:-1], units)
    else:
        shape = (batches, units)
    return [TensorType(shape, out_type(g, n).dtype)]


def _bias(g: Graph, n: Node, units: int) -> np.ndarray:
    b = const(g, n, 2)
    return np.zeros(units, np.int64) if b is None else b.astype(np.int64).ravel()


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    batches, units, depth = _dims(g, n)
    x = ins[0].reshape(batches, depth).astype(np.int64) - in_type(g, n).q.zero_point[0]
    w = const(g, n, 1).astype(np.int64)
    acc = x @ w.T + _bias(g, n, units)
    m, s = fc_multiplier(g, n)
    lo, hi = act_range(g, n)
    out = requantize(acc, m, s, out_type(g, n).q.zero_point[0], lo, hi, np.int8)
    return [out.reshape(out_type(g, n).shape)]


def lower(g: Graph, n: Node, target) -> Kernel:
    batches, units, depth = _dims(g, n)
    w = const(g, n, 1).astype(np.int64)
    in_zp = in_type(g, n).q.zero_point[0]
    # Fold the input zero point into the bias: sum((x - zp) * w) = sum(x*w) - zp*sum(w).
    bias = _bias(g, n, units) - in_zp * w.sum(axis=1)
    m, s = fc_multiplier(g, n)
    lo, hi = act_range(g, n)
    return Kernel("fully_connected.c.j2",
                  params=dict(batches=batches, units=units, depth=depth, mult=m, shift=s,
                              out_zp=out_type(g, n).q.zero_point[0], act_min=lo, act_max=hi),
                  consts=dict(w=w.astype(np.int8), bias=bias.astype(np.int32)))


OP = register(OpDef(
    "FULLY_CONNECTED", infer, reference, lower,
    [int8_activations, int8_constant_weights, per_tensor_weights, bias_int32_const,
     supported_activation],
    dtypes="int8 x int8 -> int8 (int32 bias)"))
