"""The fuzzer's file-system, board and signal half (issue 26): hostile board files never give a
traceback or a build file with injected text; links at every output path are never followed;
unusable output paths are one line; two compiles into one folder leave one whole output; SIGINT
at seeded random points of a compile leaves the old output or the new one, nothing temporary.

Board mutants: tests/fuzz/board_mutate.py (structured JSON mutants of the shipped boards and
byte mutants of their TOML). The default run holds a fast slice; `-m slow` the long one.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from edgecc.build.boards import load_board
from edgecc.build.cross import linker_script
from edgecc.build.firmware import board_files
from edgecc.errors import EdgeccError
from edgecc.fileio import check_relpath
from fuzz.board_mutate import board_mutants
from test_hostile_outputs import _big_model
from test_internal_errors import EXAMPLE, run_cli

REPO = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, PYTHONPATH=str(REPO))


def _rendered_ok(board) -> list[str]:
    """What is wrong with the build files of an accepted board (nothing: [])."""
    bad = []
    files = board_files(board, 4096)
    for rel in files:
        check_relpath(rel)
    tool = files["toolchain-arm-none-eabi.cmake"]
    for line in tool.splitlines():
        if line and not line.startswith("#") and not (line.startswith("set(")
                                                      and line.endswith(")")):
            bad.append(f"toolchain line {line!r}")
        if line.startswith("set(") and line.count('"') % 2:
            bad.append(f"toolchain quotes {line!r}")
    ld = linker_script(board, 4096)
    if "/DISCARD/" in ld or ld.count("/*") != ld.count("*/"):
        bad.append("linker script comments")
    for text in [tool, ld]:
        if any(ord(c) < 32 and c not in "\n\t" for c in text):
            bad.append("control character in a build file")
    return bad


def _board_case(tmp_path: Path, name: str, suffix: str, data: bytes) -> str | None:
    """None when the case is fine, else what went wrong."""
    p = tmp_path / f"b{suffix}"
    p.write_bytes(data)
    try:
        board = load_board(p)
    except EdgeccError as e:
        msg = str(e)
        return None if "\n" not in msg and len(msg) < 10_000 else f"{name}: multi-line {msg[:200]!r}"
    except BaseException as e:  # noqa: BLE001 - anything else is a traceback
        return f"{name}: {type(e).__name__}: {str(e)[:200]}"
    if not board.bare_metal:
        return None
    try:
        bad = _rendered_ok(board)
    except EdgeccError:
        return None
    except BaseException as e:  # noqa: BLE001
        return f"{name}: rendering: {type(e).__name__}: {str(e)[:200]}"
    return f"{name}: {bad}" if bad else None


def _run_board_mutants(tmp_path, seed: int, count: int) -> None:
    bad = [b for name, suffix, data in board_mutants(seed, count)
           if (b := _board_case(tmp_path, name, suffix, data))]
    assert not bad, "\n".join(bad[:20])


def test_board_mutants_fast(tmp_path):
    _run_board_mutants(tmp_path, seed=26, count=300)


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(4))
def test_board_mutants_slow(tmp_path, chunk):
    _run_board_mutants(tmp_path, seed=1000 + chunk, count=1500)


# ---- the file system


def _outputs(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file()}


def test_links_at_every_output_path_are_never_followed(tmp_path, capsys):
    argv = ["compile", EXAMPLE, "--board", "mps2-an386", "--emit", "cmake", "--emit", "zephyr",
            "--emit", "make", "--name", "m"]
    ref = tmp_path / "ref"
    code, _, err = run_cli(argv + ["-o", ref], capsys)
    assert code == 0, err
    files = _outputs(ref)
    folders = {str(Path(f).parent) for f in files} - {"."}
    assert folders  # board/, zephyr/ and the runtime's ISA folder
    out, victim, outside = tmp_path / "out", tmp_path / "victim", tmp_path / "outside"
    victim.write_text("precious")
    outside.mkdir()
    out.mkdir()
    for d in sorted(folders, key=len):
        if "/" not in d:
            (out / d).symlink_to(outside, target_is_directory=True)
    for f in files:
        if "/" not in f:
            (out / f).symlink_to(victim)
    code, _, err = run_cli(argv + ["-o", out], capsys)
    assert code == 0, err
    assert victim.read_text() == "precious" and list(outside.iterdir()) == []
    assert _outputs(out) == files
    assert not any(p.is_symlink() for p in out.rglob("*"))


@pytest.mark.parametrize("case", ["file-as-folder", "under-a-file", "link-to-folder"])
def test_unusable_output_paths_are_one_line(tmp_path, capsys, case):
    f = tmp_path / "f"
    f.write_text("x")
    out = {"file-as-folder": f, "under-a-file": f / "out", "link-to-folder": tmp_path / "l"}[case]
    if case == "link-to-folder":
        out.symlink_to(tmp_path, target_is_directory=True)
    code, _, err = run_cli(["compile", EXAMPLE, "-o", out], capsys)
    assert code == 2 and len(err.splitlines()) == 1 and err.startswith("edgecc: error: "), err
    assert f.read_text() == "x"


def test_read_only_output_folder_is_one_line(tmp_path, capsys):
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        code, _, err = run_cli(["compile", EXAMPLE, "-o", ro], capsys)
    finally:
        ro.chmod(0o700)
    assert code == 2 and len(err.splitlines()) == 1, err


def test_missing_folders_are_created(tmp_path, capsys):
    code, _, err = run_cli(["compile", EXAMPLE, "-o", tmp_path / "a" / "b" / "c"], capsys)
    assert code == 0, err
    assert (tmp_path / "a" / "b" / "c" / "model.h").is_file()


def _holds(now: dict, out: dict, old: dict | None = None) -> bool:
    """`now` is output `out` whole; any other entry is one a previous output left there (an
    output replaces the files it writes and leaves the folder's other entries alone)."""
    return (all(now.get(k) == v for k, v in out.items())
            and all(k in out or (old is not None and now[k] == old.get(k)) for k in now))


def _compile(model: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "edgecc", "compile", str(model), "--name",
                             "m", "-o", str(out)], env=ENV, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


def test_two_concurrent_compiles_into_one_folder(tmp_path):
    """Both finish, and the folder holds one of the two outputs, whole."""
    big = _big_model(tmp_path)
    solo = {}
    for model in (EXAMPLE, big):
        out = tmp_path / f"solo-{model.stem}"
        assert _compile(model, out).wait(timeout=300) == 0
        solo[model.stem] = _outputs(out)
    shared = tmp_path / "shared"
    for _ in range(2):
        procs = [_compile(m, shared) for m in (big, EXAMPLE)]
        assert [p.wait(timeout=300) for p in procs] == [0, 0]
        now = _outputs(shared)
        assert any(_holds(now, a, b) for a, b in [(solo["big"], solo["kws_int8"]),
                                                  (solo["kws_int8"], solo["big"])]), sorted(now)
        assert not [p for p in shared.iterdir() if p.name.startswith(".")]


def test_sigint_at_random_points_leaves_old_or_new(tmp_path):
    """SIGINT at seeded random moments of a compile over an earlier output: the folder holds the
    old output or the new one, never a mix, and nothing temporary."""
    big, out = _big_model(tmp_path), tmp_path / "out"
    assert _compile(EXAMPLE, out).wait(timeout=300) == 0
    old = _outputs(out)
    t0 = time.monotonic()
    assert _compile(big, tmp_path / "new").wait(timeout=300) == 0
    full = time.monotonic() - t0
    new = _outputs(tmp_path / "new")
    rng = np.random.default_rng(26)
    for k in range(6):
        p = _compile(big, out)
        time.sleep(full * float(rng.uniform(0.3, 1.1)))
        p.send_signal(signal.SIGINT)
        p.wait(timeout=300)
        now = _outputs(out)
        assert now == old or _holds(now, new, old), (k, sorted(now))
        assert not [q for q in out.iterdir() if q.name.startswith(".")]
        if now != old:
            assert _compile(EXAMPLE, out).wait(timeout=300) == 0


def test_board_names_in_the_output_stay_inside(tmp_path):
    for name in ("x", "a.b-c_d"):
        assert check_relpath(f"board/{name}.ld") == ["board", f"{name}.ld"]
    for rel in ("board/../../x.ld",):
        with pytest.raises(EdgeccError):
            check_relpath(rel)
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", load_board("nrf52840-dk").name)
