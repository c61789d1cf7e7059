"""Every arithmetic dialect edgecc compiles, and the typed value that says which one a node follows.

Owns: the dialects, each as a small frozen value a frontend sets once on every node it imports
(`ir.Node.numerics`) and passes carry when they copy a node; ops and kernel tables ask the value
(its properties), never a string. The arithmetic of each dialect lives in this package's modules:

- `FixedPoint` (TFLite, and every node an importer gives no other dialect): the two-step
  fixed-point requantization, SaturatingRoundingDoublingHighMul then RoundingDivideByPOT
  (fixed_point.py; gemmlowp.py for the transcendental helpers; fastrq.py for the SIMD kernels'
  proven shortcut of it).
- `QLinear` (ONNX): onnxruntime's QLinear* kernels and QuantizeLinear: int32 accumulation,
  round half to even of float32(acc) x float32 scale, saturate (qlinear.py, with the proven
  integer lines of `fixed_epilogue`; qlinear_elt/pool/softmax/resize.py for the other ops).
- `OrtFloatGroup` (ONNX, option x86 / x86-float): a DequantizeLinear -> op -> QuantizeLinear
  group onnxruntime's x86 CPU provider leaves in float32, reproduced in its float order
  (ort_order.py, ort_float.py), either checked near-tie by near-tie on integer kernels
  (ort_near.py) or computed in that float order throughout.

This module imports nothing from edgecc, so `ir` can name the dialects without a cycle.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class Numerics:
    """How a node turns its exact integer (or float) intermediate into its output values."""

    label: ClassVar[str] = ""
    # onnxruntime's QLinear arithmetic: float32 scales, round half to even (qlinear.py)
    qlinear: ClassVar[bool] = False
    # a group onnxruntime's x86 CPU provider computes in float32 (ort_float.py)
    float_group: ClassVar[bool] = False

    def __str__(self) -> str:
        return self.label


@dataclass(frozen=True)
class FixedPoint(Numerics):
    """TFLite's two-step fixed-point requantization (and TFLite Micro's integer kernels)."""

    label: ClassVar[str] = "tflite fixed point"


@dataclass(frozen=True)
class QLinear(Numerics):
    """onnxruntime's integer QLinear epilogue: round_half_even(float32(acc) x scale) + zp,
    saturated; its float32 steps must not be contracted into fused multiply-adds."""

    label: ClassVar[str] = "onnx qlinear"
    qlinear: ClassVar[bool] = True


NEAR = "near"    # the exact integer accumulator, onnxruntime's float order near a rounding tie
FLOAT = "float"  # onnxruntime's float order throughout (portable float kernels)


@dataclass(frozen=True)
class OrtFloatGroup(Numerics):
    """A QDQ group onnxruntime's x86 CPU provider runs in float32. `order`: NEAR (integer
    kernels with the near-tie check, ort_near.py) or FLOAT (its float32 order throughout);
    `threads`: the intra-op thread count whose conv summation order (ort_order.py
    conv_segments) the result must match."""

    order: str = NEAR
    threads: int = 1
    label: ClassVar[str] = "onnxruntime x86 float group"
    float_group: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.order not in (NEAR, FLOAT) or self.threads < 1:
            raise ValueError(f"OrtFloatGroup({self.order!r}, {self.threads})")

    @property
    def near_checked(self) -> bool:
        """Whether integer kernels with the near-tie check may compute it (ort_near.py)."""
        return self.order == NEAR


FIXED_POINT = FixedPoint()
QLINEAR = QLinear()
