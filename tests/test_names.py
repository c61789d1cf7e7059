"""--name may not make a NAME.h that shadows a header the generated C (or the firmware built with
-I OUT) can include: issue 26 case 4 (`--name features` broke glibc's <stdint.h>, `--name
xmmintrin` GCC's <emmintrin.h> on x86-avx2). The refused set is checked against the real include
closure of every toolchain installed here."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from edgecc.names import c_ident, model_name_problem
from test_internal_errors import EXAMPLE, run_cli

# toolchain -> (compiler, flags, headers the generated C includes on that target)
PORTABLE = ["stdint.h", "stddef.h", "string.h", "inttypes.h", "stdio.h", "stdlib.h"]
TOOLCHAINS = {
    "gcc-x86": ("gcc", ["-mavx2", "-mfma"], PORTABLE + ["immintrin.h"]),
    "clang-x86": ("clang", ["-mavx2", "-mfma"], PORTABLE + ["immintrin.h"]),
    "arm-m55": ("arm-none-eabi-gcc", ["-mcpu=cortex-m55", "-mfloat-abi=hard", "-mthumb"],
                PORTABLE + ["arm_acle.h", "arm_mve.h"]),
    "arm-m4": ("arm-none-eabi-gcc", ["-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16",
                                     "-mthumb"], PORTABLE + ["arm_acle.h"]),
    "aarch64": ("aarch64-linux-gnu-gcc", ["-march=armv8.2-a+dotprod"], PORTABLE + ["arm_neon.h"]),
    "clang-riscv": ("clang", ["--target=riscv64-unknown-elf", "-march=rv64gcv"],
                    ["riscv_vector.h", "stdint.h", "stddef.h"]),
}


def _flat_headers(cc: str, flags: list[str], headers: list[str], tmp: Path) -> set[str]:
    """Every header the toolchain reads for `headers`, as the flat names an -I folder can shadow
    (a header straight in one of its system include folders)."""
    src = tmp / "probe.c"
    src.write_text("".join(f"#include <{h}>\n" for h in headers))
    r = subprocess.run([cc, *flags, "-E", "-v", "-M", str(src)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"{cc} {' '.join(flags)} cannot preprocess: {r.stderr[-300:]}")
    dirs = re.search(r"#include <\.\.\.> search starts here:\n(.*?)End of search list",
                     r.stderr, re.S).group(1).split()
    dirs = {os.path.realpath(d) for d in dirs}
    deps = r.stdout.replace("\\\n", " ").split(":", 1)[1].split()
    return {Path(d).name for d in deps[1:]
            if os.path.realpath(os.path.dirname(d)) in dirs}


@pytest.mark.parametrize("chain", sorted(TOOLCHAINS))
def test_no_header_of_the_include_closure_can_be_a_name(chain, tmp_path):
    cc, flags, headers = TOOLCHAINS[chain]
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed")
    flat = _flat_headers(cc, flags, headers, tmp_path)
    assert "stdint.h" in flat or "riscv_vector.h" in flat, flat
    stems = {h[:-2] for h in flat if h.endswith(".h")}
    nameable = {s for s in stems if c_ident(s).lower() == s}  # NAME.h can only be an identifier
    allowed = sorted(s for s in nameable if model_name_problem(s) is None)
    assert not allowed, f"--name would shadow these {chain} headers: {allowed}"


@pytest.mark.parametrize("name", ["features", "xmmintrin", "emmintrin", "arm_math", "arm_neon",
                                  "riscv_vector", "cmsis_gcc", "core_cm4", "mm_malloc", "Features",
                                  "stdckdint", "time", "endian"])
def test_shadowing_names_are_refused(name, tmp_path, capsys):
    code, _, err = run_cli(["compile", EXAMPLE, "-o", tmp_path / "o", "--name", name], capsys)
    assert code == 2 and "shadows the system header" in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("name", ["kws", "model", "features_net", "my_arm", "timer", "core"])
def test_ordinary_names_pass(name):
    assert model_name_problem(name) is None
