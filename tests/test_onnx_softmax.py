"""onnxruntime's softmax on quantized values: QLinearSoftmax (explicit, or a QDQ group its
optimizer fuses) exact end to end, and edgecc's rule for when onnxruntime fuses agreeing with
onnxruntime's own optimized graph."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from edgecc.frontends.onnx.ortfuse import fused_groups
from edgecc.frontends.onnx.read import read_model
from edgecc.targets import get_target
from edgecc.verify import verify_model

_T = {np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8}


def _inits(xs, xz, ys, yz):
    return [numpy_helper.from_array(np.array(v), n)
            for n, v in (("xs", np.float32(xs)), ("xz", xz), ("ys", np.float32(ys)), ("yz", yz))]


def _qdq_softmax(shape, dtype, xs, xz, ys, yz, float_in: bool, float_out: bool):
    """[Q ->] DQ -> Softmax -> Q [-> DQ]: a float input / output edge or a quantized one."""
    nodes = []
    if float_in:
        nodes.append(helper.make_node("QuantizeLinear", ["xf", "xs", "xz"], ["x"]))
    nodes += [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xd"]),
              helper.make_node("Softmax", ["xd"], ["sm"]),
              helper.make_node("QuantizeLinear", ["sm", "ys", "yz"], ["y"])]
    if float_out:
        nodes.append(helper.make_node("DequantizeLinear", ["y", "ys", "yz"], ["yf"]))
    t = _T[dtype]
    ins = [helper.make_tensor_value_info("xf", TensorProto.FLOAT, shape) if float_in else
           helper.make_tensor_value_info("x", t, shape)]
    outs = [helper.make_tensor_value_info("yf", TensorProto.FLOAT, shape) if float_out else
            helper.make_tensor_value_info("y", t, shape)]
    g = helper.make_graph(nodes, "t", ins, outs,
                          _inits(xs, dtype(xz), ys, dtype(yz)))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def _qlinear_softmax(shape, dtype, xs, xz, ys, yz):
    node = helper.make_node("QLinearSoftmax", ["x", "xs", "xz", "ys", "yz"], ["y"],
                            domain="com.microsoft", opset=13, axis=-1)
    t = _T[dtype]
    g = helper.make_graph([node], "t", [helper.make_tensor_value_info("x", t, shape)],
                          [helper.make_tensor_value_info("y", t, shape)],
                          _inits(xs, dtype(xz), ys, dtype(yz)))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                               helper.make_opsetid("com.microsoft", 1)])


def _ort_fuses(path) -> bool:
    o = ort.SessionOptions()
    o.log_severity_level = 3
    o.optimized_model_filepath = str(path) + ".opt.onnx"
    ort.InferenceSession(str(path), o, providers=["CPUExecutionProvider"])
    return any(n.op_type == "QLinearSoftmax"
               for n in onnx.load(o.optimized_model_filepath).graph.node)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("float_in,float_out", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_fusion_rule_agrees_with_onnxruntime(tmp_path, dtype, float_in, float_out):
    p = tmp_path / "m.onnx"
    zp = -3 if dtype == np.int8 else 120
    m = _qdq_softmax([2, 12], dtype, 0.05, zp, 1 / 256, -128 if dtype == np.int8 else 0,
                     bool(float_in), bool(float_out))
    p.write_bytes(m.SerializeToString())
    mm = read_model(p)
    ours = fused_groups(mm.graph, mm.consts, mm.dtypes)
    assert bool(ours) == _ort_fuses(p)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("ys,xs", [(1 / 256, 0.05), (1 / 255, 0.02), (1 / 256, 0.6)])
@pytest.mark.parametrize("qop", [False, True])
def test_qlinear_softmax_exact(tmp_path, dtype, ys, xs, qop):
    """Both forms, int8 and uint8, output scales 1/256 and quantize_static's 1/255; x_scale 0.6
    lets one value take the whole row (onnxruntime's int8 cast then wraps 128 to -128)."""
    p = tmp_path / "m.onnx"
    s8 = dtype == np.int8
    xz, yz = (-5, -128) if s8 else (123, 0)
    if qop:
        m = _qlinear_softmax([5, 37], dtype, xs, xz, ys, yz)
    else:  # a fused group: quantized on both sides, as inside a model
        m = _qdq_softmax([5, 37], dtype, xs, xz, ys, yz, True, True)
    p.write_bytes(m.SerializeToString())
    for seed in range(3):
        r = verify_model(p, get_target("host"), seed=seed)
        assert r.bit_exact, r.as_json()


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("ys", [1 / 256, 1 / 255])
def test_unfused_softmax_in_float(tmp_path, dtype, ys):
    """An int8 graph input next to a dequantized output: onnxruntime keeps the Softmax in float
    (for int8; uint8 fuses) and edgecc computes it in float32 as well."""
    p = tmp_path / "m.onnx"
    s8 = dtype == np.int8
    m = _qdq_softmax([64, 37], dtype, 0.05, -5 if s8 else 123, ys, -128 if s8 else 0,
                     False, True)
    p.write_bytes(m.SerializeToString())
    for seed in range(2):
        r = verify_model(p, get_target("host"), seed=seed)
        assert r.bit_exact, r.as_json()


def test_float_nodes_and_one_step_rule(tmp_path):
    from edgecc.verify.onnx_float import float_nodes, within_one_step
    from edgecc.verify.onnx_ref import lsb_diffs
    p = tmp_path / "m.onnx"
    for float_in, want in ((False, ({"Softmax": 1}, {0})), (True, ({}, set()))):
        m = _qdq_softmax([2, 12], np.int8, 0.05, -5, 1 / 256, -128, float_in, True)
        p.write_bytes(m.SerializeToString())
        assert float_nodes(p, "x86") == want  # x86: int8 Softmax groups stay float there
    info = dict(values_differing=2, values_off_by_one=2, outputs_differing=[0])
    within_one_step(p, info, "x86")  # the fused model: no float op, so no tolerance
    assert info["within_one_step"] is False
    m = _qdq_softmax([2, 12], np.int8, 0.05, -5, 1 / 256, -128, False, True)
    p.write_bytes(m.SerializeToString())
    within_one_step(p, info, "x86")
    assert info["within_one_step"] is True
    info.update(values_off_by_one=1)  # one value two steps away
    within_one_step(p, info, "x86")
    assert info["within_one_step"] is False
    ref = np.array([0.5, 0.25, 0.75], np.float32)
    got = np.array([0.5, 0.25 + 1 / 256, 0.75 - 2 / 256], np.float32).tobytes()
    assert lsb_diffs(got, ref, 1 / 256)[1:] == (2, 1)
