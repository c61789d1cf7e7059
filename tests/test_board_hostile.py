"""Issue 26's attacker trial on board files: a board is input like a model. Its name cannot leave
the output folder or inject CMake or linker-script text, its flags cannot reach a build file raw,
and the file itself is size-capped, nesting-bounded and must be a regular file
(edgecc/build/board_schema.py, edgecc/fileio.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from edgecc.build.board_schema import BOARD, MAX_BOARD_FILE_BYTES, Table
from edgecc.build.boards import load_board
from edgecc.errors import EdgeccError
from test_boards import NRF
from test_cli_hardening import _one_line
from test_internal_errors import EXAMPLE, run_cli

REPO = Path(__file__).resolve().parent.parent


def _board(tmp_path, text: str, name: str = "board.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _named(name: str) -> str:
    return NRF.replace('name = "my-board"', f"name = {json.dumps(name)}")


def test_board_name_cannot_leave_the_output_folder(tmp_path, capsys):
    """Case 2: name = "../../../../x" with --emit cmake wrote x.ld folders above -o."""
    deep = tmp_path / "a" / "b" / "c" / "d"
    deep.mkdir(parents=True)
    board = _board(tmp_path, _named("../../../../x"))
    code, _, err = run_cli(["compile", EXAMPLE, "--board", board, "--emit", "cmake",
                            "-o", deep / "out"], capsys)
    assert "board name" in _one_line(code, err)
    assert not list(tmp_path.rglob("x.ld"))


@pytest.mark.parametrize("name", [
    'x" )\nexecute_process(COMMAND touch /tmp/pwned)\nset(Y "',  # CMake injection
    "x */ /DISCARD/ : { *(*) } /* y",                           # closes the linker comment
    "sub/folder",                                               # sub-folders under OUT
    "x$(shell id)", "x;y", "x y", "x\x1b[2Jy", "x\u202ey", "", "." , "-rf",
])
def test_board_name_outside_the_safe_set_is_refused(tmp_path, capsys, name):
    """Case 3: the name reached the toolchain file and the linker script raw."""
    board = _board(tmp_path, _named(name))
    code, _, err = run_cli(["compile", EXAMPLE, "--board", board, "--emit", "cmake",
                            "-o", tmp_path / "out"], capsys)
    line = _one_line(code, err)
    assert "name" in line and str(board) in line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.ld"))


@pytest.mark.parametrize("flag", ['-O2" )\nexecute_process(COMMAND id)', "-D$(shell id)",
                                  "-Dx;y", "-march=a b", "O2", "-Wl,--script=/etc/x\\"])
def test_cflags_that_need_escaping_are_refused(tmp_path, flag):
    text = NRF.replace('target = "cortex-m4"', f'target = "cortex-m4"\ncflags = {json.dumps([flag])}')
    with pytest.raises(EdgeccError, match="compiler flag"):
        load_board(_board(tmp_path, text))


def test_safe_board_reaches_build_files_verbatim(tmp_path, capsys):
    board = _board(tmp_path, _named("my-board.v2_x"))
    code, _, err = run_cli(["compile", EXAMPLE, "--board", board, "--emit", "cmake",
                            "-o", tmp_path / "out"], capsys)
    assert code == 0, err
    assert (tmp_path / "out" / "board" / "my-board.v2_x.ld").is_file()


@pytest.mark.parametrize("text,suffix", [
    ("a = " + "[" * 100_000 + "]" * 100_000, ".toml"),
    ("[" * 100_000 + "]" * 100_000, ".json"),
    ('{"a": ' * 50_000 + "1" + "}" * 50_000, ".json"),
], ids=["toml-arrays", "json-arrays", "json-objects"])
def test_deeply_nested_board_file_is_one_line(tmp_path, capsys, text, suffix):
    """Case 8: a deeply nested TOML/JSON board file ended in a RecursionError."""
    board = _board(tmp_path, text, "deep" + suffix)
    code, _, err = run_cli(["compile", EXAMPLE, "--board", board, "-o", tmp_path / "o"], capsys)
    _one_line(code, err)


def test_huge_board_file_is_refused_before_reading(tmp_path, capsys):
    """Case 8: a 3 GB board file was read whole."""
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate(3 << 30)  # sparse: no disk used
    code, _, err = run_cli(["compile", EXAMPLE, "--board", big, "-o", tmp_path / "o"], capsys)
    assert f"over edgecc's limit of {MAX_BOARD_FILE_BYTES:,} bytes" in _one_line(code, err)


def test_fifo_board_file_is_refused(tmp_path):
    fifo = tmp_path / "b.toml"
    os.mkfifo(fifo)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    r = subprocess.run([sys.executable, "-m", "edgecc", "compile", str(EXAMPLE), "--board",
                        str(fifo), "-o", str(tmp_path / "o")], capture_output=True, text=True,
                       timeout=60, env=env)
    assert "not a regular file" in _one_line(r.returncode, r.stderr)


@pytest.mark.parametrize("edit,words", [
    (lambda t: t.replace('size = "1 MiB"', "size = 0x100000000"), "out of range"),
    (lambda t: t.replace("origin = 0x0", "origin = -1"), "out of range"),
    (lambda t: t.replace('size = "1 MiB"', "size = true"), "expected a size"),
    (lambda t: t + "[placement]\ncode = 3\n", "placement.code"),
    (lambda t: t + "[qemu2]\n", "unknown key 'qemu2'"),
    (lambda t: t.replace('kind = "flash"', 'kind = "flash"\nspeed = 3'), "memory[0]"),
    (lambda t: t.replace('kind = "flash"\n', ""), "memory[0].kind: required"),
    (lambda t: t.replace('target = "cortex-m4"\n', ""), "target: required"),
])
def test_schema_names_the_key(tmp_path, edit, words):
    with pytest.raises(EdgeccError) as e:
        load_board(_board(tmp_path, edit(NRF)))
    assert words in str(e.value) and "\n" not in str(e.value)


def test_every_shipped_board_key_is_declared():
    """The schema table is the whole board format: the shipped boards use only its keys."""
    import tomllib
    for p in sorted((REPO / "boards").glob("*.toml")):
        d = tomllib.loads(p.read_text())
        for k, v in d.items():
            assert k in BOARD, (p.name, k)
            spec = BOARD[k]
            if isinstance(spec, Table):
                for item in (v if spec.many else [v]):
                    assert set(item) <= set(spec.keys), (p.name, k, item)


def test_board_values_built_in_python_are_checked_where_rendered(tmp_path):
    """A Board built in Python (the API takes one) skips the file schema: the renderers of the
    toolchain file and the linker script check its strings again."""
    import dataclasses

    from edgecc.build.cross import linker_script
    from edgecc.build.firmware import board_files
    good = load_board("nrf52840-dk")
    for bad in (dataclasses.replace(good, name="../../x"),
                dataclasses.replace(good, cflags=('-O2" )\nexecute_process(COMMAND id)',))):
        with pytest.raises(EdgeccError):
            board_files(bad, 1024)
        with pytest.raises(EdgeccError):
            linker_script(bad, 1024)
