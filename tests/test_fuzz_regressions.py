"""Bad outcomes the long fuzz run found after this session's merges, each pinned by its case:
an empty tensor the ops compute (FULLY_CONNECTED on a rank-0 input; an AVERAGE_POOL_2D whose
mutated window is taller than its input) must be one line and exit 2, not an internal PlanError;
SOFTMAX over 2^20 values must run clean under UBSan (its final shift passes 31)."""
from __future__ import annotations

import subprocess
import sys

from conftest import shared_model
from fuzz import hostile
from test_fuzz import SLOW_MUTANTS_PER_MODEL, byte_cases


def _compile(tmp_path, data: bytes):
    p = tmp_path / "m.tflite"
    p.write_bytes(data)
    return subprocess.run([sys.executable, "-m", "edgecc", "compile", str(p), "--target", "host",
                           "--name", "m", "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)


def test_rank0_fully_connected_is_refused_in_one_line(tmp_path):
    r = _compile(tmp_path, hostile.cases()["fc-rank0"])
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no elements" in r.stderr


def test_pool_window_taller_than_input_is_refused_in_one_line(tmp_path):
    path = shared_model("mlzoo_ds_cnn_s_quantized_int16")
    case = next(d for cid, d in byte_cases(path, 1000 + len(path.name), SLOW_MUTANTS_PER_MODEL)
                if cid.endswith("#0:field-options"))
    r = _compile(tmp_path, case)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no elements" in r.stderr


def test_softmax_over_a_million_values_is_ubsan_clean(tmp_path):
    r = _compile(tmp_path, hostile.cases()["softmax-dim_1048576"])
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    (out / "h.c").write_text(
        '#include "m.h"\nstatic uint8_t arena[M_ARENA_SIZE] __attribute__((aligned(16)));\n'
        "int main(void) { int i; m_reset(arena);\n"
        "  for (i = 0; i < M_INPUT0_SIZE; ++i) ((uint8_t *)m_input(arena, 0))[i] = 0;\n"
        "  return m_run(arena); }\n")
    exe = tmp_path / "h"
    subprocess.run(["gcc", "-std=c99", "-O1", "-fsanitize=address,undefined",
                    "-fno-sanitize-recover=all", f"-I{out}", str(out / "h.c"), str(out / "m.c"),
                    str(out / "m_weights.c"), "-o", str(exe)], check=True)
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "runtime error" not in run.stderr, run.stderr


# ---- ONNX (issue 14): what the ONNX fuzz slice found --------------------------------------

def _onnx_refusal(tmp_path, data: bytes) -> str:
    from fuzz.harness import compile_case
    p = tmp_path / "m.onnx"
    p.write_bytes(data)
    outcome, code, err = compile_case(p, tmp_path / "out")
    assert (outcome, code) == ("refused", 2), (outcome, code, err)
    return err


def test_onnx_graph_without_outputs_is_refused(tmp_path):
    """It compiled to C with zero-length arrays, which the strict build rejects."""
    from fuzz import onnx_hostile
    err = _onnx_refusal(tmp_path, onnx_hostile.cases()["qdq_conv-no_outputs"])
    assert "the graph has no outputs" in err


def test_onnx_maxpool_of_a_float_input_is_refused(tmp_path):
    """A MaxPool rewired to read the float graph input: an AttributeError (exit 3) before."""
    import onnx
    from fuzz import onnx_hostile
    m = onnx.ModelProto()
    m.ParseFromString(onnx_hostile.cases()["qdq_conv-valid"])
    m.graph.node.insert(0, onnx.helper.make_node("MaxPool", ["x"], ["xp"], kernel_shape=[1, 1]))
    m.graph.node[1].input[0] = "xp"  # the first DequantizeLinear now reads a float MaxPool
    err = _onnx_refusal(tmp_path, m.SerializeToString())
    assert "MaxPool of a" in err and "without quantization" in err


def test_onnx_pool_without_kernel_shape_is_refused(tmp_path):
    """A node mutated into an AveragePool without its kernel_shape: a KeyError (exit 3) before."""
    import onnx
    from fuzz import onnx_hostile
    m = onnx.ModelProto()
    m.ParseFromString(onnx_hostile.cases()["qdq_conv-valid"])
    conv = m.graph.node[3]
    conv.op_type = "AveragePool"
    del conv.input[1:]
    conv.ClearField("attribute")
    err = _onnx_refusal(tmp_path, m.SerializeToString())
    assert "kernel_shape" in err


# ---- issue 26: what the attacker trial compiled silently ----------------------------------

def test_fully_connected_on_a_constant_int32_input_is_refused(tmp_path):
    """A FULLY_CONNECTED reading an int32 tensor is refused by its constraints; with a constant
    int32 input it was folded into a copy instead (folding skipped the constraints)."""
    import numpy as np
    from edgecc.tflite_writer import ModelBuilder
    r = np.random.default_rng(1)
    mb = ModelBuilder()
    x0 = mb.tensor("x0", (1, 8), "int8", scale=0.05, zero_point=0)
    c = mb.const("c", r.integers(-5, 5, (1, 8)).astype(np.int32), scale=0.05)
    w = mb.const("w", r.integers(-127, 128, (4, 8)).astype(np.int8), scale=0.01)
    y = mb.tensor("y", (1, 4), "int8", scale=0.1, zero_point=2)
    y2 = mb.tensor("y2", (1, 4), "int8", scale=0.1, zero_point=2)
    mb.op("FULLY_CONNECTED", [c, w, -1], [y], {}, version=4)
    mb.op("ADD", [y, x0], [y2], {})
    r = _compile(tmp_path, mb.finish(inputs=[x0], outputs=[y2]))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "FULLY_CONNECTED at op 0" in r.stderr and "int8" in r.stderr
