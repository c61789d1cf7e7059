"""Helpers for the pass tests: small models through the real frontend, rules run in isolation,
and a numeric equivalence check of two graphs on seeded inputs (numpy references)."""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from edgecc.frontends.tflite import load_tflite
from edgecc.interp import run_graph
from edgecc.ir import Graph
from edgecc.passes.fold import folded_view
from edgecc.passes.rewrite import Rule, RuleReport, run_rules
from edgecc.tflite_writer import ModelBuilder
from edgecc.verify.reference import seeded_inputs

Q = dict(scale=0.05, zero_point=-3)


def load(data: bytes) -> Graph:
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.tflite"
        p.write_bytes(data)
        return load_tflite(p)


def apply(g: Graph, *rules: Rule) -> tuple[Graph, RuleReport]:
    return run_rules(g, list(rules), debug=True)


def ops(g: Graph) -> list[str]:
    return [n.op for n in g.nodes]


def assert_same_numbers(a: Graph, b: Graph, seeds=(0, 1, 2)) -> None:
    """Same outputs from the numpy references. Some references read their weights as constants,
    so `a` runs with its constant-computing nodes folded (the C check covers folding itself)."""
    a_run = folded_view(a)
    for seed in seeds:
        inputs = seeded_inputs(a, seed)
        ea, eb = run_graph(a_run, inputs), run_graph(b, inputs)
        for va, vb in zip(a.outputs, b.outputs):
            assert va == vb
            assert np.array_equal(ea[va], eb[vb]), (seed, va)


def fc_weights(mb: ModelBuilder, rng, units: int, depth: int):
    w = mb.const("w", rng.integers(-127, 128, (units, depth)).astype(np.int8), scale=0.01)
    b = mb.const("b", rng.integers(-500, 500, (units,)).astype(np.int32), scale=0.0005)
    return w, b


def check_c(data: bytes, seeds=(0, 1), cc: str = "gcc") -> None:
    """Generated C (after all passes) vs TFLite Micro, byte for byte."""
    from edgecc.targets import get_target
    from edgecc.verify import verify_model
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.tflite"
        p.write_bytes(data)
        for seed in seeds:
            r = verify_model(p, get_target("host"), cc=cc, seed=seed)
            assert r.bit_exact, (seed, r.mismatched_bytes, r.first_bad_layer)
