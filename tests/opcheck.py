"""Checking one small model three ways: numpy reference vs TFLite Micro, generated C vs TFLite Micro.

Used by tests/ops/: build a model with edgecc.tflite_writer, then `check_model(data)` asserts that
(1) the numpy reference reproduces every TFLM output byte, and (2) the generated C built with gcc
and clang on the host reproduces them too.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from edgecc.frontends.tflite import load_tflite
from edgecc.interp import run_graph
from edgecc.targets import get_target
from edgecc.verify import verify_model
from edgecc.verify.reference import run_tflm, seeded_inputs


def check_reference(path: Path, seed: int = 0) -> None:
    g = load_tflite(path)
    inputs = seeded_inputs(g, seed)
    ref, _ = run_tflm(path, inputs, len(g.outputs))
    env = run_graph(g, inputs)
    for i, v in enumerate(g.outputs):
        got = env[v]
        assert got.dtype == ref[i].dtype, (got.dtype, ref[i].dtype)
        diff = np.flatnonzero(got.ravel() != ref[i].ravel())
        assert diff.size == 0, (f"numpy reference differs from TFLM in {diff.size} of {got.size} "
                                f"elements, first at {diff[0]}: {got.ravel()[diff[0]]} vs "
                                f"{ref[i].ravel()[diff[0]]}")


def check_model(data: bytes, seeds=(0, 1), compilers=("gcc", "clang"), target: str = "host") -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.tflite"
        path.write_bytes(data)
        for seed in seeds:
            check_reference(path, seed)
        for cc in compilers:
            for seed in seeds:
                r = verify_model(path, get_target(target), cc=cc, seed=seed)
                assert r.bit_exact, (cc, seed, r.mismatched_bytes, r.first_bad_layer)
