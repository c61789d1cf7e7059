"""The fuzzer (issue 13): hostile inputs never give a traceback, a hang, an internal error, C that
fails the strict build, or C that misbehaves under ASan/UBSan.

Cases: seeded byte mutations of the shared models (tests/fuzz/mutate.py: truncation, bit flips,
4-byte boundary values, chunks duplicated/removed, targeted overwrites of shapes, indices,
scales, zero points, options) and structure-aware hostile models written with edgecc's own
writer (tests/fuzz/hostile.py). Each is compiled in-process under a 30 s alarm
(fuzz/harness.py): exit 2 with one line, or exit 0 and then -- for every hostile model, and for
byte mutants whose generated code differs from the unmutated model's (plus a fixed sample of the
rest) -- the C builds under -std=c99 -Wall -Wextra -Werror -pedantic with
-fsanitize=address,undefined and runs 3 random inputs clean with guard bytes intact past the
arena. A few cases also run as real subprocesses.

ONNX (issue 14) alike: hostile ONNX models built with onnx.helper (tests/fuzz/onnx_hostile.py)
and byte / protobuf-field mutants of the shared ONNX models (tests/fuzz/onnx_mutate.py).

The default run holds a fast slice; `-m slow` the long one (2,000+ byte mutants of every shared
TFLite model, byte mutants of every shared ONNX model, and the full hostile sets), chunked so
`-n 2` spreads it over both cores.
"""
from __future__ import annotations

import collections
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SHARED
from fuzz import hostile, onnx_hostile
from fuzz.harness import BAD, compile_case, run_c
from fuzz.mutate import mutants
from fuzz.onnx_mutate import field_mutants, onnx_mutants

REPO = Path(__file__).resolve().parent.parent
SMALL = ["hello_world_int8", "micro_speech_quantized", "trained_lstm_int8"]
C_SAMPLE_EVERY = 25       # byte mutants whose code equals the baseline's: C-run one in this many
C_MAX_MODEL_BYTES = 30_000  # and only for models this small (sanitizer builds of big ones are slow)
C_RUNS_PER_MODEL = 5      # at most this many sanitizer builds per model in the long run
SLOW_MUTANTS_PER_MODEL = 110
SLOW_HOSTILE_CHUNKS = 6
SLOW_ONNX_MUTANTS_PER_MODEL = 40
SLOW_ONNX_FIELD_MUTANTS_PER_MODEL = 70  # x 32 models: 2,240 protobuf field mutants
FAST_ONNX_FIELD_MODELS = ("ox_conv1d_qop_u8", "ox_dscnn_qdq_s8")
FAST_ONNX_MODEL = "ox_conv1d_qop_u8"


def _shared_tflite() -> list[Path]:
    out = []
    for folder in ("tflite", "converter"):
        d = SHARED / "models" / folder
        if not d.is_dir():
            pytest.fail(f"{d} is missing: the shared models must sit beside the checkout")
        out += sorted(d.glob("*.tflite"))
    return out


def _shared_onnx() -> list[Path]:
    """The shared ONNX models and the conformance cases' model.onnx files."""
    d = SHARED / "models"
    if not (d / "onnx_models").is_dir() or not (d / "onnx").is_dir():
        pytest.fail(f"{d}/onnx_models or onnx is missing: the shared models must sit beside "
                    "the checkout")
    return sorted((d / "onnx_models").glob("*.onnx")) + sorted((d / "onnx").glob("*/model.onnx"))


def _code_key(out: Path) -> str:
    """Hash of the generated code without the weights: equal for weight-only mutants."""
    return hashlib.sha256((out / "m.c").read_bytes()).hexdigest()


