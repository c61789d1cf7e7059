"""Every model of the ONNX corpus (tests/onnx_corpus/) compiles and verifies over 3 frames:
on the host (gcc) in the quick run; host clang, cortex-m4, cortex-m55, aarch64 and x86-avx2
under the slow marker. How outputs are compared is the case's `check` (see the corpus)."""
from __future__ import annotations

import pytest

from edgecc.targets import get_target
from edgecc.verify import verify_model

from onnx_corpus import EXACT, FLOAT, LSB, all_cases

CASES = all_cases()
SLOW_TARGETS = ["host-clang", "cortex-m4", "cortex-m55", "aarch64", "x86-avx2"]


def _check(case, r):
    d = r.as_json()
    if case.check == EXACT:
        assert r.bit_exact, d
    elif case.check == FLOAT:
        assert r.passed, d
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


@pytest.mark.slow
@pytest.mark.parametrize("target", SLOW_TARGETS)
@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_corpus_targets(case, target, tmp_path):
    if target == "host-clang":
        _run(case, "host", "clang", tmp_path)
    else:
        _run(case, target, None, tmp_path)


def test_corpus_is_large_enough():
    assert len(CASES) >= 40, f"the corpus has {len(CASES)} models; issue 25 asks for 40+"
