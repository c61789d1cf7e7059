"""Firmware for the real part (issue 27): what `edgecc compile --board B --emit cmake|make|zephyr`
writes, built the way a firmware engineer builds it (CMake and the generated toolchain file, no
build type), booted on QEMU and compared byte for byte with TFLite Micro.

- The device build of a board is its real memory map and a startup without semihosting; the
  qemu build is QEMU's map with semihosting (tests). netduinoplus2's QEMU machine emulates the
  STM32F405 with its vendor map: its device build boots there and prints through USART1.
- The library carries the flags the generated C needs (-ffp-contract=off) and -O2 when the
  firmware sets no level: read from compile_commands.json of a default build.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import shared_model
from edgecc.build.boards import board_names, load_board
from edgecc.build.harness import harness_c
from edgecc.cli import main
from edgecc.compiler import load_model
from edgecc.verify.reference import run_reference, seeded_inputs

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "firmware"
BARE_METAL = [b for b in board_names() if load_board(b).bare_metal]


def _sh(cmd: list[str], cwd: Path) -> str:
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{' '.join(cmd)}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout


def _compile(model: Path, out: Path, *args: str) -> None:
    assert main(["compile", str(model), "--name", "model", "-o", str(out), *args]) == 0


def _expected(model: Path, seed: int = 0) -> tuple[list[np.ndarray], str]:
    """(seeded inputs, the harness's output lines for TFLite Micro's outputs)."""
    g = load_model(model)
    x = seeded_inputs(g, seed)
    ref, _ = run_reference(model, x, len(g.outputs))
    lines = [f"O {i} {r.nbytes} {np.ascontiguousarray(r).tobytes().hex()}"
             for i, r in enumerate(ref)]
    return x, "\n".join(lines)


def _firmware(tmp: Path, model: Path, board: str, variant: str | None) -> tuple[Path, str]:
    """The fixture firmware with the model compiled for `board`; configured and built with the
    generated toolchain file and no build type. Returns (build folder, expected output)."""
    fw = tmp / f"fw-{board}"
    shutil.copytree(FIXTURE, fw)
    _compile(model, fw / "model", "--board", board, "--emit", "cmake")
    x, expected = _expected(model)
    (fw / "main.c").write_text(harness_c("model", x, len(expected.splitlines())))
    (fw / "expected.txt").write_text(expected + "\n")
    build = fw / "build"
    cfg = ["cmake", "-S", ".", "-B", "build",
           "-DCMAKE_TOOLCHAIN_FILE=model/toolchain-arm-none-eabi.cmake",
           "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"]
    if variant:
        cfg.append(f"-DEDGECC_VARIANT={variant}")
    _sh(cfg, fw)
    _sh(["cmake", "--build", "build"], fw)
    return build, expected


def _ctest(build: Path) -> str:
    return _sh(["ctest", "--test-dir", str(build), "--output-on-failure", "-V"], build)


def _outputs(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines() if re.match(r"^(\d+: )?O \d+ ", ln))


# ------------------------------------------------------------------ the files, no build

def test_device_build_has_the_real_map_and_no_semihosting(tmp_path):
    """stm32f746-disco: the device linker script puts flash at 0x08000000 (the part's), the qemu
    one at 0x0 (mps2-an500's); the device startup neither calls nor links semihosting."""
    out = tmp_path / "o"
    _compile(shared_model("kws_ref_model"), out, "--board", "stm32f746-disco",
             "--emit", "cmake", "--emit", "make")
    dev = (out / "board" / "stm32f746-disco.ld").read_text()
    qemu = (out / "board" / "stm32f746-disco-qemu.ld").read_text()
    assert "FLASH (rx) : ORIGIN = 0x08000000, LENGTH = 1048576" in dev
    assert "FLASH (rx) : ORIGIN = 0x00000000, LENGTH = 1048576" in qemu
    assert "mps2-an500" not in dev and "STM32F746NG" in dev
    start = (out / "board" / "startup.c").read_text()
    assert "initialise_monitor_handles" not in start and "bkpt 0xab" not in start
    assert "semihosting, no debugger" in start
    assert "initialise_monitor_handles" in (out / "board" / "startup_qemu.c").read_text()
    cm = (out / "CMakeLists.txt").read_text()
    assert "--specs=nosys.specs" in cm and "board/stm32f746-disco.ld" in cm
    tool = (out / "toolchain-arm-none-eabi.cmake").read_text()
    assert 'set(EDGECC_VARIANT "device" CACHE' in tool
    # a QEMU reference board has only QEMU's map: its default build is the qemu one
    _compile(shared_model("kws_ref_model"), tmp_path / "r", "--board", "mps2-an386", "--emit",
             "cmake")
    assert 'set(EDGECC_VARIANT "qemu" CACHE' in \
        (tmp_path / "r" / "toolchain-arm-none-eabi.cmake").read_text()


def test_make_fragment_carries_flags_startup_and_linker_script(tmp_path):
    out = tmp_path / "o"
    _compile(shared_model("kws_ref_model"), out, "--board", "netduinoplus2", "--emit", "make")
    mk = (out / "model.mk").read_text()
    assert "-ffp-contract=off" in mk and "$(if $(filter -O%,$(CFLAGS)),,-O2)" in mk
    assert (out / "board" / "startup.c").is_file() and (out / "board" / "netduinoplus2.ld").is_file()
    # what make makes of it: -O2 without a level in CFLAGS, the firmware's level otherwise
    probe = tmp_path / "Makefile"
    probe.write_text(f"include {out}/model.mk\nshow:\n\t@echo $(MODEL_CFLAGS) $(MODEL_LDFLAGS)\n")
    flags = _sh(["make", "-s", "-f", str(probe), "show"], tmp_path)
    assert "-ffp-contract=off -O2" in flags and "netduinoplus2.ld" in flags
    assert "nosys.specs" in flags
    flags = _sh(["make", "-s", "-f", str(probe), "show", "CFLAGS=-Os", "EDGECC_VARIANT=qemu"],
                tmp_path)
    assert "-O2" not in flags and "netduinoplus2-qemu.ld" in flags and "rdimon.specs" in flags


def test_zephyr_module_has_kconfig_symbol_and_flags(tmp_path):
    out = tmp_path / "o"
    _compile(shared_model("kws_ref_model"), out, "--emit", "zephyr")
    assert "kconfig: zephyr/Kconfig" in (out / "zephyr" / "module.yml").read_text()
    kc = (out / "zephyr" / "Kconfig").read_text()
    assert re.search(r"^config EDGECC_MODEL$", kc, re.M) and "default y" in kc
    cm = (out / "zephyr" / "CMakeLists.txt").read_text()
    assert "if(CONFIG_EDGECC_MODEL)" in cm
    assert "zephyr_library_compile_options(-ffp-contract=off)" in cm


# ------------------------------------------------------------------ built and booted

def _float_onnx_model() -> Path:
    from conftest import SHARED
    return SHARED / "models" / "onnx_models" / "tfl_ad01_int8_qdq.onnx"


@pytest.mark.qemu
def test_default_cmake_build_flags_from_compile_commands(tmp_path):
    """A default CMake build (no build type) compiles every generated source at -O2 with
    -ffp-contract=off: compile_commands.json of an ONNX model with float arithmetic."""
    model = _float_onnx_model()
    fw = tmp_path / "fw"
    shutil.copytree(FIXTURE, fw)
    _compile(model, fw / "model", "--board", "mps2-an386", "--emit", "cmake")
    assert "-ffp-contract=off" in (fw / "model" / "model.h").read_text()  # float arithmetic
    (fw / "main.c").write_text("int main(void) { return 0; }\n")
    (fw / "expected.txt").write_text("D done\n")
    _sh(["cmake", "-S", ".", "-B", "build",
         "-DCMAKE_TOOLCHAIN_FILE=model/toolchain-arm-none-eabi.cmake",
         "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"], fw)
    cmds = json.loads((fw / "build" / "compile_commands.json").read_text())
    gen = {Path(c["file"]).name: c["command"].split() for c in cmds
           if Path(c["file"]).parent == fw / "model"}
    assert gen and set(gen) == {p.name for p in (fw / "model").glob("*.c")}
    for f, argv in gen.items():
        assert "-O2" in argv and "-ffp-contract=off" in argv, (f, argv)
    # a level the firmware sets wins: Debug builds the library without -O2
    _sh(["cmake", "-S", ".", "-B", "dbg", "-DCMAKE_BUILD_TYPE=Debug",
         "-DCMAKE_TOOLCHAIN_FILE=model/toolchain-arm-none-eabi.cmake",
         "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"], fw)
    for c in json.loads((fw / "dbg" / "compile_commands.json").read_text()):
        if Path(c["file"]).parent == fw / "model":
            argv = c["command"].split()
            assert "-O2" not in argv and "-ffp-contract=off" in argv
    # ... and so does a level in CMAKE_C_FLAGS or add_compile_options
    for how, extra in (("flags", ["-DCMAKE_C_FLAGS=-Os"]), ("dir", [])):
        if how == "dir":
            text = (fw / "CMakeLists.txt").read_text()
            (fw / "CMakeLists.txt").write_text(text.replace("add_subdirectory(model)",
                                                            "add_compile_options(-Os)\n"
                                                            "add_subdirectory(model)"))
        _sh(["cmake", "-S", ".", "-B", how, *extra,
             "-DCMAKE_TOOLCHAIN_FILE=model/toolchain-arm-none-eabi.cmake",
             "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"], fw)
        for c in json.loads((fw / how / "compile_commands.json").read_text()):
            if Path(c["file"]).parent == fw / "model":
                argv = c["command"].split()
                assert "-O2" not in argv and "-Os" in argv, (how, argv)


@pytest.mark.qemu
def test_netduinoplus2_device_build_boots_on_the_real_map(tmp_path):
    """compile --board netduinoplus2 --emit cmake + a user's main.c, CMake with the generated
    toolchain file and no build type: the device build (flash 0x08000000, SRAM 0x20000000, no
    semihosting) boots on qemu-system-arm -M netduinoplus2, prints through USART1, and its
    outputs are TFLite Micro's."""
    build, expected = _firmware(tmp_path, shared_model("kws_ref_model"), "netduinoplus2", None)
    cache = (build / "CMakeCache.txt").read_text()
    assert "EDGECC_VARIANT:STRING=device" in cache
    elf = build / "firmware.elf"
    hdr = subprocess.run(["arm-none-eabi-readelf", "-lW", str(elf)], capture_output=True,
                         text=True).stdout
    assert "0x08000000" in hdr and "rdimon" not in (build / "CMakeFiles").joinpath(
        "firmware.dir", "link.txt").read_text()
    r = subprocess.run(["qemu-system-arm", "-M", "netduinoplus2", "-nographic", "-monitor",
                        "none", "-serial", "stdio", "-no-reboot", "-kernel", str(elf)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert _outputs(r.stdout) == expected and "D done" in r.stdout and "X 0" in r.stdout
    text = _ctest(build)
    assert "100% tests passed" in text and _outputs(text).replace("1: ", "") == expected
    # CTest's check is real: one wrong byte in the expectation fails it
    fw = build.parent
    (fw / "expected.txt").write_text(expected[:-1] + ("0" if expected[-1] != "0" else "1") + "\n")
    _sh(["cmake", "-S", ".", "-B", "build"], fw)
    assert subprocess.run(["ctest", "--test-dir", "build"], cwd=fw, capture_output=True,
                          timeout=300).returncode != 0


@pytest.mark.qemu
def test_make_fragment_device_build_boots_on_netduinoplus2(tmp_path):
    """--emit make: a plain Makefile around NAME.mk (the fragment's CFLAGS, startup and linker
    script, nothing of its own but its main.c and console) boots on QEMU netduinoplus2 and
    prints TFLite Micro's outputs."""
    model = shared_model("kws_ref_model")
    fw = tmp_path / "fw"
    fw.mkdir()
    for f in ("uart_stm32f4.c", "uart_console.h"):
        shutil.copy(FIXTURE / f, fw)
    _compile(model, fw / "model", "--board", "netduinoplus2", "--emit", "make")
    x, expected = _expected(model)
    (fw / "main.c").write_text(harness_c("model", x, len(expected.splitlines())))
    (fw / "Makefile").write_text(
        "CC = arm-none-eabi-gcc\n"
        "include model/model.mk\n"
        "SRCS = main.c uart_stm32f4.c $(MODEL_BOARD_SRCS)\n"
        "fw.elf: $(SRCS) $(MODEL_SRCS)\n"
        "\t$(CC) $(MODEL_BOARD_CFLAGS) $(CFLAGS) $(MODEL_CFLAGS) -c $(MODEL_SRCS)\n"
        "\t$(CC) $(MODEL_BOARD_CFLAGS) -Os -I model -c $(SRCS)\n"
        "\t$(CC) $(MODEL_BOARD_CFLAGS) $(MODEL_LDFLAGS) *.o -o $@\n")
    _sh(["make", "-s"], fw)
    r = subprocess.run(["qemu-system-arm", "-M", "netduinoplus2", "-nographic", "-monitor",
                        "none", "-serial", "stdio", "-no-reboot", "-kernel", str(fw / "fw.elf")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and _outputs(r.stdout) == expected and "X 0" in r.stdout


def _model_for(board) -> str:
    """kws (24 KiB arena) where the board has room for it, else hello_world (32 B arena): the
    small parts (stm32vldiscovery's 8 KiB of SRAM, microbit's 16 KiB) run the small model rather
    than skip."""
    return "kws_ref_model" if board.ram_bytes >= 64 * 1024 else "hello_world_int8"


@pytest.mark.qemu
@pytest.mark.parametrize("board,flash", [("stm32vldiscovery", 0x08000000), ("microbit", 0x0)])
def test_small_part_device_build_boots_on_the_real_map(tmp_path, board, flash):
    """stm32vldiscovery (STM32F100RB, Cortex-M3, 8 KiB SRAM) and microbit (nRF51822, Cortex-M0,
    16 KiB RAM): the device build of hello_world (the part's flash and RAM addresses, no
    semihosting) boots on the QEMU machine of that name, prints through the part's UART
    (STM32F100 USART1 at 0x40013800, nRF51 UART at 0x40002000), and CTest checks its outputs
    are TFLite Micro's."""
    build, expected = _firmware(tmp_path, shared_model("hello_world_int8"), board, None)
    assert "EDGECC_VARIANT:STRING=device" in (build / "CMakeCache.txt").read_text()
    elf = build / "firmware.elf"
    hdr = subprocess.run(["arm-none-eabi-readelf", "-lW", str(elf)], capture_output=True,
                         text=True).stdout
    load = [ln.split() for ln in hdr.splitlines() if ln.strip().startswith("LOAD")]
    assert load and min(int(f[3], 16) for f in load) == flash, hdr   # lowest physical address
    assert "rdimon" not in (build / "CMakeFiles").joinpath("firmware.dir", "link.txt").read_text()
    r = subprocess.run(["qemu-system-arm", "-M", board, "-nographic", "-monitor",
                        "none", "-serial", "stdio", "-no-reboot", "-kernel", str(elf)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert _outputs(r.stdout) == expected and "D done" in r.stdout and "X 0" in r.stdout
    text = _ctest(build)
    assert "100% tests passed" in text and _outputs(text).replace("1: ", "") == expected


@pytest.mark.qemu
@pytest.mark.parametrize("board", BARE_METAL)
def test_cmake_firmware_boots_on_every_board(tmp_path, board):
    """The same CMake firmware for every bare-metal board, run by CTest on the QEMU machine of
    its core (the device build where QEMU emulates the part with its real map, else the qemu
    build), its outputs bit-exact with TFLite Micro (CTest's pass expression)."""
    b = load_board(board)
    model = _model_for(b)
    variant = "device" if b.device_runs_on_qemu(1 << 14) else "qemu"
    build, expected = _firmware(tmp_path, shared_model(model), board, variant)
    text = _ctest(build)
    assert "100% tests passed" in text
    assert _outputs(text).replace("1: ", "") == expected


# ------------------------------------------------------------------ what the measurements built with

def test_verify_budget_report_say_their_build_flags(tmp_path, capsys, models_dir):
    """verify, budget and report name the compiler command they measured with (text and JSON):
    -O2 and -ffp-contract=off, the level and flags the generated build files apply."""
    model = str(models_dir / "hello_world_int8.tflite")
    assert main(["verify", model, "--json"]) == 0
    j = json.loads(capsys.readouterr().out)
    assert "-O2" in j["build_flags"].split() and "-ffp-contract=off" in j["build_flags"].split()
    assert main(["verify", model]) == 0
    assert re.search(r"^built with: gcc .*-ffp-contract=off.*-O2", capsys.readouterr().out, re.M)
    assert main(["budget", model, "--board", "netduinoplus2", "--json"]) == 0
    j = json.loads(capsys.readouterr().out)
    argv = j["build_flags"].split()
    assert argv[0] == "arm-none-eabi-gcc" and "-O2" in argv and "-mcpu=cortex-m4" in argv
    assert main(["budget", model, "--board", "netduinoplus2"]) == 0
    assert "built with: arm-none-eabi-gcc" in capsys.readouterr().out
    assert main(["report", model, "--board", "netduinoplus2", "-o", str(tmp_path / "r.html")]) == 0
    assert "Built with <code>arm-none-eabi-gcc -mcpu=cortex-m4" in (tmp_path / "r.html").read_text()
