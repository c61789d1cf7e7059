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
from edgecc.verify.reference import run_litert_ref, run_tflm, seeded_inputs
from edgecc.verify.tolerance import count_mismatches


def check_reference(path: Path, seed: int = 0) -> None:
    g = load_tflite(path)
    inputs = seeded_inputs(g, seed)
    ref, _ = run_tflm(path, inputs, len(g.outputs))
    assert_outputs_equal(run_graph(g, inputs), g.outputs, ref, "TFLM")


def assert_outputs_equal(env: dict, outputs: list, ref: list[np.ndarray], oracle: str) -> None:
    """The numpy reference's outputs (env[v] for v in outputs) equal the oracle's: dtype, bytes."""
    for i, v in enumerate(outputs):
        got = env[v]
        assert got.dtype == ref[i].dtype, (got.dtype, ref[i].dtype)
        a, b = got.ravel(), ref[i].ravel()
        diff = np.flatnonzero(a != b)
        if a.dtype.kind == "f":  # a NaN matches a NaN (their payloads are the libm's business)
            diff = diff[~(np.isnan(a[diff]) & np.isnan(b[diff]))]
        assert diff.size == 0, (f"numpy reference differs from {oracle} in {diff.size} of "
                                f"{got.size} elements, first at {diff[0]}: "
                                f"{got.ravel()[diff[0]]} vs {ref[i].ravel()[diff[0]]}")


def check_model(data: bytes, seeds=(0, 1), compilers=("gcc", "clang"), target: str = "host",
                options=None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.tflite"
        path.write_bytes(data)
        for seed in seeds:
            check_reference(path, seed)
        for cc in compilers:
            for seed in seeds:
                r = verify_model(path, get_target(target), cc=cc, seed=seed, options=options)
                assert r.passed, (cc, seed, r.mismatched_bytes, r.first_bad_layer)


# ---- ops TFLite Micro lacks: LiteRT's builtin reference kernels as the oracle ------------------

def check_model_litert(data: bytes, seeds=(0, 1), compilers=("gcc", "clang"),
                       target: str = "host") -> None:
    """check_model for ops TFLite Micro lacks: numpy reference and generated C vs LiteRT ref."""
    from edgecc.codegen import write_files
    from edgecc.compiler import compile_model
    from edgecc.build.harness import harness_c, parse_output
    from edgecc.build.host import build_host, run_host
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = tmp / "m.tflite"
        path.write_bytes(data)
        tgt = get_target(target)
        c = compile_model(path, tgt, "model")
        write_files(c.files, tmp / "gen")
        for seed in seeds:
            inputs = seeded_inputs(c.graph, seed)
            ref = run_litert_ref(path, inputs, len(c.graph.outputs))
            env = run_graph(load_tflite(path), inputs)
            g = c.graph
            assert_outputs_equal(env, g.outputs, ref, "LiteRT")
            (tmp / "harness.c").write_text(harness_c("model", inputs, len(g.outputs)))
            for cc in compilers:
                exe = build_host(tmp / "gen", tmp / "harness.c", tmp / f"prog_{cc}", tgt, cc)
                outs, _, done = parse_output(run_host(exe))
                assert done
                for i, r in enumerate(ref):
                    assert count_mismatches(outs[i], r) == 0, (cc, seed, i)


# ---- several frames on several targets, the oracle verify picks --------------------------------

def check_frames(data: bytes, oracle: str, targets=("host", "cortex-m4"), frames: int = 3,
                 seed: int = 0) -> None:
    """The numpy reference and the generated C on each target equal `oracle` ("tflite-micro" or
    "litert-builtin-ref", the one verify picks) on `frames` consecutive seeded frames, state (if
    any) carried from one frame to the next."""
    from edgecc.verify.reference import run_reference_frames, seeded_frames
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.tflite"
        path.write_bytes(data)
        g = load_tflite(path)
        ins = seeded_frames(g, seed, frames)
        refs, used = run_reference_frames(path, ins, len(g.outputs))
        assert used == oracle, used
        state: dict = {}
        for k, (x, ref) in enumerate(zip(ins, refs)):
            assert_outputs_equal(run_graph(g, x, state), g.outputs, ref, f"{oracle} frame {k}")
        for t in targets:
            r = verify_model(path, get_target(t), seed=seed, frames=frames)
            assert r.oracle == oracle, r.oracle
            assert r.bit_exact, (t, r.mismatched_bytes, r.first_bad_layer, r.first_bad_frame)
