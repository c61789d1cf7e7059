"""Mixed float32 / int8 ONNX models (issue 25): float ops after the last DequantizeLinear (Softmax,
Sigmoid, a detection head's Concat of boxes and scores), a float head before the first
QuantizeLinear (input normalization), float regions between QDQ groups onnxruntime does not fuse,
a QDQ group no QuantizeLinear closes, and float-only models. onnxruntime computes every float
region in float32; edgecc on its float32 kernels with ONNX's float semantics.

Checks: FLOAT where an output is computed in float32 (within 1e-5 relative); EXACT where the
float region is exact IEEE arithmetic (Sub, Div, Mul, Add by constants) before a QuantizeLinear;
LSB where a float function (Sigmoid) feeds a QuantizeLinear (its last bit may differ from MLAS's
approximation, and a value may land one step away).
"""
from __future__ import annotations

import numpy as np

from onnx_corpus import EXACT, FLOAT, LSB, Case
from onnx_corpus._graph import F32, I64, G


def _stem(g: G, c: int = 3, hw: int = 12, cout: int = 8, xs: float = 0.03,
          ys: float = 0.04) -> str:
    """float input 'x' [1, c, hw, hw] -> Q/DQ -> QDQ Conv+Relu -> Q/DQ (scale ys)."""
    return g.qdq(g.conv(g.qdq("x", xs), xs, c, cout), ys)


def softmax_tail(folder):
    g = G(1)
    y = _stem(g)
    y = g.qdq(g.op("GlobalAveragePool", [y]), 0.02)
    y = g.qdq(g.gemm(g.op("Flatten", [y]), 0.02, 8, 10), 0.05)
    g.op("Softmax", [y], axis=-1)
    return g.save(folder, "mix_softmax_tail", [("x", F32, [1, 3, 12, 12])],
                  [(g.nodes[-1].output[0], F32)])


def sigmoid_tail(folder):
    g = G(2)
    y = g.conv(g.qdq(_stem(g), 0.04), 0.04, 8, 4, relu=False)
    y = g.op("Sigmoid", [g.qdq(y, 0.05)])
    return g.save(folder, "mix_sigmoid_tail", [("x", F32, [1, 3, 12, 12])], [(y, F32)])


def tanh_tail_u8(folder):
    """uint8 activations (quantize_static's default), Tanh after the last DequantizeLinear."""
    g = G(3)
    x = g.qdq("x", 0.03, 128, np.uint8)
    y = g.qdq(g.conv(x, 0.03, 3, 6), 0.04, 0, np.uint8)
    y = g.op("Tanh", [g.op("Sub", [y, g.init(np.float32(1.0))])])
    return g.save(folder, "mix_tanh_tail_u8", [("x", F32, [1, 3, 10, 10])], [(y, F32)])


def _head(g: G, y: str, cout: int, n_cells: int) -> str:
    """A QDQ 1x1 Conv head over `y` [1, 8, h, w], reshaped to [1, cells, cout] (still DQ'd)."""
    h = g.qdq(g.conv(y, 0.04, 8, cout, k=1, relu=False), 0.06)
    h = g.op("Reshape", [h, g.init(np.array([1, cout, n_cells], np.int64))])
    return g.op("Transpose", [h], perm=[0, 2, 1])


def detection_head(folder):
    """Conv groups, then boxes (float scale and anchor offsets) and sigmoid scores,
    concatenated in float32: [1, cells, 4 + classes]."""
    g = G(4)
    y = g.qdq(g.conv(g.qdq("x", 0.03), 0.03, 3, 8, stride=2), 0.04)
    y = g.qdq(g.conv(y, 0.04, 8, 8), 0.04)
    cells = 8 * 8
    boxes = _head(g, y, 4, cells)
    anchors = g.init(np.linspace(0, 1, cells * 4, dtype=np.float32).reshape(1, cells, 4))
    boxes = g.op("Add", [g.op("Mul", [boxes, g.init(np.float32(0.1))]), anchors])
    scores = g.op("Sigmoid", [_head(g, y, 3, cells)])
    out = g.op("Concat", [boxes, scores], axis=2)
    return g.save(folder, "mix_detection_head", [("x", F32, [1, 3, 16, 16])], [(out, F32)])


def detection_softmax(folder):
    """Two outputs: class probabilities (float Softmax over the classes) and the raw boxes, the
    DequantizeLinear'd head itself."""
    g = G(5)
    y = g.qdq(g.conv(g.qdq("x", 0.03), 0.03, 3, 8, stride=2), 0.04)
    cells = 6 * 6
    scores = g.op("Softmax", [_head(g, y, 5, cells)], axis=-1)
    boxes = _head(g, y, 4, cells)
    return g.save(folder, "mix_detection_softmax", [("x", F32, [1, 3, 12, 12])],
                  [(scores, F32), (boxes, F32)])


