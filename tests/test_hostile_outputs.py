"""Issue 26's attacker trial on the output side: a symlink planted where any verb writes is never
followed (report -o, plan --svg, inspect --dump-ir, verify --keep, budget --keep, compile -o into
a linked folder), every path stays inside the output folder, and an interrupted compile leaves the
old output or the new one (edgecc/fileio.py, the one output layer)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from edgecc import fileio
from edgecc.errors import EdgeccError
from test_cli_hardening import _one_line
from test_internal_errors import EXAMPLE, run_cli

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def victim(tmp_path):
    v = tmp_path / "victim.txt"
    v.write_text("precious")
    return v


def test_report_does_not_write_through_a_link(tmp_path, victim, capsys):
    out = tmp_path / "r.html"
    out.symlink_to(victim)
    code, _, err = run_cli(["report", EXAMPLE, "-o", out], capsys)
    assert "symbolic link" in _one_line(code, err)
    assert victim.read_text() == "precious"


def test_plan_svg_does_not_write_through_a_link(tmp_path, victim, capsys):
    out = tmp_path / "p.svg"
    out.symlink_to(victim)
    code, _, err = run_cli(["plan", EXAMPLE, "--svg", out], capsys)
    assert "symbolic link" in _one_line(code, err)
    assert victim.read_text() == "precious"


def test_plan_svg_replaces_its_file_atomically(tmp_path, capsys):
    out = tmp_path / "p.svg"
    out.write_text("old")
    code, _, err = run_cli(["plan", EXAMPLE, "--svg", out], capsys)
    assert code == 0, err
    assert out.read_text().startswith("<svg") or "<svg" in out.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["p.svg"]  # no temporary left


def test_dump_ir_replaces_a_planted_link(tmp_path, victim, capsys):
    d = tmp_path / "ir"
    d.mkdir()
    (d / "00_imported.txt").symlink_to(victim)
    code, _, err = run_cli(["inspect", EXAMPLE, "--dump-ir", d], capsys)
    assert code == 0, err
    assert victim.read_text() == "precious"
    assert not (d / "00_imported.txt").is_symlink()
    assert not [p for p in d.iterdir() if p.name.startswith(".")]


def test_compile_refuses_an_output_folder_that_is_a_link(tmp_path, capsys):
    target = tmp_path / "elsewhere"
    target.mkdir()
    out = tmp_path / "out"
    out.symlink_to(target)
    code, _, err = run_cli(["compile", EXAMPLE, "-o", out], capsys)
    assert "symbolic link" in _one_line(code, err)
    assert list(target.iterdir()) == []


def test_verify_keep_replaces_planted_links(tmp_path, victim, capsys):
    keep, elsewhere = tmp_path / "keep", tmp_path / "elsewhere"
    keep.mkdir()
    elsewhere.mkdir()
    (keep / "harness.c").symlink_to(victim)
    (keep / "gen").symlink_to(elsewhere)
    code, _, err = run_cli(["verify", EXAMPLE, "--keep", keep], capsys)
    assert code == 0, err
    assert victim.read_text() == "precious" and list(elsewhere.iterdir()) == []
    assert not (keep / "gen").is_symlink() and (keep / "gen" / "model.h").is_file()
    assert "harness" in (keep / "harness.c").read_text() or (keep / "harness.c").stat().st_size


@pytest.mark.skipif(not any((Path(p) / "arm-none-eabi-gcc").exists()
                            for p in os.environ.get("PATH", "").split(":")),
                    reason="arm-none-eabi-gcc")
def test_budget_keep_replaces_planted_links(tmp_path, victim, capsys):
    keep = tmp_path / "keep"
    keep.mkdir()
    for f in ("board.ld", "app_main.c", "board.map"):
        (keep / f).symlink_to(victim)
    code, _, err = run_cli(["budget", EXAMPLE, "--board", "mps2-an386", "--keep", keep], capsys)
    assert code in (0, 1), err
    assert victim.read_text() == "precious"
    assert not any((keep / f).is_symlink() for f in ("board.ld", "app_main.c"))


# ---- the output layer itself


def test_write_folder_refuses_paths_that_leave_the_folder(tmp_path):
    for rel in ("../x.ld", "board/../../x.ld", "/etc/x", "a//b", "a\\b", "./a", "a/\nb"):
        with pytest.raises(EdgeccError, match="would leave the output folder"):
            fileio.write_folder({rel: "x"}, tmp_path / "out")
    assert not (tmp_path / "x.ld").exists()
    assert list((tmp_path / "out").iterdir()) == []  # nothing committed, no staging left


def test_write_folder_replaces_links_inside_and_keeps_foreign_files(tmp_path, victim):
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "sub").symlink_to(elsewhere)
    (out / "a.h").symlink_to(victim)
    (out / "mine.txt").write_text("user's")
    fileio.write_folder({"a.h": "A", "sub/b.h": "B"}, out)
    assert victim.read_text() == "precious" and list(elsewhere.iterdir()) == []
    assert (out / "a.h").read_text() == "A" and (out / "sub" / "b.h").read_text() == "B"
    assert (out / "mine.txt").read_text() == "user's"
    assert sorted(p.name for p in out.iterdir()) == ["a.h", "mine.txt", "sub"]


def test_a_failed_write_leaves_the_old_output(tmp_path):
    out = tmp_path / "out"
    fileio.write_folder({"m.h": "old h", "m.c": "old c"}, out)

    class Boom(Exception):
        pass
    with pytest.raises(Boom):
        with fileio.staged_folder(out, "-o") as stage:
            (stage / "m.h").write_text("new h")
            raise Boom()
    assert (out / "m.h").read_text() == "old h"
    assert sorted(p.name for p in out.iterdir()) == ["m.c", "m.h"]


def test_keyboard_interrupt_removes_the_staging_folder(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        with fileio.staged_folder(out, "-o") as stage:
            (stage / "big.c").write_bytes(b"x" * 1000)
            raise KeyboardInterrupt
    assert list(out.iterdir()) == []


def test_write_file_refuses_a_folder_and_a_link(tmp_path, victim):
    link = tmp_path / "l"
    link.symlink_to(victim)
    with pytest.raises(EdgeccError, match="symbolic link"):
        fileio.write_file(link, "x", "-o")
    with pytest.raises(EdgeccError, match="is a folder"):
        fileio.write_file(tmp_path, "x", "-o")


def _big_model(tmp_path) -> Path:
    """A model whose C takes a while to write (about 3 MB of weights)."""
    import numpy as np

    from edgecc.tflite_writer import ModelBuilder
    mb, r = ModelBuilder(), np.random.default_rng(0)
    x = mb.tensor("x", (1, 1024), "int8", scale=0.05, zero_point=0)
    cur = x
    for i in range(3):
        w = mb.const(f"w{i}", r.integers(-127, 128, (1024, 1024)).astype(np.int8), scale=0.001)
        b = mb.const(f"b{i}", r.integers(-500, 500, 1024).astype(np.int32), scale=0.00005)
        y = mb.tensor(f"y{i}", (1, 1024), "int8", scale=0.05, zero_point=0)
        mb.op("FULLY_CONNECTED", [cur, w, b], [y], {}, version=4)
        cur = y
    p = tmp_path / "big.tflite"
    p.write_bytes(mb.finish([x], [cur]))
    return p


def _interrupt_when_writing(cmd, out: Path, env) -> None:
    """Run cmd, send SIGINT as soon as a hidden entry (a temporary file or the staging folder)
    appears in `out`: the moment the old write_files left a mix."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while proc.poll() is None:
        if any(p.name.startswith(".") for p in out.iterdir()):
            proc.send_signal(signal.SIGINT)
            break
        time.sleep(0.0005)
    proc.wait(timeout=120)


