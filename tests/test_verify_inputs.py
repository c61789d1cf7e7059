"""`edgecc verify MODEL --inputs FILE`: the user's samples (.npy, .npz, folder of .npy), one build
and one QEMU boot for all of them, samples bit-exact, max |diff|, RMSE and cosine for float
outputs, --json; bad files are one line and exit 2."""
from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from conftest import shared_model
from edgecc.cli import main
from edgecc.verify.dataset import compare
from test_float_io import float_io_model


def _run(args: list[str]) -> tuple[int, str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(args)
    return rc, buf.getvalue()


@pytest.mark.qemu
def test_100_kws_samples_on_cortex_m4_one_boot(tmp_path):
    x = np.random.default_rng(7).integers(-128, 128, size=(100, 1, 49, 10, 1)).astype(np.int8)
    np.save(tmp_path / "kws.npy", x)
    rc, out = _run(["verify", str(shared_model("kws_ref_model")), "--target", "cortex-m4",
                    "--inputs", str(tmp_path / "kws.npy"), "--json"])
    r = json.loads(out)
    assert rc == 0 and r["bit_exact"]
    assert (r["samples"], r["samples_exact"], r["builds"]) == (100, 100, 1)
    assert r["outputs"][0]["max_abs_diff"] == 0


def test_npz_folder_and_float_data(tmp_path):
    """The three file kinds give the same samples; float data is quantized for an int8 input."""
    model = shared_model("kws_ref_model")
    x = np.random.default_rng(8).integers(-128, 128, size=(3, 1, 49, 10, 1)).astype(np.int8)
    np.savez(tmp_path / "s.npz", input_1=x)
    (tmp_path / "d").mkdir()
    for i in range(3):
        np.save(tmp_path / "d" / f"{i:02d}.npy", x[i])
    np.save(tmp_path / "f.npy", np.random.default_rng(9).standard_normal((2, 49, 10, 1)) * 30)
    for f, n in ((tmp_path / "s.npz", 3), (tmp_path / "d", 3), (tmp_path / "f.npy", 2)):
        rc, out = _run(["verify", str(model), "--inputs", str(f), "--json"])
        r = json.loads(out)
        assert rc == 0 and r["samples"] == n == r["samples_exact"], f


def test_float_outputs_rmse_cosine(tmp_path):
    model = tmp_path / "fio.tflite"
    model.write_bytes(float_io_model())
    x = np.random.default_rng(1).standard_normal((4, 1, 8, 8, 3)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    rc, out = _run(["verify", str(model), "--inputs", str(tmp_path / "x.npy"), "--json"])
    r = json.loads(out)
    assert rc == 0 and r["samples_exact"] == 4
    o = r["outputs"][0]
    assert o["dtype"] == "float32" and o["rmse"] == 0.0 and o["cosine_min"] == pytest.approx(1.0)
    rc, out = _run(["verify", str(model), "--inputs", str(tmp_path / "x.npy")])
    assert "RMSE" in out and "4/4 samples bit-exact" in out


def test_compare_metrics_detect_differences():
    ref = [[np.array([1.0, 0.0], np.float32)], [np.array([0.0, 2.0], np.float32)]]
    got = [[np.array([1.0, 0.0], np.float32).tobytes()], [np.array([0.0, 1.0], np.float32).tobytes()]]
    m = compare(got, ref)
    assert (m["samples"], m["samples_exact"], m["mismatched_samples"]) == (2, 1, [1])
    o = m["outputs"][0]
    assert o["max_abs_diff"] == 1.0 and o["rmse"] == pytest.approx(0.5)
    assert o["cosine_min"] == pytest.approx(1.0)  # same direction, other length


@pytest.mark.parametrize("make", ["shape", "kind", "missing"])
def test_bad_inputs_exit_2(tmp_path, capsys, make):
    f = tmp_path / "x.npy"
    if make == "shape":
        np.save(f, np.zeros((2, 7), np.int8))
    elif make == "kind":
        f = tmp_path / "x.txt"
        f.write_text("1 2 3")
    else:
        f = tmp_path / "nothing.npy"
    rc = main(["verify", str(shared_model("kws_ref_model")), "--inputs", str(f)])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err
