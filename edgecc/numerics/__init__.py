"""Every arithmetic dialect edgecc compiles: how a node turns its exact integer accumulator (or its
float values) into outputs, bit for bit with the reference it follows.

Owns: each dialect's arithmetic, in numpy, with the constants and proofs the kernels use; below
the ops (ops/<op>.py keep an op's meaning and portable kernels, and call in here for the
dialect). A node says which dialect it follows with a typed value in `ir.Node.numerics`, set once
by the frontend and carried by passes; ops and kernel tables ask its properties, never a string.

- `FixedPoint` (TFLite, and every node an importer gives no other dialect): the two-step
  fixed-point requantization, SaturatingRoundingDoublingHighMul then RoundingDivideByPOT
  (fixed_point.py; gemmlowp.py for the transcendental helpers; fastrq.py for the SIMD kernels'
  proven shortcut of it).
- `QLinear` (ONNX): onnxruntime's QLinear* kernels and QuantizeLinear: int32 accumulation,
  round half to even of float32(acc) x float32 scale, saturate (qlinear.py, with the proven
  integer lines of `fixed_epilogue`; the elementwise, pooling, softmax and resize kernels in
  ops/_onnx_*.py).
- `OrtFloatGroup` (ONNX, options x86 / x86-float): a DequantizeLinear -> op -> QuantizeLinear
  group onnxruntime's x86 CPU provider leaves in float32, in its float order (ort_order.py;
  kernels ops/_ort_float.py), either on integer kernels whose near-tie check (ort_near.py's
  bound; ops/_ort_near.py) recomputes the rare output near a rounding boundary in that order, or
  in that order throughout.

The dialect values are defined in edgecc/ir.py beside QParams (the IR imports nothing above it)
and exported here.
"""
from __future__ import annotations

from edgecc.ir import (FIXED_POINT, FLOAT, NEAR, QLINEAR, FixedPoint, Numerics, OrtFloatGroup,
                       QLinear)

__all__ = ["FIXED_POINT", "FLOAT", "NEAR", "QLINEAR", "FixedPoint", "Numerics", "OrtFloatGroup",
           "QLinear"]
