"""Firmware integration (docs/design.md "Firmware integration (contract)"): `edgecc compile --emit
cmake|make|zephyr`, consumed by a project that knows only the contract, built with the real cmake
and make, run, and compared byte for byte with TFLite Micro."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import shared_model
from edgecc.options import CompileOptions
from edgecc.cli import main
from edgecc.compiler import load_model
from edgecc.build.harness import harness_c, parse_output
from edgecc.verify.reference import run_reference, seeded_inputs


def _sh(cmd: list[str], cwd: Path) -> str:
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{' '.join(cmd)}:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    return r.stdout


def _app(tmp_path: Path, model: Path, name: str, emit: list[str], seed: int = 0):
    """An app folder with the model compiled into app/model and a main that knows only NAME.h;
    returns (app folder, the reference outputs for the embedded inputs)."""
    app = tmp_path / "app"
    args = ["compile", str(model), "--name", name, "-o", str(app / "model")]
    for e in emit:
        args += ["--emit", e]
    assert main(args) == 0
    g = load_model(model)
    inputs = seeded_inputs(g, seed)
    (app / "main.c").write_text(harness_c(name, inputs, len(g.outputs)))
    ref, _ = run_reference(model, inputs, len(g.outputs))
    return app, ref


def _build_run_exact(app: Path, builds: list[list[str]], exe: Path,
                     ref: list[np.ndarray]) -> None:
    """Run the build commands in app, then exe, and compare its outputs with ref."""
    for cmd in builds:
        _sh(cmd, app)
    outs, _, done = parse_output(_sh([str(exe)], app))
    assert done and len(outs) == len(ref)
    for i, r in enumerate(ref):
        assert outs[i] == np.ascontiguousarray(r).tobytes(), f"output {i} differs"


def test_cmake_library_host_bit_exact(tmp_path):
    model = shared_model("kws_ref_model")
    app, ref = _app(tmp_path, model, "kws", ["cmake"])
    (app / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.13)\nproject(app C)\n"
        "add_subdirectory(model)\nadd_executable(app main.c)\n"
        "target_link_libraries(app PRIVATE kws)\n")
    _build_run_exact(app, [["cmake", "-S", ".", "-B", "build", "-DCMAKE_BUILD_TYPE=Release"],
                           ["cmake", "--build", "build"]], app / "build" / "app", ref)
    # the alias target names the same library
    text = (app / "model" / "CMakeLists.txt").read_text()
    assert "add_library(edgecc::kws ALIAS kws)" in text
    # flags only on the library itself (what the generated C needs, and -O2 when no level is
    # set), never on the firmware's other targets
    assert "target_compile_options(kws PRIVATE -ffp-contract=off)" in text
    assert "set(CMAKE_C_FLAGS" not in text and "\nadd_compile_options(" not in text


def test_make_fragment_host_bit_exact(tmp_path):
    model = shared_model("kws_ref_model")
    app, ref = _app(tmp_path, model, "kws", ["make"])
    (app / "Makefile").write_text(
        "include model/kws.mk\n"
        "app: main.c $(KWS_SRCS)\n"
        "\t$(CC) -O2 $(addprefix -I,$(KWS_INCLUDES)) main.c $(KWS_SRCS) -o $@\n")
    _build_run_exact(app, [["make", "-s"]], app / "app", ref)


def test_zephyr_module_files(tmp_path):
    model = shared_model("kws_ref_model")
    out = tmp_path / "m"
    assert main(["compile", str(model), "--name", "kws", "-o", str(out), "--emit", "zephyr"]) == 0
    yml = (out / "zephyr" / "module.yml").read_text()
    assert "name: edgecc_kws" in yml and "cmake: zephyr" in yml
    cm = (out / "zephyr" / "CMakeLists.txt").read_text()
    assert "zephyr_library_named(kws)" in cm and "../kws_weights.c" in cm
    assert not (out / "CMakeLists.txt").exists()  # only what was asked for


def test_emit_is_deterministic_and_board_support(tmp_path):
    model = shared_model("kws_ref_model")
    outs = []
    for k in range(2):
        out = tmp_path / f"o{k}"
        assert main(["compile", str(model), "--board", "mps2-an386", "--name", "kws", "-o",
                     str(out), "--emit", "cmake", "--emit", "make", "--emit", "zephyr"]) == 0
        outs.append({p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()})
    assert outs[0] == outs[1]
    names = {str(p) for p in outs[0]}
    assert {"toolchain-arm-none-eabi.cmake", "board/startup.c", "board/mps2-an386.ld",
            "kws.mk", "CMakeLists.txt"} <= names


def test_emit_bad_kind_exit_2(tmp_path, capsys):
    model = shared_model("kws_ref_model")
    try:
        rc = main(["compile", str(model), "-o", str(tmp_path / "o"), "--emit", "bazel"])
    except SystemExit as e:
        rc = e.code
    assert rc == 2
    assert capsys.readouterr().err.count("\n") == 1


# ------------------------------------------------------------------ firmware under QEMU

REPO = Path(__file__).resolve().parent.parent
FIRMWARE = REPO / "examples" / "firmware"


def _edgecc(args: list[str], cwd: Path) -> str:
    import os
    import sys
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-m", "edgecc", *args], cwd=cwd, capture_output=True,
                       text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.qemu
def test_example_firmware_ctest(tmp_path):
    """The README's three commands, in a copy of examples/firmware; a wrong expectation fails."""
    fw = tmp_path / "firmware"
    shutil.copytree(FIRMWARE, fw, ignore=shutil.ignore_patterns("model", "build"))
    shutil.copy(REPO / "examples" / "kws_int8.tflite", tmp_path / "kws_int8.tflite")
    _edgecc(["compile", "../kws_int8.tflite", "--board", "mps2-an386", "--name", "kws", "-o",
             "model", "--emit", "cmake"], fw)
    _sh(["sh", "-c", "cmake -S . -B build && cmake --build build"], fw)
    assert "100% tests passed" in _sh(["ctest", "--test-dir", "build", "--output-on-failure"], fw)
    # the check is real: another expected line fails the test
    (fw / "expected.txt").write_text("kws: class 99 scores 1\n")
    _sh(["cmake", "-S", ".", "-B", "build"], fw)
    r = subprocess.run(["ctest", "--test-dir", "build"], cwd=fw, capture_output=True, text=True)
    assert r.returncode != 0


