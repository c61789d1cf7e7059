"""SOFTMAX over the last axis, int8 input, int8 or int16 output, TFLite's fixed-point algorithm.

TFLite Micro (softmax_common.cc + reference_ops::Softmax): Prepare turns beta * input_scale into
(input_beta_multiplier, left_shift) with PreprocessSoftmaxScaling for a Q5.26 exp input, and
diff_min = -CalculateInputRadius(5, left_shift). Per row: diff = x - max(row); taps with
diff < diff_min contribute nothing and output the type's minimum. Otherwise
exp(MultiplyByQuantizedMultiplierGreaterThanOne(diff)) (gemmlowp exp_on_negative_values, Q0.31) is
summed in Q12.19, the sum's reciprocal comes from GetReciprocal (1/(1+x) by Newton-Raphson), and
each output is RoundingDivideByPOT(recip * exp, num_bits_over_unit + 31 - bits) + type minimum.
The arithmetic lives in edgecc/numerics/gemmlowp.py and runtime_c/edgecc_fixedpoint.h.
The output quantization is fixed by TFLM: int8 (scale 1/256, zp -128), int16 (1/65536, -32768).
ONNX numerics (`n.numerics.qlinear`, any int8 output quantization): onnxruntime's
QLinearSoftmax, edgecc/ops/_onnx_softmax.py.
int16 -> int16 (output scale 1/32768, zp 0) uses TFLM's table algorithm: edgecc/ops/_softmax16.py.
"""
from __future__ import annotations

import numpy as np

from edgecc.numerics.gemmlowp import (SOFTMAX_ACCUM_INT_BITS, SOFTMAX_SCALED_DIFF_INT_BITS,
                               calculate_input_radius, preprocess_softmax_scaling,
                               softmax_input_beta_real, softmax_rows)
from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops import _softmax16
from edgecc.ops import _float_act
from edgecc.ops._float import twin


def int8_input(g: Graph, n: Node) -> bool:
    """input must be int8 or int16 with per-tensor quantization"""
    t = in_type(g, n)
    return t.dtype in (DType.INT8, DType.INT16) and t.q is not None and not t.q.per_channel


def output_quantization(g: Graph, n: Node) -> bool:
    """output must be int8 (scale 1/256, zero point -128) or int16 (scale 1/65536, zero point
    -32768) for an int8 input, int16 (scale 1/32768, zero point 0) for an int16 input"""
    t = out_type(g, n)
    if t.q is None:
        return False
    scale, zp = float(np.float32(t.q.scale[0])), int(t.q.zero_point[0])
    if in_type(g, n).dtype == DType.INT16:  # TFLM: zero point 0, scale within 0.1% of 1/32768
        return t.dtype == DType.INT16 and zp == 0 and abs(scale - 1.0 / 32768) <= 0.001 / 32768
    if t.dtype == DType.INT8:
        return (zp == -128 and scale == 1.0 / 256) or n.numerics.qlinear
    if t.dtype == DType.INT16:
        return zp == -32768 and abs(scale - 1.0 / 65536) <= 0.001 / 65536
    return False


def beta_in_range(g: Graph, n: Node) -> bool:
    """beta * input scale must lie in (2**-26, 16) for int8 (TFLite's softmax multiplier range),
    in (0, 2**30 * 10/65535) for int16"""
    if in_type(g, n).dtype == DType.INT16:
        return _softmax16.multiplier_in_range(g, n)
    if n.numerics.qlinear:  # onnxruntime's QLinearSoftmax has no beta
        return _beta(n) == 1.0
    real = softmax_input_beta_real(_beta(n), _in_scale(g, n), SOFTMAX_SCALED_DIFF_INT_BITS)
    # > 1: TFLite's QuantizeMultiplierGreaterThanOne aborts otherwise; < 2**30: left shift <= 30
    return 1.0 < real < float(1 << 30)


def nonempty_rows(g: Graph, n: Node) -> bool:
    """input must have at least one dimension and a non-empty last axis"""
    shape = in_type(g, n).shape
    return len(shape) >= 1 and shape[-1] > 0


def int16_depth(g: Graph, n: Node) -> bool:
    """int16 input: the last axis must hold at most 65536 values (TFLite's int32 sum of exps)"""
    return in_type(g, n).dtype != DType.INT16 or in_type(g, n).shape[-1] <= _softmax16.MAX_DEPTH


def _beta(n: Node) -> float:
    return float(np.float32(n.attrs.get("beta", 1.0)))


def _in_scale(g: Graph, n: Node) -> float:
    return float(np.float32(in_type(g, n).q.scale[0]))


def _params(g: Graph, n: Node) -> dict:
    mult, shift = preprocess_softmax_scaling(_beta(n), _in_scale(g, n))
    diff_min = -calculate_input_radius(SOFTMAX_SCALED_DIFF_INT_BITS, shift)
    shape = in_type(g, n).shape
    depth = int(shape[-1])
    out = out_type(g, n).dtype
    bits = 8 * out.size
    return dict(mult=mult, left_shift=shift, diff_min=diff_min, depth=depth,
                rows=in_type(g, n).numel // depth, out_bits=bits, exp_offset=31 - bits, out_ctype=out.c,
                out_min=-(1 << (bits - 1)), out_max=(1 << (bits - 1)) - 1,
                int_bits=SOFTMAX_SCALED_DIFF_INT_BITS, accum_bits=SOFTMAX_ACCUM_INT_BITS)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    if in_type(g, n).dtype == DType.INT16:  # edgecc/ops/_softmax16.py
        return _softmax16.reference(g, n, ins)
    if n.numerics.qlinear:  # QLinearSoftmax: edgecc/ops/_onnx_softmax.py
        from edgecc.ops._onnx_softmax import reference as onnx_reference
        return onnx_reference(g, n, ins)
    p = _params(g, n)
    x = np.asarray(ins[0]).reshape(p["rows"], p["depth"])
    y = softmax_rows(x, p["mult"], p["left_shift"], p["diff_min"], p["out_bits"])
    return [y.astype(out_type(g, n).dtype.np).reshape(in_type(g, n).shape)]


def lower(g: Graph, n: Node, target) -> Kernel:
    if in_type(g, n).dtype == DType.INT16:
        return _softmax16.lower(g, n, target)
    if n.numerics.qlinear:
        from edgecc.ops._onnx_softmax import lower as onnx_lower
        return onnx_lower(g, n, target)
    return Kernel("softmax.c.j2", params=_params(g, n))


OP = register(OpDef(
    "SOFTMAX", infer, reference, lower,
    [int8_input, output_quantization, beta_in_range, nonempty_rows, int16_depth],
    dtypes="int8 -> int8, int8 -> int16, int16 -> int16 (tables)"))
twin(OP, _float_act.SOFTMAX)  # float32: edgecc/ops/_float_act.py