def run_cases(cases, tmp: Path, c_policy, suffix: str = ".tflite"
              ) -> tuple[collections.Counter, list[str]]:
    """Compile each (name, bytes); C-run the compiled ones c_policy(name, out) selects."""
    counts: collections.Counter = collections.Counter()
    bad = []
    for name, data in cases:
        model, out = tmp / f"case{suffix}", tmp / "out"
        shutil.rmtree(out, ignore_errors=True)
        model.write_bytes(data)
        outcome, code, err = compile_case(model, out)
        if outcome == "compiled" and c_policy(name, out):
            outcome, err = run_c(out)
        counts[outcome] += 1
        if outcome in BAD:
            keep = tmp / "bad"
            keep.mkdir(exist_ok=True)
            (keep / f"{len(bad)}{suffix}").write_bytes(data)
            bad.append(f"{name}: {outcome}: {err.strip()[:400]}")
    return counts, bad


def byte_cases(model: Path, seed: int, count: int, make=None):
    """(name, bytes) of `count` mutants of model by `make` (default: byte and field mutants)."""
    data = model.read_bytes()
    make = make or (onnx_mutants if model.suffix == ".onnx" else mutants)
    label = model.parent.name if model.name == "model.onnx" else model.stem
    for i, (kind, d) in enumerate(make(data, seed, count)):
        yield f"{label}#{i}:{kind}", d


def _byte_policy(baseline: str, small: bool, limit: int | None = None):
    """C-run a compiled mutant when its code differs from the baseline's, or one in
    C_SAMPLE_EVERY of the others; only for small models; at most `limit` runs."""
    seen = {"n": 0, "runs": 0}

    def policy(name: str, out: Path) -> bool:
        seen["n"] += 1
        pick = small and (_code_key(out) != baseline or seen["n"] % C_SAMPLE_EVERY == 0)
        if pick and (limit is None or seen["runs"] < limit):
            seen["runs"] += 1
            return True
        return False
    return policy


def _baseline(model: Path, tmp: Path) -> str:
    out = tmp / "baseline"
    outcome, code, err = compile_case(model, out)
    return _code_key(out) if outcome == "compiled" else ""


def _assert_clean(counts, bad, label):
    """Assert no bad outcome; the counts go to stdout and, when $EDGECC_FUZZ_COUNTS names a
    folder, to LABEL.json there (the long run's tally across xdist workers)."""
    print(f"{label}: {dict(counts)}")
    folder = os.environ.get("EDGECC_FUZZ_COUNTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / f"{label.replace(' ', '_')}.json").write_text(
            json.dumps(dict(counts=dict(counts), bad=bad)))
    assert not bad, f"{len(bad)} bad outcomes:\n" + "\n".join(bad[:20])


# ---- the fast slice (default run) -----------------------------------------------------------

def test_fuzz_fast_hostile_models(tmp_path):
    every = sorted(hostile.cases().items())
    sample = every[::8]  # ~160 of the full set, every mutation kind across the bases
    counts, bad = run_cases(sample, tmp_path, lambda name, out: name.split("-")[1] in
                            ("valid", "const_data_input", "output_is_input", "scale_1e-30",
                             "names_control", "opt_dilation_h_factor_2147483647"))
    _assert_clean(counts, bad, "hostile (fast)")
    assert counts["refused"] > 50 and counts["compiled"] + counts["ok"] > 10


@pytest.mark.parametrize("name", SMALL)
def test_fuzz_fast_byte_mutants(name, tmp_path):
    model = SHARED / "models" / "tflite" / f"{name}.tflite"
    if not model.is_file():
        pytest.fail(f"shared model missing: {model}")
    base = _baseline(model, tmp_path)
    counts, bad = run_cases(byte_cases(model, 7, 60), tmp_path, _byte_policy(base, True, 3))
    _assert_clean(counts, bad, f"bytes {name} (fast)")
    assert counts["refused"] > 10


ONNX_C_RUN = ("valid", "dim_N", "names_control", "names_long", "scale_1e-30", "opset_22",
              "attr_auto_pad_SAME_LOWER_11", "attr_pads_100_100_100_100_3")


