"""`edgecc verify` picks its oracle: TFLite Micro by default, LiteRT BUILTIN_REF when TFLM cannot run
the model (an op it lacks, e.g. TILE), and a one-line error when that fallback is not installed.
Run through the real CLI as a subprocess.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from edgecc.tflite_writer import ModelBuilder

REPO = Path(__file__).resolve().parent.parent


def _edgecc(*args, extra_path: str = "") -> subprocess.CompletedProcess:
    path = os.pathsep.join(p for p in [extra_path, str(REPO), os.environ.get("PYTHONPATH", "")] if p)
    return subprocess.run([sys.executable, "-m", "edgecc", *map(str, args)], cwd=REPO,
                          env=dict(os.environ, PYTHONPATH=path), capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)


def _one_op(op: str, shape, out_shape, consts, options=None, version: int = 1) -> bytes:
    mb = ModelBuilder()
    x = mb.tensor("x", shape, "int8", scale=0.05, zero_point=-7)
    cs = [mb.const(f"c{k}", c) for k, c in enumerate(consts)]
    y = mb.tensor("y", out_shape, "int8", scale=0.05, zero_point=-7)
    mb.op(op, [x, *cs], [y], options or {}, version=version)
    return mb.finish([x], [y])


def _tile_model(tmp_path: Path) -> Path:
    p = tmp_path / "tile.tflite"
    p.write_bytes(_one_op("TILE", [2, 3, 1], [4, 3, 5], [np.array([2, 1, 5], np.int32)]))
    return p


def test_tile_model_verifies_against_litert(tmp_path):
    m = _tile_model(tmp_path)
    r = _edgecc("verify", m, "--target", "host", "--json")
    assert r.returncode == 0, (r.stdout, r.stderr)
    out = json.loads(r.stdout)
    assert out["oracle"] == "litert-builtin-ref"
    assert out["bit_exact"] and out["mismatched_bytes"] == 0
    human = _edgecc("verify", m, "--target", "host", "--seed", "3")
    assert human.returncode == 0, human.stderr
    assert "bit-exact" in human.stdout and "litert-builtin-ref" in human.stdout


def test_tflm_model_still_uses_tflm(tmp_path):
    m = tmp_path / "slice.tflite"
    m.write_bytes(_one_op("SLICE", [3, 4], [2, 3],
                          [np.array([1, 0], np.int32), np.array([2, 3], np.int32)], version=5))
    r = _edgecc("verify", m, "--target", "host", "--json")
    assert r.returncode == 0, (r.stdout, r.stderr)
    out = json.loads(r.stdout)
    assert out["oracle"] == "tflite-micro" and out["bit_exact"]


def test_missing_litert_is_one_line_error(tmp_path):
    # A package that shadows ai_edge_litert and fails to import, as if it were not installed.
    shadow = tmp_path / "shadow" / "ai_edge_litert"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('not installed')\n")
    r = _edgecc("verify", _tile_model(tmp_path), "--target", "host",
                extra_path=str(tmp_path / "shadow"))
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("edgecc: error: "), r.stderr
    assert "TFLite Micro cannot run" in lines[0] and "pip install 'edgecc[verify]'" in lines[0]
