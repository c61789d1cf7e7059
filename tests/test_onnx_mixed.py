"""Mixed float32 / int8 ONNX graphs, shape folding and the unsupported-node line, at the lowest
level that shows each: which QDQ groups the import runs in float32 (frontends/onnx/mixed.py),
what shapefold.py evaluates and refuses, the grouped listing of unsupported.py (through the CLI:
one line, exit 2, never cut), the float32 comparison of edgecc/verify/tolerance.py and the
precision summary of `edgecc compile`. End to end: tests/onnx_corpus/mixed.py and shapes.py."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from edgecc.errors import UnsupportedModel
from edgecc.frontends.onnx import load_onnx
from edgecc.frontends.onnx.read import read_model
from edgecc.frontends.onnx.shapefold import fold
from edgecc.ir import DType
from edgecc.verify.tolerance import count_mismatches, relative_error
from onnx_corpus._graph import F32, G


def edgecc(args: list[str], capsys) -> tuple[int, str, str]:
    """The CLI in this process: (exit status, stdout, stderr)."""
    from edgecc.cli import main
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _ops(g) -> list[str]:
    return [n.op for n in g.nodes]


def test_softmax_after_last_dequantize_runs_in_float(tmp_path):
    """DQ -> Softmax -> graph output was 'a float result of a quantized op without a
    QuantizeLinear'; onnxruntime computes it in float32, and so does edgecc."""
    g = G(0)
    y = g.op("Softmax", [g.qdq("x", 0.05)], axis=-1)
    ir = load_onnx(g.save(tmp_path, "m", [("x", F32, [1, 10])], [(y, F32)]))
    assert _ops(ir) == ["QUANTIZE", "DEQUANTIZE", "SOFTMAX"]
    assert ir.type(ir.outputs[0]).dtype == DType.FLOAT32


def test_group_closed_by_quantize_stays_integer_and_fanout_runs_in_float(tmp_path):
    """A Conv read only by its QuantizeLinear is an integer layer; one also read by a float op
    (here a Sigmoid) runs in float32 for both readers, as onnxruntime does not fuse it."""
    g = G(1)
    y = g.conv(g.qdq("x", 0.03), 0.03, 3, 4, relu=False)
    closed = g.qdq(y, 0.05)
    ir = load_onnx(g.save(tmp_path, "a", [("x", F32, [1, 3, 6, 6])], [(closed, F32)]))
    conv = [n for n in ir.nodes if n.op == "CONV_2D"]
    assert len(conv) == 1 and ir.type(conv[0].outputs[0]).dtype == DType.INT8
    sig = g.op("Sigmoid", [y])
    ir = load_onnx(g.save(tmp_path, "b", [("x", F32, [1, 3, 6, 6])], [(closed, F32), (sig, F32)]))
    conv = [n for n in ir.nodes if n.op == "CONV_2D"]
    assert len(conv) == 1 and ir.type(conv[0].outputs[0]).dtype == DType.FLOAT32
    logistic = next(n for n in ir.nodes if n.op == "LOGISTIC")
    assert logistic.numerics.qlinear  # ONNX's Sigmoid formula, not TFLite's cut-offs


def test_onnx_sigmoid_formula_has_no_tflite_cutoffs():
    from edgecc.ir import QLINEAR, Graph, Node, TensorType, Value
    from edgecc.ops import get_op
    t = TensorType((3,), DType.FLOAT32)
    vals = {"a": Value("a", t), "b": Value("b", t)}
    x = np.array([-9.5, 0.5, 20.0], np.float32)
    want = (1 / (1 + np.exp(-x.astype(np.float64)))).astype(np.float32)
    for numerics, close in ((QLINEAR, True), (None, False)):
        n = Node("LOGISTIC", ["a"], ["b"], {}, **({"numerics": numerics} if numerics else {}))
        y = get_op("LOGISTIC").reference(Graph(vals, [n], ["a"], ["b"]), n, [x])[0]
        assert (abs(y[0] / want[0] - 1) < 1e-5) == close  # TFLite: exp(x) below -9


def _shape_model(tmp_path, dynamic: bool):
    """Reshape of x by Concat(Shape(x)[0:1], [-1]); dynamic: by a Cast of the values of a
    second input instead."""
    g = G(2)
    if dynamic:
        shape = g.op("Cast", ["s"], to=TensorProto.INT64)
    else:
        s = g.op("Shape", ["x"])
        shape = g.op("Concat", [g.op("Slice", [s, g.init(np.array([0], np.int64)),
                                               g.init(np.array([1], np.int64))]),
                                g.init(np.array([-1], np.int64))], axis=0)
    y = g.op("Reshape", ["x", shape])
    ins = [("x", F32, [2, 3, 4])] + ([("s", F32, [2])] if dynamic else [])
    return _save_raw(g, tmp_path, ins, y) if dynamic else g.save(tmp_path, "s", ins, [(y, F32)])


