"""FULLY_CONNECTED, int8 activations and weights (per-tensor or per-unit weight scales), optional
int32 bias; int16 activations (16x8) in edgecc/ops/_conv16.py.

TFLite Micro's reference: acc = bias + sum((x + in_off) * w) with in_off = -input_zp, then
MultiplyByQuantizedMultiplier, + output_zp, clamp to the fused activation range. keep_num_dims only
changes the output shape. Per-channel weights (one scale per unit, the converter's default for
Dense layers now) take FullyConnectedPerChannel: the same sum, requantized with each unit's own
multiplier and shift (_conv_common.fc_unit_multipliers); only the portable kernels do this yet.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, const, in_type, out_type, quantized_io, register
from edgecc.ops._conv_common import (act_range, bias_or_zeros, fc_multiplier,
                                     fc_unit_multipliers, requantize, supported_activation)
from edgecc.ops import _conv16
from edgecc.ops import _float_conv
from edgecc.ops._float import twin
from edgecc.numerics.qlinear import onnx_scales


def int8_activations(g: Graph, n: Node) -> bool:
    """input and output must both be int8, or both int16 (16x8: int16 activations, int8 weights)"""
    return (in_type(g, n).dtype, out_type(g, n).dtype) in ((DType.INT8,) * 2, (DType.INT16,) * 2)


def int8_constant_weights(g: Graph, n: Node) -> bool:
    """weights must be a constant int8 tensor of rank 2 with zero point 0"""
    w = g.value(n.inputs[1])
    return (w.is_const and w.type.dtype == DType.INT8 and len(w.type.shape) == 2
            and w.type.q is not None and all(z == 0 for z in w.type.q.zero_point))


def per_tensor_or_unit_weights(g: Graph, n: Node) -> bool:
    """weights must be quantized per tensor or per output unit (one scale per row, axis 0)"""
    q = in_type(g, n, 1).q
    return (n.numerics.qlinear or not q.per_channel
            or (q.axis == 0 and len(q.scale) == in_type(g, n, 1).shape[0]))


def bias_int32_const(g: Graph, n: Node) -> bool:
    """bias, when present, must be a constant int32 tensor (int64 with int16 activations)"""
    if len(n.inputs) < 3 or n.inputs[2] is None:
        return True
    b = g.value(n.inputs[2])
    return b.is_const and b.type.dtype == _conv16.bias_dtype(g, n)


def fc_dims(g: Graph, n: Node) -> tuple[int, int, int]:
    units, depth = in_type(g, n, 1).shape
    batches = in_type(g, n).numel // depth
    return batches, units, depth


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    batches, units, _ = fc_dims(g, n)
    x = in_type(g, n)
    if n.attrs.get("keep_num_dims"):
        shape = (*x.shape[:-1], units)
    else:
        shape = (batches, units)
    return [TensorType(shape, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    if n.numerics.float_group:  # onnxruntime's float32 group: edgecc/ops/_ort_float.py
        from edgecc.ops._ort_float import reference as ort_reference
        return ort_reference(g, n, ins)
    if _conv16.is_int16(g, n):  # 16x8: edgecc/ops/_conv16.py
        return _conv16.reference_fully_connected(g, n, ins)
    batches, units, depth = fc_dims(g, n)
    x = ins[0].reshape(batches, depth).astype(np.int64) - in_type(g, n).q.zero_point[0]
    w = const(g, n, 1).astype(np.int64)
    acc = x @ w.T + bias_or_zeros(g, n, units)
    if n.numerics.qlinear:
        m, s = onnx_scales(g, n, units), 0
    else:
        m, s = fc_unit_multipliers(g, n, units)
        m, s = m[None, :], s[None, :]
    lo, hi = act_range(g, n)
    out = requantize(acc, m, s, out_type(g, n).q.zero_point[0], lo, hi, np.int8)
    return [out.reshape(out_type(g, n).shape)]


def lower(g: Graph, n: Node, target) -> Kernel:
    """The portable kernel (the optimized ones are edgecc/lower/'s tables)."""
    if n.numerics.float_group:  # onnxruntime's float32 group: edgecc/ops/_ort_float.py
        from edgecc.ops._ort_near import lower as ort_lower  # (x86-float: _ort_float)
        return ort_lower(g, n, target)
    if _conv16.is_int16(g, n):  # 16x8: edgecc/ops/_conv16.py (no SIMD variant yet)
        return _conv16.lower_fully_connected(g, n, target)
    batches, units, depth = fc_dims(g, n)
    w = const(g, n, 1).astype(np.int64)
    in_zp = in_type(g, n).q.zero_point[0]
    # Fold the input zero point into the bias: sum((x - zp) * w) = sum(x*w) - zp*sum(w).
    bias = bias_or_zeros(g, n, units) - in_zp * w.sum(axis=1)
    lo, hi = act_range(g, n)
    if n.numerics.qlinear:  # onnxruntime's float32 requantization per unit (numerics/qlinear.py)
        return Kernel("fully_connected_onnx.c.j2",
                      params=dict(batches=batches, units=units, depth=depth,
                                  out_zp=out_type(g, n).q.zero_point[0], act_min=lo, act_max=hi),
                      consts=dict(w=w.astype(np.int8), bias=bias.astype(np.int32),
                                  scale=onnx_scales(g, n, units)))
    if in_type(g, n, 1).q.per_channel:
        mults, shifts = fc_unit_multipliers(g, n, units)
        return Kernel("fully_connected_pc.c.j2",
                      params=dict(batches=batches, units=units, depth=depth,
                                  out_zp=out_type(g, n).q.zero_point[0], act_min=lo, act_max=hi),
                      consts=dict(w=w.astype(np.int8), bias=bias.astype(np.int32),
                                  mult=mults.astype(np.int32), shift=shifts.astype(np.int32)),
                      variant="portable-per-channel")
    m, s = fc_multiplier(g, n)
    return Kernel("fully_connected.c.j2",
                  params=dict(batches=batches, units=units, depth=depth, mult=m, shift=s,
                              out_zp=out_type(g, n).q.zero_point[0], act_min=lo, act_max=hi),
                  consts=dict(w=w.astype(np.int8), bias=bias.astype(np.int32)))


OP = register(OpDef(
    "FULLY_CONNECTED", infer, reference, lower,
    [quantized_io, int8_activations, int8_constant_weights, per_tensor_or_unit_weights,
     bias_int32_const,
     supported_activation, _conv16.int16_zero_points, _conv16.int16_shift_in_range],
    dtypes="int8 x int8 -> int8 (int32 bias), int16 x int8 -> int16 (int64 bias)"))
twin(OP, _float_conv.FULLY_CONNECTED, keep=(supported_activation,))