def test_example_firmware_on_the_host(tmp_path):
    """examples/firmware/main.c (kws_reset, float features through kws_input0_quantize, the top
    score through kws_output0_dequantize) built for the host prints expected.txt's line."""
    fw = tmp_path / "firmware"
    shutil.copytree(FIRMWARE, fw, ignore=shutil.ignore_patterns("model", "build"))
    _edgecc(["compile", str(REPO / "examples" / "kws_int8.tflite"), "--target", "host", "--name",
             "kws", "-o", "model"], fw)
    main_c = (fw / "main.c").read_text()
    assert "kws_reset(arena);" in main_c and "kws_input0_quantize(" in main_c
    _sh(["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off", "-I",
         "model", "main.c", *sorted(f"model/{p.name}" for p in (fw / "model").glob("*.c")),
         "-o", "fw"], fw)
    assert _sh([str(fw / "fw")], fw) == (FIRMWARE / "expected.txt").read_text()


def test_example_firmware_input_reproduced(tmp_path):
    """make_input.py writes the committed input.h and expected.txt (TFLite Micro's output)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_input", FIRMWARE / "make_input.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.write(tmp_path)
    for f in ("input.h", "expected.txt"):
        assert (tmp_path / f).read_text() == (FIRMWARE / f).read_text(), f


TWO_MODELS_MAIN = """/* Two models, one shared arena of the larger size; they run in turn. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "kws.h"
#include "ad.h"
{decls}
#define ARENA_SIZE (KWS_ARENA_SIZE > AD_ARENA_SIZE ? KWS_ARENA_SIZE : AD_ARENA_SIZE)
static uint8_t arena[ARENA_SIZE] __attribute__((aligned(16), section(".bss.arena")));
static uint8_t kws_out[KWS_OUTPUT0_SIZE];

static void dump(int id, const uint8_t *p, unsigned n) {{
    unsigned i;
    printf("O %d %u ", id, n);
    for (i = 0; i < n; ++i) printf("%02x", p[i]);
    printf("\\n");
}}

int main(void) {{
    memcpy(kws_input(arena, 0), in_kws, KWS_INPUT0_SIZE);
    if (kws_run(arena) != 0) return 3;
    memcpy(kws_out, kws_output(arena, 0), KWS_OUTPUT0_SIZE);
    memcpy(ad_input(arena, 0), in_ad, AD_INPUT0_SIZE);
    if (ad_run(arena) != 0) return 3;
    dump(0, kws_out, KWS_OUTPUT0_SIZE);
    dump(1, (const uint8_t *)ad_output(arena, 0), AD_OUTPUT0_SIZE);
    printf("A %u\\n", (unsigned)sizeof arena);
    printf("D done\\n");
    return 0;
}}
"""


@pytest.mark.qemu
def test_two_models_one_firmware_shared_arena(tmp_path):
    """kws_ref_model and ad01_int8 in one CMake firmware for mps2-an386: no clashing symbols,
    one arena of the larger size, both outputs bit-exact with TFLite Micro under QEMU."""
    from edgecc.build.boards import load_board
    from edgecc.codegen import c_literal_list
    from edgecc.build.qemu import run_program
    fw = tmp_path / "fw"
    fw.mkdir()
    decls, refs, arenas = [], [], []
    for model, name in ((shared_model("kws_ref_model"), "kws"), (shared_model("ad01_int8"), "ad")):
        info = json.loads(_edgecc(["compile", str(model), "--board", "mps2-an386", "--name", name,
                                   "-o", name, "--emit", "cmake", "--json"], fw))
        arenas.append(info["arena_bytes"])
        g = load_model(model)
        x = seeded_inputs(g, 1)
        refs.append(run_reference(model, x, 1)[0][0])
        decls.append(f"static const int8_t in_{name}[] = {{ {c_literal_list(x[0])} }};")
    (fw / "main.c").write_text(TWO_MODELS_MAIN.format(decls="\n".join(decls)))
    (fw / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\n"
        "set(CMAKE_TOOLCHAIN_FILE ${CMAKE_CURRENT_SOURCE_DIR}/kws/toolchain-arm-none-eabi.cmake)\n"
        "project(two C)\nadd_subdirectory(kws)\nadd_subdirectory(ad)\n"
        "add_executable(fw main.c)\ntarget_link_libraries(fw PRIVATE kws ad)\n")
    _sh(["sh", "-c", "cmake -S . -B build && cmake --build build"], fw)
    text = run_program(fw / "build" / "fw", load_board("mps2-an386")).stdout
    outs, _, done = parse_output(text)
    assert done
    for i, r in enumerate(refs):
        assert outs[i] == np.ascontiguousarray(r).tobytes(), f"model {i} differs"
    assert f"A {max(arenas)}" in text


# ------------------------------------------------------------ inputs and outputs outside the arena

def _compile_json(model: Path, out: Path, *extra: str) -> dict:
    import contextlib
    import io as _io
    buf = _io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["compile", str(model), "-o", str(out), "--json", *extra]) == 0
    return json.loads(buf.getvalue())


def test_run_io_matches_run_in_arena_mode(tmp_path):
    """Default --io arena: NAME_run_io (copies in and out) gives NAME_run's bytes, TFLM's."""
    from edgecc.targets import get_target
    from edgecc.build.host import build_host, run_host
    model = shared_model("kws_ref_model")
    _compile_json(model, tmp_path / "gen", "--name", "kws")
    g = load_model(model)
    x = seeded_inputs(g, 3)
    ref, _ = run_reference(model, x, 1)
    for run_io in (False, True):
        h = tmp_path / f"h{int(run_io)}.c"
        h.write_text(harness_c("kws", x, 1, run_io=run_io))
        exe = build_host(tmp_path / "gen", h, tmp_path / f"p{int(run_io)}", get_target("host"), None)
        outs, _, done = parse_output(run_host(exe))
        assert done and outs[0] == ref[0].tobytes()


def test_io_external_bit_exact_and_smaller_arena(tmp_path):
    """--io external: the header has only NAME_run_io, the arena excludes the input and output
    (ad01_int8: 640 B each), and verify through NAME_run_io is bit-exact."""
    from edgecc.targets import get_target
    from edgecc.verify import verify_model
    model = shared_model("ad01_int8")
    a = _compile_json(model, tmp_path / "a", "--name", "ad")["arena_bytes"]
    e = _compile_json(model, tmp_path / "e", "--name", "ad", "--io", "external")["arena_bytes"]
    assert e < a
    h = (tmp_path / "e" / "ad.h").read_text()
    assert "#define AD_IO_EXTERNAL 1" in h and "ad_run_io(" in h and "int ad_run(uint8_t" not in h
    r = verify_model(model, get_target("host"), options=CompileOptions(io="external"))
    assert r.bit_exact and r.arena_bytes == e


def test_io_external_verify_kws_vww(tmp_path):
    """The two models the issue measures: bit-exact through NAME_run_io on the host."""
    for m in ("kws_ref_model", "vww_96_int8"):
        assert main(["verify", str(shared_model(m)), "--io", "external"]) == 0


@pytest.mark.qemu
def test_io_external_on_board(edgecc_run):
    """Through the pytest plugin's fixture: NAME_run_io under QEMU, bit-exact."""
    edgecc_run.assert_exact(shared_model("micro_speech_quantized"), board="mps2-an386",
                            io="external")


def test_manifest(tmp_path):
    """OUT/name.manifest.json: sha256, version, board, options, arena, per-layer rows; the same
    bytes on a second compile (test_emit_is_deterministic compares whole folders)."""
    import hashlib
    import edgecc
    model = shared_model("kws_ref_model")
    info = _compile_json(model, tmp_path / "o", "--board", "mps2-an386", "--name", "kws",
                         "--io", "external", "--emit", "make")
    m = json.loads((tmp_path / "o" / "kws.manifest.json").read_text())
    assert m["model_sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    assert m["edgecc_version"] == edgecc.__version__
    assert (m["board"], m["target"], m["name"]) == ("mps2-an386", "cortex-m4", "kws")
    assert m["options"]["io"] == "external" and m["options"]["emit"] == ["make"]
    assert m["arena_bytes"] == info["arena_bytes"] and m["io_external"]
    assert m["layers"][0]["op"] == "CONV_2D" and m["layers"][0]["macs"] > 0
    assert m["macs"] == sum(x["macs"] for x in m["layers"])
    assert any(x["scratch_bytes"] for x in m["layers"])
    # flash from the board's objects: code plus constants, at least the weights
    assert m["flash"]["total_bytes"] == m["flash"]["code_bytes"] + m["flash"]["constant_bytes"]
    assert m["flash"]["constant_bytes"] >= m["weights_bytes"] and m["flash"]["code_bytes"] > 0
    _compile_json(model, tmp_path / "h", "--name", "kws")
    assert json.loads((tmp_path / "h" / "kws.manifest.json").read_text())["flash"] is None


def _reshape_only(path: Path, with_relu: bool) -> None:
    """x int8[1, 4, 4] -> RESHAPE -> [1, 16] (-> RELU): without the RELU the output IS the
    input's bytes."""
    from edgecc.tflite_writer import ModelBuilder
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 4, 4), "int8", scale=0.1, zero_point=0)
    shape = mb.const("shape", np.array([1, 16], np.int32))
    flat = mb.tensor("flat", (1, 16), "int8", scale=0.1, zero_point=0)
    mb.op("RESHAPE", [x, shape], [flat], {"new_shape": [1, 16]})
    out = flat
    if with_relu:
        out = mb.tensor("y", (1, 16), "int8", scale=0.1, zero_point=0)
        mb.op("RELU", [flat], [out])
    path.write_bytes(mb.finish([x], [out]))


def test_io_external_refuses_an_output_that_is_the_input(tmp_path, capsys):
    """An output that shares the input's bytes would need a copy: one line, exit 2. With a layer
    between them, the arena holds nothing at all but the input's alias is read in place."""
    from edgecc.targets import get_target
    from edgecc.verify import verify_model
    m = tmp_path / "r.tflite"
    _reshape_only(m, with_relu=False)
    assert main(["compile", str(m), "-o", str(tmp_path / "o"), "--io", "external"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--io external" in err
    _reshape_only(m, with_relu=True)
    r = verify_model(m, get_target("host"), options=CompileOptions(io="external"))
    assert r.bit_exact