def _save_raw(g: G, tmp_path, ins, y):
    """A model whose output shape nothing can infer (declared [2, 12])."""
    graph = helper.make_graph(g.nodes, "d", [helper.make_tensor_value_info(n, t, s)
                                             for n, t, s in ins],
                              [helper.make_tensor_value_info(y, F32, [2, 12])], g.inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    p = tmp_path / "d.onnx"
    p.write_bytes(m.SerializeToString())
    return p


def test_shape_subgraph_folds_to_constants(tmp_path):
    m = read_model(_shape_model(tmp_path, dynamic=False))
    fold(m)
    reshape = next(n for n in m.graph.node if n.op_type == "Reshape")
    assert m.consts[reshape.input[1]].tolist() == [2, -1]
    assert m.shapes[reshape.output[0]] == (2, 12)
    ir = load_onnx(_shape_model(tmp_path, dynamic=False))
    assert _ops(ir) == ["RESHAPE"]


def test_dynamic_shape_refused_in_one_line(tmp_path):
    p = _shape_model(tmp_path, dynamic=True)
    with pytest.raises(UnsupportedModel, match=r"node 1 \(Reshape '[^']+'\): input 1 '[^']+' is "
                                               r"not static: it depends on the values of graph "
                                               r"input 's'"):
        load_onnx(p)


@pytest.mark.parametrize("op,inputs,attrs,want", [
    ("Div", [np.array([-7, 7], np.int64), np.array([2, -2], np.int64)], {}, [-3, -3]),
    ("Range", [np.int64(1), np.int64(8), np.int64(3)], {}, [1, 4, 7]),
    ("Slice", [np.arange(6, dtype=np.int64), np.array([-1], np.int64),
               np.array([-7], np.int64), np.array([0], np.int64), np.array([-2], np.int64)],
     {}, [5, 3, 1]),
    ("Where", [np.array([True, False]), np.array([1, 2], np.int64), np.array([3, 4], np.int64)],
     {}, [1, 4]),
    ("ConstantOfShape", [np.array([2], np.int64)], {}, [0.0, 0.0]),
])
def test_fold_semantics(op, inputs, attrs, want):
    from edgecc.frontends.onnx.shapefold import _evaluate
    names = [f"i{k}" for k in range(len(inputs))]
    n = helper.make_node(op, names, ["y"], **attrs)
    assert np.asarray(_evaluate(n, dict(zip(names, inputs)), {})).tolist() == want


def test_unsupported_nodes_grouped_with_counts_and_hints_never_cut(tmp_path, capsys):
    """300 unsupported nodes of two kinds, one with a 10 kB name: one line, exit 2, grouped by op
    type with counts and index ranges, the Pad hint, never ending in '...'."""
    g = G(3)
    x = "x"
    for k in range(299):
        x = g.op("Sin", [x])
    g.nodes[5].name = "n" * 10_000
    y = g.op("Pad", ["x", g.init(np.array([0, 1, 0, 1], np.int64))], mode="reflect")
    p = g.save(tmp_path, "u", [("x", F32, [1, 4])], [(x, F32), (y, F32)])
    code, out, err = edgecc(["compile", str(p), "-o", str(tmp_path / "o")], capsys)
    assert code == 2 and err.count("\n") == 1, err
    line = err.strip()
    assert not line.endswith("...") and "300 unsupported ONNX nodes (2 op types)" in line
    assert "Sin x299 (nodes 0-298)" in line and "Pad x1 (node 299" in line
    assert "Pad is supported outside QDQ groups with constant pads" in line
    assert len(line) < 2000


def test_refused_nodes_listed_with_reasons(tmp_path):
    """Nodes a handler refuses are all listed, each reason once per group; nodes downstream of
    a refused one are not blamed."""
    g = G(4)
    a = g.op("Pad", ["x", g.init(np.array([0, 1, 0, 1], np.int64))], mode="edge")
    b = g.op("Pad", [a, g.init(np.array([0, 1, 0, 1], np.int64))], mode="edge")
    c = g.op("Pad", ["x", g.init(np.array([0, 2, 0, 2], np.int64))], mode="reflect")
    p = g.save(tmp_path, "r", [("x", F32, [1, 4])], [(b, F32), (c, F32)])
    with pytest.raises(UnsupportedModel) as e:
        load_onnx(p)
    msg = str(e.value)
    assert "2 unsupported ONNX nodes (1 op type): Pad x2 (nodes 0 " in msg, msg
    assert "2 'Pad_" in msg and "1 'Pad_" not in msg
    assert "constant mode" in msg


def test_float_tolerance_norm_wise_for_onnx_regions():
    """A Relu of a sum that cancels: 0 against 2e-8 fails a per-value relative test, not one
    relative to the output's largest magnitude (ONNX float regions)."""
    ref = np.array([0.0, 0.45, 0.007], np.float32)
    got = np.array([2.2e-8, 0.45, 0.007], np.float32).tobytes()
    assert count_mismatches(got, ref) == 1 and count_mismatches(got, ref, norm_wise=True) == 0
    assert relative_error(got, ref, norm_wise=True) == pytest.approx(2.2e-8 / 0.45, rel=1e-3)
    bad = np.array([0.0, 0.45, 0.0071], np.float32).tobytes()
    assert count_mismatches(bad, ref, norm_wise=True) == 1
    assert relative_error(ref.tobytes(), ref) == 0.0


def test_compile_summary_says_float(tmp_path, capsys):
    g = G(5)
    y = g.op("Relu", [g.fconv("x", 3, 4)])
    p = g.save(tmp_path, "f", [("x", F32, [1, 3, 6, 6])], [(y, F32)])
    code, out, err = edgecc(["compile", str(p), "-o", str(tmp_path / "o")], capsys)
    assert code == 0 and "the model runs in float32" in out, (out, err)
    g = G(6)
    y = g.op("Softmax", [g.qdq(g.conv(g.qdq("x", 0.03), 0.03, 3, 4), 0.05)], axis=1)
    p = g.save(tmp_path, "m", [("x", F32, [1, 3, 6, 6])], [(y, F32)])
    code, out, err = edgecc(["compile", str(p), "-o", str(tmp_path / "o2"), "--json"], capsys)
    import json
    info = json.loads(out)
    assert info["precision"] == "mixed" and info["float32_layers"] >= 1, info
