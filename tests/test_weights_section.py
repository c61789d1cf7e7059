"""--weights-section NAME: every constant array of the model in that linker section, placed in
the board's weights region (a second flash region here), bit-exact under QEMU, and `budget`
reporting each region's use from the linked ELF."""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from conftest import shared_model
from edgecc.build.boards import load_board
from edgecc.cli import main

pytestmark = pytest.mark.qemu
BOARD = str(Path(__file__).resolve().parent / "data" / "qspi-an386.toml")


def _json(args: list[str]) -> tuple[int, dict]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(args)
    return rc, json.loads(buf.getvalue())


def test_weights_in_second_flash_region_bit_exact(tmp_path):
    """verify on the board: every weight symbol of the linked ELF lies in QSPI."""
    from elftools.elf.elffile import ELFFile
    model = shared_model("kws_ref_model")
    rc, r = _json(["verify", str(model), "--board", BOARD, "--weights-section", ".qspi_weights",
                   "--keep", str(tmp_path), "--json"])
    assert rc == 0 and r["bit_exact"]
    qspi = load_board(BOARD).region("QSPI")
    with open(tmp_path / "runs1.elf", "rb") as f:
        syms = [s for s in ELFFile(f).get_section_by_name(".symtab").iter_symbols()
                if s.name.startswith("model_l") and s["st_info"]["type"] == "STT_OBJECT"]
    assert syms
    for s in syms:
        assert qspi.qemu_origin <= s["st_value"] < qspi.qemu_origin + qspi.size, s.name


def test_budget_reports_each_region(tmp_path):
    model = shared_model("kws_ref_model")
    _, plain = _json(["budget", str(model), "--board", BOARD, "--json"])
    rc, sect = _json(["budget", str(model), "--board", BOARD, "--weights-section",
                      ".qspi_weights", "--json"])
    assert rc == 0
    use = {r["name"]: r["used"] for r in sect["regions"]}
    before = {r["name"]: r["used"] for r in plain["regions"]}
    w = sect["flash"]["weights"]
    assert w == plain["flash"]["weights"] > 30000
    assert before["QSPI"] == 0 and use["QSPI"] >= w
    assert use["FLASH"] <= before["FLASH"] - w + 64  # the weights left internal flash
    assert use["RAM"] >= sect["ram"]["arena"]


def test_weights_too_big_for_the_region_fails_naming_it(tmp_path):
    text = Path(BOARD).read_text().replace('size = "1 MiB"', 'size = "16 KiB"')
    small = tmp_path / "small.toml"
    small.write_text(text.replace('name = "qspi-an386"', 'name = "small-qspi"'))
    rc = main(["verify", str(shared_model("kws_ref_model")), "--board", str(small),
               "--weights-section", ".qspi_weights"])
    assert rc == 2


def test_section_in_generated_c_and_linker_script(tmp_path):
    out = tmp_path / "o"
    assert main(["compile", str(shared_model("ad01_int8")), "--board", BOARD, "--name", "ad",
                 "--weights-section", ".qspi_weights", "--emit", "cmake", "-o", str(out)]) == 0
    w = (out / "ad_weights.c").read_text()
    assert w.count('__attribute__((section(".qspi_weights")))') == w.count("] = {") > 0
    ld = (out / "board" / "qspi-an386.ld").read_text()
    assert "KEEP(*(.qspi_weights .qspi_weights.*))" in ld and "} > QSPI" in ld
    assert main(["compile", str(shared_model("ad01_int8")), "-o", str(out),
                 "--weights-section", "bad name"]) == 2
