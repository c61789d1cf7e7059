"""The ONNX single-op conformance cases in ../shared/models/onnx/ (model.onnx + test_data_set_0).

Each case's scales, zero points and weights are graph inputs there; edgecc compiles constants, so
the test freezes every input but the first into an initializer (their stored values), compiles
the frozen model, runs the C on the host (gcc) on the stored first input and compares every byte
with the stored outputs and with `onnx.reference.ReferenceEvaluator`. Cases edgecc does not
compile yet are held to their one-line refusal (exit 2), so a change of either kind shows here.
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
from edgecc.verify.harness import parse_frames
from test_cli import assert_one_line_error, edgecc

CASES = SHARED / "models" / "onnx"
EXACT = ["test_dequantizelinear", "test_quantizelinear"]
# case -> the end of its one-line refusal (what edgecc does not do yet)
REFUSED = {
    "test_convinteger_with_padding": "unsupported ONNX nodes: ConvInteger at node 0",
    "test_convinteger_without_padding": "unsupported ONNX nodes: ConvInteger at node 0",
    "test_matmulinteger": "unsupported ONNX nodes: MatMulInteger at node 0",
    "test_dynamicquantizelinear": "unsupported ONNX nodes: DynamicQuantizeLinear at node 0",
    "test_dequantizelinear_axis": "per-channel DequantizeLinear of an activation",
    "test_quantizelinear_axis": "per-channel QuantizeLinear of an activation",
    "test_qlinearconv": "weights with a non-zero zero point are not supported yet",
    "test_qlinearmatmul_2D_int8_float32": "weights with a non-zero zero point are not supported yet",
    "test_qlinearmatmul_2D_uint8_float32": "weights with a non-zero zero point are not supported yet",
    "test_qlinearmatmul_3D_int8_float32": "weights with a non-zero zero point are not supported yet",
}


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
    assert names == set(EXACT) | set(REFUSED)


@pytest.mark.parametrize("name", EXACT)
def test_case_exact_against_stored_outputs_and_reference(tmp_path, name):
    d = _case(name)
    ins, want = _tensors(d, "input"), _tensors(d, "output")
    ref = ReferenceEvaluator(str(d / "model.onnx")).run(
        None, {vi.name: a for vi, a in zip(onnx.load(str(d / "model.onnx")).graph.input, ins)})
    c = compile_model(frozen(d, tmp_path / "m.onnx"), get_target("host"), "model")
    text = _build_and_run(c, tmp_path, [ins[0]], get_target("host"), "gcc", False)
    frames, done = parse_frames(text)
    assert done, text[-500:]
    got = frames[0][0]
    assert len(got) == len(want)
    for i, (w, r) in enumerate(zip(want, ref)):
        assert np.asarray(r).dtype == w.dtype and np.array_equal(r, w), f"reference output {i}"
        g = np.frombuffer(got[i], w.dtype).reshape(w.shape)
        assert np.array_equal(g, w), f"output {i}: got {g.ravel()}, stored {w.ravel()}"


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_case_refused_in_one_line(tmp_path, name):
    """In-process (the CLI's one line and exit 2 for these errors is tested in test_cli)."""
    with pytest.raises(EdgeccError) as e:
        load_onnx(frozen(_case(name), tmp_path / f"{name}.onnx"))
    msg = str(e.value)
    assert "\n" not in msg  # an EdgeccError: the CLI prints it as one line, exit 2
    assert msg.endswith(REFUSED[name]), msg


def test_opset_25_refused_beyond_plain_qdq(tmp_path):
    """Opsets 22..25 are accepted only for graphs of plain QuantizeLinear / DequantizeLinear."""
    m = onnx.load(str(_case("test_quantizelinear") / "model.onnx"))
    m.graph.node[0].attribute.append(onnx.helper.make_attribute("block_size", 2))
    p = tmp_path / "m.onnx"
    onnx.save(m, str(p))
    r = edgecc("compile", str(p), "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert assert_one_line_error(r).endswith("opset 25 is outside the supported 10..21")
