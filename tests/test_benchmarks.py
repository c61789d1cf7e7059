"""Smoke tests of the benchmark suite (benchmarks/): anchors parsing, MAC counts, one model on one
target end to end through `python3 -m benchmarks.run`. Figures are checked for consistency with
the shared anchors and TFLite Micro, never for speed."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import REPO, SHARED, shared_model

sys.path.insert(0, str(REPO))  # `benchmarks` is a top-level folder of the checkout, not installed

from benchmarks.anchors import load_anchors, parse_anchors  # noqa: E402
from benchmarks.metrics import count_macs  # noqa: E402
from benchmarks.table import (docs_block, generated_block, readme_block,  # noqa: E402
                              update_readme)


def _anchors():
    path = SHARED / "bench" / "anchors.md"
    if not path.is_file():
        pytest.fail(f"{path} missing: the shared folder must sit beside the checkout")
    return load_anchors(path)


def test_anchor_tables_parse():
    a = _anchors()
    assert set(a.by_target) == {"cortex-m4", "cortex-m7", "cortex-m55"}
    kws = a.get("cortex-m4", "kws_ref_model")
    assert (kws.instructions, kws.macs, kws.arena_bytes, kws.flash_bytes) == \
        (7698793, 2656768, 22820, 146784)
    assert a.get("cortex-m7", "vww_96_int8").instructions == 24026403
    assert a.get("cortex-m55", "ad01_int8").instructions == 150292
    assert a.litert_us["ad01_int8"] == 3.0
    assert a.weights_bytes["vww_96_int8"] == 219072


def test_anchor_parser_ignores_ratio_column():
    text = ("## mps2-an386, Cortex-M4\n\n| model | instructions / inference | instructions / MAC |\n"
            "|---|---:|---:|\n| m | 1,000 | 2.5 |\n")
    a = parse_anchors(text).get("cortex-m4", "m")
    assert a.instructions == 1000 and a.macs is None


def test_converter_anchors_parse():
    """The current-converter section puts M4 and M55 side by side; flash is written as parts."""
    a = _anchors()
    m4, m55 = a.get("cortex-m4", "cv_conv1d"), a.get("cortex-m55", "cv_conv1d")
    assert (m4.instructions, m4.macs, m4.arena_bytes, m4.flash_bytes) == \
        (1616118, 80064, 8548, 10264 + 64834 + 42832)
    assert (m55.instructions, m55.arena_bytes, m55.flash_bytes) == (1313064, 8580, None)
    assert a.get("cortex-m4", "cv_autoenc") is None  # TFLite Micro has no TILE: no anchor
    assert a.get("cortex-m4", "kws_ref_model").instructions == 7698793  # the older table stays


def test_mac_counts_match_the_anchors():
    from edgecc.compiler import load_model
    a = _anchors()
    for name, anchor in a.by_target["cortex-m4"].items():
        path = (SHARED / "models" / "converter" / f"{name}.tflite" if name.startswith("cv_")
                else shared_model(name))
        # cv_conv1d's dilated conv runs on SPACE_TO_BATCH_ND's 2 blocks: anchors.md counts one
        # (output elements without the batch), edgecc both (2 x 32 x 32 x 3 x 16)
        extra = 32 * 32 * 3 * 16 if name == "cv_conv1d" else 0
        assert count_macs(load_model(path)) == anchor.macs + extra, name


def _row(model: str, **kw) -> dict:
    r = dict(model=model, measured="d", commit="abc1234", macs=100, instructions=300,
             arena_bytes=120, lower_bound_bytes=100,
             tflm_arena_bytes=240, flash_bytes=1000, bit_exact=True, frames=5, frames_exact=5,
             compile_s=1.25, anchor=dict(instructions=600, arena_bytes=200, flash_bytes=2000))
    r.update(kw)
    return r


def test_tables_put_speed_and_ram_side_by_side():
    from benchmarks.table import render_results
    meta = dict(command="c", date="d", cpu="cpu", cores=2, os="os", commit="abc1234", gcc="g",
                arm_gcc="a", aarch64_gcc="b", qemu="q", litert="l", tflm="t", latency_cflags=[])
    bad = _row("m3", bit_exact=False, frames_exact=3)
    md = render_results(meta, {"cortex-m4": [_row("m1"), _row("m2", error="boom"), bad],
                               "host": [_row("m1", anchor=None, latency_us=2.0, litert_us=4.0,
                                             latency_p99_us=3.0, litert_p99_us=12.0)]})
    assert ("| m1 | 100 | 300 | 3.00 | 600 | 0.50 | 120 | 100 | 1.20 | 240 | 0.50 | 1,000 | "
            "200 | 2,000 | 5/5 | 1.2 |") in md
    assert "| m3 | 100 | 300 |" in md and "**3/5** |" in md
    assert "| m1 | 100 | 300 | 3.00 | - | - | 120 | 100 | 1.20 | 240 | 0.50 | 1,000 | 2.00 | 4.00 |" \
        " 0.50 | 3.00 | 12.0 | 0.25 | - | - | 5/5 | 1.2 |" in md  # p50, then p99 of the same runs
    assert "1. m2: boom" in md
    for table in md.split("\n## ")[1:]:  # every row of a table, error rows too, has its columns
        rows = [ln for ln in table.splitlines() if ln.startswith("|")]
        assert len({ln.count("|") for ln in rows}) == 1, table


def test_profile_flags_layers_far_from_the_floor():
    """M55's floor is 1/16 instr/MAC: a layer at 0.25 (4x) with 10% of the model is far, one at
    4x with 1% is not, one at 2x is not; a MAC-less layer with > 5% is heavy."""
    from benchmarks.profile import annotate, render_profiles, wants_profile
    layers = [dict(layer=0, op="CONV_2D", index=0, kernel="mve-conv", macs=4000, instructions=1000),
              dict(layer=1, op="CONV_2D", index=1, kernel="portable", macs=400, instructions=100),
              dict(layer=2, op="CONV_2D", index=2, kernel="mve-conv", macs=64000,
                   instructions=8000),
              dict(layer=3, op="AVERAGE_POOL_2D", index=3, kernel="portable", macs=None,
                   instructions=900)]
    p = annotate(layers, "cortex-m55")
    assert p["total_instructions"] == 10000 and p["floor_instr_per_mac"] == 1 / 16
    assert [x["flag"] for x in p["layers"]] == ["far", None, None, "heavy"]
    assert [x["x_floor"] for x in p["layers"]] == [4.0, 4.0, 2.0, None]
    assert p["layers"][0]["share"] == 0.1 and p["layers"][0]["instr_per_mac"] == 0.25
    assert annotate(layers, "cortex-m4")["layers"][0]["flag"] is None  # 0.25 < M4's 0.5
    md = "\n".join(render_profiles({"cortex-m55": [_row("m", profile=p)], "host": [_row("m")]}))
    assert "### m on cortex-m55 (10,000 instructions" in md
    assert "| 0 | CONV_2D | mve-conv | 4,000 | 1,000 | 0.250 | 4.0 | 10.0% | **far** |" in md
    assert "| 3 | AVERAGE_POOL_2D | portable | - | 900 | - | - | 9.0% | **heavy** |" in md
    assert "| m | cortex-m55 | 10,000 | 4 | 2 | 19.0% | 0 CONV_2D (mve-conv), 10.0%, 4.0x |" in md
    assert render_profiles({"cortex-m4": [_row("m")]}) == []
    assert wants_profile("anchors", "kws_ref_model", "cortex-m55")
    assert not wants_profile("anchors", "hello_world_int8", "cortex-m4")
    assert wants_profile("all", "hello_world_int8", "cortex-m33")
    assert not wants_profile("all", "kws_ref_model", "aarch64")
    assert not wants_profile("none", "kws_ref_model", "cortex-m4")


def test_results_are_one_run_of_one_commit():
    """The generator refuses rows of another run or commit (there is no merging of runs), and
    the repository's own results.md a run with uncommitted changes."""
    from benchmarks.table import one_run, render_results
    meta = dict(command="c", date="d", cpu="cpu", cores=2, os="os", commit="abc1234", gcc="g",
                arm_gcc="a", aarch64_gcc="b", qemu="q", litert="l", tflm="t", latency_cflags=[])
    mine = dict(measured="d", commit="abc1234")
    one_run(meta, {"cortex-m4": [_row("a", **mine)], "host": [_row("a", **mine)]}, clean=True)
    for other in (dict(mine, measured="older"), dict(mine, commit="1234abc"),
                  dict(measured=None, commit=None)):
        with pytest.raises(ValueError, match="1 rows are not of the run of d at abc1234.*: b on "
                                             "host"):
            render_results(meta, {"cortex-m4": [_row("a", **mine)], "host": [_row("b", **other)]})
    dirty = dict(meta, commit="abc1234 (with uncommitted changes)")
    rows = {"cortex-m4": [_row("a", measured="d", commit=dirty["commit"])]}
    assert "edgecc commit: abc1234 (with uncommitted changes)" in render_results(dirty, rows)
    with pytest.raises(ValueError, match="without uncommitted changes"):
        render_results(dirty, rows, clean=True)
    saved = json.loads((REPO / "benchmarks" / "results.json").read_text())
    one_run(saved["meta"], saved["results"], clean=True)  # the repository's own: one clean run