def test_sigint_during_compile_leaves_old_or_new_output(tmp_path):
    """Issue 26 case 6: SIGINT late in a compile over an earlier model's output left the new m.h
    and m.c, the old m_weights.c and a huge temporary file. Now: old or new, self-consistent,
    nothing temporary."""
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cmd = [sys.executable, "-m", "edgecc", "compile", "--name", "m", "-o", str(out)]
    subprocess.run(cmd + [str(EXAMPLE)], check=True, env=env, capture_output=True)
    old = {p.name: p.read_bytes() for p in out.iterdir()}
    big = _big_model(tmp_path)
    _interrupt_when_writing(cmd + [str(big)], out, env)
    now = {p.name: p.read_bytes() for p in out.iterdir()}
    assert sorted(now) == sorted(old)  # no temporary file or staging folder left
    assert now == old  # the signal came before the commit: the old output, whole


def test_sigterm_during_compile_leaves_the_old_output(tmp_path):
    """A cancelled CI job (SIGTERM) unwinds like SIGINT: the staging folder goes, the old output
    stays."""
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cmd = [sys.executable, "-m", "edgecc", "compile", "--name", "m", "-o", str(out)]
    subprocess.run(cmd + [str(EXAMPLE)], check=True, env=env, capture_output=True)
    old = {p.name: p.read_bytes() for p in out.iterdir()}
    proc = subprocess.Popen(cmd + [str(_big_model(tmp_path))], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while proc.poll() is None:
        if any(p.name.startswith(".") for p in out.iterdir()):
            proc.send_signal(signal.SIGTERM)
            break
        time.sleep(0.0005)
    proc.wait(timeout=120)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == old


def test_a_commit_that_cannot_finish_renames_nothing(tmp_path):
    """A folder where a file of the output goes is refused before the first rename: the old
    output stays whole."""
    out = tmp_path / "out"
    fileio.write_folder({"a.h": "old a", "z.h": "old z"}, out)
    (out / "m.c").mkdir()
    with pytest.raises(EdgeccError, match="is a folder where edgecc writes a file"):
        fileio.write_folder({"a.h": "new a", "m.c": "new", "z.h": "new z"}, out)
    assert (out / "a.h").read_text() == "old a" and (out / "z.h").read_text() == "old z"
    assert sorted(p.name for p in out.iterdir()) == ["a.h", "m.c", "z.h"]
