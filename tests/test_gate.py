"""The performance gate (issue 30; benchmarks/gate.py, benchmarks/baseline.py): every model x target
row of benchmarks/baseline.json measured for real under QEMU (one test per row, so `pytest -n 2`
spreads them) and failed when more than 1% worse in instructions, flash or arena, naming the
layers that grew; a kernel slowed in a copy of the sources fails it; the file covers every shared
model on every target it names, in the writer's own format, with a reason line per update."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import warnings

import pytest

from conftest import REPO, SHARED

sys.path.insert(0, str(REPO))  # `benchmarks` is a top-level folder of the checkout, not installed

from benchmarks import baseline as bl  # noqa: E402
from benchmarks.gate import check_row, main, model_files, update_hint  # noqa: E402

BASE = bl.load()
ROWS = sorted(BASE.rows, key=lambda k: (k[1], k[0]))


class BaselineHint(UserWarning):
    """A row measured better than the baseline: the baseline may be updated."""


@pytest.mark.qemu
@pytest.mark.parametrize("model,target", ROWS, ids=[f"{m}@{t}" for m, t in ROWS])
def test_row_within_the_baseline(model, target):
    worse, better = check_row(model_files(SHARED)[model], target, BASE)
    for line in better:
        warnings.warn(BaselineHint(f"{line}: update the baseline "
                                   f"({update_hint([model])})"))
    assert not worse, "\n".join(worse) + f"\nif intended: {update_hint([model])}"


def test_baseline_covers_every_model_on_every_target():
    files = model_files(SHARED)
    assert {"cortex-m4", "cortex-m55"} <= set(BASE.targets)
    missing = [f"{m}@{t}" for t in BASE.targets for m in files if (m, t) not in BASE.rows]
    stale = [f"{m}@{t}" for m, t in BASE.rows if m not in files or t not in BASE.targets]
    assert not missing, f"rows missing from the baseline ({update_hint()}): {missing}"
    assert not stale, f"rows of models or targets no longer gated: {stale}"
    for r in BASE.rows.values():
        assert r["instructions"] > 0 and r["flash_bytes"] > 0 and r["arena_bytes"] > 0, r
        assert re.fullmatch(r"[0-9a-f]{7,40}", r["commit"]), r  # measured on a clean commit
        # the profile build's layers (its hook calls included) add up to about the count
        assert r["layers"] and 0.9 < sum(x[3] for x in r["layers"]) / r["instructions"] < 1.1, r


def test_baseline_file_is_in_the_writers_format():
    """What `--update` writes, byte for byte (one line per row, one per layer, one per reason),
    and every update carries its reason line."""
    assert bl.dumps(BASE) == bl.BASELINE.read_text()
    assert BASE.reasons and all(re.fullmatch(r"\d{4}-\d\d-\d\d [0-9a-f+dirty]+: .+", r)
                                for r in BASE.reasons), BASE.reasons
    head = next(ln for ln in bl.BASELINE.read_text().splitlines() if '"model": ' in ln)
    assert head.startswith('  {"model": ') and head.endswith('"layers": [')


def _row(**kw) -> dict:
    r = dict(model="m", target="cortex-m4", instructions=100000, flash_bytes=5000,
             arena_bytes=1000, commit="abc1234",
             layers=[[0, "CONV_2D", "dsp-conv-6px", 60000], [1, "FULLY_CONNECTED", "dsp-fc-4u",
                                                              39000]])
    r.update(kw)
    return r


def test_compare_fails_over_one_percent_and_names_the_layers():
    base = _row()
    assert bl.compare(base, _row(instructions=101000, layers=None)) == ([], [])  # exactly 1%
    worse, better = bl.compare(base, _row(
        instructions=103000, layers=[[0, "CONV_2D", "dsp-conv-6px", 60000],
                                     [1, "FULLY_CONNECTED", "portable", 42000]]))
    assert not better and len(worse) == 2
    assert worse[0].startswith("m on cortex-m4: instructions 100,000 -> 103,000 (+3.0%")
    assert worse[1] == ("m on cortex-m4: layers that grew: layer 1 FULLY_CONNECTED (portable): "
                        "39,000 -> 42,000 instructions (+7.7%), kernel was dsp-fc-4u")
    for f in ("flash_bytes", "arena_bytes"):
        worse, _ = bl.compare(base, _row(**{f: base[f] * 102 // 100}, layers=None))
        assert len(worse) == 1 and f in worse[0], worse


def test_compare_better_is_a_hint_not_a_failure():
    worse, better = bl.compare(_row(), _row(instructions=90000, arena_bytes=900, layers=None))
    assert worse == []
    assert better == ["m on cortex-m4: instructions 100,000 -> 90,000 (-10.0%)",
                      "m on cortex-m4: arena_bytes 1,000 -> 900 (-10.0%)"]


def test_update_needs_a_reason(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--update", "--models", "hello_world_int8"])
    assert e.value.code == 2 and "--update needs --reason" in capsys.readouterr().err


SLOW = "    { volatile int ec_gate_i; for (ec_gate_i = 0; ec_gate_i < 20000; ++ec_gate_i) { } }\n"


@pytest.mark.qemu
def test_a_slowed_kernel_fails_the_gate(tmp_path):
    """The DSP fully connected kernel's call slowed by a busy loop in a copy of the sources (the
    checkout is not touched): the gate, run on that copy for real under QEMU, fails
    micro_speech_quantized on cortex-m4 naming its instructions and its FULLY_CONNECTED layer,
    not the depthwise layer beside it."""
    model, target = "micro_speech_quantized", "cortex-m4"
    copy = tmp_path / "src"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "results.*", "baseline.json")
    for d in ("edgecc", "templates", "runtime_c", "boards", "benchmarks"):
        shutil.copytree(REPO / d, copy / d, ignore=skip)
    tpl = copy / "templates" / "dsp" / "fully_connected_4u.c.j2"
    text = tpl.read_text()
    call = "    {{ p.fn }}("
    assert call in text
    tpl.write_text(text.replace(call, SLOW + call, 1))
    b = tmp_path / "baseline.json"
    bl.save(bl.Baseline([target], {(model, target): BASE.rows[(model, target)]}, ["r"]), b)
    env = dict(__import__("os").environ, PYTHONPATH=str(copy), EDGECC_SHARED=str(SHARED))
    r = subprocess.run([sys.executable, "-m", "benchmarks.gate", "--models", model, "--targets",
                        target, "--baseline", str(b), "--no-cache"], cwd=copy, env=env,
                       capture_output=True, text=True, timeout=600)
    out = r.stdout
    assert r.returncode == 1, out + r.stderr
    assert f"FAIL {model} on {target}: instructions " in out, out
    layers = next(ln for ln in out.splitlines() if "layers that grew" in ln)
    assert "layer 1 FULLY_CONNECTED (dsp-fc-4u)" in layers and "layer 0" not in layers, layers
    assert "1 row(s) worse" in out and "--update" in out
