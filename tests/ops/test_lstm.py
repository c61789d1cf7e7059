"""UNIDIRECTIONAL_SEQUENCE_LSTM (int8 x int8 -> int16 cell) against TFLite Micro.

Single-op models with random shapes and quantization (numpy reference and generated C, gcc and
clang, vs TFLM), the int16 sigmoid/tanh C helpers vs their numpy twins on every int16 input, and
the LSTM layers of the two shared LSTM models (numpy reference vs TFLM's tensor, then the whole
model through `verify`).
"""
from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, shared_model
from edgecc.frontends.tflite import load_tflite
from edgecc.interp import run_graph
from edgecc.ops import _lstm_math as lm
from edgecc.ops import failed_constraints
from edgecc.targets import get_target
from edgecc.tflite_writer import ModelBuilder
from edgecc.verify import verify_model
from edgecc.verify.reference import run_tflm, seeded_inputs
from opcheck import check_model, check_reference


def lstm_model(rng, batch: int, steps: int, inp: int, units: int, time_major: bool,
               cell_clip: float, cell_pow: int) -> bytes:
    mb = ModelBuilder()
    x_s = float(rng.uniform(0.01, 0.2))
    shape = (steps, batch, inp) if time_major else (batch, steps, inp)
    x = mb.tensor("x", shape, "int8", scale=x_s, zero_point=int(rng.integers(-128, 128)))
    h_s, h_zp = float(rng.uniform(0.004, 0.02)), int(rng.integers(-20, 21))

    def weights(name: str, cols: int) -> tuple[int, float]:
        s = float(rng.uniform(0.002, 0.03))
        w = rng.integers(-127, 128, (units, cols)).astype(np.int8)
        return mb.const(name, w, scale=s), s

    wx = [weights(f"wx{g}", inp) for g in "ifco"]
    wh = [weights(f"wh{g}", units) for g in "ifco"]
    biases = [mb.const(f"b{g}", rng.integers(-20000, 20000, units).astype(np.int32),
                       scale=x_s * s) for g, (_, s) in zip("ifco", wx)]
    h = mb.tensor("h", (batch, units), "int8", scale=h_s, zero_point=h_zp, variable=True)
    c = mb.tensor("c", (batch, units), "int16", scale=2.0 ** cell_pow, zero_point=0,
                  variable=True)
    y = mb.tensor("y", (*shape[:2], units), "int8", scale=h_s, zero_point=h_zp)
    ins = [x, *(t for t, _ in wx), *(t for t, _ in wh), -1, -1, -1, *biases, -1, -1, h, c,
           -1, -1, -1, -1]
    mb.op("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [y],
          {"fused_activation_function": 4, "cell_clip": cell_clip, "proj_clip": 0.0,
           "time_major": time_major})
    return mb.finish([x], [y])


