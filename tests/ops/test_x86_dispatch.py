"""x86 run-time ISA dispatch (runtime_c/x86/kernels.h, levels.h, names_l*.h, names_off.h, pass.h).

The x86-avx2 target's C compiles its kernels once per instruction-set level (AVX2, AVX-VNNI,
AVX-512 VNNI) and picks one at run time: the level each build reports on this CPU (gcc and
clang, capped by -DEDGECC_X86_MAX), the instructions each build holds, the AVX2-only fallback of a
dispatching binary under qemu-x86_64 -cpu max (AVX2, no AVX-512, no AVX-VNNI in QEMU 7.2's TCG),
bit-exact there on a shared model, and the names files listing exactly what the kernel headers
define, no C function name pasted together with ##.
Bit-exactness of every level on random layers and the shared models: test_x86*.py (their
_paths() force each level).
"""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from conftest import shared_model
from edgecc.resources import data_dir
from edgecc.targets import get_target
from edgecc.verify import verify_model
from edgecc.build.host import cpu_flags

RT = data_dir("runtime_c")
X86 = RT / "x86"
# the records the layers' calls name: defined once, never renamed per level
PUBLIC = {"ec_x86_rq", "ec_x86_band_512", "ec_x86_add_lin_geom", "ec_x86_add_exact_geom",
          "ec_x86_first_geom", "ec_x86_dw_geom", "ec_x86_dw3_geom",
          "ec_x86_pool_geom"}
NAMES = ("names_l0.h", "names_l1.h", "names_l2.h", "names_off.h")
MACHINERY = {"levels.h", "kernels.h", "pass.h", *NAMES}


def expected_names() -> list[str]:
    """Every ec_* identifier the kernel headers define: all those they mention, less the ones
    defined elsewhere (vec/common.h, edgecc_rt.h), their lower-case macros, the public records
    and ec_x86_level."""
    ids, macros = set(), set()
    for f in sorted(X86.glob("*.h")):
        if f.name in MACHINERY:
            continue
        s = f.read_text()
        ids |= set(re.findall(r"\bec_[a-z0-9_]+", s))
        macros |= set(re.findall(r"#define (ec_[a-z0-9_]+)", s))
    ext = set()
    for f in (RT / "vec" / "common.h", RT / "edgecc_rt.h"):
        ext |= set(re.findall(r"\bec_[a-z0-9_]+", f.read_text()))
    skip = ext | macros | PUBLIC | {"ec_x86_level"}
    return sorted(ids - skip)


def test_names_files_list_every_kernel_name():
    """Each level's names file renames every name the kernel headers define to NAME_l<level>,
    names_off.h undoes each; and no C function name is pasted together (##) anywhere in
    runtime_c/: each is greppable by its full name where it is defined and called."""
    want = expected_names()
    for level in (0, 1, 2):
        text = (X86 / f"names_l{level}.h").read_text()
        assert re.findall(rf"^#define (ec_[a-z0-9_]+) \1_l{level}$", text, re.M) == want, level
    assert re.findall(r"^#undef (ec_[a-z0-9_]+)$", (X86 / "names_off.h").read_text(), re.M) == want
    for h in sorted(RT.rglob("*.h")):
        for line in h.read_text().splitlines():
            # (pasting is left to local variables and macro names: ec_ / EC_ never touch ##)
            assert not re.search(r"(\bec_\w*##|##\w*_s8\b|\w##_l\d|##_base)", line), (h, line)


def _best() -> int:
    """2 when this CPU has AVX-512 F, BW, VL and VNNI, else 0 (AVX-VNNI: see _builds_avx_vnni)."""
    return 2 if {"avx512f", "avx512bw", "avx512vl", "avx512_vnni"} <= cpu_flags() else 0


def _builds_avx_vnni(cc: str) -> bool:
    """Whether runtime_c/x86/levels.h compiles the AVX-VNNI level with cc (gcc 12, clang 16)."""
    major = int(subprocess.run([cc, "-dumpversion"], capture_output=True, text=True,
                               check=True).stdout.split(".")[0])
    return major >= (16 if cc == "clang" else 12)


PROBE = """#include <stdio.h>
#include "x86/kernels.h"
int main(void) { printf("%d\\n", ec_x86_level()); return 0; }
"""


def _build(tmp_path, cc: str, flags: tuple, name: str):
    src = tmp_path / "probe.c"
    src.write_text(PROBE)
    exe = tmp_path / name
    subprocess.run([cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", *flags, f"-I{RT}",
                    str(src), "-o", str(exe)], check=True, timeout=300)
    return exe


