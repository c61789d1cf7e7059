"""Firmware integration (DESIGN.md "Firmware integration (contract)"): `edgecc compile --emit
cmake|make|zephyr`, consumed by a project that knows only the contract, built with the real cmake
and make, run, and compared byte for byte with TFLite Micro."""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

from conftest import shared_model
from edgecc.cli import main
from edgecc.compiler import load_model
from edgecc.verify.harness import harness_c, parse_output
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
    assert "target_compile_options" not in text and "CMAKE_C_FLAGS" not in text


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