def test_readme_block_is_replaced_and_nothing_else(tmp_path):
    p = tmp_path / "README.md"
    p.write_text("a\n<!-- BEGIN GENERATED: benchmarks -->\nold\n<!-- END GENERATED: benchmarks -->\nz\n")
    update_readme(p, "new table")
    assert p.read_text() == ("a\n<!-- BEGIN GENERATED: benchmarks -->\nnew table\n"
                             "<!-- END GENERATED: benchmarks -->\nz\n")


def test_readme_and_docs_summaries_are_current():
    """README.md's short summary and docs/benchmarks.md's table are what the saved run renders to
    (both written by `python3 -m benchmarks.run --render benchmarks/results.json --readme
    README.md`)."""
    saved = json.loads((REPO / "benchmarks" / "results.json").read_text())
    meta, results = saved["meta"], saved["results"]
    readme, docs = REPO / "README.md", REPO / "docs" / "benchmarks.md"
    fix = "stale: run python3 -m benchmarks.run --render benchmarks/results.json --readme README.md"
    assert generated_block(readme) == readme_block(meta, results, "docs/benchmarks.md"), \
        f"README.md's benchmark summary is {fix}"
    assert generated_block(docs) == docs_block(meta, results, "../benchmarks/results.md"), \
        f"docs/benchmarks.md's table is {fix}"
    short = generated_block(readme)
    assert "| kws_ref_model |" in short and "| cv_dscnn |" not in short  # anchor models only