@pytest.mark.parametrize("case", range(8))
def test_lstm_random(case):
    rng = np.random.default_rng(700 + case)
    check_model(lstm_model(rng, batch=int(rng.integers(1, 3)), steps=int(rng.integers(1, 6)),
                           inp=int(rng.integers(1, 20)), units=int(rng.integers(1, 12)),
                           time_major=case % 2 == 1,
                           cell_clip=[0.0, 3.0, 0.7, 10.0][case % 4],
                           cell_pow=[-11, -12, -15, -10][(case // 2) % 4]))


_HELPER_MAIN = r"""
#include <stdio.h>
#include "edgecc_lstm.h"
static const uint16_t tab[256] = { %TABLE% };
int main(void) {
    static const int32_t mults[] = { %MULTS% };
    static const int shifts[] = { %SHIFTS% };
    int32_t x; unsigned k;
    for (x = -32768; x <= 32767; ++x) printf("%d\n", ec_sigmoid16((int16_t)x, tab));
    for (k = 0; k < sizeof(mults) / sizeof(mults[0]); ++k)
        for (x = -32768; x <= 32767; ++x)
            printf("%d\n", ec_tanh16((int16_t)x, mults[k], shifts[k], tab));
    return 0;
}
"""


def test_activation_helpers_match_numpy_on_every_int16():
    powers = [-8, -11, -12, -13, -15, -18, 0]
    params = [lm.tanh_params(p) for p in powers]
    src = (_HELPER_MAIN.replace("%TABLE%", ", ".join(str(int(v)) for v in lm.SIGMOID_TABLE))
           .replace("%MULTS%", ", ".join(str(m) for m, _ in params))
           .replace("%SHIFTS%", ", ".join(str(s) for _, s in params)))
    with tempfile.TemporaryDirectory() as tmp:
        c = Path(tmp) / "t.c"
        c.write_text(src)
        exe = Path(tmp) / "t"
        subprocess.run(["gcc", "-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", "-pedantic",
                        "-I", str(REPO / "runtime_c"), str(c), "-o", str(exe)], check=True)
        got = np.array(subprocess.run([str(exe)], check=True, capture_output=True,
                                      text=True).stdout.split(), dtype=np.int64)
    x = np.arange(-32768, 32768, dtype=np.int64)
    want = np.concatenate([lm.sigmoid16(x)] + [lm.tanh16(x, m, s) for m, s in params])
    assert got.shape == want.shape
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"{bad.size} differ, first at {bad[0]}: C {got[bad[0]]} numpy {want[bad[0]]}"


def test_activation_shape():
    """Sanity of the numpy twins themselves: centre, monotonic, sigmoid(+-8) at the Q3.12 ends."""
    x = np.arange(-32768, 32768, dtype=np.int64)
    s = lm.sigmoid16(x)
    assert s[32768] == 16384 and np.all(np.diff(s) >= 0)
    assert (s[0], s[-1]) == (11, 32757)  # 32768 * sigmoid(-+8), rounded
    t = lm.tanh16(x, 3, 0)
    assert t[32768] == 0 and t.min() == -32767 and t.max() == 32767 and np.all(np.diff(t) >= 0)


@pytest.mark.parametrize("model", ["trained_lstm_int8", "micro_speech_lstm"])
def test_shared_model_lstm_layer_matches_tflm(model):
    path = shared_model(model)
    g = load_tflite(path)
    node = next(n for n in g.nodes if n.op == "UNIDIRECTIONAL_SEQUENCE_LSTM")
    out = int(node.outputs[0][1:])
    for seed in (0, 1):
        inputs = seeded_inputs(g, seed)
        _, ref = run_tflm(path, inputs, len(g.outputs), preserve=True, n_tensors=len(g.values))
        got = run_graph(g, inputs)[node.outputs[0]]
        np.testing.assert_array_equal(got.ravel(), ref[out].ravel())


@pytest.mark.parametrize("model", ["trained_lstm_int8", "micro_speech_lstm"])
def test_shared_model_verifies_on_host(model):
    r = verify_model(shared_model(model), get_target("host"), cc="clang", seed=3)
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)


def test_unsupported_lstm_variant_is_reported():
    """A peephole LSTM is refused with the constraint's message, not a traceback."""
    rng = np.random.default_rng(5)
    data = lstm_model(rng, 1, 2, 3, 4, False, 0.0, -12)
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.tflite"
        p.write_bytes(data)
        g = load_tflite(p)
        n = g.nodes[0]
        n.inputs[9] = n.inputs[13]  # pretend a peephole weight is present
        msgs = failed_constraints(g, n)
        assert any("peephole" in m for m in msgs), msgs


@pytest.mark.slow
@pytest.mark.parametrize("case", range(40))
def test_lstm_reference_sweep(case):
    """Wider shapes, clips and cell scales: numpy reference vs TFLM (the C follows the reference)."""
    rng = np.random.default_rng(5000 + case)
    data = lstm_model(rng, batch=int(rng.integers(1, 4)), steps=int(rng.integers(1, 8)),
                      inp=int(rng.integers(1, 40)), units=int(rng.integers(1, 20)),
                      time_major=bool(rng.integers(0, 2)),
                      cell_clip=float(rng.choice([0.0, 0.5, 1.0, 2.0, 8.0])),
                      cell_pow=int(rng.integers(-16, -7)))
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.tflite"
        p.write_bytes(data)
        check_reference(p, case)
