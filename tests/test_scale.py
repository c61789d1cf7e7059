"""Graph scale (issue 26, item 7): compile work grows linearly with a chain's length, stated
limits refuse what would not (one line, exit 2), and memory is bounded before big allocations.

Complexity is asserted by counting Python function calls of a whole compile (sys.setprofile),
never by wall-clock time: a chain twice as long must cost at most ~2x the calls (the checker's
root scan, the conflict and buffer pair scans, the order search over all nodes and the template
parse per layer each made it quadratic)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from edgecc.compiler import compile_model
from edgecc.errors import EdgeccError
from edgecc.targets import get_target
from fuzz import scale

REPO = Path(__file__).resolve().parent.parent


def _calls(path: Path) -> int:
    count = [0]

    def prof(frame, event, arg):
        if event == "call":
            count[0] += 1
    sys.setprofile(prof)
    try:
        compile_model(path, get_target("host"), "m")
    finally:
        sys.setprofile(None)
    return count[0]


@pytest.fixture
def release(monkeypatch):
    """Release mode: debug mode (conftest) runs ir.verify after every rewrite, O(n) each."""
    monkeypatch.setenv("EDGECC_DEBUG", "0")


def _model(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_relu_chain_compile_is_linear(tmp_path, release):
    small, big = (_model(tmp_path, f"c{n}.tflite", scale.relu_chain(n)) for n in (300, 600))
    compile_model(small, get_target("host"), "m")  # warm: imports, caches
    a, b = _calls(small), _calls(big)
    assert b < 2.3 * a, (a, b)


def test_fusion_chain_compile_is_linear(tmp_path, release, monkeypatch):
    """n FULLY_CONNECTED -> RELU fusions: the rewrite engine rebuilt its producer / consumer
    maps (a scan of the whole graph) after every rewrite; now they follow each edit, so the
    number of full scans does not grow with n."""
    from edgecc.ir import Graph
    scans = [0]
    full = Graph.consumers

    def counting(self):
        scans[0] += 1
        return full(self)
    monkeypatch.setattr(Graph, "consumers", counting)
    counts = []
    for n in (150, 300):
        scans[0] = 0
        c = compile_model(_model(tmp_path, f"f{n}.tflite", scale.fc_relu_chain(n)),
                          get_target("host"), "m")
        assert len(c.graph.nodes) == n  # every RELU fused
        counts.append(scans[0])
    assert counts[1] == counts[0] < 50, counts


def test_onnx_relu_chain_compile_is_linear(tmp_path, release):
    small, big = (_model(tmp_path, f"c{n}.onnx", scale.onnx_relu_chain(n)) for n in (300, 600))
    compile_model(small, get_target("host"), "m")
    a, b = _calls(small), _calls(big)
    assert b < 2.3 * a, (a, b)


def _refusal(tmp_path: Path, name: str, data: bytes) -> str:
    p = _model(tmp_path, name, data)
    r = subprocess.run([sys.executable, "-m", "edgecc", "compile", str(p), "-o",
                        str(tmp_path / "out"), "--name", "m"], capture_output=True, text=True,
                       timeout=300, cwd=REPO, stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    return r.stderr


def test_more_ops_than_the_limit_are_refused_before_import(tmp_path):
    err = _refusal(tmp_path, "long.tflite", scale.relu_chain(20_001))
    assert "20,001 ops, over edgecc's limit of 20,000" in err


@pytest.mark.parametrize("case", ["add_inputs", "many_outputs"])
def test_too_many_live_tensors_are_refused(tmp_path, case):
    err = _refusal(tmp_path, f"{case}.tflite", getattr(scale, case)(300))
    assert "at most 256 tensors may be alive at once" in err


def test_nested_if_is_refused_before_the_checker(tmp_path, monkeypatch):
    import onnx

    def boom(*a, **k):
        raise AssertionError("onnx.checker ran on a model with subgraphs")
    monkeypatch.setattr(onnx.checker, "check_model", boom)
    p = _model(tmp_path, "if.onnx", scale.onnx_nested_if(6))
    with pytest.raises(EdgeccError, match=r"node 0 \(If\): nodes with subgraphs"):
        compile_model(p, get_target("host"), "m")


def test_huge_conv_is_planned_without_a_pixel_by_pixel_streaming_proof(tmp_path, monkeypatch):
    """A valid 4096x4096x3 CONV_2D: its streaming proof enumerated 16M pixels (over 6 GB);
    such a layer is now planned without overlap (arena = input + output)."""
    from edgecc.plan import check

    def boom(*a, **k):
        raise AssertionError("stream_safe enumerated a 16M-pixel layer")
    monkeypatch.setattr(check, "stream_safe", boom)
    c = compile_model(_model(tmp_path, "conv.tflite", scale.huge_conv()), get_target("host"), "m")
    assert c.plan.arena == 2 * 4096 * 4096 * 3


def test_weights_over_the_limit_are_refused_from_the_dims(tmp_path, monkeypatch):
    """An ONNX initializer over the weights limit is refused before numpy decodes it."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    k = 4200  # 4200 x 4200 float32: 70.6 MB
    w = numpy_helper.from_array(np.zeros((k, k), np.float32), "w")
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "mm",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, k])], [w])
    p = tmp_path / "mm.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), p)

    def boom(*a, **k):
        raise AssertionError("the initializer was decoded")
    monkeypatch.setattr(numpy_helper, "to_array", boom)
    with pytest.raises(EdgeccError, match="bytes of constants, over edgecc's limit"):
        compile_model(p, get_target("host"), "m")


@pytest.mark.slow
def test_10000_op_chains_compile(tmp_path):
    for name, data in (("c.tflite", scale.relu_chain(10_000)),
                       ("c.onnx", scale.onnx_relu_chain(10_000))):
        c = compile_model(_model(tmp_path, name, data), get_target("host"), "m")
        assert len(c.graph.nodes) == 10_000


def test_tflite_weights_over_the_limit_are_refused_while_reading(tmp_path, monkeypatch):
    """The TFLite reader counts the constants' bytes as it meets them (before decoding)."""
    from edgecc.validate import limits
    from fuzz.hostile import build, fc
    monkeypatch.setattr(limits, "MAX_WEIGHT_BYTES", 16)  # fc's weights are 32 bytes
    p = _model(tmp_path, "fc.tflite", build(fc, lambda mb, ins, outs: None))
    with pytest.raises(EdgeccError, match="bytes of constants, over edgecc's limit of 16"):
        compile_model(p, get_target("host"), "m")
