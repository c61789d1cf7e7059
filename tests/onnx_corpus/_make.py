"""Building the corpus's quantized ONNX models: a float graph from onnx.helper, then
onnxruntime.quantization's `quantize_static` with a seeded calibration reader (what users run),
or QDQ written by hand where a quantizer writes what quantize_static does not.

Owns: `Net` (a small float-graph builder: inputs, seeded initializers, nodes, outputs),
`quantize` (quantize_static with the option matrix of issue 25), `qdq_by_hand` (Q/DQ pairs
around every activation of a float graph, the form vendor tools write) and `case_builder`
(a Case.build from a graph function and quantizer options). Nothing is downloaded; every
number comes from a fixed seed.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Net:
    """A float32 ONNX graph under construction; every initializer is drawn from `seed`."""

    def __init__(self, seed: int = 0, opset: int = 13):
        self.rng = np.random.default_rng(seed)
        self.opset = opset
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.outputs: list[onnx.ValueInfoProto] = []
        self.shapes: dict[str, tuple[int, ...]] = {}
        self._n = 0

    def name(self, base: str) -> str:
        self._n += 1
        return f"{base}_{self._n}"

    def input(self, shape: tuple[int, ...], name: str = "x") -> str:
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))
        self.shapes[name] = tuple(shape)
        return name

    def init(self, data, name: str = "c") -> str:
        n = self.name(name)
        self.inits.append(numpy_helper.from_array(np.asarray(data), n))
        return n

    def weight(self, shape: tuple[int, ...], scale: float = 0.3, name: str = "w") -> str:
        return self.init(self.rng.standard_normal(shape).astype(np.float32) * np.float32(scale),
                         name)

    def op(self, op_type: str, inputs: list[str], n_out: int = 1, domain: str = "",
           **attrs) -> str | list[str]:
        outs = [self.name(op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=self.name(op_type),
                                           domain=domain, **attrs))
        return outs[0] if n_out == 1 else outs

    def conv(self, x: str, cin: int, cout: int, k: int = 3, relu: bool = True, group: int = 1,
             stride: int = 1, dims: int = 2) -> str:
        w = self.weight((cout, cin // group) + (k,) * dims, scale=1.0 / np.sqrt(cin * k * k))
        b = self.weight((cout,), scale=0.1, name="b")
        y = self.op("Conv", [x, w, b], kernel_shape=[k] * dims, pads=[k // 2] * (2 * dims),
                    group=group, strides=[stride] * dims)
        return self.op("Relu", [y]) if relu else y

    def gemm(self, x: str, k: int, n: int, relu: bool = False) -> str:
        y = self.op("Gemm", [x, self.weight((n, k), 1.0 / np.sqrt(k)),
                             self.weight((n,), 0.1, "b")], transB=1)
        return self.op("Relu", [y]) if relu else y

    def output(self, x: str, name: str = "y") -> None:
        self.nodes.append(helper.make_node("Identity", [x], [name], name=self.name("out")))
        self.outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))

    def model(self) -> onnx.ModelProto:
        g = helper.make_graph(self.nodes, "corpus", self.inputs, self.outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", self.opset)])
        m.ir_version = 8 if self.opset <= 18 else 10
        return onnx.shape_inference.infer_shapes(m)

    def save(self, path: Path) -> Path:
        onnx.save(self.model(), str(path))
        return path


class _Reader:
    """quantize_static's calibration data: `count` seeded standard-normal samples per input."""

    def __init__(self, shapes: dict[str, tuple[int, ...]], seed: int, count: int = 8):
        rng = np.random.default_rng(seed + 1000)
        self.data = [{k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
                     for _ in range(count)]
        self.it = iter(self.data)

    def get_next(self):
        return next(self.it, None)

    def rewind(self):
        self.it = iter(self.data)


def quantize(net: Net, out: Path, fmt: str = "qdq", act: str = "s8", wt: str = "s8",
             per_channel: bool = False, reduce_range: bool = False, extra_ops: tuple = (),
             seed: int = 0, **extra) -> Path:
    """net quantized by quantize_static into `out`: fmt "qdq" / "qop", activations and weights
    "s8" / "u8" (weights also "s4" / "u4", opset 21), extra_ops quantized too (the default op list does not name them), extra the
    extra_options (ActivationSymmetric, WeightSymmetric, QuantizeBias ...)."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.registry import QDQRegistry, QLinearOpsRegistry
    src = out.with_name(out.stem + "_float.onnx")
    net.save(src)
    types = {"s8": QuantType.QInt8, "u8": QuantType.QUInt8, "s4": QuantType.QInt4,
             "u4": QuantType.QUInt4}
    ops = sorted(set(QDQRegistry) | set(QLinearOpsRegistry) | set(extra_ops))
    quantize_static(str(src), str(out), _Reader(net.shapes, seed),
                    quant_format=QuantFormat.QDQ if fmt == "qdq" else QuantFormat.QOperator,
                    activation_type=types[act], weight_type=types[wt], per_channel=per_channel,
                    reduce_range=reduce_range, op_types_to_quantize=ops,
                    extra_options=dict(extra) or None)
    return out


def case_builder(name: str, graph: Callable[[Net], None], seed: int = 0, opset: int = 13,
                 **qopts) -> Callable[[Path], Path]:
    """A Case.build: `graph` fills a Net, which quantize() quantizes with qopts."""
    def build(folder: Path) -> Path:
        net = Net(seed, opset)
        graph(net)
        return quantize(net, Path(folder) / f"{name}.onnx", seed=seed, **qopts)
    return build
