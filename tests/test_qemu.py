"""Cross builds for boards and runs under QEMU: bit-exact outputs, exact and repeatable
instruction counts, faults and hangs reported as such, boards whose memory is too small.

Every test here really runs arm-none-eabi-gcc / clang / aarch64-linux-gnu-gcc and
qemu-system-arm / qemu-aarch64 (docs/toolchains.md); nothing is mocked."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import shared_model
from edgecc.build.boards import load_board
from edgecc.errors import EdgeccError
from edgecc.targets import get_target
from edgecc.verify import verify_model
from edgecc.build.cross import build_program
from edgecc.build.qemu import ProgramFault, ProgramTimeout, run_program, symbol_address

pytestmark = pytest.mark.qemu
REPO = Path(__file__).resolve().parent.parent
CORTEX_M = ["mps2-an386", "mps2-an500", "mps2-an505", "mps3-an547"]
REFERENCE = CORTEX_M + ["aarch64-linux"]
REAL = ["nrf52840-dk", "stm32f746-disco", "stm32l4r5-nucleo", "stm32h743-nucleo"]


def _program(tmp_path: Path, board_name: str, body: str, name: str = "p"):
    """A bare program (no model) with the given main, built for the board."""
    gen = tmp_path / "gen"
    gen.mkdir(exist_ok=True)
    src = tmp_path / f"{name}.c"
    src.write_text("#include <stdint.h>\n" + body)
    board = load_board(board_name)
    return build_program(gen, [src], tmp_path / f"{name}.elf", board, None, 16), board


def _verify(model: str, board: str, tmp_path: Path | None = None, cc: str | None = None, **kw):
    b = load_board(board)
    return verify_model(shared_model(model), get_target(b.target), cc=cc, board=b,
                        keep=tmp_path, **kw)


# --------------------------------------------------------------------- faults, crashes, hangs

@pytest.mark.parametrize("board", CORTEX_M)
def test_bus_fault_reports_cfsr_bfar_and_function(tmp_path, board):
    prog, b = _program(tmp_path, board, "int main(void) {\n"
                       "    volatile uint32_t *p = (volatile uint32_t *)0xF0000000u;\n"
                       "    *p = 1;\n    return (int)*p;\n}\n")
    with pytest.raises(ProgramFault) as e:
        run_program(prog, b, timeout=30)
    msg = str(e.value)
    assert "BusFault" in msg and "PRECISERR" in msg and "BFAR=0xf0000000" in msg, msg
    assert "in main" in msg and "\n" not in msg


def test_undefined_instruction_is_a_usage_fault(tmp_path):
    prog, b = _program(tmp_path, "mps2-an386", 'int main(void) { __asm volatile("udf #0"); '
                       "return 0; }\n")
    with pytest.raises(ProgramFault, match=r"UsageFault CFSR=0x00010000 \(UNDEFINSTR\)"):
        run_program(prog, b, timeout=30)


def test_aarch64_crash_is_reported_with_its_signal(tmp_path):
    prog, b = _program(tmp_path, "aarch64-linux", "volatile uintptr_t where = 16;\n"
                       "int main(void) {\n    *(volatile uint32_t *)where = 1;\n"
                       "    return 0;\n}\n")
    with pytest.raises(ProgramFault, match="crashed on QEMU user mode.*SIGSEGV"):
        run_program(prog, b, timeout=30)


@pytest.mark.parametrize("board", REFERENCE)
def test_hang_is_reported_as_a_timeout(tmp_path, board):
    prog, b = _program(tmp_path, board, "int main(void) {\n    volatile int x = 0;\n"
                       "    for (;;) ++x;\n    return 0;\n}\n")
    with pytest.raises(ProgramTimeout, match="no exit after 1.5 s"):
        run_program(prog, b, timeout=1.5)


def test_nonzero_exit_status_is_an_error(tmp_path):
    prog, b = _program(tmp_path, "mps2-an505", "int main(void) { return 7; }\n")
    with pytest.raises(EdgeccError, match="exited with status 7"):
        run_program(prog, b, timeout=30)


def test_instruction_count_is_exact(tmp_path):
    """One code, loop lengths from data: each 1000 iterations cost exactly the same count."""
    counts = []
    for n in (1000, 2000, 3000):
        prog, b = _program(tmp_path, "mps2-an386",
                           f"volatile uint32_t n = {n}u;\nint main(void) {{\n"
                           "    volatile uint32_t i;\n    for (i = 0; i < n; ++i) {}\n"
                           "    return 0;\n}\n", f"loop{n}")
        counts.append(run_program(prog, b, count=True).instructions)
    assert counts[2] - counts[1] == counts[1] - counts[0] > 0
    assert (counts[1] - counts[0]) % 1000 == 0


# ------------------------------------------------------------------------- verify on boards

def _check_counts_repeat(r, work: Path, board: str) -> None:
    """Re-run the two counting builds verify left behind: same counts, same difference."""
    b = load_board(board)
    c1 = run_program(work / "runs1.elf", b, count=True).instructions
    c2 = run_program(work / "runs2.elf", b, count=True).instructions
    assert c2 - c1 == r.extra["instructions"] > 0


@pytest.mark.parametrize("board", REFERENCE)
@pytest.mark.parametrize("model", ["hello_world_int8", "ad01_int8"])
def test_fc_models_bit_exact_on_reference_machines(tmp_path, model, board):
    r = _verify(model, board, tmp_path)
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)
    x = r.extra
    assert x["board"] == board and x["instructions"] > 0
    assert x["flash_bytes"] >= r.weights_bytes and x["ram_bytes"] >= r.arena_bytes
    _check_counts_repeat(r, tmp_path, board)


@pytest.mark.parametrize("board", REAL)
def test_ad01_bit_exact_on_real_boards(edgecc_run, board):
    """Through the pytest plugin's fixture, as a user's test would."""
    edgecc_run.assert_exact(shared_model("ad01_int8"), board=board)


@pytest.mark.parametrize("board", REAL)
def test_ad01_counts_on_real_boards_match_their_machine(tmp_path, board):
    r = _verify("ad01_int8", board, tmp_path)
    assert r.bit_exact and r.extra["board"] == board
    # Same core, same code: the count matches the board's QEMU reference machine.
    machine = load_board(board).qemu_machine
    ref = _verify("ad01_int8", machine)
    assert abs(r.extra["instructions"] - ref.extra["instructions"]) < 0.01 * ref.extra["instructions"]


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55", "aarch64"])
def test_clang_cross_builds(target):
    r = verify_model(shared_model("ad01_int8"), get_target(target), cc="clang")
    assert r.bit_exact and r.extra["instructions"] > 0
    assert "of a gcc build" in r.extra["stack_method"]


def test_arena_placed_in_second_region_when_first_is_too_small(tmp_path):
    text = (REPO / "boards" / "stm32h743-nucleo.toml").read_text()
    text = text.replace('size = "128 KiB"', 'size = "512"').replace('data = "DTCM"',
                                                                        'data = "AXI_SRAM"')
    p = tmp_path / "h7-small-dtcm.toml"
    p.write_text(text)
    b = load_board(p)
    r = verify_model(shared_model("ad01_int8"), get_target(b.target), board=b, keep=tmp_path / "w")
    assert r.bit_exact and r.arena_bytes > 512 and r.extra["arena_region"] == "AXI_SRAM"
    from elftools.elf.elffile import ELFFile
    with open(tmp_path / "w" / "runs1.elf", "rb") as f:
        sym = ELFFile(f).get_section_by_name(".symtab").get_symbol_by_name("arena")[0]
    assert 0x20100000 <= sym["st_value"] < 0x20100000 + 512 * 1024
    # The real board: the same arena fits its 128 KiB DTCM.
    assert _verify("ad01_int8", "stm32h743-nucleo").extra["arena_region"] == "DTCM"


def test_flash_too_small_fails_the_link_with_one_line(tmp_path):
    text = (REPO / "boards" / "nrf52840-dk.toml").read_text().replace('"1 MiB"', '"64 KiB"')
    p = tmp_path / "tiny.toml"
    p.write_text(text)
    r = subprocess.run([sys.executable, "-m", "edgecc", "verify", str(shared_model("ad01_int8")),
                        "--board", str(p)], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    assert "does not fit: FLASH (65536 B) overflowed by" in r.stderr


def test_cli_verify_json_adds_board_numbers():
    r = subprocess.run([sys.executable, "-m", "edgecc", "verify",
                        str(shared_model("hello_world_int8")), "--board", "nrf52840-dk", "--json"],
                       capture_output=True, text=True, cwd=REPO, timeout=600)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["bit_exact"] and d["board"] == "nrf52840-dk" and d["target"] == "cortex-m4"
    for k in ("instructions", "flash_bytes", "ram_bytes"):
        assert isinstance(d[k], int) and d[k] > 0, k


def test_profile_per_layer_is_repeatable():
    rows = [_verify("ad01_int8", "mps2-an500", profile=True).extra["profile"] for _ in range(2)]
    assert rows[0] == rows[1]
    assert [r["op"] for r in rows[0]] == ["FULLY_CONNECTED"] * 10
    assert all(r["instructions"] > 0 for r in rows[0])
    by = {r["layer"]: r["instructions"] for r in rows[0]}
    assert by[0] > 10 * by[4]  # 640x128 weights against 128x8
    assert sum(r["macs"] for r in rows[0]) == 264192
    assert all(r["kernel"].startswith("dsp-fc") for r in rows[0])  # the DSP table's FC entries


def test_profile_of_several_frames_is_the_first_frames():
    """A multi-frame harness calls NAME_run once per frame: the profile counts the first."""
    one = _verify("hello_world_int8", "mps2-an386", profile=True).extra["profile"]
    three = _verify("hello_world_int8", "mps2-an386", profile=True, frames=3).extra["profile"]
    assert one == three and len(one) == 3 and all(r["instructions"] > 0 for r in one)


def test_profile_marks_see_the_hook(tmp_path):
    prog, b = _program(tmp_path, "mps2-an386", "void hook(void) __attribute__((noinline));\n"
                       "void hook(void) { __asm volatile(\"\"); }\n"
                       "int main(void) { int i; for (i = 0; i < 5; ++i) hook(); return 0; }\n")
    r = run_program(prog, b, marks=[symbol_address(prog.elf, "hook")])
    steps = [b2 - a2 for (_, a2), (_, b2) in zip(r.marks, r.marks[1:])]
    assert len(r.marks) == 5 and len(set(steps)) == 1


# --------------------------------------------------------------- the done-criterion sweep

SWEEP_MODELS = ["kws_ref_model", "pretrainedResnet_quant", "ad01_int8", "micro_speech_quantized",
                "person_detect", "vww_96_int8"]


@pytest.mark.slow
@pytest.mark.parametrize("board", REFERENCE)
@pytest.mark.parametrize("model", SWEEP_MODELS)
def test_models_bit_exact_under_qemu(tmp_path, model, board):
    r = _verify(model, board, tmp_path)
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)
    _check_counts_repeat(r, tmp_path, board)
