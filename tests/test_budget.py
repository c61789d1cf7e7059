"""`edgecc budget`: flash and RAM of a model on a board from the linked program, limits, exit
codes, and the stack bound checked against a painted-stack measurement under QEMU."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import shared_model
from edgecc.build.boards import load_board
from edgecc.budget import budget_model
from edgecc.build.measure import ASM_PUSH_BYTES, map_contributions, stack_bound
from edgecc.build.qemu import painted_stack
from edgecc.compiler import compile_model
from edgecc.errors import EdgeccError
from edgecc.targets import get_target

REPO = Path(__file__).resolve().parent.parent


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "edgecc", "budget", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=600)


def test_vww_fits_nrf52840_and_not_32k_of_ram():
    model = str(shared_model("vww_96_int8"))
    ok = _cli(model, "--board", "nrf52840-dk")
    assert ok.returncode == 0, ok.stderr
    assert "fits" in ok.stdout and "% of board" in ok.stdout
    # --tiling off: without patch-based execution 32 KiB cannot hold vww's arena ...
    over = _cli(model, "--board", "nrf52840-dk", "--ram-limit", "32768", "--json", "--tiling",
                "off")
    assert over.returncode == 1, over.stderr
    d = json.loads(over.stdout)
    assert not d["fits"] and [o["what"] for o in d["over"]] == ["RAM"]
    assert d["over"][0]["by"] == d["ram_bytes"] - 32768 > 0
    human = _cli(model, "--board", "nrf52840-dk", "--ram-limit", "32768", "--tiling", "off")
    assert human.returncode == 1
    assert f"OVER: RAM needs {d['ram_bytes']:,} B, limit 32,768 B: over by " \
           f"{d['ram_bytes'] - 32768:,} bytes" in human.stdout
    # ... by default the budget switches it on (edgecc/plan/tiling.py) and the model fits
    tiled = _cli(model, "--board", "nrf52840-dk", "--ram-limit", "32768", "--json")
    assert tiled.returncode == 0, tiled.stdout + tiled.stderr
    assert json.loads(tiled.stdout)["ram_bytes"] <= 32768


def test_budget_numbers_add_up():
    b = load_board("stm32f746-disco")
    model = shared_model("ad01_int8")
    c = compile_model(model, get_target(b.target), "model")
    rep = budget_model(model, b)
    fp = rep.footprint
    assert fp.weights == c.weights_bytes  # every const array of NAME_weights.c, nothing else
    assert fp.arena == c.plan.arena and fp.data == fp.bss == 0  # no mutable statics
    assert 0 < fp.code < 20000 and 0 < fp.stack < 1024
    assert fp.flash == fp.code + fp.weights + fp.constants + fp.data
    assert fp.ram == fp.arena + fp.stack
    assert fp.program_flash > fp.flash and fp.program_ram > fp.ram  # + startup, libc, heap, stack
    j = rep.as_json()
    assert (j["flash_bytes"], j["ram_bytes"], j["fits"]) == (fp.flash, fp.ram, True)
    assert (j["flash"]["limit"], j["ram"]["limit"]) == (1 << 20, 320 << 10)


def test_flash_limit_and_tiny_flash_board(tmp_path):
    model = str(shared_model("ad01_int8"))
    r = _cli(model, "--board", "nrf52840-dk", "--flash-limit", "100000", "--json")
    d = json.loads(r.stdout)
    assert r.returncode == 1 and [o["what"] for o in d["over"]] == ["flash"]
    assert d["over"][0]["by"] == d["flash_bytes"] - 100000
    p = tmp_path / "tiny.toml"
    p.write_text((REPO / "boards" / "nrf52840-dk.toml").read_text().replace('"1 MiB"', '"64 KiB"'))
    r = _cli(model, "--board", str(p))
    assert r.returncode == 1 and "OVER: flash needs" in r.stdout and "limit 65,536 B" in r.stdout


def test_arena_that_fits_no_region_is_over(tmp_path):
    text = (REPO / "boards" / "stm32h743-nucleo.toml").read_text()
    p = tmp_path / "h7-tiny.toml"
    p.write_text(text.replace('size = "128 KiB"', 'size = "14 KiB"')
                 .replace('size = "512 KiB"', 'size = "1 KiB"'))
    rep = budget_model(shared_model("kws_ref_model"), load_board(p))
    whats = [o.what for o in rep.over]
    assert any(w.startswith("arena (no RAM region holds it; largest is") for w in whats), whats


def test_budget_errors_exit_2(tmp_path):
    r = _cli(str(shared_model("ad01_int8")), "--board", "no-such-board")
    assert r.returncode == 2 and "unknown board" in r.stderr and r.stderr.count("\n") == 1
    r = _cli(str(tmp_path / "missing.tflite"), "--board", "nrf52840-dk")
    assert r.returncode == 2 and "no such file" in r.stderr
    r = _cli(str(shared_model("ad01_int8")), "--board", "nrf52840-dk", "--ram-limit", "0")
    assert r.returncode == 2 and "must be positive" in r.stderr


def test_user_mode_board_has_no_limits():
    rep = budget_model(shared_model("hello_world_int8"), load_board("aarch64-linux"))
    assert rep.flash_limit is None and rep.ram_limit is None and not rep.over
    assert rep.footprint.weights > 0


def test_map_parser_reads_one_and_two_line_entries(tmp_path):
    m = tmp_path / "x.map"
    m.write_text("Memory Configuration\n\nLinker script and memory map\n\n"
                 ".text           0x00000000      0x200\n"
                 " .text.model_run\n                0x00000010       0x44 /w/model.o\n"
                 "                0x00000010                model_run\n"
                 " .text          0x00000054       0x10 /w/startup.o\n"
                 " *fill*         0x00000064        0x4 \n"
                 " .rodata.model_l0_w\n                0x00000068      0x100 /w/model_weights.o\n"
                 ".bss            0x20000000       0x20\n"
                 " COMMON         0x20000000       0x20 /w/app.o\n")
    assert map_contributions(m) == [(".text", ".text.model_run", 0x44, "/w/model.o"),
                                    (".text", ".text", 0x10, "/w/startup.o"),
                                    (".text", ".rodata.model_l0_w", 0x100, "/w/model_weights.o"),
                                    (".bss", "COMMON", 0x20, "/w/app.o")]


def test_stack_bound_follows_the_call_graph(tmp_path):
    ci = tmp_path / "m.ci"
    ci.write_text('graph: { title: "m.c"\n'
                  'node: { title: "m.c:layer" label: "layer\\nm.c:1:1\\n40 bytes (static)" }\n'
                  'node: { title: "memcpy" label: "__builtin_memcpy\\n<built-in>" shape : ellipse }\n'
                  'edge: { sourcename: "m.c:layer" targetname: "memcpy" }\n'
                  'node: { title: "m_run" label: "m_run\\nm.c:9:1\\n16 bytes (static)" }\n'
                  'edge: { sourcename: "m_run" targetname: "m.c:layer" }\n}\n')
    # external callee: 64-byte allowance; an asm statement's own pushes: ASM_PUSH_BYTES
    assert stack_bound([ci], "m_run") == 16 + 40 + 64 + ASM_PUSH_BYTES
    ci.write_text(ci.read_text().replace("16 bytes (static)", "16 bytes (dynamic)"))
    with pytest.raises(EdgeccError, match="dynamic stack"):
        stack_bound([ci], "m_run")


@pytest.mark.qemu
@pytest.mark.parametrize("board", ["mps2-an386", "mps3-an547", "aarch64-linux"])
@pytest.mark.parametrize("model", ["ad01_int8", "kws_ref_model"])
def test_stack_bound_covers_the_painted_stack(model, board):
    b = load_board(board)
    bound = budget_model(shared_model(model), b).footprint.stack
    used = painted_stack(shared_model(model), b)
    assert used <= bound <= used + 256, (used, bound)


def test_asm_pushes_fit_the_stack_allowance():
    """No inline asm of runtime_c/ pushes more than measure.ASM_PUSH_BYTES (gcc's frame sizes
    do not count a push inside an asm statement)."""
    import re
    root = Path(__file__).resolve().parent.parent / "runtime_c"
    pushes = [len(m.group(1).split(",")) * 4 for h in root.rglob("*.h")
              for m in re.finditer(r"push\s*\{([^}]*)\}", h.read_text())]
    assert pushes and max(pushes) <= ASM_PUSH_BYTES, pushes


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.parametrize("model", ["vww_96_int8", "person_detect", "pretrainedResnet_quant",
                                   "micro_speech_quantized"])
def test_stack_bound_covers_the_painted_stack_big_models(model):
    for board in ("mps2-an500", "mps2-an505", "aarch64-linux"):
        b = load_board(board)
        bound = budget_model(shared_model(model), b).footprint.stack
        used = painted_stack(shared_model(model), b)
        assert used <= bound <= used + 512, (board, used, bound)


# ---- compile --board checks the fit (docs/design.md "Firmware integration") -----------------

def _board(tmp_path: Path, ram: str, flash: str) -> Path:
    p = tmp_path / f"nrf-{ram}-{flash}.toml".replace(" ", "")
    p.write_text((REPO / "boards" / "nrf52840-dk.toml").read_text()
                 .replace('"1 MiB"', f'"{flash}"').replace('"256 KiB"', f'"{ram}"'))
    return p


def _compile(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "edgecc", "compile", *map(str, args)],
                          capture_output=True, text=True, cwd=REPO, timeout=600)


def test_compile_refuses_a_model_the_board_cannot_hold(tmp_path):
    """At a931260 this compiled with exit 0 (only budget said OVER): vww's untiled arena
    (42,432 B) on 32 KiB of RAM, its weights (68,856 B) on 64 KiB of flash. Now: exit 1,
    budget's OVER lines from the arena and the weights alone, nothing written."""
    model, out = shared_model("vww_96_int8"), tmp_path / "out"
    board = _board(tmp_path, "32 KiB", "64 KiB")
    r = _compile(model, "--board", board, "-o", out, "--tiling", "off")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "OVER: RAM needs at least 42,432 B, limit 32,768 B: over by at least 9,664 bytes" \
        in r.stdout and "OVER: flash needs at least 68,856 B, limit 65,536 B" in r.stdout
    assert not out.exists() and r.stderr == ""
    j = _compile(model, "--board", board, "-o", out, "--tiling", "off", "--json")
    d = json.loads(j.stdout)
    assert j.returncode == 1 and d["fits"] is False and d["files"] == []
    assert {"RAM", "flash"} <= {o["what"] for o in d["budget"]["over"]}
    r = _compile(model, "--board", board, "-o", out, "--tiling", "off", "--no-fit-check")
    assert r.returncode == 0 and (out / "model.h").is_file()


