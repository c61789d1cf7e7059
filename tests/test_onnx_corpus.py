"""Every model of the ONNX corpus (tests/onnx_corpus/) compiles and verifies over 3 frames:
on the host (gcc) in the quick run; host clang, cortex-m4, cortex-m55, aarch64 and x86-avx2
under the slow marker. How outputs are compared is the case's `check` (see the corpus).

The slow sweep gives each case one of the five other targets in turn (case i runs on target
i mod 5), so every case runs off the host and every target sees a fifth of the corpus within CI's
time; `EDGECC_CORPUS_ALL_TARGETS=1` runs the whole matrix (about 5x longer)."""
from __future__ import annotations

import os

import pytest

from edgecc.targets import get_target
from edgecc.verify import verify_model
from edgecc.verify.tolerance import FLOAT_RTOL

from onnx_corpus import EXACT, FLOAT, LSB, all_cases

CASES = all_cases()
SLOW_TARGETS = ["host-clang", "cortex-m4", "cortex-m55", "aarch64", "x86-avx2"]


def _check(case, r):
    d = r.as_json()
    if case.check == EXACT:
        assert r.bit_exact, d
    elif case.check == FLOAT:  # float32 outputs within 1e-5 relative, integer ones exact
        assert r.passed and r.mismatched_bytes == 0, d
        assert "max_rel_error" in d and d["max_rel_error"] <= FLOAT_RTOL == d["float_rtol"], d
        print(f"{case.name}: max relative error {d['max_rel_error']:.2e} "
              f"({d['float_tolerance']})")
    elif case.check == LSB:  # onnxruntime computes in float: one step allowed, and counted
        assert r.passed, d
        diff = int(d.get("values_differing", 0))
        assert diff == int(d.get("values_off_by_one", 0)), d  # none more than one step away
        print(f"{case.name} on {r.target}: {diff} values differ from onnxruntime by one step "
              f"({r.mismatched_bytes} of {r.total_bytes} output bytes)")
    else:
        raise AssertionError(f"unknown check {case.check!r}")


def _run(case, target, cc, tmp_path):
    path = case.build(tmp_path)
    r = verify_model(path, get_target(target), cc=cc, frames=3)
    _check(case, r)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name,
                                               marks=[pytest.mark.slow] if c.slow else [])
                                  for c in CASES])
def test_corpus_host(case, tmp_path):
    _run(case, "host", None, tmp_path)


def _matrix():
    every = os.environ.get("EDGECC_CORPUS_ALL_TARGETS") == "1"
    return [pytest.param(c, t, id=f"{c.name}-{t}") for i, c in enumerate(CASES)
            for j, t in enumerate(SLOW_TARGETS) if every or i % len(SLOW_TARGETS) == j]


@pytest.mark.slow
@pytest.mark.parametrize(("case", "target"), _matrix())
def test_corpus_targets(case, target, tmp_path):
    if target == "host-clang":
        _run(case, "host", "clang", tmp_path)
    else:
        _run(case, target, None, tmp_path)


def test_corpus_is_large_enough():
    assert len(CASES) >= 40, f"the corpus has {len(CASES)} models; issue 25 asks for 40+"
