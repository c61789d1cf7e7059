"""The ONNX frontend: bad files (exit 2, one line), the unsupported-node list, layout folding, and
onnxruntime-exact numerics on small QDQ models built here and on the shared ONNX models."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import SHARED
from edgecc.errors import EdgeccError, ModelFormatError, UnsupportedModel
from edgecc.frontends.onnx import load_onnx
from edgecc.targets import get_target
from edgecc.verify import verify_model
from test_cli import assert_one_line_error, edgecc

ONNX_MODELS = SHARED / "models" / "onnx_models"


def onnx_model(name: str) -> Path:
    p = ONNX_MODELS / f"{name}.onnx"
    if not p.is_file():
        pytest.fail(f"shared model missing: {p} (tests need ../shared/models beside the checkout)")
    return p


def _init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def qdq_conv_model(rng, nhwc_input: bool = True, relu: bool = False, opset: int = 13,
                   group: int = 1) -> onnx.ModelProto:
    """float NHWC input -> Transpose -> Q -> DQ -> Conv (per-channel int8 weights, int32 bias)
    [-> Relu] -> Q -> DQ -> float output, as onnxruntime's quantize_static writes them."""
    c, m, k = 4, 8 if group == 1 else 4, 3
    xs, ys = np.float32(0.05), np.float32(0.11)
    ws = (rng.random(m) * 0.02 + 0.005).astype(np.float32)
    w = rng.integers(-127, 128, size=(m, c // group, k, k)).astype(np.int8)
    bias = rng.integers(-500, 500, size=m).astype(np.int32)
    inits = [_init("xs", xs), _init("xz", np.int8(3)), _init("ys", ys), _init("yz", np.int8(-7)),
             _init("w", w), _init("ws", ws), _init("wz", np.zeros(m, np.int8)),
             _init("b", bias), _init("bs", (xs * ws).astype(np.float32)),
             _init("bz", np.zeros(m, np.int32))]
    nodes = []
    x = "x"
    if nhwc_input:
        nodes.append(helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 3, 1, 2]))
        x = "xt"
    nodes += [helper.make_node("QuantizeLinear", [x, "xs", "xz"], ["xq"]),
              helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
              helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
              helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bd"], axis=0),
              helper.make_node("Conv", ["xd", "wd", "bd"], ["cy"], pads=[1, 0, 1, 2],
                               strides=[1, 2], group=group)]
    y = "cy"
    if relu:
        nodes.append(helper.make_node("Relu", ["cy"], ["ry"]))
        y = "ry"
    nodes += [helper.make_node("QuantizeLinear", [y, "ys", "yz"], ["yq"]),
              helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    shape = [1, 9, 10, c] if nhwc_input else [1, c, 9, 10]
    g = helper.make_graph(nodes, "t", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, m, 9, 5])],
                          inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _save(m: onnx.ModelProto, tmp_path: Path, name: str = "m.onnx") -> Path:
    p = tmp_path / name
    p.write_bytes(m.SerializeToString())
    return p


@pytest.mark.parametrize("group,relu", [(1, False), (1, True), (4, False)])
def test_qdq_conv_exact_with_onnxruntime(tmp_path, group, relu):
    p = _save(qdq_conv_model(np.random.default_rng(group), relu=relu, group=group), tmp_path)
    g = load_onnx(p)
    ops = [n.op for n in g.nodes]
    # the NHWC input's Transpose cancels against the NHWC conv; only the NCHW output needs one
    assert ops == ["QUANTIZE", "DEPTHWISE_CONV_2D" if group > 1 else "CONV_2D", "TRANSPOSE",
                   "DEQUANTIZE"]
    assert ("DEPTHWISE_CONV_2D" if group > 1 else "CONV_2D") in ops
    r = verify_model(p, get_target("host"))
    assert r.bit_exact, r.as_json()


def test_nchw_input_gets_one_transpose(tmp_path):
    g = load_onnx(_save(qdq_conv_model(np.random.default_rng(0), nhwc_input=False), tmp_path))
    assert [n.op for n in g.nodes].count("TRANSPOSE") == 2  # in to NHWC, out back to NCHW
    assert g.type(g.inputs[0]).shape == (1, 4, 9, 10)  # the API keeps the declared layout


def test_unsupported_nodes_listed_at_once(tmp_path):
    m = qdq_conv_model(np.random.default_rng(0))
    m.graph.node.append(helper.make_node("Sin", ["y"], ["e1"], name="sin_a"))
    m.graph.node.append(helper.make_node("Sin", ["e1"], ["e2"]))
    m.graph.output[0].name = "e2"  # (keeps y's shape: Sin keeps shapes)
    with pytest.raises(UnsupportedModel) as e:
        load_onnx(_save(m, tmp_path))
    msg = str(e.value)
    assert "Sin 'sin_a' at node 8" in msg and "Sin at node 9" in msg


