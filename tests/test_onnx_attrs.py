"""ONNX attributes checked against the operator spec (issue 26, items 8 and 9): each model the
attacker trial compiled silently, or crashed on, is refused in one line naming the node, exit 2.
The rules live in one table (edgecc/frontends/onnx/attrs.py RULES)."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from fuzz.harness import compile_case
from fuzz.onnx_hostile import qdq_conv, qlinear_conv

F32, U8, I8 = TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8


def _set(m: onnx.ModelProto, op: str, **attrs) -> onnx.ModelProto:
    n = next(x for x in m.graph.node if x.op_type == op)
    for k, v in attrs.items():
        for a in list(n.attribute):
            if a.name == k:
                n.attribute.remove(a)
        if v is not None:
            n.attribute.append(helper.make_attribute(k, v))
    return m


def _float_model(nodes, x_shape, y_shape, inits=None, opset=13):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F32, x_shape)],
                          [helper.make_tensor_value_info("y", F32, y_shape)],
                          [numpy_helper.from_array(v, k) for k, v in (inits or {}).items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _conv_transpose(strides):
    w = np.ones((2, 2, 3, 3), np.float32)
    n = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=strides, name="up")
    return _float_model([n], [1, 2, 4, 4], [1, 2, 6, 6], {"w": w})


def _ms_model(node, shape_in, shape_out, inits) -> onnx.ModelProto:
    """One com.microsoft QOperator node over a uint8 input."""
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", U8, shape_in)],
                          [helper.make_tensor_value_info("y", U8, shape_out)],
                          [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m


def _qlinear_softmax(axis):
    inits = dict(s=np.float32(0.05), z=np.uint8(128), ys=np.float32(1 / 256), yz=np.uint8(0))
    n = helper.make_node("QLinearSoftmax", ["x", "s", "z", "ys", "yz"], ["y"], domain="com.microsoft",
                         axis=axis, opset=13, name="sm")
    return _ms_model(n, [1, 10], [1, 10], inits)


def _qlinear_concat(axis):
    n = helper.make_node("QLinearConcat", ["s", "z", "x", "s", "z", "x", "s", "z"], ["y"],
                         domain="com.microsoft", axis=axis, name="cat")
    return _ms_model(n, [1, 4], [2, 4], dict(s=np.float32(0.05), z=np.uint8(128)))


def _zero_dim():
    m = qdq_conv()
    m.graph.input[0].type.tensor_type.shape.dim[2].dim_value = 0
    return m


def _qlinear_conv_int8_zp():
    m = qlinear_conv()
    for t in m.graph.initializer:
        if t.name == "xz":
            t.CopyFrom(numpy_helper.from_array(np.int8(2), "xz"))
    return m


CASES = {
    "conv_group_0": (lambda: _set(qdq_conv(), "Conv", group=0), "group 0 must be positive"),
    "conv_group_-1": (lambda: _set(qdq_conv(), "Conv", group=-1), "group -1 must be positive"),
    "conv_group_3": (lambda: _set(qdq_conv(), "Conv", group=3), "does not match weights"),
    "conv_group_16": (lambda: _set(qdq_conv(), "Conv", group=16), "does not divide the 3"),
    "auto_pad_bogus": (lambda: _set(qdq_conv(), "Conv", auto_pad="BOGUS"),
                       "auto_pad 'BOGUS' must be one of"),
    "auto_pad_with_pads": (lambda: _set(qdq_conv(), "Conv", auto_pad="SAME_UPPER"),
                           "auto_pad SAME_UPPER cannot be used together with pads"),
    "conv_strides_0": (lambda: _set(qdq_conv(), "Conv", strides=[0, 1]), "strides [0, 1] must be"),
    "conv_dilations_-1": (lambda: _set(qdq_conv(), "Conv", dilations=[1, -1]), "dilations"),
    "conv_transpose_strides_0": (lambda: _conv_transpose([0, 0]), "node 0 (ConvTranspose 'up')"),
    "qlinear_softmax_axis_5": (lambda: _qlinear_softmax(5), "axis 5 is outside [-2, 1]"),
    "qlinear_concat_axis_9": (lambda: _qlinear_concat(9), "axis 9 is outside [-2, 1]"),
    "input_dim_0": (_zero_dim, "has a dimension of 0"),
    "qlinear_conv_int8_zp_on_uint8": (_qlinear_conv_int8_zp, "zero point input 2 is INT8 but "
                                                             "input 0 is UINT8"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_spec_violations_are_refused_in_one_line(case, tmp_path):
    build, want = CASES[case]
    p = tmp_path / "m.onnx"
    p.write_bytes(build().SerializeToString())
    outcome, code, err = compile_case(p, tmp_path / "out")
    assert (outcome, code) == ("refused", 2), (outcome, code, err)
    assert want in err and "node" in err or "graph input" in err, err


def test_valid_conv_attributes_still_compile(tmp_path):
    """The same base with spec-valid attributes (auto_pad alone, group 1) compiles."""
    p = tmp_path / "m.onnx"
    p.write_bytes(_set(qdq_conv(), "Conv", auto_pad="SAME_UPPER", pads=None, group=1)
                  .SerializeToString())
    outcome, code, err = compile_case(p, tmp_path / "out")
    assert (outcome, code) == ("compiled", 0), err
