"""The quantizers users have: one small CNN (Conv, Relu, MaxPool, depthwise Conv, Concat, Add,
GlobalAveragePool, Gemm, Softmax) through onnxruntime.quantization's quantize_static over its
option matrix (QDQ and QOperator formats; per-tensor and per-channel weights; int8 and uint8
activations and weights; reduce_range; symmetric activations and weights; QuantizeBias off;
opsets 10 to 21), and the forms vendor tools write: float weights behind
DequantizeLinear(QuantizeLinear(w)).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

from onnx_corpus import EXACT, Case
from onnx_corpus._make import Net, quantize


def _cnn(n: Net) -> None:
    x = n.input((1, 3, 12, 12))
    a = n.conv(x, 3, 8)
    a = n.op("MaxPool", [a], kernel_shape=[2, 2], strides=[2, 2])
    d = n.conv(a, 8, 8, group=8)
    c = n.op("Concat", [a, d], axis=1)
    p = n.conv(c, 16, 16, k=1, relu=False)
    s = n.op("Add", [p, n.conv(c, 16, 16, k=1, relu=False)])
    g = n.op("Flatten", [n.op("GlobalAveragePool", [n.op("Relu", [s])])], axis=1)
    logits = n.gemm(g, 16, 10)
    n.output(logits, "logits")  # before the Softmax, whose outputs saturate
    n.output(n.op("Softmax", [logits], axis=-1))


def _qs(name: str, opset: int = 13, seed: int = 0, **q):
    def build(folder: Path) -> Path:
        net = Net(seed, opset)
        _cnn(net)
        return quantize(net, Path(folder) / f"{name}.onnx", seed=seed, **q)
    return build


def _vendor(name: str, **q):
    """quantize_static's QDQ model with every int8 weight initializer put back as float32
    behind QuantizeLinear -> DequantizeLinear (the weights' float values are the dequantized
    int8 ones, so quantizing them again gives the same integers)."""
    def build(folder: Path) -> Path:
        p = _qs(name + "_src", **q)(folder)
        m = onnx.load(str(p))
        inits = {t.name: t for t in m.graph.initializer}
        nodes = []
        for nd in m.graph.node:
            src = inits.get(nd.input[0])
            if nd.op_type == "DequantizeLinear" and src is not None and src.data_type in (2, 3):
                data = numpy_helper.to_array(src).astype(np.int64)
                s = numpy_helper.to_array(inits[nd.input[1]]).astype(np.float32)
                z = numpy_helper.to_array(inits[nd.input[2]]).astype(np.int64) \
                    if len(nd.input) > 2 else np.zeros_like(s, np.int64)
                ax = next((a.i for a in nd.attribute if a.name == "axis"), 1)
                shape = [1] * data.ndim
                if s.size > 1:
                    shape[ax] = s.size
                w = ((data - z.reshape(shape)).astype(np.float32) * s.reshape(shape))
                fname = nd.input[0] + "_float"
                m.graph.initializer.append(numpy_helper.from_array(w.astype(np.float32), fname))
                qn = nd.input[0] + "_requant"
                nodes.append(helper.make_node("QuantizeLinear", [fname, *nd.input[1:]], [qn],
                                              name=qn, axis=ax))
                nd.input[0] = qn
            nodes.append(nd)
        keep = [t for t in m.graph.initializer if t.data_type not in (2, 3) or
                not any(x.op_type == "QuantizeLinear" and x.output[0] == t.name + "_requant"
                        for x in nodes)]
        del m.graph.initializer[:]
        m.graph.initializer.extend(keep)
        del m.graph.node[:]
        m.graph.node.extend(nodes)
        out = Path(folder) / f"{name}.onnx"
        onnx.save(m, str(out))
        return out
    return build


def _case(name: str, check: str = EXACT, **q) -> Case:
    return Case(f"qs_{name}", _qs(f"qs_{name}", **q), check)


SYM = dict(ActivationSymmetric=True, WeightSymmetric=True)
CASES = [
    _case("qdq_s8", act="s8", wt="s8"),
    _case("qdq_s8_pc", act="s8", wt="s8", per_channel=True),
    _case("qdq_u8", act="u8", wt="u8"),
    _case("qdq_u8s8_pc", act="u8", wt="s8", per_channel=True),
    _case("qdq_s8_rr", act="s8", wt="s8", reduce_range=True, per_channel=True),
    _case("qdq_s8_sym", act="s8", wt="s8", **SYM),
    _case("qdq_u8_asym_w", act="u8", wt="u8", WeightSymmetric=False),
    _case("qdq_s8_nobias", act="s8", wt="s8", QuantizeBias=False),
    _case("qdq_u8s8_opset10", act="u8", wt="s8", opset=10),
    _case("qdq_s8_opset11", act="s8", wt="s8", opset=11),  # per channel needs 13
    _case("qdq_u8_opset17", act="u8", wt="u8", opset=17),
    _case("qdq_s8_opset19", act="s8", wt="s8", opset=19, per_channel=True),
    _case("qdq_s8_opset21", act="s8", wt="s8", opset=21),
    _case("qop_u8", fmt="qop", act="u8", wt="u8"),
    _case("qop_s8_pc", fmt="qop", act="s8", wt="s8", per_channel=True),
    _case("qop_u8s8_rr", fmt="qop", act="u8", wt="s8", reduce_range=True),
    _case("qop_s8_sym", fmt="qop", act="s8", wt="s8", **SYM),
    _case("qop_s8_opset11", fmt="qop", act="s8", wt="s8", opset=11),
    _case("qop_u8_opset17", fmt="qop", act="u8", wt="u8", opset=17, per_channel=True),
    _case("qdq_s4_pc", act="s8", wt="s4", opset=21, per_channel=True),
    _case("qdq_u8u4", act="u8", wt="u4", opset=21),
    Case("qs_vendor_float_w", _vendor("qs_vendor_float_w", act="s8", wt="s8")),
    Case("qs_vendor_float_w_pc", _vendor("qs_vendor_float_w_pc", act="s8", wt="s8",
                                         per_channel=True)),
]

