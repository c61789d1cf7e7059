"""ONNX's integer ops against onnxruntime on random layers: QLinearConv and QLinearMatMul whose
weights have a non-zero zero point (CONV_INTEGER, BATCH_MATMUL with ONNX numerics), ConvInteger
and MatMulInteger (int32 out), DynamicQuantizeLinear, per-channel QuantizeLinear /
DequantizeLinear of activations. Each model is built with onnx.helper, verified by
`edgecc verify` (every output byte against onnxruntime, seeded inputs, 3 frames) on the host;
the numpy references of the new ops are checked against onnx.reference on the same layers.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from test_cli import edgecc

U8, I8 = TensorProto.UINT8, TensorProto.INT8


def _model(nodes, inputs, outputs, inits, opset=21) -> onnx.ModelProto:
    g = helper.make_graph(nodes, "g", inputs, outputs,
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    m = onnx.shape_inference.infer_shapes(m)  # the outputs' shapes
    onnx.checker.check_model(m)
    return m


def _q(rng, dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


def qlinear_conv(rng, dtype=np.uint8, group=1) -> onnx.ModelProto:
    c, m, k = 2 * group, 3 * group, int(rng.integers(1, 4))
    h, w = int(rng.integers(k, 9)), int(rng.integers(k, 9))
    et = U8 if dtype == np.uint8 else I8
    inits = dict(xs=np.float32(rng.uniform(0.01, 0.05)), xz=_q(rng, dtype, ()),
                 w=_q(rng, dtype, (m, c // group, k, k)),
                 ws=rng.uniform(0.002, 0.02, m).astype(np.float32),
                 wz=np.full(m, _q(rng, dtype, ()), dtype),  # onnxruntime: one weight zp
                 ys=np.float32(rng.uniform(0.05, 0.3)), yz=_q(rng, dtype, ()),
                 b=rng.integers(-3000, 3000, m).astype(np.int32))
    p = int(rng.integers(0, k))
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                            ["y"], group=group, pads=[p, 0, p, p],
                            strides=[int(rng.integers(1, 3))] * 2)
    return _model([node], [helper.make_tensor_value_info("x", et, [1, c, h, w])],
                  [helper.make_tensor_value_info("y", et, None)], inits)


def qlinear_matmul(rng, dtype=np.int8, batch=(2,)) -> onnx.ModelProto:
    k, n = int(rng.integers(1, 9)), int(rng.integers(1, 6))
    et = U8 if dtype == np.uint8 else I8
    inits = dict(a_s=np.float32(0.02), az=_q(rng, dtype, ()), b=_q(rng, dtype, (*batch, k, n)),
                 bs=np.float32(rng.uniform(0.005, 0.02)), bz=_q(rng, dtype, ()),
                 ys=np.float32(rng.uniform(0.05, 0.2)), yz=_q(rng, dtype, ()))
    node = helper.make_node("QLinearMatMul", ["a", "a_s", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
    return _model([node], [helper.make_tensor_value_info("a", et, [*batch, 3, k])],
                  [helper.make_tensor_value_info("y", et, None)], inits)


def conv_integer(rng) -> onnx.ModelProto:
    inits = dict(w=_q(rng, np.uint8, (4, 3, 3, 3)), xz=_q(rng, np.uint8, ()),
                 wz=_q(rng, np.uint8, ()))
    node = helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], pads=[1, 1, 1, 1],
                            dilations=[1, 2])
    return _model([node], [helper.make_tensor_value_info("x", U8, [1, 3, 6, 7])],
                  [helper.make_tensor_value_info("y", TensorProto.INT32, None)], inits)


def matmul_integer(rng) -> onnx.ModelProto:
    inits = dict(b=_q(rng, np.uint8, (5, 4)), az=_q(rng, np.uint8, ()), bz=_q(rng, np.uint8, ()))
    node = helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
    return _model([node], [helper.make_tensor_value_info("a", U8, [2, 3, 5])],
                  [helper.make_tensor_value_info("y", TensorProto.INT32, None)], inits)


def dynamic_quantize(rng) -> onnx.ModelProto:
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])
    return _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 7])],
                  [helper.make_tensor_value_info("y", U8, None),
                   helper.make_tensor_value_info("s", TensorProto.FLOAT, None),
                   helper.make_tensor_value_info("z", U8, None)], {})


def per_channel_qdq(rng) -> onnx.ModelProto:
    """QuantizeLinear then DequantizeLinear, both on axis 1 of a float activation."""
    inits = dict(s=rng.uniform(0.01, 0.1, 4).astype(np.float32), z=_q(rng, np.int8, (4,)))
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1)]
    return _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 3])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)


CASES = {
    "qlinearconv_u8": lambda r: qlinear_conv(r, np.uint8),
    "qlinearconv_s8_grouped": lambda r: qlinear_conv(r, np.int8, group=2),
    "qlinearmatmul_s8_3d": lambda r: qlinear_matmul(r, np.int8),
    "qlinearmatmul_u8_2d": lambda r: qlinear_matmul(r, np.uint8, batch=()),
    "convinteger": conv_integer, "matmulinteger": matmul_integer,
    "dynamicquantizelinear": dynamic_quantize, "per_channel_qdq": per_channel_qdq,
}


def _write(tmp_path: Path, seed: int) -> list[Path]:
    out = []
    for i, (name, make) in enumerate(CASES.items()):
        p = tmp_path / f"{name}_{seed}.onnx"
        onnx.save(make(np.random.default_rng(seed * 100 + i)), str(p))
        out.append(p)
    return out


def _verify_all(tmp_path: Path, seeds) -> None:
    models = [p for s in seeds for p in _write(tmp_path, s)]
    r = edgecc("verify", *models, "--target", "host", "--frames", "3", cwd=tmp_path)
    assert r.returncode == 0, (r.stdout[-1500:], r.stderr[-800:])
    assert r.stdout.count("bit-exact") == len(models), r.stdout


def test_integer_ops_bit_exact_with_onnxruntime(tmp_path):
    _verify_all(tmp_path, [1])


@pytest.mark.slow
def test_integer_ops_bit_exact_with_onnxruntime_sweep(tmp_path):
    _verify_all(tmp_path, range(2, 12))


@pytest.mark.parametrize("name", ["qlinearconv_u8", "qlinearconv_s8_grouped", "convinteger",
                                  "matmulinteger", "qlinearmatmul_s8_3d"])
def test_numpy_reference_matches_onnx_reference(tmp_path, name):
    """The IR's numpy references (the model of the C that the op tests and constant folding
    use) equal onnx.reference on the same layer and input."""
    from edgecc.frontends.onnx import load_onnx
    from edgecc.interp import run_graph
    rng = np.random.default_rng(7)
    m = CASES[name](rng)
    f = tmp_path / "m.onnx"
    onnx.save(m, str(f))
    g = load_onnx(f)
    vi = m.graph.input[0]
    shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
    x = _q(rng, helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type), shape)
    want = ReferenceEvaluator(m).run(None, {vi.name: x})[0]
    got = run_graph(g, [x])[g.outputs[0]]
    assert np.array_equal(np.asarray(got).reshape(want.shape).astype(want.dtype), want)


def test_kernel_tables_refuse_weights_with_zero_points(tmp_path):
    """Every SIMD table entry refuses a layer whose weights have a non-zero zero point (one
    line, kept for inspect --verbose), so only the portable kernel that subtracts it runs."""
    from edgecc.frontends.onnx import load_onnx
    from edgecc.lower.table import WEIGHT_ZP_PORTABLE, refused_by_all
    f = tmp_path / "m.onnx"
    onnx.save(CASES["qlinearconv_u8"](np.random.default_rng(3)), str(f))
    g = load_onnx(f)
    n = next(n for n in g.nodes if n.op == "CONV_INTEGER")
    assert refused_by_all(g, n, onnx=True) == WEIGHT_ZP_PORTABLE
    n.op = "CONV_2D"  # as if a table entry of CONV_2D were offered it
    assert refused_by_all(g, n, onnx=True) == WEIGHT_ZP_PORTABLE
