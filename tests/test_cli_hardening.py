"""The command line under abuse (issue 13): MODEL that is not a regular file or too large, a
negative --seed, empty --board/-o, --name colliding with a runtime or C header or a C keyword,
symlinks in the output folder, control characters and huge names in error lines, --json errors."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from edgecc.diagnostics import MAX_LINE
from edgecc.tflite_writer import ModelBuilder
from edgecc.validate import limits
from test_internal_errors import EXAMPLE, run_cli

REPO = Path(__file__).resolve().parent.parent


def _one_line(code, err):
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("edgecc: error: "), err
    return lines[0]


def test_fifo_as_model_is_refused_without_reading(tmp_path):
    """A FIFO as MODEL hung forever (the read blocks): a subprocess with a timeout."""
    fifo = tmp_path / "m.tflite"
    os.mkfifo(fifo)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    r = subprocess.run([sys.executable, "-m", "edgecc", "compile", str(fifo), "-o",
                        str(tmp_path / "o")], capture_output=True, text=True, timeout=60, env=env)
    assert "not a regular file" in _one_line(r.returncode, r.stderr)


def test_dev_zero_as_model_is_refused(tmp_path, capsys):
    """/dev/zero as MODEL ended in a MemoryError traceback."""
    code, out, err = run_cli(["compile", "/dev/zero", "-o", tmp_path / "o"], capsys)
    assert "not a regular file" in _one_line(code, err)


def test_model_over_the_size_limit_is_refused_before_reading(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(limits, "MAX_MODEL_BYTES", 1000)
    code, out, err = run_cli(["compile", EXAMPLE, "-o", tmp_path / "o"], capsys)
    assert "over edgecc's limit of 1,000 bytes" in _one_line(code, err)


@pytest.mark.parametrize("argv,words", [
    (["verify", EXAMPLE, "--seed", "-1"], "--seed must be in [0, 2^32)"),
    (["compile", EXAMPLE, "--board", "", "-o", "OUT"], "--board must not be empty"),
    (["compile", EXAMPLE, "-o", ""], "-o must not be empty"),
    (["compile", EXAMPLE, "-o", "OUT", "--name", "edgecc_rt"], "runtime headers"),
    (["compile", EXAMPLE, "-o", "OUT", "--name", "EdgeCC-fixedpoint"], "runtime headers"),
    (["compile", EXAMPLE, "-o", "OUT", "--name", "edgecc_cortex_m_conv_2d"], "runtime headers"),
    (["compile", EXAMPLE, "-o", "OUT", "--name", "while"], "C keyword"),
    (["compile", EXAMPLE, "-o", "OUT", "--name", "stdint"], "shadows the system header"),
    (["compile", EXAMPLE, "-o", "OUT", "--name", "  "], "is empty"),
])
def test_bad_arguments_are_one_line(argv, words, tmp_path, capsys):
    argv = [str(tmp_path / "OUT") if a == "OUT" else a for a in argv]
    code, out, err = run_cli(argv, capsys)
    assert words in _one_line(code, err)
    assert not (tmp_path / "OUT").exists() and not Path("OUT").exists()


def test_never_writes_through_a_symlink_in_the_output_folder(tmp_path, capsys):
    out, victim = tmp_path / "out", tmp_path / "victim.txt"
    out.mkdir()
    victim.write_text("precious")
    (out / "m.h").symlink_to(victim)
    (out / "edgecc_rt.h").symlink_to(victim)
    code, _, err = run_cli(["compile", EXAMPLE, "-o", out, "--name", "m"], capsys)
    assert code == 0, err
    assert victim.read_text() == "precious"
    assert not (out / "m.h").is_symlink() and "#define M_ARENA_SIZE" in (out / "m.h").read_text()
    assert not (out / "edgecc_rt.h").is_symlink()


def _bad_model_named(tmp_path, name: str) -> Path:
    mb = ModelBuilder()
    x = mb.tensor(name, (1, 8), "int8", scale=0.05, zero_point=200)  # zero point out of int8
    y = mb.tensor("y", (1, 8), "int8", scale=0.05, zero_point=0)
    mb.op("RELU", [x], [y])
    p = tmp_path / "named.tflite"
    p.write_bytes(mb.finish([x], [y]))
    return p


def test_control_characters_never_reach_stderr(tmp_path, capsys):
    model = _bad_model_named(tmp_path, "evil\x1b[2J\x07name\r\nsecond line\x9b")
    code, out, err = run_cli(["compile", model, "-o", tmp_path / "o"], capsys)
    line = _one_line(code, err)
    assert "evil" in line and "name" in line and "zero point 200" in line
    assert not any(ord(c) < 32 or 127 <= ord(c) < 160 for c in line), repr(line)


def test_error_lines_are_capped(tmp_path, capsys):
    model = _bad_model_named(tmp_path, "n" * 10_000)
    code, out, err = run_cli(["compile", model, "-o", tmp_path / "o"], capsys)
    line = _one_line(code, err)
    assert len(line) <= MAX_LINE and line.endswith("...")


def test_json_errors_are_a_json_object_on_stdout(tmp_path, capsys):
    """`compile --json` on an error printed nothing on stdout."""
    model = _bad_model_named(tmp_path, "x")
    code, out, err = run_cli(["compile", model, "-o", tmp_path / "o", "--json"], capsys)
    line = _one_line(code, err)
    assert json.loads(out) == {"error": line[len("edgecc: error: "):]}
    code, out, err = run_cli(["compile", model, "--json"], capsys)  # argparse: -o missing
    assert code == 2 and "required" in json.loads(out)["error"]


def test_weights_are_not_needed_to_trip_the_name_checks(tmp_path, capsys):
    """--name is refused before the model is read (a missing model is not reported first)."""
    code, out, err = run_cli(["compile", tmp_path / "missing.tflite", "-o", tmp_path / "o",
                              "--name", "edgecc_log"], capsys)
    assert "runtime headers" in _one_line(code, err)