def test_compile_fit_check_measures_when_the_estimate_fits(tmp_path):
    """Weights 68,856 B fit 72 KiB of flash, the linked model (code too) does not: the measured
    verdict, as budget's; the same model fits the real board and says how well."""
    model = shared_model("vww_96_int8")
    r = _compile(model, "--board", _board(tmp_path, "256 KiB", "72 KiB"), "-o", tmp_path / "o")
    assert r.returncode == 1, r.stdout + r.stderr
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("OVER: flash"))
    assert "at least" not in line and "limit 73,728 B" in line
    b = _cli(str(model), "--board", str(_board(tmp_path, "256 KiB", "72 KiB")))
    assert line in b.stdout.splitlines()  # budget's own line
    ok = _compile(model, "--board", "nrf52840-dk", "-o", tmp_path / "ok", "--json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["fits"] is True


def test_budget_says_when_it_tiled_to_fit():
    """32 KiB of RAM: budget (and compile) tile vww by themselves; at a931260 nothing said so."""
    model = str(shared_model("vww_96_int8"))
    r = _cli(model, "--board", "nrf52840-dk", "--ram-limit", "32KiB")
    assert r.returncode == 0, r.stdout + r.stderr
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("tiled to fit"))
    assert "patches" in line and "instead of 42,432 B" in line and "--tiling off" in line
    d = json.loads(_cli(model, "--board", "nrf52840-dk", "--ram-limit", "32KiB", "--json").stdout)
    assert d["tiling"]["untiled_arena"] == 42432 and d["tiling"]["arena"] < 32768
    assert _cli(model, "--board", "nrf52840-dk", "--json").stdout.count('"tiling": null') == 1


def test_compile_on_a_board_without_sizes_has_nothing_to_check(tmp_path):
    r = _compile(shared_model("hello_world_int8"), "--board", "aarch64-linux", "-o", tmp_path / "o")
    assert r.returncode == 0 and "the board states no RAM or flash size" in r.stdout, r.stderr
