"""ONNX Softmax over any axis (issue 26, item 5): UB-free C that matches onnxruntime, and a
verify that does not call a difference "within one step" when it starts at a layer onnxruntime
computes exactly.

The attacker's case: Softmax over axis 0 of a [1, 10] tensor, i.e. rows of one value. The
QLinearSoftmax table entry times floor(1 / y_scale) overflows float32 to +inf there, and the C
converted +inf to int (UBSan: `-2147483648 + -128`)."""
from __future__ import annotations

import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from fuzz.harness import compile_case, run_c


def softmax_model(axis: int, shape: list[int], op: str = "Softmax") -> onnx.ModelProto:
    inits = dict(s=np.float32(0.05), z=np.int8(-3), ys=np.float32(1 / 256), yz=np.int8(-128))
    attrs = dict(axis=axis) if op == "Softmax" else {}
    nodes = [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["xf"]),
             helper.make_node(op, ["xf"], ["yf"], name="sm", **attrs),
             helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.INT8, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.INT8, shape)],
                          [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("axis,shape", [(0, [1, 10]), (0, [4, 10]), (1, [3, 1, 5]),
                                        (-1, [2, 1])])
def test_softmax_over_any_axis_is_ubsan_clean(axis, shape, tmp_path):
    p = tmp_path / "m.onnx"
    p.write_bytes(softmax_model(axis, shape).SerializeToString())
    outcome, code, err = compile_case(p, tmp_path / "out")
    assert outcome == "compiled", err
    assert run_c(tmp_path / "out") == ("ok", "")


def test_one_value_rows_saturate_as_onnxruntime(tmp_path):
    """The numpy reference (and so the C, bit-exact with it in the op tests) gives 127 for a
    row of one value, as onnxruntime does (0.996 = (127 + 128) / 256), without converting
    +inf to an integer (which gave INT64_MIN, saturating to 127 only by wrap-around)."""
    from edgecc.compiler import load_model
    from edgecc.ops._onnx_softmax import reference
    p = tmp_path / "m.onnx"
    p.write_bytes(softmax_model(0, [1, 10]).SerializeToString())
    g = load_model(p)
    n = next(x for x in g.nodes if x.op == "SOFTMAX")
    shape = g.type(n.inputs[0]).shape
    with warnings.catch_warnings():  # no float -> int conversion of inf (platform-defined)
        warnings.simplefilter("error")
        y = reference(g, n, [np.arange(10, dtype=np.int8).reshape(shape) - 5])[0]
    assert (y == 127).all(), y


def test_verify_agrees_with_onnxruntime_on_axis_0(tmp_path):
    pytest.importorskip("onnxruntime")
    from edgecc.targets import get_target
    from edgecc.verify import verify_model
    p = tmp_path / "m.onnx"
    p.write_bytes(softmax_model(0, [1, 10]).SerializeToString())
    r = verify_model(p, get_target("host"), seed=3)
    assert r.bit_exact, (r.first_bad_layer, r.extra)


@pytest.mark.parametrize("op,allowed", [("Softmax", False), ("Sigmoid", True)])
def test_one_step_only_where_the_difference_starts_at_a_float_op(op, allowed, tmp_path):
    """onnxruntime runs a QDQ Softmax as QLinearSoftmax (exact), so a difference that starts at
    its output is a mismatch; it builds QLinearSigmoid's table from float functions, so one
    step is allowed there."""
    pytest.importorskip("onnxruntime")
    from edgecc.verify.onnx_float import within_one_step
    p = tmp_path / "m.onnx"
    p.write_bytes(softmax_model(-1, [1, 10], op).SerializeToString())
    numerics = "fused"
    info = dict(values_differing=1, values_off_by_one=1, outputs_differing=[0])
    within_one_step(p, info, numerics, first_tensor="y")
    assert info["within_one_step"] is allowed, info