def float_head_norm(folder):
    """Input normalization (x - mean) / std in float32 before the first QuantizeLinear."""
    g = G(6)
    mean = g.init(np.array([0.1, -0.2, 0.3], np.float32).reshape(1, 3, 1, 1))
    std = g.init(np.array([0.9, 1.1, 1.3], np.float32).reshape(1, 3, 1, 1))
    x = g.op("Div", [g.op("Sub", ["x", mean]), std])
    y = g.qdq(g.conv(g.qdq(x, 0.03), 0.03, 3, 8), 0.04)
    return g.save(folder, "mix_float_head_norm", [("x", F32, [1, 3, 12, 12])], [(y, F32)])


def float_head_nhwc(folder):
    """An NHWC input scaled and shifted in float32, then Transpose to NCHW and quantized."""
    g = G(7)
    x = g.op("Add", [g.op("Mul", ["x", g.init(np.float32(0.5))]), g.init(np.float32(-0.25))])
    x = g.op("Transpose", [x], perm=[0, 3, 1, 2])
    y = g.qdq(g.conv(g.qdq(x, 0.02), 0.02, 4, 8), 0.04)
    return g.save(folder, "mix_float_head_nhwc", [("x", F32, [1, 10, 10, 4])], [(y, F32)])


def float_between_exact(folder):
    """A float region between two QDQ groups (Div and Sub by constants: exact IEEE steps)."""
    g = G(8)
    y = _stem(g)
    y = g.op("Sub", [g.op("Div", [y, g.init(np.float32(2.0))]), g.init(np.float32(0.125))])
    y = g.qdq(g.conv(g.qdq(y, 0.03), 0.03, 8, 8), 0.04)
    return g.save(folder, "mix_float_between_exact", [("x", F32, [1, 3, 12, 12])], [(y, F32)])


def float_between_silu(folder):
    """SiLU between QDQ groups, x * Sigmoid(x), in float32 (onnxruntime fuses neither)."""
    g = G(9)
    y = _stem(g)
    y = g.op("Mul", [y, g.op("Sigmoid", [y])])
    y = g.qdq(g.conv(g.qdq(y, 0.03), 0.03, 8, 8), 0.04)
    return g.save(folder, "mix_float_between_silu", [("x", F32, [1, 3, 12, 12])], [(y, F32)])


def unclosed_conv(folder):
    """A QDQ Conv whose result no QuantizeLinear closes: onnxruntime computes it in float32."""
    g = G(10)
    y = g.conv(_stem(g), 0.04, 8, 4, relu=True)
    return g.save(folder, "mix_unclosed_conv", [("x", F32, [1, 3, 12, 12])], [(y, F32)])


def weight_only(folder):
    """Weight-only quantization: float activations, int8 weights through DequantizeLinear (Conv,
    then Gemm), float output."""
    g = G(17)
    y = g.conv("x", 0.03, 3, 8)
    y = g.op("Flatten", [g.op("GlobalAveragePool", [y])])
    return g.save(folder, "mix_weight_only", [("x", F32, [1, 3, 10, 10])],
                  [(g.gemm(y, 0.03, 8, 4), F32)])


def float_only_cnn(folder):
    """Float-only: Conv, Relu, MaxPool, Conv, GlobalAveragePool, Gemm, Softmax."""
    g = G(11)
    y = g.op("Relu", [g.fconv("x", 3, 8)])
    y = g.op("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2])
    y = g.op("Relu", [g.fconv(y, 8, 8)])
    y = g.op("Flatten", [g.op("GlobalAveragePool", [y])])
    w = g.init((g.rng.standard_normal((8, 5)) * 0.3).astype(np.float32))
    y = g.op("Gemm", [y, w, g.init(np.zeros(5, np.float32))])
    y = g.op("Softmax", [y], axis=1)
    return g.save(folder, "mix_float_only_cnn", [("x", F32, [1, 3, 12, 12])], [(y, F32)])


def float_only_mlp(folder):
    """Float-only: MatMul + Add, Relu, MatMul, Sigmoid and Softmax outputs."""
    g = G(12)
    w1 = g.init((g.rng.standard_normal((16, 12)) * 0.3).astype(np.float32))
    w2 = g.init((g.rng.standard_normal((12, 6)) * 0.3).astype(np.float32))
    h = g.op("Relu", [g.op("Add", [g.op("MatMul", ["x", w1]),
                                   g.init(np.full(12, 0.05, np.float32))])])
    z = g.op("MatMul", [h, w2])
    return g.save(folder, "mix_float_only_mlp", [("x", F32, [1, 16])],
                  [(g.op("Softmax", [z], axis=-1), F32), (g.op("Sigmoid", [z]), F32)])


def reduce_argmax_tail(folder):
    """Float post-processing: ReduceMean over space and ArgMax over channels of a DQ'd map."""
    g = G(13)
    y = _stem(g)
    mean = g.op("ReduceMean", [y], axes=[2, 3], keepdims=0)
    arg = g.op("ArgMax", [y], axis=1, keepdims=0)
    return g.save(folder, "mix_reduce_argmax_tail", [("x", F32, [1, 3, 12, 12])],
                  [(mean, F32), (arg, I64)])


def pad_slice_float(folder):
    """Pad (constant) and Slice of float32 values between QDQ groups."""
    g = G(14)
    y = g.op("Div", [_stem(g), g.init(np.float32(4.0))])
    y = g.op("Pad", [y, g.init(np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64)),
                     g.init(np.float32(0.5))], mode="constant")
    y = g.op("Slice", [y, g.init(np.array([1, 2], np.int64)), g.init(np.array([7, 14], np.int64)),
                       g.init(np.array([1, 3], np.int64))])
    y = g.qdq(g.conv(g.qdq(y, 0.02), 0.02, 6, 4), 0.04)
    return g.save(folder, "mix_pad_slice_float", [("x", F32, [1, 3, 12, 12])], [(y, F32)])


