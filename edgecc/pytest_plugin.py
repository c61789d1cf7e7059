"""The pytest plugin (entry point `pytest11: edgecc`): the `edgecc_run` fixture.

Owns: running a compiled model on the host or an emulated board from a user's test, so the test
is three lines:

    def test_keyword(edgecc_run):
        scores = edgecc_run("kws.tflite", inputs=features, board="mps2-an386")[0]
        assert scores.argmax() == YES

`edgecc_run(model, inputs, board=..., target=..., frames=..., io=...)` is edgecc.run (builds are
cached per model and options); `edgecc_run.reference(model, inputs)` gives TFLite Micro's outputs
(LiteRT BUILTIN_REF for ops TFLite Micro lacks); `edgecc_run.assert_exact(model, inputs=None)`
runs both (seeded random inputs when none are given) and fails on any differing byte. The option
`--edgecc-board NAME` sets the board of calls that name neither a board nor a target.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgecc.api import run
from edgecc.compiler import load_model
from edgecc.verify.reference import run_reference, seeded_inputs


def pytest_addoption(parser):
    group = parser.getgroup("edgecc")
    group.addoption("--edgecc-board", default=None, metavar="NAME",
                    help="board (boards/ name or file) for edgecc_run calls that give none")


class EdgeccRunner:
    """The `edgecc_run` fixture's value: call it like edgecc.run."""

    def __init__(self, board: str | None = None):
        self.board = board

    def _where(self, kw: dict) -> dict:
        if kw.get("board") is None and kw.get("target") is None and self.board:
            kw["board"] = self.board
        return kw

    def __call__(self, model: str | Path, inputs=None, **kw) -> list[np.ndarray]:
        return run(model, inputs=inputs, **self._where(kw))

    def reference(self, model: str | Path, inputs) -> list[np.ndarray]:
        xs = [inputs] if isinstance(inputs, np.ndarray) else list(inputs)
        return run_reference(model, xs, len(load_model(model).outputs))[0]

    def assert_exact(self, model: str | Path, inputs=None, seed: int = 0,
                     **kw) -> list[np.ndarray]:
        """Run on the board and in the reference; every output byte must match."""
        if inputs is None:
            inputs = seeded_inputs(load_model(model), seed)
        got = self(model, inputs, **kw)
        ref = self.reference(model, inputs)
        for i, (a, b) in enumerate(zip(got, ref)):
            b = np.asarray(b).reshape(a.shape)
            if a.tobytes() != b.tobytes():
                n = int(np.sum(a.view(np.uint8) != b.view(np.uint8)))
                pytest.fail(f"{Path(model).name} output {i}: {n} bytes differ from the reference")
        return got


@pytest.fixture
def edgecc_run(request) -> EdgeccRunner:
    """Run a compiled model on the host or an emulated board (see the module docstring)."""
    return EdgeccRunner(request.config.getoption("--edgecc-board", default=None))