def test_fuzz_fast_onnx_hostile_models(tmp_path):
    every = sorted(onnx_hostile.cases().items())
    sample = every[::6]  # ~125 of the full set, every base, most mutation kinds
    counts, bad = run_cases(sample, tmp_path,
                            lambda name, out: name.split("-", 1)[1] in ONNX_C_RUN, ".onnx")
    _assert_clean(counts, bad, "onnx hostile (fast)")
    assert counts["refused"] > 40 and counts["compiled"] + counts["ok"] > 10


def test_fuzz_fast_onnx_byte_mutants(tmp_path):
    model = SHARED / "models" / "onnx_models" / f"{FAST_ONNX_MODEL}.onnx"
    if not model.is_file():
        pytest.fail(f"shared model missing: {model}")
    base = _baseline(model, tmp_path)
    counts, bad = run_cases(byte_cases(model, 7, 30), tmp_path, _byte_policy(base, True, 2),
                            ".onnx")
    _assert_clean(counts, bad, f"bytes {FAST_ONNX_MODEL} (fast)")
    assert counts["refused"] > 5


@pytest.mark.parametrize("case", ["relu-zp_128", "softmax-names_control", "fc-dim_-5",
                                  "reshape_const-valid"])
def test_fuzz_subprocess_sample(case, tmp_path):
    """The same outcomes through a real `python -m edgecc` process (stdin closed, timeout)."""
    base, mutation = case.split("-", 1)
    data = hostile.build(next(b for b in hostile.BASES if b.__name__ == base),
                         hostile.MUTATIONS[mutation])
    model = tmp_path / "m.tflite"
    model.write_bytes(data)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    r = subprocess.run([sys.executable, "-m", "edgecc", "compile", str(model), "-o",
                        str(tmp_path / "o")], capture_output=True, text=True, timeout=120,
                       env=env, stdin=subprocess.DEVNULL)
    assert "Traceback" not in r.stderr and r.returncode in (0, 2), r.stderr
    if r.returncode == 2:
        assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith("edgecc: error: ")
        assert "\x1b" not in r.stderr and "\x07" not in r.stderr
    else:
        assert r.stderr == ""


# ---- the long run (-m slow) -----------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(SLOW_HOSTILE_CHUNKS))
def test_fuzz_slow_hostile_models(chunk, tmp_path):
    every = sorted(hostile.cases().items())
    counts, bad = run_cases(every[chunk::SLOW_HOSTILE_CHUNKS], tmp_path, lambda n, out: True)
    _assert_clean(counts, bad, f"hostile chunk {chunk}")


@pytest.mark.slow
# without ../shared the one parameter's test fails in _shared_tflite (an empty list would skip)
@pytest.mark.parametrize("model", [p.name for p in _shared_tflite()] if SHARED.is_dir()
                         else ["../shared/models missing"])
def test_fuzz_slow_byte_mutants(model, tmp_path):
    path = next(p for p in _shared_tflite() if p.name == model)
    base = _baseline(path, tmp_path)
    counts, bad = run_cases(byte_cases(path, 1000 + len(model), SLOW_MUTANTS_PER_MODEL), tmp_path,
                            _byte_policy(base, path.stat().st_size <= C_MAX_MODEL_BYTES,
                                         C_RUNS_PER_MODEL))
    _assert_clean(counts, bad, f"bytes {model}")


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(SLOW_HOSTILE_CHUNKS))
def test_fuzz_slow_onnx_hostile_models(chunk, tmp_path):
    every = sorted(onnx_hostile.cases().items())
    counts, bad = run_cases(every[chunk::SLOW_HOSTILE_CHUNKS], tmp_path, lambda n, out: True,
                            ".onnx")
    _assert_clean(counts, bad, f"onnx hostile chunk {chunk}")


def _onnx_ids() -> list[str]:
    if not SHARED.is_dir():  # the one parameter's test then fails in _shared_onnx
        return ["../shared/models missing"]
    return [p.parent.name if p.name == "model.onnx" else p.name for p in _shared_onnx()]