CASES = [
    Case("mix_softmax_tail", softmax_tail, FLOAT),
    Case("mix_sigmoid_tail", sigmoid_tail, FLOAT),
    Case("mix_tanh_tail_u8", tanh_tail_u8, FLOAT),
    Case("mix_detection_head", detection_head, FLOAT),
    Case("mix_detection_softmax", detection_softmax, FLOAT),
    Case("mix_float_head_norm", float_head_norm, EXACT),
    Case("mix_float_head_nhwc", float_head_nhwc, EXACT),
    Case("mix_float_between_exact", float_between_exact, EXACT),
    Case("mix_float_between_silu", float_between_silu, LSB),
    Case("mix_unclosed_conv", unclosed_conv, FLOAT),
    Case("mix_weight_only", weight_only, FLOAT),
    Case("mix_float_only_cnn", float_only_cnn, FLOAT),
    Case("mix_float_only_mlp", float_only_mlp, FLOAT),
    Case("mix_reduce_argmax_tail", reduce_argmax_tail, FLOAT),
    Case("mix_pad_slice_float", pad_slice_float, EXACT),
]


def _quantized(folder, g: G, name: str, x_shape, out: str, **options):
    """The float model of `g`, quantized by onnxruntime.quantization.quantize_static (QDQ,
    per-channel, 8 seeded calibration samples) with `options`."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self):
            rng = np.random.default_rng(0)
            self.it = iter([{"x": rng.standard_normal(x_shape).astype(np.float32)}
                            for _ in range(8)])

        def get_next(self):
            return next(self.it, None)

    src = g.save(folder, f"{name}_float", [("x", F32, x_shape)], [(out, F32)])
    dst = folder / f"{name}.onnx"
    quantize_static(str(src), str(dst), Reader(), quant_format=QuantFormat.QDQ,
                    per_channel=True, **options)
    return dst


def ort_softmax_excluded(folder):
    """quantize_static with the Softmax excluded (nodes_to_exclude): a float Softmax after the
    last DequantizeLinear, as the user trial's models had it."""
    from onnxruntime.quantization import QuantType
    g = G(15)
    y = g.op("Relu", [g.fconv("x", 3, 8)])
    y = g.op("Flatten", [g.op("GlobalAveragePool", [y])])
    w = g.init((g.rng.standard_normal((8, 6)) * 0.4).astype(np.float32))
    y = g.op("Gemm", [y, w, g.init(np.zeros(6, np.float32))])
    sm = g.op("Softmax", [y], axis=1)
    return _quantized(folder, g, "mix_ort_softmax_excluded", [1, 3, 10, 10], sm,
                      activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                      nodes_to_exclude=[g.nodes[-1].name])


def ort_conv_only_u8(folder):
    """quantize_static of Conv and Gemm only (op_types_to_quantize), uint8 activations: the
    Sigmoid and Mul of a gate and the Softmax stay float32 between and after the groups."""
    from onnxruntime.quantization import QuantType
    g = G(16)
    y = g.op("Relu", [g.fconv("x", 3, 8)])
    y = g.op("Mul", [y, g.op("Sigmoid", [y])])
    y = g.op("Relu", [g.fconv(y, 8, 8, stride=2)])
    y = g.op("Flatten", [g.op("GlobalAveragePool", [y])])
    w = g.init((g.rng.standard_normal((8, 5)) * 0.4).astype(np.float32))
    sm = g.op("Softmax", [g.op("Gemm", [y, w, g.init(np.zeros(5, np.float32))])], axis=1)
    return _quantized(folder, g, "mix_ort_conv_only_u8", [1, 3, 10, 10], sm,
                      activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                      op_types_to_quantize=["Conv", "Gemm"])


CASES += [
    Case("mix_ort_softmax_excluded", ort_softmax_excluded, FLOAT),
    Case("mix_ort_conv_only_u8", ort_conv_only_u8, FLOAT),
]
