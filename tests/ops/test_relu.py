"""RELU, RELU6 (vs TFLite Micro) and RELU_N1_TO_1 (vs TFLite's reference kernels: TFLM has none)."""
import tempfile
from pathlib import Path

import numpy as np
import pytest

from edgecc.compiler import compile_model
from edgecc.codegen import write_files
from edgecc.targets import get_target
from edgecc.tflite_writer import ModelBuilder
from edgecc.build.harness import harness_c, parse_output
from edgecc.build.host import build_host, run_host
from opcheck import check_model


def act_model(op, shape, dtype, in_q, out_q):
    mb = ModelBuilder()
    x = mb.tensor("x", shape, dtype, scale=in_q[0], zero_point=in_q[1])
    y = mb.tensor("y", shape, dtype, scale=out_q[0], zero_point=out_q[1])
    mb.op(op, [x], [y])
    return mb.finish([x], [y])


@pytest.mark.parametrize("op", ["RELU", "RELU6"])
@pytest.mark.parametrize("case", range(4))
def test_relu_int8_vs_tflm(op, case):
    rng = np.random.default_rng(case)
    in_q = (float(rng.uniform(0.005, 0.1)), int(rng.integers(-128, 128)))
    # case 0: equal parameters (a pure clamp); the others requantize (RELU) or ignore them (RELU6)
    out_q = in_q if case == 0 else (float(rng.uniform(0.005, 0.1)), int(rng.integers(-128, 128)))
    shape = tuple(int(s) for s in rng.integers(1, 9, size=int(rng.integers(1, 5))))
    check_model(act_model(op, shape, "int8", in_q, out_q), seeds=(0,),
                compilers=("gcc", "clang") if case < 2 else ("gcc",))


@pytest.mark.parametrize("op", ["RELU", "RELU6"])
def test_relu_int16_vs_tflm(op):
    check_model(act_model(op, (2, 5, 7), "int16", (0.0007, 0), (0.0011, 0)), seeds=(0,),
                compilers=("gcc",))


def _litert_ref(data: bytes, x: np.ndarray) -> np.ndarray:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    it = Interpreter(model_content=data,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"])


@pytest.mark.parametrize("in_q,out_q", [((0.02, -5), (0.01, 3)), ((0.004, 0), (0.004, 0)),
                                        ((0.05, 100), (0.003, -120))])
def test_relu_n1_to_1_vs_tflite_reference(in_q, out_q):
    """Every int8 input value, through numpy and through the generated C, vs TFLite."""
    data = act_model("RELU_N1_TO_1", (1, 256), "int8", in_q, out_q)
    x = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
    want = _litert_ref(data, x)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "m.tflite").write_bytes(data)
        c = compile_model(tmp / "m.tflite", get_target("host"), "m")
        from edgecc.interp import run_graph
        got_np = run_graph(c.imported, [x])[c.imported.outputs[0]]
        assert np.array_equal(got_np, want)
        write_files(c.files, tmp / "gen")
        (tmp / "h.c").write_text(harness_c("m", [x], 1))
        out = run_host(build_host(tmp / "gen", tmp / "h.c", tmp / "prog", get_target("host"), "gcc"))
        outs, _, done = parse_output(out)
        assert done and outs[0] == want.tobytes()