def _bad_models(tmp_path: Path) -> dict[str, Path]:
    rng = np.random.default_rng(0)
    good = qdq_conv_model(rng)
    out = {}
    raw = good.SerializeToString()
    (tmp_path / "trunc.onnx").write_bytes(raw[: len(raw) // 2])
    out["trunc"] = tmp_path / "trunc.onnx"
    cyc = qdq_conv_model(rng)
    n0 = cyc.graph.node[1]
    n0.input[0] = "yq"  # Q reads the last Q's output: a cycle
    out["cycle"] = _save(cyc, tmp_path, "cycle.onnx")
    miss = qdq_conv_model(rng)
    del miss.graph.initializer[4]  # the weights
    out["missing"] = _save(miss, tmp_path, "missing.onnx")
    dt = qdq_conv_model(rng)
    dt.graph.input[0].type.tensor_type.elem_type = TensorProto.COMPLEX64
    out["dtype"] = _save(dt, tmp_path, "dtype.onnx")
    out["opset"] = _save(qdq_conv_model(rng, opset=9), tmp_path, "opset.onnx")
    out["opset_new"] = _save(qdq_conv_model(rng, opset=30), tmp_path, "opset_new.onnx")
    wt = qdq_conv_model(rng)
    wt.graph.initializer[4].data_type = TensorProto.FLOAT  # int8 weight bytes declared float
    out["init_dtype"] = _save(wt, tmp_path, "init_dtype.onnx")
    st = qdq_conv_model(rng)
    s0 = st.graph.initializer[0]
    s0.CopyFrom(numpy_helper.from_array(np.array(3, np.int32), s0.name))  # an int32 scale
    out["scale_dtype"] = _save(st, tmp_path, "scale_dtype.onnx")
    no = qdq_conv_model(rng)
    no.graph.ClearField("output")
    out["no_outputs"] = _save(no, tmp_path, "no_outputs.onnx")
    return out


@pytest.mark.parametrize("kind,text", [("trunc", "not a valid ONNX protobuf"),
                                       ("cycle", "a cycle"), ("missing", "missing initializer"),
                                       ("dtype", "COMPLEX64"), ("opset", "opset 9"),
                                       ("opset_new", "opset 30"), ("init_dtype", "tensor name: w"),
                                       ("scale_dtype", "scale"), ("no_outputs", "no outputs")])
def test_bad_onnx_is_one_line_exit_2(tmp_path, kind, text):
    p = _bad_models(tmp_path)[kind]
    with pytest.raises(EdgeccError) as e:
        load_onnx(p)
    assert text in str(e.value)
    # and through the CLI (in-process, as the fuzzer runs it): one line, exit 2, no traceback
    from fuzz.harness import compile_case
    outcome, code, err = compile_case(p, tmp_path / "out")
    assert (outcome, code) == ("refused", 2) and text in err, (outcome, code, err)
    if kind == "trunc":  # and as a real process
        line = assert_one_line_error(edgecc("compile", p, "--target", "host", "--name", "m",
                                            "-o", tmp_path / "out", cwd=tmp_path))
        assert text in line


def test_quantize_onnx_rounds_half_to_even(tmp_path):
    from edgecc.ir import DType, Graph, Node, QParams, TensorType, Value
    from edgecc.numerics import QLINEAR
    from edgecc.ops import get_op
    x = Value("x", TensorType((4,), DType.FLOAT32))
    y = Value("y", TensorType((4,), DType.INT8, QParams((0.5,), (0,))))
    n = Node("QUANTIZE", ["x"], ["y"], numerics=QLINEAR)
    g = Graph(dict(x=x, y=y), [n], ["x"], ["y"])
    out = get_op("QUANTIZE").reference(g, n, [np.array([0.25, 0.75, -0.25, 1.25], np.float32)])[0]
    assert out.tolist() == [0, 2, 0, 2]


@pytest.mark.parametrize("name", ["ox_dscnn_qdq_s8", "ox_dscnn_qop_u8", "ox_se_mbv2_qdq_u8",
                                  "ox_se_mbv2_qop_s8", "ox_conv1d_qdq_u8", "ox_conv1d_qop_s8"])
def test_inspect_ox_conv_models_run_no_transpose(tmp_path, name):
    import json
    r = edgecc("inspect", onnx_model(name), "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert "TRANSPOSE" not in d["ops_after"] and "CONV_2D" in d["ops_after"]
    assert all(k["op"] != "TRANSPOSE" for k in d["kernels"])


def test_ox_dscnn_qdq_softmax_exact():
    """quantize_static's Softmax output scale is 1/255; onnxruntime fuses the QDQ group into
    QLinearSoftmax (edgecc/frontends/onnx/ortfuse.py), whose arithmetic edgecc follows."""
    r = verify_model(onnx_model("ox_dscnn_qdq_s8"), get_target("host"))
    assert r.bit_exact, r.as_json()


def test_every_verb_takes_onnx(tmp_path):
    import json
    m = onnx_model("tfl_ad01_int8_qdq")
    r = edgecc("compile", m, "--target", "host", "--name", "ad", "-o", tmp_path / "out",
               cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "-ffp-contract=off" in (tmp_path / "out" / "ad.h").read_text()
    for args in (("plan", m, "--json"), ("budget", m, "--board", "nrf52840-dk", "--json"),
                 ("inspect", m, "--json")):
        r = edgecc(*args, cwd=tmp_path)
        assert r.returncode == 0, (args, r.stderr)
        json.loads(r.stdout)
    r = edgecc("report", m, "-o", tmp_path / "r.html", cwd=tmp_path)
    assert r.returncode == 0 and (tmp_path / "r.html").stat().st_size > 1000, r.stderr


def test_mutated_models_fail_in_one_line(tmp_path):
    """Seeded mutations of a QOperator model (dropped or rewired inputs, changed op types,
    dropped attributes, retyped initializers, flipped bytes) end in an EdgeccError (exit 2),
    never in another exception."""
    import random
    rng = random.Random(0)
    src = onnx.load(str(onnx_model("ox_dscnn_qop_u8")))
    p = tmp_path / "m.onnx"
    for it in range(150):
        m = onnx.ModelProto()
        m.CopyFrom(src)
        g = m.graph
        n = g.node[rng.randrange(len(g.node))]
        k = it % 6
        if k == 0 and n.input:
            del n.input[rng.randrange(len(n.input))]
        elif k == 1 and n.input:
            n.input[rng.randrange(len(n.input))] = g.node[rng.randrange(len(g.node))].output[0]
        elif k == 2:
            n.op_type = rng.choice(["QLinearConv", "Conv", "Add", "QGemm", "Reshape", "Squeeze"])
        elif k == 3 and n.attribute:
            del n.attribute[rng.randrange(len(n.attribute))]
        elif k == 4:
            g.initializer[rng.randrange(len(g.initializer))].data_type = rng.choice([1, 2, 3, 6])
        raw = bytearray(m.SerializeToString())
        if k == 5:
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        p.write_bytes(bytes(raw))
        try:
            load_onnx(p)
        except EdgeccError:
            pass


def autoenc_upto_concat(name: str, out: Path) -> Path:
    """The ox_autoenc model cut after its Concat's QuantizeLinear (QDQ) or QLinearConcat (QOp):
    two convs, MaxPool, the UpSampling2D as Unsqueeze -> Tile -> Transpose -> Reshape (twice)
    and the Concat of inputs of other quantizations (what edgecc compiles of it today)."""
    import onnxruntime as ort
    from onnx.utils import Extractor
    src = onnx_model(f"ox_autoenc_{name}")
    y = ("functional_1/concatenate_1/concat:0_quantized" if "qop" in name else
         "functional_1/concatenate_1/concat:0_QuantizeLinear_Output")
    et = TensorProto.UINT8 if name.endswith("u8") else TensorProto.INT8
    m = onnx.load(str(src))
    m.graph.output.append(helper.make_tensor_value_info(y, et, None))
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    x = sess.get_inputs()[0]
    shape = sess.run([y], {x.name: np.zeros([d if isinstance(d, int) else 1 for d in x.shape],
                                            np.float32)})[0].shape
    m = onnx.shape_inference.infer_shapes(onnx.load(str(src)))
    m.graph.output.append(helper.make_tensor_value_info(y, et, list(shape)))
    onnx.save(Extractor(m).extract_model([x.name], [y]), str(out))
    return out


@pytest.mark.parametrize("name", ["qdq_s8", "qdq_u8", "qop_s8", "qop_u8"])
@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_autoenc_tile_concat_exact(tmp_path, name, cc):
    p = autoenc_upto_concat(name, tmp_path / "cut.onnx")
    ops = [n.op for n in load_onnx(p).nodes]
    assert "TILE" in ops and "CONCATENATION" in ops
    r = verify_model(p, get_target("host"), cc=cc)
    assert r.bit_exact, r.as_json()
