"""ONNX ops onnxruntime computes in float inside quantized models, end to end against
onnxruntime: Resize (linear; edgecc follows onnxruntime's float arithmetic, so exact),
ConvTranspose (float32 TRANSPOSE_CONV summed in another order: within one step) and
QLinearAveragePool (its float average, exact), explicit or fused from a QDQ group."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from edgecc.targets import get_target
from edgecc.verify import verify_model


def _init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def _qdq(op_nodes, x_shape, y_shape, inits, xq=(0.05, -3), yq=(0.04, 5)):
    """int8 x -> DequantizeLinear -> (op_nodes: 'xd' -> 'yf') -> QuantizeLinear -> int8 y."""
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xd"]), *op_nodes,
             helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"])]
    inits = [*inits, _init("xs", np.float32(xq[0])), _init("xz", np.int8(xq[1])),
             _init("ys", np.float32(yq[0])), _init("yz", np.int8(yq[1]))]
    g = helper.make_graph(nodes, "t", [helper.make_tensor_value_info("x", TensorProto.INT8, x_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.INT8, y_shape)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("ctm", ["half_pixel", "asymmetric", "align_corners"])
@pytest.mark.parametrize("sizes", [False, True])
def test_resize_linear_exact(tmp_path, ctm, sizes):
    x_shape, y_shape = [1, 3, 7, 5], [1, 3, 14, 10] if not sizes else [1, 3, 11, 9]
    if sizes:
        ins, inits = ["xd", "", "", "sz"], [_init("sz", np.array(y_shape, np.int64))]
    else:
        ins, inits = ["xd", "", "sc"], [_init("sc", np.array([1, 1, 2, 2], np.float32))]
    node = helper.make_node("Resize", ins, ["yf"], mode="linear",
                            coordinate_transformation_mode=ctm)
    p = tmp_path / "m.onnx"
    p.write_bytes(_qdq([node], x_shape, y_shape, inits).SerializeToString())
    for seed in range(2):
        r = verify_model(p, get_target("host"), seed=seed)
        assert r.bit_exact, r.as_json()


@pytest.mark.parametrize("pads", [[0, 0, 1, 1], [1, 1, 1, 1]])
def test_conv_transpose_within_one_step(tmp_path, pads):
    rng = np.random.default_rng(3)
    cin, cout, h, w = 4, 3, 6, 5
    out = [(h - 1) * 2 + 3 - pads[0] - pads[2], (w - 1) * 2 + 3 - pads[1] - pads[3]]
    ws = rng.uniform(0.01, 0.02, cout).astype(np.float32)
    inits = [_init("wq", rng.integers(-127, 128, (cin, cout, 3, 3)).astype(np.int8)),
             _init("ws", ws), _init("wz", np.zeros(cout, np.int8)),
             _init("bq", rng.integers(-500, 500, cout).astype(np.int32)),
             _init("bs", (ws * np.float32(0.05)).astype(np.float32)),
             _init("bz", np.zeros(cout, np.int32))]
    nodes = [helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], axis=1),
             helper.make_node("DequantizeLinear", ["bq", "bs", "bz"], ["bd"], axis=0),
             helper.make_node("ConvTranspose", ["xd", "wd", "bd"], ["yf"], strides=[2, 2],
                              kernel_shape=[3, 3], pads=pads)]
    p = tmp_path / "m.onnx"
    p.write_bytes(_qdq(nodes, [1, cin, h, w], [1, cout, *out], inits).SerializeToString())
    for seed in range(2):
        r = verify_model(p, get_target("host"), seed=seed)
        assert r.passed, r.as_json()
        if not r.bit_exact:
            assert "ConvTranspose" in r.extra["onnxruntime_float_ops"]


def _avg_pool(qop: bool, dtype, k: int, s: int, pads, xq, yq):
    t = TensorProto.INT8 if dtype == np.int8 else TensorProto.UINT8
    inits = [_init("xs", np.float32(xq[0])), _init("xz", dtype(xq[1])),
             _init("ys", np.float32(yq[0])), _init("yz", dtype(yq[1]))]
    attrs = dict(kernel_shape=[k, k], strides=[s, s], pads=pads)
    if qop:
        nodes = [helper.make_node("QLinearAveragePool", ["x", "xs", "xz", "ys", "yz"], ["y"],
                                  domain="com.microsoft", **attrs)]
    else:  # int8 graph edges on both sides: onnxruntime fuses the group (ortfuse.py)
        nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xd"]),
                 helper.make_node("AveragePool", ["xd"], ["yf"], **attrs),
                 helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"])]
    o = (9 + pads[0] + pads[2] - k) // s + 1
    g = helper.make_graph(nodes, "t", [helper.make_tensor_value_info("x", t, [1, 16, 9, 9])],
                          [helper.make_tensor_value_info("y", t, [1, 16, o, o])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                               helper.make_opsetid("com.microsoft", 1)])


@pytest.mark.parametrize("qop", [True, False])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("k,s,pads", [(2, 2, [0, 0, 0, 0]), (3, 1, [1, 1, 1, 1])])
def test_qlinear_average_pool_exact(tmp_path, qop, dtype, k, s, pads):
    """onnxruntime's float average (ties to even; TFLite's integer average rounds them away from
    zero), requantized to another scale when the QOperator form asks."""
    zx, zy = (-3, 4) if dtype == np.int8 else (120, 131)
    yq = (0.03, zy) if qop else (0.05, zx)  # a fused QDQ group keeps one quantization here
    p = tmp_path / "m.onnx"
    p.write_bytes(_avg_pool(qop, dtype, k, s, pads, (0.05, zx), yq).SerializeToString())
    for seed in range(2):
        r = verify_model(p, get_target("host"), seed=seed)
        assert r.bit_exact, r.as_json()
