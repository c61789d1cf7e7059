"""The cores without DSP or FPU: cortex-m3 (Armv7-M) and cortex-m0plus (Armv6-M), portable
kernels, soft float, on QEMU mps2-an385 (a Cortex-M3; Armv6-M builds run on it unchanged, with
CCR.UNALIGN_TRP set so an unaligned access faults as on a Cortex-M0+).

Quick: one small model per target, bit-exact over 5 frames with an instruction count, and the
unaligned trap of the Armv6-M builds. Slow: every model of ../shared/models/tflite/ and
converter/ bit-exact over 5 frames on both targets, one test per model and target.
"""
from __future__ import annotations

import pytest

from conftest import MODELS, SHARED, shared_model
from edgecc.build.boards import default_board, load_board
from edgecc.build.cross import build_program
from edgecc.build.qemu import ProgramFault, run_program
from edgecc.targets import get_target
from edgecc.verify import verify_model

pytestmark = pytest.mark.qemu
TARGETS = ["cortex-m3", "cortex-m0plus"]
FRAMES = 5
CONVERTER = SHARED / "models" / "converter"
ALL = sorted([p for p in MODELS.glob("*.tflite")] + [p for p in CONVERTER.glob("*.tflite")])


def _check(path, target: str, frames: int = FRAMES):
    t = get_target(target)
    r = verify_model(path, t, board=default_board(target), seed=3, frames=frames)
    assert r.bit_exact, (r.oracle, r.mismatched_bytes, r.first_bad_layer)
    assert len(r.frames) == frames and all(f["bit_exact"] for f in r.frames)
    return r


def test_reference_boards():
    assert default_board("cortex-m3").name == "mps2-an385"
    b = default_board("cortex-m0plus")
    assert b.name == "mps2-an385-m0plus" and b.qemu_machine == "mps2-an385"
    assert "-mcpu=cortex-m0plus" in b.cflags and "-mfloat-abi=soft" in b.cflags


@pytest.mark.parametrize("target", TARGETS)
def test_small_model_exact_with_counts(target):
    r = _check(shared_model("hello_world_int8"), target)
    assert r.extra["board"] == default_board(target).name and r.extra["instructions"] > 0


@pytest.mark.parametrize("target", TARGETS)
def test_budget_on_reference_board(target):
    """budget builds and measures on both boards; Armv6-M's code is larger (no SMULL, Thumb-1)."""
    from edgecc.budget import budget_model
    rep = budget_model(shared_model("kws_ref_model"), default_board(target))
    fp = rep.footprint
    assert rep.as_json()["fits"] and 0 < fp.code < 40000 and 0 < fp.stack < 1024
    assert fp.ram == fp.arena + fp.stack


@pytest.mark.parametrize("board,faults", [("mps2-an385-m0plus", True), ("mps2-an385", False)])
def test_unaligned_word_load_faults_only_on_armv6m(tmp_path, board, faults):
    gen = tmp_path / "gen"
    gen.mkdir()
    src = tmp_path / "u.c"
    src.write_text("#include <stdint.h>\n"
                   "static uint8_t bytes[8] __attribute__((aligned(4))) = {1, 2, 3, 4, 5, 6, 7, 8};\n"
                   "volatile uintptr_t off = 1;\n"
                   "int main(void) {\n"
                   "    return (int)(*(volatile const uint32_t *)(bytes + off) != 0x05040302u);\n"
                   "}\n")
    b = load_board(board)
    prog = build_program(gen, [src], tmp_path / "u.elf", b, None, 16)
    if faults:
        with pytest.raises(ProgramFault, match="UNALIGNED"):
            run_program(prog, b, timeout=30)
    else:
        assert run_program(prog, b, timeout=30).returncode == 0  # read the bytes 2..5


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_every_model_exact_over_frames(path, target):
    _check(path, target)


def test_mul64_from_halves_is_exact(tmp_path):
    """ec_mul64's Armv6-M path (16-bit halves), built on the host: equal to the int64 product for
    the edge values and 2^21 pseudo-random pairs."""
    import subprocess
    from pathlib import Path
    rt = Path(__file__).resolve().parent.parent / "runtime_c"
    src = tmp_path / "m.c"
    src.write_text(
        '#include <stdio.h>\n#include "edgecc_rt.h"\n'
        "static const int32_t E[] = {0, 1, -1, 2, -2, 0x7FFF, 0x8000, 0xFFFF, 0x10000, -0x8000,\n"
        "    -0x8001, -0x10000, 0x7FFFFFFF, -0x7FFFFFFF, INT32_MIN, 0x40000000, 0x12345678};\n"
        "int main(void) {\n    uint32_t s = 12345u; long bad = 0; unsigned i, j;\n"
        "    for (i = 0; i < sizeof E / 4; ++i) for (j = 0; j < sizeof E / 4; ++j)\n"
        "        bad += ec_mul64(E[i], E[j]) != (int64_t)E[i] * E[j];\n"
        "    for (i = 0; i < (1u << 21); ++i) {\n"
        "        int32_t a, b;\n        s = s * 1664525u + 1013904223u; a = (int32_t)s;\n"
        "        s = s * 1664525u + 1013904223u; b = (int32_t)(s ^ (s >> 7));\n"
        "        bad += ec_mul64(a, b) != (int64_t)a * b;\n"
        "    }\n"
        '    printf("%ld\\n", bad);\n    return 0;\n}\n')
    exe = tmp_path / "m"
    subprocess.run(["gcc", "-O2", "-std=c99", "-Wall", "-Werror", "-DEDGECC_MUL_HALVES",
                    f"-I{rt}", str(src), "-o", str(exe)], check=True)
    assert subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout == "0\n"
