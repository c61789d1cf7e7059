"""The generated C builds whatever -O level a firmware uses: the Cortex-M4 DSP kernels' inline
assembly names up to 12 registers, which an unoptimized build cannot free, so -O0 takes their
ACLE-intrinsic twins (runtime_c/dsp/conv_2d.h, dsp/fully_connected_8u.h); the FULLY_CONNECTED
8-unit step needs all 14 registers and borrows r7 itself, so it also builds with a frame pointer.
gcc and clang; a compiler that hangs (gcc once spun for minutes on that step) fails here after
120 s. Known gap, not covered here: some Helium
(Cortex-M55) kernels' assembly fails to build at -O0/-Og/-O1/-Os (see the issue note)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import shared_model
from edgecc.boards import load_board
from edgecc.targets import get_target
from edgecc.verify import cross, verify_model

M4 = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]


@pytest.mark.parametrize("model,cc", [("vww_96_int8", "gcc"), ("str_ww_ref_model", "gcc"),
                                      ("ad01_int8", "gcc"), ("hello_world_int8", "gcc"),
                                      ("ad01_int8", "clang"), ("hello_world_int8", "clang")])
def test_cortex_m4_c_builds_at_every_opt_level(tmp_path, model, cc):
    out = tmp_path / "gen"
    r = subprocess.run([sys.executable, "-m", "edgecc", "compile", str(shared_model(model)),
                        "--target", "cortex-m4", "--name", "m", "-o", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    for opt in ["-O0", "-Og", "-O1", "-Os", "-O2", "-O3", "-O2 -fno-omit-frame-pointer"]:
        for src in sorted(out.glob("*.c")):
            cmd = [*cross.compile_command(load_board("mps2-an386"), cc), "-std=c99",
                   *opt.split(), "-I", str(out), "-c", str(src), "-o", str(tmp_path / "x.o")]
            try:
                b = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            except subprocess.TimeoutExpired:
                pytest.fail(f"{model} {opt} {src.name}: {cc} still running after 120 s")
            assert b.returncode == 0, f"{model} {opt} {src.name}: {b.stderr[-800:]}"


@pytest.mark.qemu
def test_cortex_m4_unoptimized_build_is_bit_exact(monkeypatch):
    """-O0 runs the C twins (ad01_int8: the FULLY_CONNECTED 8-unit step's), bit-exact under QEMU."""
    real = cross.compile_sources

    def at_o0(*args, **kw):
        return real(*args, **{**kw, "opt": "-O0"})

    monkeypatch.setattr(cross, "compile_sources", at_o0)
    b = load_board("mps2-an386")
    r = verify_model(shared_model("ad01_int8"), get_target(b.target), board=b, frames=2)
    assert r.bit_exact, r.first_bad_layer
    assert r.extra["instructions"] > 2 * 293_202, "not the -O0 build"  # -O2: 293,202
