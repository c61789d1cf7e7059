"""The generated C builds whatever -O level a firmware uses: the Cortex-M4 DSP kernels' inline
assembly names up to 12 registers, which an unoptimized build cannot free, so -O0 takes their
ACLE-intrinsic twins (runtime_c/dsp/conv_2d.h). Known gap, not covered here: some Helium
(Cortex-M55) kernels' assembly fails to build at -O0/-Og/-O1/-Os (see the issue note)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import shared_model

M4 = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]


@pytest.mark.parametrize("model", ["vww_96_int8", "str_ww_ref_model", "ad01_int8"])
def test_cortex_m4_c_builds_at_every_opt_level(tmp_path, model):
    out = tmp_path / "gen"
    r = subprocess.run([sys.executable, "-m", "edgecc", "compile", str(shared_model(model)),
                        "--target", "cortex-m4", "--name", "m", "-o", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    for opt in ["-O0", "-Og", "-O1", "-Os", "-O3", "-O2 -fno-omit-frame-pointer"]:
        for src in sorted(out.glob("*.c")):
            b = subprocess.run(["arm-none-eabi-gcc", "-std=c99", *M4, *opt.split(), "-I", str(out),
                                "-c", str(src), "-o", str(tmp_path / "x.o")],
                               capture_output=True, text=True, timeout=120)
            assert b.returncode == 0, f"{model} {opt} {src.name}: {b.stderr[-800:]}"
