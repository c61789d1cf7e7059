"""Real numbers at a model's inputs and outputs: quantizing a float into a quantized input and
dequantizing a quantized output, as the model's own format defines it.

Owns: the two rounding rules and which format follows which, in numpy; the generated C's
`name_inputI_quantize` / `name_outputI_dequantize` helpers (runtime_c/edgecc_io.h) compute exactly
this, and `edgecc.run` and `verify --inputs` use it for float data given to a quantized input.

- TFLite (QUANTIZE, reference_ops::AffineQuantize, which TFLite Micro runs):
  q = clamp(round(x / scale) + zero_point), the division in float32 (`val /
  static_cast<float>(scale)`), round half away from zero (TfLiteRound = std::round).
- ONNX (QuantizeLinear, and onnxruntime's MlasQuantizeLinear): q = saturate(round(x / scale) +
  zero_point), the division in float32, round half to even (std::nearbyintf).

Both leave NaN undefined; edgecc maps it to the zero point (the real value 0). Dequantizing:
scale x (q - zero_point), one float32 rounding of the exact product for 8- and 16-bit values (what
TFLite's double product then cast to float and onnxruntime's float product both give).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from edgecc.ir import TensorType

HALF_AWAY = "half-away"  # TFLite
HALF_EVEN = "half-even"  # ONNX
RULES = {HALF_AWAY: "round half away from zero, saturate (TFLite QUANTIZE)",
         HALF_EVEN: "round half to even, saturate (ONNX QuantizeLinear)"}


def rounding_of(model: str | Path) -> str:
    """The rounding rule of the model's format: HALF_EVEN for an .onnx file, else HALF_AWAY."""
    return HALF_EVEN if Path(model).suffix.lower() == ".onnx" else HALF_AWAY


def quantizable(t: TensorType) -> bool:
    """An integer tensor with one scale and zero point (the helpers exist for these)."""
    return t.q is not None and not t.q.per_channel and t.dtype.np.kind in "iu"


def quantize(x, t: TensorType, rule: str) -> np.ndarray:
    """Float data `x` as the values of quantized tensor type `t`, by `rule` (HALF_AWAY/HALF_EVEN)."""
    info = np.iinfo(t.dtype.np)
    scale, zp = np.float32(t.q.scale[0]), int(t.q.zero_point[0])
    with np.errstate(all="ignore"):
        r = np.asarray(x, dtype=np.float32) / scale  # float32 division, as both references
        if rule == HALF_AWAY:
            k = np.where(r >= 0, np.floor(r + np.float64(0.5)), np.ceil(r - np.float64(0.5)))
            # floor(r + 0.5) in float64 is exact for float32 r: no double rounding
        else:
            k = np.rint(r.astype(np.float64))
        k = np.where(np.isnan(r), 0.0, k)
        q = np.clip(k + zp, info.min, info.max)
    return q.astype(t.dtype.np)


def dequantize(q, t: TensorType) -> np.ndarray:
    """The real values of quantized data `q` of type `t`: float32(scale x (q - zero_point))."""
    d = np.asarray(q, dtype=np.int64) - int(t.q.zero_point[0])
    return (np.float64(np.float32(t.q.scale[0])) * d).astype(np.float32)
