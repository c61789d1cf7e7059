"""A small builder of seeded ONNX graphs for the corpus families mixed.py and shapes.py: QDQ
layers as onnxruntime.quantization writes them (per-channel int8 weights, int32 bias with scale
x_scale * w_scale, Q -> DQ pairs on activations), float ops and initializers, then one `save`.
Not a test module (its name starts with '_': all_cases skips it)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F32, I8, U8, I64 = TensorProto.FLOAT, TensorProto.INT8, TensorProto.UINT8, TensorProto.INT64


class G:
    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.k = 0

    def name(self, stem: str) -> str:
        self.k += 1
        return f"{stem}_{self.k}"

    def init(self, arr, stem: str = "c") -> str:
        n = self.name(stem)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), n))
        return n

    def op(self, op_type: str, ins: list[str], n_out: int = 1, **attrs) -> str | list[str]:
        outs = [self.name(op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, ins, outs, name=self.name(op_type), **attrs))
        return outs[0] if n_out == 1 else outs

    # ---- quantization -----------------------------------------------------------------------
    def q(self, x: str, scale: float, zp: int = 0, dtype=np.int8) -> str:
        return self.op("QuantizeLinear", [x, self.init(np.float32(scale), "s"),
                                          self.init(dtype(zp), "z")])

    def dq(self, x: str, scale: float, zp: int = 0, dtype=np.int8) -> str:
        return self.op("DequantizeLinear", [x, self.init(np.float32(scale), "s"),
                                            self.init(dtype(zp), "z")])

    def qdq(self, x: str, scale: float, zp: int = 0, dtype=np.int8) -> str:
        """Q -> DQ of a float tensor: the float value as a quantized activation."""
        s, z = self.init(np.float32(scale), "s"), self.init(dtype(zp), "z")
        return self.op("DequantizeLinear", [self.op("QuantizeLinear", [x, s, z]), s, z])

    def _wdq(self, w: np.ndarray, axis: int) -> tuple[str, np.ndarray]:
        """Per-channel int8 weights (output channels on `axis`) and their DequantizeLinear."""
        m = w.shape[axis]
        ws = (self.rng.random(m) * 0.01 + 0.004).astype(np.float32)
        wq = np.clip(np.rint(w / ws.reshape([-1 if i == axis else 1 for i in range(w.ndim)])),
                     -127, 127).astype(np.int8)
        return self.op("DequantizeLinear", [self.init(wq, "w"), self.init(ws, "ws"),
                                            self.init(np.zeros(m, np.int8), "wz")], axis=axis), ws

    def _bdq(self, xs: float, ws: np.ndarray) -> str:
        bs = (np.float32(xs) * ws).astype(np.float32)
        b = self.rng.integers(-300, 300, ws.size).astype(np.int32)
        return self.op("DequantizeLinear", [self.init(b, "b"), self.init(bs, "bs"),
                                            self.init(np.zeros(ws.size, np.int32), "bz")], axis=0)

    def conv(self, xd: str, xs: float, cin: int, cout: int, k: int = 3, stride: int = 1,
             relu: bool = True, depthwise: bool = False) -> str:
        """A QDQ Conv over DequantizeLinear'd `xd` (scale xs): float result, before its Q."""
        w = self.rng.standard_normal((cout, 1 if depthwise else cin, k, k)).astype(np.float32)
        w *= np.float32(0.5 / np.sqrt(k * k * (1 if depthwise else cin)))
        wd, ws = self._wdq(w, 0)
        y = self.op("Conv", [xd, wd, self._bdq(xs, ws)], pads=[k // 2] * 4,
                    strides=[stride, stride], group=cin if depthwise else 1)
        return self.op("Relu", [y]) if relu else y

    def gemm(self, xd: str, xs: float, k: int, n: int) -> str:
        w = (self.rng.standard_normal((n, k)) * (0.5 / np.sqrt(k))).astype(np.float32)
        wd, ws = self._wdq(w, 0)
        return self.op("Gemm", [xd, wd, self._bdq(xs, ws)], transB=1)

    def fconv(self, x: str, cin: int, cout: int, k: int = 3, stride: int = 1) -> str:
        """A float32 Conv with float weights and bias."""
        w = (self.rng.standard_normal((cout, cin, k, k)) * (0.5 / np.sqrt(k * k * cin)))
        b = self.rng.standard_normal(cout) * 0.1
        return self.op("Conv", [x, self.init(w.astype(np.float32), "fw"),
                                self.init(b.astype(np.float32), "fb")],
                       pads=[k // 2] * 4, strides=[stride, stride])

    def save(self, folder: Path, name: str, inputs: list[tuple[str, int, list[int]]],
             outputs: list[tuple[str, int]], opset: int = 13) -> Path:
        g = helper.make_graph(self.nodes, name,
                              [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                              [helper.make_empty_tensor_value_info(n) for n, _ in outputs],
                              self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 8
        inferred = {v.name: v for v in onnx.shape_inference.infer_shapes(
            m, data_prop=True).graph.value_info}
        del m.graph.output[:]
        for n, t in outputs:  # the outputs with the shapes ONNX infers, else onnxruntime's
            known = n in inferred and inferred[n].type.tensor_type.HasField("shape")
            m.graph.output.append(inferred[n] if known else
                                  helper.make_tensor_value_info(n, t, _run_shape(m, n, inputs)))
        onnx.checker.check_model(m)
        p = Path(folder) / f"{name}.onnx"
        p.write_bytes(m.SerializeToString())
        return p


def _run_shape(m: onnx.ModelProto, name: str, inputs) -> list[int]:
    """The shape onnxruntime computes for output `name` (ONNX inference cannot follow a shape
    computed by a subgraph)."""
    import onnxruntime as ort
    probe = onnx.ModelProto()
    probe.CopyFrom(m)
    del probe.graph.output[:]
    probe.graph.output.append(onnx.ValueInfoProto(name=name))
    sess = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    feed = {n: np.zeros(s, helper.tensor_dtype_to_np_dtype(t)) for n, t, s in inputs}
    return list(sess.run(None, feed)[0].shape)
