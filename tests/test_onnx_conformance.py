"""The ONNX single-op conformance cases in ../shared/models/onnx/ (model.onnx + test_data_set_0).

Each case's scales, zero points and weights are graph inputs there; edgecc compiles constants, so
the test freezes every input but the first into an initializer (their stored values), compiles
the frozen model, runs the C on the host (gcc; clang and cortex-m4 under QEMU in the slow test)
on the stored first input and compares every byte with the stored outputs and with
`onnx.reference.ReferenceEvaluator`. All 12 cases are exact.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator

from conftest import SHARED
from edgecc.compiler import compile_model
from edgecc.errors import EdgeccError
from edgecc.frontends.onnx import load_onnx
from edgecc.targets import get_target
from edgecc.verify import _build_and_run
from edgecc.build.harness import parse_frames
from test_cli import assert_one_line_error, edgecc

CASES = SHARED / "models" / "onnx"
EXACT = ["test_convinteger_with_padding", "test_convinteger_without_padding",
         "test_dequantizelinear", "test_dequantizelinear_axis", "test_dynamicquantizelinear",
         "test_matmulinteger", "test_qlinearconv", "test_qlinearmatmul_2D_int8_float32",
         "test_qlinearmatmul_2D_uint8_float32", "test_qlinearmatmul_3D_int8_float32",
         "test_quantizelinear", "test_quantizelinear_axis"]
# beyond the host's gcc (every case, fast): clang, and one Arm target under QEMU (slow)
SLOW_BUILDS = [("host", "clang"), ("cortex-m4", None)]


def _case(name: str) -> Path:
    d = CASES / name
    if not (d / "model.onnx").is_file():
        pytest.fail(f"shared conformance case missing: {d} (tests need ../shared/models)")
    return d


def _tensors(d: Path, kind: str) -> list[np.ndarray]:
    out = []
    for f in sorted((d / "test_data_set_0").glob(f"{kind}_*.pb"),
                    key=lambda p: int(p.stem.split("_")[1])):
        t = onnx.TensorProto()
        t.ParseFromString(f.read_bytes())
        out.append(numpy_helper.to_array(t))
    return out


def frozen(d: Path, out: Path) -> Path:
    """The case with every graph input but the first made an initializer of its stored value."""
    m = onnx.load(str(d / "model.onnx"))
    ins = _tensors(d, "input")
    for vi, arr in list(zip(m.graph.input, ins))[1:]:
        m.graph.initializer.append(numpy_helper.from_array(arr, vi.name))
        m.graph.input.remove(vi)
    onnx.save(m, str(out))
    return out


def test_every_case_is_listed():
    names = {p.name for p in CASES.iterdir() if (p / "model.onnx").is_file()}
    assert names == set(EXACT)


def _check_case(tmp_path: Path, name: str, target: str, cc: str | None) -> None:
    d = _case(name)
    ins, want = _tensors(d, "input"), _tensors(d, "output")
    ref = ReferenceEvaluator(str(d / "model.onnx")).run(
        None, {vi.name: a for vi, a in zip(onnx.load(str(d / "model.onnx")).graph.input, ins)})
    c = compile_model(frozen(d, tmp_path / "m.onnx"), get_target(target), "model")
    text = _build_and_run(c, tmp_path, [ins[0]], get_target(target), cc, False)
    frames, done = parse_frames(text)
    assert done, text[-500:]
    got = frames[0][0]
    assert len(got) == len(want)
    for i, (w, r) in enumerate(zip(want, ref)):
        assert np.asarray(r).dtype == w.dtype and np.array_equal(r, w), f"reference output {i}"
        g = np.frombuffer(got[i], w.dtype).reshape(w.shape)
        assert np.array_equal(g, w), f"output {i}: got {g.ravel()}, stored {w.ravel()}"


@pytest.mark.parametrize("name", EXACT)
def test_case_exact_against_stored_outputs_and_reference(tmp_path, name):
    _check_case(tmp_path, name, "host", "gcc")


@pytest.mark.slow
@pytest.mark.parametrize("target,cc", SLOW_BUILDS)
@pytest.mark.parametrize("name", EXACT)
def test_case_exact_on_clang_and_arm(tmp_path, name, target, cc):
    _check_case(tmp_path, name, target, cc)


def test_per_channel_activation_feeding_an_op_is_refused_in_one_line(tmp_path):
    """A per-channel DequantizeLinear of an activation is only a graph output: an op reading it
    (here a Sigmoid) gets one line, not per-tensor arithmetic."""
    m = onnx.load(str(frozen(_case("test_dequantizelinear_axis"), tmp_path / "dq.onnx")))
    m.opset_import[0].version = 21  # Sigmoid: beyond plain Q/DQ, opsets 10..21
    h = onnx.helper
    m.graph.node.append(h.make_node("Sigmoid", ["y"], ["s"]))
    m.graph.node.append(h.make_node("QuantizeLinear", ["s", "qs"], ["q"]))
    m.graph.initializer.append(numpy_helper.from_array(np.array(0.5, np.float32), "qs"))
    m.graph.output[0].CopyFrom(h.make_tensor_value_info("q", onnx.TensorProto.UINT8, [1, 3, 3, 2]))
    p = tmp_path / "m.onnx"
    onnx.save(m, str(p))
    with pytest.raises(EdgeccError) as e:
        load_onnx(p)
    assert "\n" not in str(e.value)
    assert str(e.value).endswith("a per-channel DequantizeLinear of an activation can only be a "
                                 "graph output"), str(e.value)


def test_opset_25_refused_beyond_plain_qdq(tmp_path):
    """Opsets 22..25 are accepted only for graphs of plain QuantizeLinear / DequantizeLinear."""
    m = onnx.load(str(_case("test_quantizelinear") / "model.onnx"))
    m.graph.node[0].attribute.append(onnx.helper.make_attribute("block_size", 2))
    p = tmp_path / "m.onnx"
    onnx.save(m, str(p))
    r = edgecc("compile", str(p), "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert assert_one_line_error(r).endswith("opset 25 is outside the supported 10..21")
