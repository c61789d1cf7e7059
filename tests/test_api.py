"""The Python API (edgecc.compile, edgecc.run) and the pytest plugin (the edgecc_run fixture),
end to end: host and QEMU runs bit-exact with TFLite Micro, frames, cached builds, a user's
three-line test run by pytest with the plugin loaded as an installed plugin is."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import edgecc
from conftest import shared_model
from edgecc.verify.reference import run_tflm

REPO = Path(__file__).resolve().parent.parent


def _x(seed: int, n: int | None = None) -> np.ndarray:
    shape = (1, 49, 10, 1) if n is None else (n, 1, 49, 10, 1)
    return np.random.default_rng(seed).integers(-128, 128, shape).astype(np.int8)


def test_compile_writes_the_folder(tmp_path):
    c = edgecc.compile(shared_model("kws_ref_model"), board="mps2-an386", name="kws",
                       output=tmp_path / "o", emit=("cmake",))
    assert c.plan.arena > 0
    for f in ("kws.c", "kws.h", "kws.manifest.json", "CMakeLists.txt", "board/startup.c"):
        assert (tmp_path / "o" / f).is_file(), f


@pytest.mark.qemu
def test_run_host_and_board_bit_exact_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("EDGECC_CACHE", str(tmp_path / "cache"))
    m = shared_model("kws_ref_model")
    x = _x(0)
    ref = run_tflm(m, [x], 1)[0][0]
    for kw in (dict(), dict(board="mps2-an386"), dict(target="cortex-m4", io="external")):
        out = edgecc.run(m, inputs=x, **kw)
        assert out[0].shape == (1, 12) and out[0].tobytes() == ref.tobytes(), kw
    runners = sorted((tmp_path / "cache" / "runners").iterdir())
    assert len(runners) == 3
    edgecc.run(m, inputs=_x(1), board="mps2-an386")  # another input: the same build
    assert sorted((tmp_path / "cache" / "runners").iterdir()) == runners


@pytest.mark.qemu
def test_run_frames(tmp_path):
    m = shared_model("kws_ref_model")
    xs = _x(2, 4)
    out = edgecc.run(m, board="mps2-an386", inputs=xs, frames=4)[0]
    assert out.shape == (4, 1, 12)
    for k in range(4):
        assert out[k].tobytes() == run_tflm(m, [xs[k]], 1)[0][0].tobytes()


def test_run_bad_inputs_is_an_edgecc_error():
    from edgecc.errors import EdgeccError
    m = shared_model("kws_ref_model")
    # named by the model's tensor name, not edgecc's internal value name
    with pytest.raises(EdgeccError, match=r"input 0 \('input_1'\): expected int8 \(or float"):
        edgecc.run(m, inputs=np.zeros((1, 48, 10), np.float32))
    with pytest.raises(EdgeccError, match=r"inputs are \['input_1'\]; unknown \['t0'\]"):
        edgecc.run(m, inputs={"t0": _x(0)})


def test_run_takes_float_data_and_tensor_names():
    """Float data for a quantized input is quantized as TFLite's QUANTIZE does (round half away
    from zero, saturate), by name or position; the outputs equal TFLite Micro's on those bytes."""
    m = shared_model("kws_ref_model")  # input_1: int8, scale 0.584703, zero point 83
    x = np.random.default_rng(3).uniform(-130, 100, (1, 49, 10, 1)).astype(np.float32)
    x[0, 0, :4, 0] = np.float32(0.584703) * np.float32([0.5, -0.5, 2.5, -300])  # near ties
    from edgecc.compiler import load_model
    from edgecc.numerics.io import HALF_AWAY, quantize
    t = load_model(m).type(load_model(m).inputs[0])
    q = quantize(x, t, HALF_AWAY)
    ref = run_tflm(m, [q], 1)[0][0]
    assert edgecc.run(m, inputs={"input_1": x})[0].tobytes() == ref.tobytes()
    assert edgecc.run(m, inputs=[x])[0].tobytes() == ref.tobytes()


USER_TEST = """
import numpy as np
MODEL = {model!r}
X = np.random.default_rng(0).integers(-128, 128, (1, 49, 10, 1)).astype(np.int8)

def test_kws(edgecc_run):
    scores = edgecc_run(MODEL, inputs=X)[0]
    assert scores.shape == (1, 12) and scores.argmax() == {best}

def test_exact(edgecc_run):
    edgecc_run.assert_exact(MODEL)
"""


@pytest.mark.qemu
def test_plugin_users_three_line_test(tmp_path):
    """A user's test file, run by pytest with the plugin loaded by name (as its pytest11 entry
    point loads it), on the board given by --edgecc-board; a wrong expectation fails."""
    m = shared_model("kws_ref_model")
    best = int(run_tflm(m, [_x(0)], 1)[0][0].argmax())
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    for expect, rc in ((best, 0), (best + 1, 1)):
        (tmp_path / "test_user.py").write_text(USER_TEST.format(model=str(m), best=expect))
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "edgecc.pytest_plugin",
                            "--edgecc-board", "mps2-an386", "-p", "no:cacheprovider",
                            "test_user.py"], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == rc, r.stdout[-2000:] + r.stderr[-2000:]
