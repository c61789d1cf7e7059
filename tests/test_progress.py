"""Progress bars: on a terminal a bar (tqdm) on stderr; under --json or when piped nothing extra:
multi-model verify prints exactly one JSON object."""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from conftest import shared_model
from edgecc.progress import progress, wanted

REPO = Path(__file__).resolve().parent.parent


class _TTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bar_on_a_terminal_only(monkeypatch):
    monkeypatch.delenv("EDGECC_NO_PROGRESS", raising=False)
    tty = _TTY()
    assert list(progress(range(5), desc="models", stream=tty)) == list(range(5))
    assert "models" in tty.getvalue() and "/5 " in tty.getvalue()
    piped = io.StringIO()
    items = range(5)
    assert progress(items, stream=piped) is items and piped.getvalue() == ""
    assert progress(items, stream=tty, json_mode=True) is items
    assert not wanted(True, tty)
    monkeypatch.setenv("EDGECC_NO_PROGRESS", "1")
    assert progress(items, stream=tty) is items


def test_multi_model_verify_json_is_one_object_when_piped():
    models = [str(shared_model("ad01_int8")), str(shared_model("hello_world_int8")),
              str(REPO / "examples" / "kws_int8.tflite")]
    r = subprocess.run([sys.executable, "-m", "edgecc", "verify", *models, "--json"],
                       capture_output=True, text=True, cwd=REPO, timeout=600)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["bit_exact"] and [Path(m["model"]).name for m in d["models"]] == \
        [Path(m).name for m in models]
    assert r.stderr == ""
    r = subprocess.run([sys.executable, "-m", "edgecc", "verify", *models[:2]],
                       capture_output=True, text=True, cwd=REPO, timeout=600)
    assert r.returncode == 0 and r.stdout.count("bit-exact") == 2 and r.stderr == ""


def test_multi_model_verify_goes_on_after_a_bad_model(tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"not a model")
    r = subprocess.run([sys.executable, "-m", "edgecc", "verify", str(bad),
                        str(shared_model("ad01_int8")), "--json"],
                       capture_output=True, text=True, cwd=REPO, timeout=600)
    d = json.loads(r.stdout)
    assert r.returncode == 2 and "error" in d["models"][0] and d["models"][1]["bit_exact"]
