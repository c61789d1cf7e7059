"""Board files: the shipped boards, user board files by path, and one-line errors for bad ones.

No compiler or emulator runs here except where a test says so (the linker-script test links)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from edgecc.build.boards import MACHINES, board_names, default_board, load_board
from edgecc.errors import EdgeccError
from edgecc.targets import TARGETS
from edgecc.build.cross import arena_placement, linker_script

KiB, MiB = 1 << 10, 1 << 20
REPO = Path(__file__).resolve().parent.parent

# name -> (target, QEMU machine, flash bytes, RAM bytes)
EXPECTED = {
    "mps2-an385": ("cortex-m3", "mps2-an385", 4 * MiB, 4 * MiB),
    "mps2-an385-m0plus": ("cortex-m0plus", "mps2-an385", 4 * MiB, 4 * MiB),
    "mps2-an386": ("cortex-m4", "mps2-an386", 4 * MiB, 4 * MiB),
    "mps2-an500": ("cortex-m7", "mps2-an500", 4 * MiB, 4 * MiB),
    "mps2-an505": ("cortex-m33", "mps2-an505", 4 * MiB, 4 * MiB),
    "mps3-an547": ("cortex-m55", "mps3-an547", 512 * KiB, 4 * MiB + 512 * KiB),
    "aarch64-linux": ("aarch64", "", None, None),
    "nrf52840-dk": ("cortex-m4", "mps2-an386", 1 * MiB, 256 * KiB),
    "stm32f746-disco": ("cortex-m7", "mps2-an500", 1 * MiB, 320 * KiB),
    "stm32l4r5-nucleo": ("cortex-m4", "mps2-an386", 2 * MiB, 640 * KiB),
    "stm32h743-nucleo": ("cortex-m7", "mps2-an500", 2 * MiB, 1056 * KiB),
    "netduinoplus2": ("cortex-m4", "netduinoplus2", 1 * MiB, 192 * KiB),
    "stm32vldiscovery": ("cortex-m3", "stm32vldiscovery", 128 * KiB, 8 * KiB),
    "microbit": ("cortex-m0plus", "microbit", 256 * KiB, 16 * KiB),
}

NRF = """
name = "my-board"
target = "cortex-m4"
[qemu]
machine = "mps2-an386"
[[memory]]
name = "FLASH"
kind = "flash"
origin = 0x0
size = "1 MiB"
[[memory]]
name = "RAM"
kind = "ram"
origin = 0x20000000
size = "256 KiB"
"""


def test_shipped_boards_are_the_expected_ones():
    assert sorted(EXPECTED) == board_names()
    for name, (target, machine, flash, ram) in EXPECTED.items():
        b = load_board(name)
        assert (b.name, b.target, b.qemu_machine, b.flash_bytes, b.ram_bytes) == \
            (name, target, machine, flash, ram), name
        assert b.target in TARGETS
        if machine:
            assert target in (MACHINES[machine].target, *MACHINES[machine].also_runs)
            assert b.region(b.code_region).qemu_origin == MACHINES[machine].boot


def test_secure_aliases_and_device_addresses():
    an505 = load_board("mps2-an505")
    assert an505.region("CODE").qemu_origin == 0x10000000
    assert an505.region("RAM").qemu_origin == 0x38000000
    h7 = load_board("stm32h743-nucleo")
    assert h7.region("FLASH").origin == 0x08000000 and h7.region("FLASH").qemu_origin == 0
    assert h7.region("DTCM").size == 128 * KiB and h7.region("AXI_SRAM").size == 512 * KiB
    assert h7.region("AXI_SRAM").origin == 0x24000000


def test_device_and_qemu_builds_of_a_board():
    """A real part's default build is its device build; it runs on QEMU only where the machine
    emulates that part at the same addresses (netduinoplus2, with the arena in SRAM)."""
    from edgecc.build.board_schema import BOARD
    assert list(BOARD["device"].keys) == ["part", "core", "fpu", "clock_hz"]
    n = load_board("netduinoplus2")
    assert (n.device.part, n.device.core, n.device.fpu, n.device.clock_hz) == \
        ("STM32F405RG", "Cortex-M4F", "fpv4-sp-d16", 168_000_000)
    assert n.region("CCM").origin == 0x10000000 and n.region("CCM").qemu_origin == 0x20020000
    assert n.default_variant == "device" and n.device_runs_on_qemu(64 * KiB)
    import dataclasses
    ccm_first = dataclasses.replace(n, arena_regions=("CCM", "SRAM"))
    assert not ccm_first.device_runs_on_qemu(32 * KiB)  # QEMU 7.2 has no CCM at 0x10000000
    for name in ("stm32f746-disco", "nrf52840-dk"):  # mps2 machines emulate no STM32 or nRF
        assert load_board(name).default_variant == "device"
        assert not load_board(name).device_runs_on_qemu(1024)
    assert load_board("mps2-an386").default_variant == "qemu"
    # the small parts whose QEMU machine is the part itself: the device build boots there
    for name, part, flash in (("stm32vldiscovery", "STM32F100RB", 0x08000000),
                              ("microbit", "nRF51822", 0x0)):
        b = load_board(name)
        assert b.device.part == part and b.region("FLASH").origin == flash
        assert b.default_variant == "device" and b.device_runs_on_qemu(1024)
    assert "CCM (rwx) : ORIGIN = 0x10000000" in linker_script(n, 1024, device=True)
    assert "CCM (rwx) : ORIGIN = 0x20020000" in linker_script(n, 1024)


def test_default_board_per_target():
    assert default_board("cortex-m4").name == "mps2-an386"
    assert default_board("cortex-m55").name == "mps3-an547"
    assert default_board("aarch64").name == "aarch64-linux"
    assert default_board("cortex-m3").name == "mps2-an385"
    assert default_board("cortex-m0plus").name == "mps2-an385-m0plus"
    with pytest.raises(EdgeccError):
        default_board("host")


def test_h743_arena_goes_to_the_region_that_fits():
    h7 = load_board("stm32h743-nucleo")
    assert arena_placement(h7, 60 * KiB).name == "DTCM"
    # DTCM also holds stack and heap: an arena that fills all of it moves to AXI SRAM.
    assert arena_placement(h7, 128 * KiB).name == "AXI_SRAM"
    assert arena_placement(h7, 500 * KiB).name == "AXI_SRAM"
    assert h7.arena_region(600 * KiB) is None
    ld = linker_script(h7, 200 * KiB)
    assert "AXI_SRAM (rwx) : ORIGIN = 0x20100000, LENGTH = 524288" in ld
    assert "} > AXI_SRAM" in ld and "FLASH (rx) : ORIGIN = 0x00000000, LENGTH = 2097152" in ld


def test_user_board_by_path_toml_and_json(tmp_path):
    p = tmp_path / "mine.toml"
    p.write_text(NRF)
    b = load_board(str(p))
    assert (b.name, b.flash_bytes, b.ram_bytes, b.arena_regions) == \
        ("my-board", MiB, 256 * KiB, ("RAM",))
    assert b.cflags == TARGETS["cortex-m4"].cflags  # defaults to the target's core flags
    j = tmp_path / "mine.json"
    j.write_text(json.dumps(dict(target="aarch64", qemu=dict(machine="user"))))
    assert load_board(j).name == "mine"


BAD = {
    "not toml": ("target = [", "not valid TOML"),
    "unknown target": (NRF.replace('"cortex-m4"', '"cortex-m99"'), "unknown target 'cortex-m99'"),
    "machine of another core": (NRF.replace("mps2-an386", "mps2-an500"), "emulates a cortex-m7"),
    "Cortex-M4 on the Cortex-M3 machine": (NRF.replace("mps2-an386", "mps2-an385"),
                                           "emulates a cortex-m3"),
    "unknown machine": (NRF.replace("mps2-an386", "virt"), "unknown QEMU machine 'virt'"),
    "unknown field": (NRF.replace('name = "my-board"', 'nmae = "x"'), "unknown key 'nmae'"),
    "bad size": (NRF.replace('"1 MiB"', '"lots"'), "cannot read size 'lots'"),
    "bad kind": (NRF.replace('kind = "flash"', 'kind = "rom"'), 'must be one of flash, ram'),
    "not QEMU memory": (NRF.replace("0x20000000", "0x50000000"), "is not memory on QEMU"),
    "no memory": (NRF.split("[[memory]]")[0], "needs [[memory]] regions"),
    "no flash": (NRF.replace('kind = "flash"', 'kind = "ram"'), "at least one flash"),
    "placement names no region": (NRF + '[placement]\narena = ["SRAM9"]\n', "names no region"),
    "arena in flash": (NRF + '[placement]\narena = "FLASH"\n', "must be a ram region"),
    "overlap": (NRF.replace("0x20000000", "0x0"), "overlap"),
    "cflags": (NRF.replace('target = "cortex-m4"', 'target = "cortex-m4"\ncflags = "-O2"'),
               "cflags: expected a list"),
    "device key": (NRF.replace("[qemu]", '[device]\npart = "X"\ncore = "M4"\nram = 1\n[qemu]'),
                   "device: unknown key 'ram'"),
    "device clock": (NRF.replace("[qemu]", '[device]\npart = "X"\ncore = "M4"\n'
                                           'clock_hz = "fast"\n[qemu]'), "expected a frequency"),
    "device part": (NRF.replace("[qemu]", '[device]\npart = "X */ junk"\ncore = "M4"\n[qemu]'),
                    "device.part: 'X */ junk' is not a board name"),
    "device core": (NRF.replace("[qemu]", '[device]\npart = "X"\n[qemu]'), "device.core: required"),
    "memory key": (NRF.replace('size = "1 MiB"', 'size = "1 MiB"\nspeed = 1'),
                   "unknown key 'speed'"),
    "device overlap": (NRF.replace('origin = 0x20000000', 'origin = 0x0\nqemu_origin = 0x20000000'),
                       "overlap on the device"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_board_file_is_one_line_error(tmp_path, case):
    text, msg = BAD[case]
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(EdgeccError) as e:
        load_board(p)
    assert msg in str(e.value)
    assert str(p) in str(e.value) and "\n" not in str(e.value)


def test_unknown_board_name_and_missing_file():
    with pytest.raises(EdgeccError, match="unknown board 'nrf9999'.*nrf52840-dk"):
        load_board("nrf9999")
    with pytest.raises(EdgeccError, match="no such file"):
        load_board("/nonexistent/board.toml")


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "edgecc", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=300)


def test_cli_bad_board_exits_2_with_one_line(tmp_path, models_dir):
    p = tmp_path / "bad.toml"
    p.write_text(BAD["unknown target"][0])
    for verb in (["compile", "-o", str(tmp_path / "o")], ["verify"], ["budget"]):
        r = _cli(verb[0], str(models_dir / "hello_world_int8.tflite"), "--board", str(p), *verb[1:])
        assert r.returncode == 2, (verb, r.stderr)
        assert r.stderr.count("\n") == 1 and "unknown target 'cortex-m99'" in r.stderr
        assert "Traceback" not in r.stderr


def test_cli_target_conflicting_with_board(tmp_path, models_dir):
    r = _cli("compile", str(models_dir / "hello_world_int8.tflite"), "--board", "nrf52840-dk",
             "--target", "cortex-m7", "-o", str(tmp_path / "o"))
    assert r.returncode == 2 and "conflicts with board nrf52840-dk" in r.stderr