def _level(cmd) -> int:
    return int(subprocess.run(cmd, capture_output=True, text=True, check=True,
                              timeout=120).stdout)


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_level_chosen_at_run_time(cc, tmp_path):
    """-mavx2 -mfma runs this CPU's best level of those compiled (AVX2, AVX-512 VNNI; AVX-VNNI
    when EDGECC_X86_MAX is 1); EDGECC_X86_MAX caps it; the x86-avx512 flags fix level 2 at
    compile time."""
    if "avx2" not in cpu_flags():
        pytest.skip("this CPU has no AVX2")
    base = get_target("x86-avx2").cflags
    cpu = cpu_flags()
    runs = {0} | ({1} if "avx_vnni" in cpu and _builds_avx_vnni(cc) else set()) \
        | ({2} if _best() == 2 else set())
    for cap in (None, 1, 0):
        flags = base + ((f"-DEDGECC_X86_MAX={cap}",) if cap is not None else ())
        # AVX-VNNI is compiled only when the cap is 1 (runtime_c/x86/levels.h)
        want = max(lv for lv in runs if (cap is None or lv <= cap) and (lv != 1 or cap == 1))
        assert _level([str(_build(tmp_path, cc, flags, f"p{cap}"))]) == want, (cc, cap)
    if 2 in runs:
        exe = _build(tmp_path, cc, get_target("x86-avx512").cflags, "p512")
        assert _level([str(exe)]) == 2


def _zmm_and_vnni(obj) -> tuple[bool, bool]:
    text = subprocess.run(["objdump", "-d", str(obj)], capture_output=True, text=True,
                          check=True).stdout
    return "zmm" in text, "vpdpbusd" in text


def test_each_build_holds_the_levels_it_may_run(tmp_path):
    """The dispatching build carries ZMM and VPDPBUSD code next to the AVX2 code; capped to 0
    it holds neither, capped to 1 VPDPBUSD on YMM only."""
    from edgecc.compiler import compile_model
    c = compile_model(shared_model("kws_ref_model"), get_target("x86-avx2"), "m")
    for name, text in c.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    base = get_target("x86-avx2").cflags
    got = {}
    for cap in (2, 1, 0):
        obj = tmp_path / f"m{cap}.o"
        subprocess.run(["gcc", "-std=c99", "-O1", *base, f"-DEDGECC_X86_MAX={cap}", "-c",
                        str(tmp_path / "m.c"), "-o", str(obj)], check=True, timeout=600)
        got[cap] = _zmm_and_vnni(obj)
    assert got == {2: (True, True), 1: (False, True), 0: (False, False)}


QEMU = "qemu-x86_64"


def test_dispatching_binary_on_an_avx2_only_cpu(tmp_path, monkeypatch):
    """qemu-x86_64 -cpu max (QEMU 7.2: AVX2, neither AVX-512 nor AVX-VNNI): the binary built with
    -mavx2 -mfma reports level 0 and runs kws_ref_model's AVX2 kernels bit-exact."""
    if shutil.which(QEMU) is None:
        pytest.fail(f"{QEMU} is not installed (apt-get install qemu-user)")
    exe = _build(tmp_path, "gcc", get_target("x86-avx2").cflags, "probe")
    if _level([QEMU, "-cpu", "max", str(exe)]) != 0:
        pytest.skip("this QEMU emulates AVX-VNNI or AVX-512: no AVX2-only CPU model")
    import edgecc.verify as verify_pkg  # verify_model runs the host build through its run_host

    def under_qemu(exe, timeout: float = 600.0) -> str:
        r = subprocess.run([QEMU, "-cpu", "max", str(exe)], capture_output=True, text=True,
                           timeout=timeout)
        assert r.returncode == 0, r.stderr[-500:]
        return r.stdout

    monkeypatch.setattr(verify_pkg, "run_host", under_qemu)
    r = verify_model(shared_model("kws_ref_model"), get_target("x86-avx2"), cc="gcc")
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)


def _calls(model: str) -> list[str]:
    """The x86 kernel entries the x86-avx2 C of a shared model (tflite/, or converter/ as
    'converter/NAME') calls."""
    from edgecc.compiler import compile_model
    folder, _, name = model.rpartition("/")
    path = shared_model(name) if not folder else \
        shared_model("hello_world_int8").parent.parent / folder / f"{name}.tflite"
    c = compile_model(path, get_target("x86-avx2"), "m")
    return re.findall(r"\b(ec_x86_[a-z0-9_]+)\(", c.files["m.c"])


