"""onnxruntime's integer arithmetic, end to end: single QLinearAdd / QLinearMul / QLinearConv /
QGemm models built here, compiled to C, run, and compared with onnxruntime byte for byte."""
from __future__ import annotations

import numpy as np
import pytest
import onnx
from onnx import TensorProto, helper, numpy_helper

from edgecc.targets import get_target
from edgecc.verify import verify_model

ALL_PAIRS = (np.repeat(np.arange(-128, 128), 256).astype(np.int8),
             np.tile(np.arange(-128, 128), 256).astype(np.int8))


def _binary_model(op: str, rng, b_shape=(65536,), a_shape=(65536,)):
    sa, sb, sc = (np.float32(x) for x in rng.uniform(0.002, 0.1, 3))
    za, zb, zc = (np.int8(x) for x in rng.integers(-30, 30, 3))
    inits = [numpy_helper.from_array(np.array(v), n) for n, v in
             (("sa", sa), ("za", za), ("sb", sb), ("zb", zb), ("sc", sc), ("zc", zc))]
    node = helper.make_node(op, ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"], ["c"],
                            domain="com.microsoft")
    out = tuple(np.broadcast_shapes(a_shape, b_shape))
    g = helper.make_graph([node], "t",
                          [helper.make_tensor_value_info("a", TensorProto.INT8, list(a_shape)),
                           helper.make_tensor_value_info("b", TensorProto.INT8, list(b_shape))],
                          [helper.make_tensor_value_info("c", TensorProto.INT8, list(out))], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                               helper.make_opsetid("com.microsoft", 1)])


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("seed", [0, 1])
def test_qlinear_binary_all_pairs_exact(tmp_path, op, seed, monkeypatch):
    """Every int8 pair (a, b): the seeded inputs are replaced by the 65536 pairs."""
    import edgecc.verify as v
    p = tmp_path / "m.onnx"
    p.write_bytes(_binary_model(op, np.random.default_rng(seed)).SerializeToString())
    monkeypatch.setattr(v, "seeded_frames",
                        lambda g, s, n: [[a.copy() for a in ALL_PAIRS] for _ in range(n)])
    r = verify_model(p, get_target("host"))
    assert r.bit_exact, r.as_json()


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("a_shape,b_shape", [((1, 8, 16, 16), (1, 8, 1, 1)),
                                             ((1, 8, 1, 1), (1, 8, 16, 16))])
def test_qlinear_binary_broadcast_exact(tmp_path, op, a_shape, b_shape):
    """A per-channel operand ([1, C, 1, 1] against [1, C, H, W]): the broadcast operand's term
    goes into the fused multiply-adds first, as onnxruntime's scalar-B kernel does."""
    p = tmp_path / "m.onnx"
    m = _binary_model(op, np.random.default_rng(7), b_shape=b_shape, a_shape=a_shape)
    p.write_bytes(m.SerializeToString())
    for seed in range(3):
        r = verify_model(p, get_target("host"), seed=seed)
        assert r.bit_exact, r.as_json()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_qlinear_global_average_pool_exact(tmp_path, seed):
    rng = np.random.default_rng(seed)
    xs, ys = (np.float32(v) for v in rng.uniform(0.005, 0.1, 2))
    xz, yz = (np.int8(v) for v in rng.integers(-20, 20, 2))
    inits = [numpy_helper.from_array(np.array(v), n)
             for n, v in (("xs", xs), ("xz", xz), ("ys", ys), ("yz", yz))]
    node = helper.make_node("QLinearGlobalAveragePool", ["x", "xs", "xz", "ys", "yz"], ["y"],
                            domain="com.microsoft", channels_last=0)
    g = helper.make_graph([node], "t",
                          [helper.make_tensor_value_info("x", TensorProto.INT8, [4, 16, 7, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.INT8, [4, 16, 1, 1])],
                          inits)
    p = tmp_path / "m.onnx"
    p.write_bytes(helper.make_model(g, opset_imports=[
        helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)]).SerializeToString())
    r = verify_model(p, get_target("host"), seed=seed)
    assert r.bit_exact, r.as_json()


def _concat_model(qop: bool, dtype, seed: int) -> onnx.ModelProto:
    """Two NCHW inputs of other quantizations joined on the channels: QDQ (DQ -> Concat -> Q) or
    QLinearConcat; the inputs are int8 or uint8 graph inputs."""
    rng = np.random.default_rng(seed)
    et = TensorProto.UINT8 if dtype == np.uint8 else TensorProto.INT8
    lo, hi = (90, 160) if dtype == np.uint8 else (-30, 30)
    names = ("s0", "z0", "s1", "z1", "sy", "zy")
    vals = [np.float32(rng.uniform(0.01, 0.1)) if n[0] == "s" else dtype(rng.integers(lo, hi))
            for n in names]
    inits = [numpy_helper.from_array(np.array(v), n) for n, v in zip(names, vals)]
    if qop:
        nodes = [helper.make_node("QLinearConcat", ["sy", "zy", "a", "s0", "z0", "b", "s1", "z1"],
                                  ["y"], domain="com.microsoft", axis=1)]
    else:
        nodes = [helper.make_node("DequantizeLinear", ["a", "s0", "z0"], ["ad"]),
                 helper.make_node("DequantizeLinear", ["b", "s1", "z1"], ["bd"]),
                 helper.make_node("Concat", ["ad", "bd"], ["c"], axis=1),
                 helper.make_node("QuantizeLinear", ["c", "sy", "zy"], ["y"])]
    g = helper.make_graph(nodes, "t", [helper.make_tensor_value_info("a", et, [1, 3, 40, 40]),
                                       helper.make_tensor_value_info("b", et, [1, 5, 40, 40])],
                          [helper.make_tensor_value_info("y", et, [1, 8, 40, 40])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                               helper.make_opsetid("com.microsoft", 1)])


@pytest.mark.parametrize("qop", [False, True])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_concat_requantizing_exact(tmp_path, qop, dtype):
    """Concat of inputs of other scales and zero points (each requantized as onnxruntime does),
    through uint8 graph inputs and outputs too: byte for byte with onnxruntime."""
    p = tmp_path / "m.onnx"
    p.write_bytes(_concat_model(qop, dtype, 3).SerializeToString())
    for seed in range(2):
        r = verify_model(p, get_target("host"), seed=seed)
        assert r.bit_exact, r.as_json()