def _onnx_seed(path: Path, tmp: Path) -> Path:
    """The model to mutate: a conformance case frozen (its scales, zero points and weights made
    initializers, as tests/test_onnx_conformance.py compiles it), so mutants reach the integer
    ops instead of all being refused for non-constant scales; other models as they are."""
    if path.name != "model.onnx":
        return path
    from test_onnx_conformance import frozen
    tmp.mkdir(parents=True, exist_ok=True)
    return frozen(path.parent, tmp / f"{path.parent.name}.onnx")


def test_fuzz_fast_onnx_integer_op_mutants(tmp_path):
    """Mutants of the frozen QLinearConv and DynamicQuantizeLinear conformance cases, the
    compiled ones C-run under ASan/UBSan (CONV_INTEGER, DYNAMIC_QUANTIZE)."""
    for case in ("test_qlinearconv", "test_dynamicquantizelinear"):
        seed = _onnx_seed(SHARED / "models" / "onnx" / case / "model.onnx", tmp_path / "seed")
        counts, bad = run_cases(byte_cases(seed, 11, 15), tmp_path, _byte_policy("", True, 3),
                                ".onnx")
        _assert_clean(counts, bad, f"bytes {case} (fast)")
        assert counts["ok"] >= 1


@pytest.mark.slow
@pytest.mark.parametrize("model", _onnx_ids())
def test_fuzz_slow_onnx_byte_mutants(model, tmp_path):
    _slow_onnx(model, tmp_path, 2000, SLOW_ONNX_MUTANTS_PER_MODEL, None, "onnx bytes")


def _slow_onnx(model: str, tmp_path: Path, seed: int, count: int, make, label: str) -> None:
    """`count` mutants (by `make`) of one shared ONNX model, the small ones C-run."""
    path = _onnx_seed(next(p for p in _shared_onnx()
                           if model in (p.name, p.parent.name if p.name == "model.onnx" else None)),
                      tmp_path / "seed")
    base = _baseline(path, tmp_path)
    counts, bad = run_cases(byte_cases(path, seed + len(model), count, make),
                            tmp_path, _byte_policy(base, path.stat().st_size <= C_MAX_MODEL_BYTES,
                                                   C_RUNS_PER_MODEL), ".onnx")
    _assert_clean(counts, bad, f"{label} {model}")


# ---- issue 26: protobuf field mutations of the ONNX corpus, and the scale cases -------------

@pytest.mark.parametrize("name", FAST_ONNX_FIELD_MODELS)
def test_fuzz_fast_onnx_field_mutants(name, tmp_path):
    """A seeded sample of the field mutants (spec edge cases among them)."""
    model = SHARED / "models" / "onnx_models" / f"{name}.onnx"
    if not model.is_file():
        pytest.fail(f"shared model missing: {model}")
    base = _baseline(model, tmp_path)
    counts, bad = run_cases(byte_cases(model, 26, 20, field_mutants), tmp_path,
                            _byte_policy(base, True, 2), ".onnx")
    _assert_clean(counts, bad, f"onnx fields {name} (fast)")
    assert counts["refused"] > 5


@pytest.mark.slow
@pytest.mark.parametrize("model", _onnx_ids())
def test_fuzz_slow_onnx_field_mutants(model, tmp_path):
    _slow_onnx(model, tmp_path, 2600, SLOW_ONNX_FIELD_MUTANTS_PER_MODEL, field_mutants,
               "onnx fields")


@pytest.mark.slow
def test_fuzz_slow_scale_cases(tmp_path):
    """The scale cases (tests/fuzz/scale.py): compiled under a 120 s alarm each, every one
    compiled or refused in one line."""
    from fuzz import scale
    counts, bad = collections.Counter(), []
    for name, (suffix, data) in scale.cases().items():
        model, out = tmp_path / f"case{suffix}", tmp_path / "out"
        shutil.rmtree(out, ignore_errors=True)
        model.write_bytes(data)
        outcome, code, err = compile_case(model, out, timeout=120)
        counts[outcome] += 1
        if outcome in BAD:
            bad.append(f"{name}: {outcome}: {err.strip()[:400]}")
    _assert_clean(counts, bad, "scale")