def test_row_kinds_match_the_c_table():
    """edgecc/lower/vec/conv.py x512_kind names the row of runtime_c/x86/conv_2d_x512.h's EC_X86_KINDS_512
    whose tiles fit the band: its pixels, the sliding tile where the band slides, a last-block
    tile exactly when the padded channels are not whole main tiles, the fast output stage exactly
    for a fast requantization; vww_96_int8's calls name kinds of that table."""
    from edgecc.lower.vec.conv import x512_kind
    text = (X86 / "conv_2d_x512.h").read_text()
    tilings = re.findall(r"X\((K\d), (\d+), (\d+), (\w+), (\w+), ST\)", text)
    rows = {}
    for st, ks in re.findall(r"EC_X86_TILINGS_512\(X, (\w+), ([\w,\s\\]+)\)", text):
        kinds = [int(k) for k in re.findall(r"ec_x86_conv_2d_k(\d+)_s8", ks)]
        if not kinds:  # (the macro's own definition)
            continue
        for k, p, step, main, rest in tilings:
            rows[kinds[int(k[1])]] = (int(p), int(step), main, rest, st)
    assert sorted(rows) == list(range(16))
    for p, slide in ((16, 0), (16, 1), (8, 0), (8, 1), (4, 0)):
        for ocp in (8, 16, 24, 32, 48, 64, 72, 96, 128):
            for fast in (0, 1):
                n = x512_kind([p, 0, 0, 64, 8, slide], ocp, fast)
                kp, step, main, rest, st = rows[n]
                why = (p, slide, ocp, fast, n)
                assert kp == p, why
                assert bool(re.search(r"ec_x86_s[12]_512", main + rest)) == bool(slide), why
                assert (rest != "0") == (step == 0 or ocp % step != 0), why
                assert ("ec_x86_stf_512" if fast else "ec_x86_stx_512") in st, why
    assert x512_kind([0, 0, 0, 0, 0, 0], 16) == 16
    kinds = {int(k) for k in re.findall(r"ec_x86_conv_2d_k(\d+)_s8\(", " ".join(
        f"{c}(" for c in _calls("vww_96_int8")))}
    assert kinds and kinds <= set(range(17)), kinds


def test_small_model_convolutions_run_the_build_level():
    """cv_conv1d (129K MACs) calls its convolutions' _base entries, str_ww_ref_model (826K) the
    dispatching ones; ad01_int8 (264K MACs, fully connected) keeps the dispatching entries for its
    layers of 8192 MACs or more."""
    conv = [c for c in _calls("converter/cv_conv1d") if "conv" in c]
    assert conv and all(c.endswith("_base") for c in conv), conv
    conv = [c for c in _calls("str_ww_ref_model") if "conv" in c]
    assert conv and not all(c.endswith("_base") for c in conv), conv
    fc = [c for c in _calls("ad01_int8") if "fully_connected" in c]
    assert any(not c.endswith("_base") for c in fc), fc


def test_convolutions_of_few_weights_run_the_build_level():
    """cv_autoenc (6.1M MACs on 3.5 KB of constants) calls its convolutions' _base entries: their
    level-2 code would outweigh its weights (edgecc/lower/x86/dispatch.py DISPATCH_MODEL_BYTES); cv_dscnn
    (6.6 KB) dispatches."""
    conv = [c for c in _calls("converter/cv_autoenc") if "conv" in c]
    assert conv and all(c.endswith("_base") for c in conv), conv
    conv = [c for c in _calls("converter/cv_dscnn") if "conv" in c]
    assert conv and not all(c.endswith("_base") for c in conv), conv


def test_large_adds_dispatch():
    """pretrainedResnet_quant's ADDs of 16K and 8K elements call the dispatching entry
    (edgecc/lower/x86/dispatch.py DISPATCH_ADD), its 4K one the build flags' level."""
    adds = [c for c in _calls("pretrainedResnet_quant") if c.startswith("ec_x86_add_")]
    assert len(adds) == 3 and [c.endswith("_base") for c in adds] == [False, False, True], adds


def test_each_layer_carries_its_weights_once():
    """The x86-avx2 C of vww_96_int8 (3x3 depthwise layers wide and narrow, 8 to 112 channels, a
    first convolution) holds each layer's weights and constants in one layout for all levels:
    the 64-channel VPDPBUSD blocks build their quads from the int16 pairs and reorder the
    channel-order constants themselves, narrow rows run the 3x3 kernel alone, and the first
    convolution's AVX2 level widens its quads (no int16 copy)."""
    from edgecc.compiler import compile_model
    c = compile_model(shared_model("vww_96_int8"), get_target("x86-avx2"), "m")
    kinds = {}
    for layer, key in re.findall(r"\bm_l(\d+)_(\w+)\[", c.files["m_weights.c"]):
        kinds.setdefault(key, set()).add(int(layer))
    assert set(kinds) <= {"w", "wq", "bias", "bias_u", "bias_x", "mult", "right", "left", "c64",
                          "zrow"}, sorted(kinds)
    assert kinds.get("wq") == {0}, kinds.get("wq")  # the first convolution's quads only
    calls = _calls("vww_96_int8")
    assert any("3x3" in f for f in calls) and not any("taps" in f for f in calls), calls


def test_narrow_depthwise_kernel_follows_the_model_weights():
    """Narrow 3x3 depthwise layers (kws_ref_model's 5 columns) run the 3x3 row kernel, whose
    dispatching plan has AVX-512 blocks, in a model of 16 KB of constants or more (kws: 24 KB),
    and the taps kernel alone below that (cv_dscnn: 6.5 KB; edgecc/lower/vec/depthwise.py
    NARROW_DW3_MODEL_BYTES)."""
    kws = [c for c in _calls("kws_ref_model") if "depthwise" in c]
    assert kws and all("3x3" in c for c in kws), kws
    dscnn = [c for c in _calls("converter/cv_dscnn") if "depthwise" in c]
    assert dscnn and all("taps" in c for c in dscnn), dscnn
