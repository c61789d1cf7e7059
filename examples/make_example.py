"""Writes the example model examples/kws_int8.tflite: a tiny keyword-spotting-like int8 network.

Owns: the example models the README runs (`edgecc compile examples/kws_int8.tflite ...`). They are
real TFLite int8 flatbuffers written through edgecc.tflite_writer.ModelBuilder, with weights drawn
from a fixed seed by a small pure-Python generator (splitmix64) so the file is byte-identical on
every machine and numpy version; tests/test_examples.py checks that this script reproduces the
committed file.

Two variants, same input (1, 49, 10, 1) int8 "MFCC features" and 12 classes out:
  fc   RESHAPE -> FULLY_CONNECTED(32, relu) -> FULLY_CONNECTED(12)
  cnn  CONV_2D(8, 10x4, stride 2, relu) -> DEPTHWISE_CONV_2D(3x3, relu) -> CONV_2D(16, 1x1, relu)
       -> AVERAGE_POOL_2D(25x5) -> RESHAPE -> FULLY_CONNECTED(12) -> SOFTMAX   (a DS-CNN in small)
DEFAULT_VARIANT is what the committed file holds.

Quantization follows the TFLite int8 scheme (per-channel conv weights, per-tensor FC weights,
bias scale = input scale * weight scale, softmax output 1/256 with zero point -128). Output scales
are chosen from the weights so that a uniformly random int8 input gives activations spread over
the int8 range (about 3 standard deviations), the way a calibrated converter would.

    python3 examples/make_example.py               # rewrite examples/kws_int8.tflite
    python3 examples/make_example.py --variant cnn -o /tmp/kws_cnn.tflite
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

try:
    from edgecc.tflite_writer import ModelBuilder
except ImportError:  # running from a source checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from edgecc.tflite_writer import ModelBuilder

HERE = Path(__file__).resolve().parent
DEFAULT_VARIANT = "cnn"
DEFAULT_OUTPUT = HERE / "kws_int8.tflite"
SEED = 20240611
INPUT_SHAPE = (1, 49, 10, 1)  # 49 frames x 10 MFCC coefficients, as in the DS-CNN KWS models
CLASSES = 12
SAME, VALID = 0, 1  # tflite.Padding
NONE, RELU = 0, 1  # tflite.ActivationFunctionType
_MASK = (1 << 64) - 1


class SplitMix64:
    """A tiny deterministic generator: the same numbers on every platform and library version."""

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def ints(self, shape: tuple[int, ...], lo: int, hi: int, dtype) -> np.ndarray:
        n = math.prod(shape)
        span = hi - lo + 1
        return np.array([lo + self.next() % span for _ in range(n)], dtype=dtype).reshape(shape)


def nice(x: float) -> float:
    """Round a scale to 4 significant digits so the file does not depend on float summation order."""
    return float(f"{x:.4g}")


# Real-valued statistics are tracked as the RMS of each activation under a uniform int8 input; they
# are computed from exact integer sums of squared weights, then rounded by nice().
INPUT_SCALE, INPUT_ZP = 0.05, -1
UNIFORM_INT8_STD = 128 / math.sqrt(3)  # std of a uniform int8 value


def out_quant(std: float, relu: bool) -> tuple[float, int]:
    """Scale / zero point covering about 3 standard deviations (only [0, 3 sd] after a ReLU)."""
    if relu:
        return nice(3 * std / 255), -128
    return nice(6 * std / 255), 0


def after_relu(std: float) -> float:
    return std / math.sqrt(2)  # RMS of a rectified zero-mean symmetric variable


class _Net:
    """ModelBuilder plus the running (tensor, scale, zero point, rms) of the current activation."""

    def __init__(self, seed: int) -> None:
        self.mb = ModelBuilder()
        self.rng = SplitMix64(seed)
        self.x = self.mb.tensor("serving_default_input:0", INPUT_SHAPE, "int8",
                                scale=INPUT_SCALE, zero_point=INPUT_ZP)
        self.input = self.x
        self.shape = INPUT_SHAPE
        self.scale, self.zp = INPUT_SCALE, INPUT_ZP
        self.std = UNIFORM_INT8_STD * INPUT_SCALE

    def _bias(self, name: str, acc_std_q: list[float], w_scales: list[float]) -> int:
        """int32 bias of about a quarter of the accumulator's spread, scale in_scale * w_scale."""
        b = np.array([int(self.rng.next() % (2 * max(int(s / 4), 1) + 1)) - max(int(s / 4), 1)
                      for s in acc_std_q], dtype=np.int32)
        return self.mb.const(name, b, scale=[nice(self.scale * s) for s in w_scales],
                             zero_point=[0] * len(w_scales))

    def _out(self, name: str, shape: tuple[int, ...], std: float, relu: bool) -> int:
        scale, zp = out_quant(std, relu)
        t = self.mb.tensor(name, shape, "int8", scale=scale, zero_point=zp)
        self.x, self.shape, self.scale, self.zp = t, shape, scale, zp
        self.std = after_relu(std) if relu else std
        return t

    def _weights(self, shape: tuple[int, ...], channel_axis: int):
        """Seeded int8 weights, per-channel scales, and each channel's sqrt(sum w^2) (exact ints)."""
        w = self.rng.ints(shape, -127, 127, np.int8)
        per_ch = np.moveaxis(w.astype(np.int64), channel_axis, 0).reshape(shape[channel_axis], -1)
        norms = [math.sqrt(int((row * row).sum())) for row in per_ch]
        scales = [nice(0.4 / 127 * (1 + (c % 4) / 4)) for c in range(shape[channel_axis])]
        return w, scales, norms

    def conv(self, name: str, filters: int, kh: int, kw: int, stride: int, relu: bool) -> None:
        _, h, wd, cin = self.shape
        w, ws, norms = self._weights((filters, kh, kw, cin), 0)
        wt = self.mb.const(f"{name}/weights", w, scale=ws, zero_point=[0] * filters, axis=0)
        in_std_q = self.std / self.scale
        bias = self._bias(f"{name}/bias", [n * in_std_q for n in norms], ws)
        std = max(n * s * self.std for n, s in zip(norms, ws))
        oh, ow = -(-h // stride), -(-wd // stride)  # SAME padding
        x = self.x
        y = self._out(f"{name}/Relu" if relu else name, (1, oh, ow, filters), std, relu)
        self.mb.op("CONV_2D", [x, wt, bias], [y],
                   {"padding": SAME, "stride_w": stride, "stride_h": stride,
                    "fused_activation_function": RELU if relu else NONE,
                    "dilation_w_factor": 1, "dilation_h_factor": 1}, version=3)

    def depthwise(self, name: str, k: int, relu: bool) -> None:
        _, h, wd, c = self.shape
        w, ws, norms = self._weights((1, k, k, c), 3)
        wt = self.mb.const(f"{name}/weights", w, scale=ws, zero_point=[0] * c, axis=3)
        in_std_q = self.std / self.scale
        bias = self._bias(f"{name}/bias", [n * in_std_q for n in norms], ws)
        std = max(n * s * self.std for n, s in zip(norms, ws))
        x = self.x
        y = self._out(f"{name}/Relu" if relu else name, (1, h, wd, c), std, relu)
        self.mb.op("DEPTHWISE_CONV_2D", [x, wt, bias], [y],
                   {"padding": SAME, "stride_w": 1, "stride_h": 1, "depth_multiplier": 1,
                    "fused_activation_function": RELU if relu else NONE,
                    "dilation_w_factor": 1, "dilation_h_factor": 1}, version=3)

    def global_avg_pool(self, name: str) -> None:
        _, h, wd, c = self.shape
        x = self.x
        y = self.mb.tensor(name, (1, 1, 1, c), "int8", scale=self.scale, zero_point=self.zp)
        self.x, self.shape = y, (1, 1, 1, c)  # pooling keeps the quantization
        self.mb.op("AVERAGE_POOL_2D", [x], [y],
                   {"padding": VALID, "stride_w": 1, "stride_h": 1, "filter_width": wd,
                    "filter_height": h, "fused_activation_function": NONE}, version=2)

    def flatten(self, name: str) -> None:
        n = math.prod(self.shape[1:])
        shape_t = self.mb.const(f"{name}/shape", np.array([1, n], dtype=np.int32))
        x = self.x
        y = self.mb.tensor(name, (1, n), "int8", scale=self.scale, zero_point=self.zp)
        self.x, self.shape = y, (1, n)
        self.mb.op("RESHAPE", [x, shape_t], [y], {"new_shape": [1, n]})

    def dense(self, name: str, units: int, relu: bool) -> None:
        depth = self.shape[-1]
        w = self.rng.ints((units, depth), -127, 127, np.int8)
        norms = [math.sqrt(int((row.astype(np.int64) ** 2).sum())) for row in w]
        ws = nice(0.4 / 127)
        wt = self.mb.const(f"{name}/weights", w, scale=ws, zero_point=0)
        in_std_q = self.std / self.scale
        bias = self._bias(f"{name}/bias", [n * in_std_q for n in norms], [ws])
        std = max(norms) * ws * self.std
        x = self.x
        y = self._out(f"{name}/Relu" if relu else f"{name}/BiasAdd", (1, units), std, relu)
        self.mb.op("FULLY_CONNECTED", [x, wt, bias], [y],
                   {"fused_activation_function": RELU if relu else NONE}, version=4)

    def softmax(self, name: str) -> None:
        x = self.x
        y = self.mb.tensor(name, self.shape, "int8", scale=1 / 256, zero_point=-128)
        self.x = y
        self.mb.op("SOFTMAX", [x], [y], {"beta": 1.0}, version=2)

    def finish(self) -> bytes:
        return self.mb.finish([self.input], [self.x])


def build(variant: str = DEFAULT_VARIANT, seed: int = SEED) -> bytes:
    """The example model as .tflite bytes."""
    net = _Net(seed)
    if variant == "fc":
        net.flatten("kws/flatten/Reshape")
        net.dense("kws/dense_1", 32, relu=True)
        net.dense("kws/dense_2", CLASSES, relu=False)
    elif variant == "cnn":
        net.conv("kws/conv_1", 8, 10, 4, 2, relu=True)
        net.depthwise("kws/dw_conv_1", 3, relu=True)
        net.conv("kws/pw_conv_1", 16, 1, 1, 1, relu=True)
        net.global_avg_pool("kws/avg_pool/AvgPool")
        net.flatten("kws/flatten/Reshape")
        net.dense("kws/dense", CLASSES, relu=False)
        net.softmax("StatefulPartitionedCall:0")
    else:
        raise ValueError(f"unknown variant {variant!r} (fc or cnn)")
    return net.finish()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", choices=["fc", "cnn"], default=DEFAULT_VARIANT)
    ap.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT)
    args = ap.parse_args(argv)
    data = build(args.variant)
    args.output.write_bytes(data)
    print(f"wrote {args.output} ({len(data)} bytes, variant {args.variant})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
