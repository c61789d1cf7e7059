"""SVDF (int8 input/output, int8 or int16 time weights and state) against TFLite Micro.

Single-op models with random shapes, ranks, memory sizes, zero points and fused activations
(numpy reference and generated C, gcc and clang, vs TFLM), the SVDF layers of the shared keyword
model (numpy reference vs TFLM's tensors), and the whole model through `verify`.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

from conftest import shared_model
from edgecc.frontends.tflite import load_tflite
from edgecc.interp import run_graph
from edgecc.targets import get_target
from edgecc.tflite_writer import ModelBuilder
from edgecc.verify import verify_model
from edgecc.verify.reference import run_tflm, seeded_inputs
from opcheck import check_model, check_reference


def svdf_model(rng, batch: int, inp: int, units: int, rank: int, memory: int, state: str,
               act: int) -> bytes:
    mb = ModelBuilder()
    filters = units * rank
    x = mb.tensor("x", (batch, inp), "int8", scale=float(rng.uniform(0.01, 0.3)),
                  zero_point=int(rng.integers(-128, 128)))
    wf = mb.const("wf", rng.integers(-127, 128, (filters, inp)).astype(np.int8),
                  scale=float(rng.uniform(0.002, 0.02)))
    info = np.iinfo(state)
    wt_s = float(rng.uniform(0.002, 0.02)) if state == "int8" else float(rng.uniform(1e-5, 1e-4))
    wt = mb.const("wt", rng.integers(info.min + 1, info.max, (filters, memory)).astype(state),
                  scale=wt_s)
    st_s = float(rng.uniform(0.05, 0.5)) if state == "int8" else float(rng.uniform(1e-3, 1e-2))
    st_zp = int(rng.integers(-60, 60)) if state == "int8" else 0
    bias = mb.const("b", rng.integers(-5000, 5000, units).astype(np.int32),
                    scale=float(np.float32(st_s) * np.float32(wt_s)))
    st = mb.tensor("state", (batch, filters * memory), state, scale=st_s, zero_point=st_zp,
                   variable=True)
    y = mb.tensor("y", (batch, units), "int8", scale=float(rng.uniform(0.02, 0.3)),
                  zero_point=int(rng.integers(-128, 128)))
    mb.op("SVDF", [x, wf, wt, bias, st], [y], {"rank": rank, "fused_activation_function": act},
          version=3 if state == "int8" else 2)
    return mb.finish([x], [y])


@pytest.mark.parametrize("case", range(8))
def test_svdf_random(case):
    rng = np.random.default_rng(900 + case)
    check_model(svdf_model(rng, batch=int(rng.integers(1, 3)), inp=int(rng.integers(1, 24)),
                           units=int(rng.integers(1, 9)), rank=1 + case % 2,
                           memory=int(rng.integers(1, 9)),
                           state="int8" if case < 5 else "int16", act=[0, 1][case % 2]))


def test_svdf_state_wrap():
    """A state zero point far from 0 makes zp + activation leave int8; TFLM's store wraps."""
    rng = np.random.default_rng(31)
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 16), "int8", scale=0.2, zero_point=0)
    wf = mb.const("wf", rng.integers(-127, 128, (4, 16)).astype(np.int8), scale=0.02)
    wt = mb.const("wt", rng.integers(-127, 128, (4, 3)).astype(np.int8), scale=0.01)
    b = mb.const("b", np.zeros(4, np.int32), scale=float(np.float32(0.05) * np.float32(0.01)))
    st = mb.tensor("state", (1, 12), "int8", scale=0.05, zero_point=-100, variable=True)
    y = mb.tensor("y", (1, 4), "int8", scale=0.05, zero_point=0)
    mb.op("SVDF", [x, wf, wt, b, st], [y], {"rank": 1}, version=3)
    check_model(mb.finish([x], [y]), compilers=("gcc",))


def test_shared_keyword_model_svdf_layers_match_tflm():
    path = shared_model("keyword_scrambled_8bit")
    g = load_tflite(path)
    svdf = [n for n in g.nodes if n.op == "SVDF"]
    assert len(svdf) == 7
    inputs = seeded_inputs(g, 0)
    _, ref = run_tflm(path, inputs, len(g.outputs), preserve=True, n_tensors=len(g.values))
    env = run_graph(g, inputs)
    for n in svdf:
        v = n.outputs[0]
        np.testing.assert_array_equal(env[v].ravel(), ref[int(v[1:])].ravel(), err_msg=n.name)


def test_shared_keyword_model_verifies_on_host():
    r = verify_model(shared_model("keyword_scrambled_8bit"), get_target("host"), cc="clang",
                     seed=5)
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)


@pytest.mark.slow
@pytest.mark.parametrize("case", range(40))
def test_svdf_reference_sweep(case):
    """Wider shapes, ranks and memories: numpy reference vs TFLM (the C follows the reference)."""
    rng = np.random.default_rng(6000 + case)
    data = svdf_model(rng, batch=int(rng.integers(1, 4)), inp=int(rng.integers(1, 40)),
                      units=int(rng.integers(1, 12)), rank=int(rng.integers(1, 4)),
                      memory=int(rng.integers(1, 12)), state=["int8", "int16"][case % 2],
                      act=case % 4)
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.tflite"
        p.write_bytes(data)
        check_reference(p, case)