def _run(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchmarks.run", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=900)


@pytest.mark.qemu
def test_suite_on_ad01_cortex_m4(tmp_path):
    shared_model("ad01_int8")
    readme = tmp_path / "README.md"
    readme.write_text("x\n<!-- BEGIN GENERATED: benchmarks -->\n<!-- END GENERATED: benchmarks -->\n")
    out, js = tmp_path / "results.md", tmp_path / "results.json"
    r = _run(["--models", "ad01_int8", "--targets", "cortex-m4", "-o", str(out), "--json", str(js),
              "--readme", str(readme)])
    assert r.returncode == 0, r.stderr
    data = json.loads(js.read_text())
    row, = data["results"]["cortex-m4"]
    assert "error" not in row, row
    assert row["bit_exact"] and row["macs"] == 264192
    assert row["anchor"]["instructions"] == 583263
    assert row["tflm_arena_bytes"] == 4632  # ../shared/models/README.md's TFLM arena
    assert row["instructions"] > 0 and row["arena_bytes"] >= row["lower_bound_bytes"] > 0
    assert row["weights_flash_bytes"] >= 270880 and row["flash_bytes"] > row["weights_flash_bytes"]
    md = out.read_text()
    assert "## cortex-m4 (mps2-an386)" in md and "| ad01_int8 | 264,192 |" in md
    # ad01_int8 is an anchor model: profiled by default, first of the 5 frames, one row a layer
    p = row["profile"]
    assert [x["op"] for x in p["layers"]] == ["FULLY_CONNECTED"] * 10
    assert sum(x["macs"] for x in p["layers"]) == row["macs"]
    assert all(x["kernel"].startswith("dsp-fc") and x["instructions"] > 0 for x in p["layers"])
    assert p["total_instructions"] == sum(x["instructions"] for x in p["layers"])
    assert abs(p["total_instructions"] - row["instructions"]) < 0.01 * row["instructions"]
    assert "### ad01_int8 on cortex-m4" in md and "| 0 | FULLY_CONNECTED | dsp-fc" in md
    assert data["meta"]["cpu"] in md and data["meta"]["date"] in md
    ratio = f"{row['instructions'] / 583263:.2f}"
    assert f"| ad01_int8 | {ratio} |" in readme.read_text()
    again = tmp_path / "again.md"
    r = _run(["--render", str(js), "-o", str(again)])
    assert r.returncode == 0, r.stderr
    assert again.read_text() == md


def test_suite_on_host_with_latency(tmp_path):
    shared_model("hello_world_int8")
    js = tmp_path / "r.json"
    r = _run(["--models", "hello_world_int8", "--targets", "x86-avx2", "--budget", "0.01",
              "-o", str(tmp_path / "r.md"), "--json", str(js)])
    assert r.returncode == 0, r.stderr
    row, = json.loads(js.read_text())["results"]["x86-avx2"]
    assert "error" not in row, row
    assert row["bit_exact"] and row["instructions"] > 0 and row["flash_bytes"] > 0
    assert row["latency_us"] > 0 and row["litert_us"] > 0
    assert row["latency_p99_us"] >= row["latency_us"] and row["litert_p99_us"] >= row["litert_us"]


def test_suite_x86_avx512_row(tmp_path):
    """x86-avx512: timed and verified where the CPU has AVX-512 VNNI (an error row naming the
    missing flags elsewhere); no QEMU count, since TCG does not implement AVX-512."""
    from edgecc.targets import get_target
    from edgecc.build.host import cpu_flags
    shared_model("hello_world_int8")
    js, md = tmp_path / "r.json", tmp_path / "r.md"
    r = _run(["--models", "hello_world_int8", "--targets", "x86-avx2", "x86-avx512", "--budget",
              "0.01", "-o", str(md), "--json", str(js)])
    assert r.returncode == 0, r.stderr
    row, = json.loads(js.read_text())["results"]["x86-avx512"]
    if get_target("x86-avx512").host_cpu <= cpu_flags():
        assert "error" not in row, row
        assert row["bit_exact"] and row["instructions"] is None and row["latency_plain_us"] > 0
    else:
        assert "cannot run x86-avx512" in row["error"]
    assert "## x86-avx512" in md.read_text()


def test_suite_on_a_converter_model_on_host(tmp_path):
    """The converter set through the whole path: model lookup in ../shared/models/converter,
    5 frames verified, TFLite Micro's arena bisected, the host table with its ratios."""
    path = SHARED / "models" / "converter" / "cv_mlp_u8in.tflite"
    if not path.is_file():
        pytest.fail(f"{path} missing: the shared folder must sit beside the checkout")
    js, md = tmp_path / "r.json", tmp_path / "r.md"
    r = _run(["--sets", "converter", "--models", "cv_mlp_u8in", "--targets", "host",
              "--no-latency", "-o", str(md), "--json", str(js)])
    assert r.returncode == 0, r.stderr
    row, = json.loads(js.read_text())["results"]["host"]
    assert "error" not in row, row
    assert (row["frames"], row["frames_exact"], row["macs"]) == (5, 5, 4864)
    assert row["tflm_arena_bytes"] > 0 and row["compile_s"] > 0 and row["instructions"] > 0
    # the live-bytes bound (edgecc plan's): the host kernels stream, so the arena may be below it
    assert 0 < row["arena_bytes"] <= row["lower_bound_bytes"]
    lb = f"{row['arena_bytes'] / row['lower_bound_bytes']:.2f}"
    tflm = f"{row['arena_bytes'] / row['tflm_arena_bytes']:.2f}"
    line = next(ln for ln in md.read_text().splitlines() if ln.startswith("| cv_mlp_u8in |"))
    assert f"| {row['lower_bound_bytes']:,} | {lb} | {row['tflm_arena_bytes']:,} | {tflm} |" \
        in line and line.endswith("| 5/5 | %.1f |" % row["compile_s"])


def test_unknown_model_is_one_line_error(tmp_path):
    r = _run(["--models", "no_such_model", "-o", str(tmp_path / "r.md")])
    assert r.returncode == 2 and "no such model" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.qemu
def test_onnx_set_on_ad01_cortex_m4(tmp_path):
    """The onnx set: model lookup in ../shared/models/onnx_models, onnxruntime's outputs as the
    reference (values differing counted), no TFLite Micro columns, and the tfl_*_qdq model
    against its TFLite original on Cortex-M4 (arena and instruction ratios)."""
    path = SHARED / "models" / "onnx_models" / "tfl_ad01_int8_qdq.onnx"
    if not path.is_file():
        pytest.fail(f"{path} missing: the shared folder must sit beside the checkout")
    shared_model("ad01_int8")
    js, md = tmp_path / "r.json", tmp_path / "r.md"
    r = _run(["--sets", "onnx", "--models", "tfl_ad01_int8_qdq", "--targets", "cortex-m4",
              "--frames", "2", "--no-latency", "-o", str(md), "--json", str(js)])
    assert r.returncode == 0, r.stderr
    data = json.loads(js.read_text())
    row, = data["results"]["cortex-m4"]
    assert "error" not in row, row
    assert row["format"] == "onnx" and row["tflm_arena_bytes"] is None
    assert (row["frames"], row["macs"], row["values_differing"]) == (2, 264192, 0)
    assert row["instructions"] > 0 and 0 < row["lower_bound_bytes"] <= row["arena_bytes"]
    comp, = data["meta"]["onnx_vs_tflite"]
    assert (comp["onnx"], comp["tflite"], comp["target"]) == \
        ("tfl_ad01_int8_qdq", "ad01_int8", "cortex-m4")
    assert comp["onnx_arena"] == row["arena_bytes"] and comp["tflite_instructions"] > 0
    assert comp["instructions_ratio"] == round(row["instructions"] / comp["tflite_instructions"], 4)
    text = md.read_text()
    assert "## cortex-m4, ONNX models (mps2-an386)" in text
    assert f"| tfl_ad01_int8_qdq | 264,192 | {row['instructions']:,} |" in text
    ratio = f"{comp['instructions_ratio']:.3f}"
    assert f"| tfl_ad01_int8_qdq | ad01_int8 | {row['arena_bytes']:,} |" in text and ratio in text
    for table in text.split("\n## ")[1:]:  # every row of a table has its columns
        rows = [ln for ln in table.splitlines() if ln.startswith("|")]
        assert len({ln.count("|") for ln in rows}) == 1, table


def test_onnx_rows_render_beside_tflite_rows():
    """A target with TFLite and ONNX rows gets both tables; an ONNX error row keeps its columns."""
    from benchmarks.table import render_results
    meta = dict(command="c", date="d", cpu="cpu", cores=2, os="os", commit="abc1234", gcc="g",
                arm_gcc="a", aarch64_gcc="b", qemu="q", litert="l", tflm="t", latency_cflags=[],
                onnx_vs_tflite=[dict(onnx="tfl_m_qdq", tflite="m", target="cortex-m4",
                                     onnx_arena=100, tflite_arena=100, onnx_instructions=102,
                                     tflite_instructions=100, arena_ratio=1.0,
                                     instructions_ratio=1.02, error=None)])
    md = render_results(meta, {"cortex-m4": [
        _row("m"), _row("tfl_m_qdq", format="onnx", values_differing=3, anchor=None),
        _row("ox_bad", format="onnx", error="boom")]})
    assert "## cortex-m4\n" in md and "## cortex-m4, ONNX models\n" in md
    assert "| tfl_m_qdq | 100 | 300 | 3.00 | 120 | 100 | 1.20 | 1,000 | 3 | 5/5 | 1.2 |" in md
    assert "| tfl_m_qdq | m | 100 | 100 | 1.000 | 102 | 100 | 1.020 | yes |" in md
    assert "1. ox_bad: boom" in md
    for table in md.split("\n## ")[1:]:
        rows = [ln for ln in table.splitlines() if ln.startswith("|")]
        assert len({ln.count("|") for ln in rows}) == 1, table
