"""Patch-based (tiled) execution: the transformation, its numerics, its C, and its choice.

Random CNN chains (tests/cnnchain.py) are tiled with random stages and grids: the numpy
references of the tiled and the whole graph agree on every output, the generated C agrees with
TFLite Micro (gcc and clang), also when the plan does not share the stage output through the
patches. `--tiling auto` and a board budget switch tiling on where it pays; the two reference
models reach 0.6 x LB bit-exact.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest

from cnnchain import (chain_model, random_layers, run_compiled, tflm_outputs, tflm_tensors)
from conftest import shared_model
from edgecc.options import CompileOptions
from edgecc.cli import main
from edgecc.codegen import render
from edgecc.compiler import Compiled, _lower_and_plan, compile_model, load_model
from edgecc.frontends.tflite import load_tflite
from edgecc.interp import run_graph
from edgecc.ir import verify
from edgecc.lower import alias_ops, lower_graph
from edgecc.passes import optimize
from edgecc.plan import model_lower_bound, plan_model
from edgecc.plan.tiling import Stage, apply_tiling, choose, patch_boxes, stage_ok
from edgecc.plan.stream import geometry
from edgecc.targets import get_target
from edgecc.verify.reference import seeded_inputs
from opcheck import check_model

TFLM_ARENA = {"vww_96_int8": 103672, "person_detect": 85264}


def _write(data: bytes) -> Path:
    path = Path(tempfile.mkdtemp(prefix="edgecc-tile-")) / "m.tflite"
    path.write_bytes(data)
    return path


def compile_tiled(path: Path, stage: Stage, target: str = "host",
                  inplace: bool = True) -> Compiled:
    """The model with `stage` tiled (no choice), lowered, planned and rendered."""
    imported = load_model(path)
    g0, results = optimize(imported)
    gt = apply_tiling(g0, stage)
    if inplace:
        g, lowered, plan = _lower_and_plan(gt, get_target(target), "any", imported)
    else:  # a plan that copies the stage output at every patch instead of sharing it
        lowered = lower_graph(gt, get_target(target))
        pos = {id(n): i for i, n in enumerate(gt.nodes)}
        g, plan = plan_model(gt, {pos[id(lw.node)]: lw.kernel.scratch for lw in lowered},
                             alias_ops(), reorder=False, inplace=False)
        assert not plan.inplace
    return Compiled(imported, g, results, lowered, plan, render(g, lowered, plan, "model"),
                    "model")


def _stages(g) -> list[tuple[int, int]]:
    return [(a, b) for a in range(len(g.nodes)) for b in range(a, len(g.nodes))
            if stage_ok(g, a, b)]


# ---- the transformation ---------------------------------------------------------------------

def test_tiled_references_equal_whole_tensor_references():
    checked = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        g = load_tflite(_write(chain_model(rng, int(rng.integers(5, 14)),
                                           int(rng.integers(5, 14)), int(rng.integers(1, 4)),
                                           random_layers(rng, int(rng.integers(1, 5))))))
        g0, _ = optimize(g)
        stages = _stages(g0)
        if not stages:
            continue
        a, b = stages[int(rng.integers(len(stages)))]
        geo = geometry(g0, g0.nodes[b])
        st = Stage(a, b, int(rng.integers(1, geo.out_h + 1)), int(rng.integers(1, geo.out_w + 1)))
        gt = apply_tiling(g0, st)
        verify(gt)
        inputs = seeded_inputs(g0, seed)
        want, got = run_graph(g0, inputs), run_graph(gt, inputs)
        for v in g0.outputs:
            assert np.array_equal(want[v], got[v]), (seed, st)
        # every patch output box is what its clone computes; the boxes tile the stage output
        cover = np.zeros((geo.out_h, geo.out_w), int)
        for n in gt.nodes:
            if n.op == "EDGECC_PATCH_WRITE":
                y0, y1, x0, x1 = n.attrs["region"]
                cover[y0:y1, x0:x1] += 1
                assert gt.type(n.inputs[1]).shape[1:3] == (y1 - y0, x1 - x0)
        assert (cover == 1).all()
        checked += 1
    assert checked >= 25


def test_patch_boxes_interior_and_border():
    # a 3x3 stride-1 SAME conv then a 3x3 stride-2 SAME depthwise, output 4x4 of an 8x8 input
    rng = np.random.default_rng(1)
    g0, _ = optimize(load_tflite(_write(chain_model(
        rng, 8, 8, 2, [dict(op="conv", k=(3, 3), oc=2), dict(op="dw", k=(3, 3), stride=(2, 2))]))))
    geos = [geometry(g0, n) for n in g0.nodes]
    # per op: (input box, explicit padding (t, b, l, r), output box)
    first = patch_boxes(geos, (0, 2, 0, 2))   # top-left: the conv keeps its top/left padding
    assert first == [((0, 6, 0, 6), (1, 0, 1, 0), (0, 5, 0, 5)),
                     ((0, 5, 0, 5), (0, 0, 0, 0), (0, 2, 0, 2))]
    last = patch_boxes(geos, (2, 4, 2, 4))    # bottom-right: halo from row 3, bottom padding
    assert last == [((3, 8, 3, 8), (0, 1, 0, 1), (4, 8, 4, 8)),
                    ((4, 8, 4, 8), (0, 1, 0, 1), (2, 4, 2, 4))]


def test_stage_must_be_a_chain():
    rng = np.random.default_rng(2)
    g0, _ = optimize(load_tflite(_write(chain_model(
        rng, 8, 8, 2, [dict(op="conv", k=(3, 3), oc=2), dict(op="max", k=(2, 2))]))))
    assert stage_ok(g0, 0, 1) and not stage_ok(g0, 1, 0) and not stage_ok(g0, 0, 5)
    with pytest.raises(ValueError):
        apply_tiling(g0, Stage(1, 0, 2, 2))


# ---- generated C ----------------------------------------------------------------------------

FORCED = [  # (layers, stage (first, last), grid)
    ([dict(op="conv", k=(3, 3), stride=(2, 2), oc=6), dict(op="dw", k=(3, 3)),
      dict(op="conv", k=(1, 1), oc=8), dict(op="dw", k=(3, 3), stride=(2, 2))], (0, 3), (2, 3)),
    ([dict(op="conv", k=(3, 3), oc=4), dict(op="dw", k=(3, 3), dil=(2, 2)),
      dict(op="avg", k=(3, 3)), dict(op="conv", k=(1, 1), oc=3)], (1, 2), (3, 2)),
    ([dict(op="dw", k=(3, 3), stride=(2, 2), mult=4), dict(op="max", k=(2, 2), stride=(2, 2),
                                                          padding=1),
      dict(op="conv", k=(5, 5), padding=1, oc=5)], (0, 2), (2, 2)),
]


@pytest.mark.parametrize("case", range(len(FORCED)))
def test_forced_tiling_bit_exact(case):
    layers, (a, b), (r, c) = FORCED[case]
    rng = np.random.default_rng(40 + case)
    path = _write(chain_model(rng, 16, 14, 3, layers))
    for inplace in (True, False):
        comp = compile_tiled(path, Stage(a, b, r, c), inplace=inplace)
        assert sum(n.op == "EDGECC_PATCH_WRITE" for n in comp.graph.nodes) == r * c
        for cc in ("gcc", "clang"):
            outs, _ = run_compiled(comp, path, 0, cc)
            assert outs == tflm_outputs(path, comp, 0), (inplace, cc)


def test_auto_tiling_random_chain_bit_exact():
    # a wide early stage: auto tiles it, the arena shrinks, gcc and clang match TFLM
    rng = np.random.default_rng(7)
    data = chain_model(rng, 24, 24, 3, [dict(op="conv", k=(3, 3), oc=8),
                                        dict(op="conv", k=(1, 1), oc=16),
                                        dict(op="dw", k=(3, 3), stride=(2, 2)),
                                        dict(op="conv", k=(1, 1), oc=4)])
    path = _write(data)
    plain = compile_model(path, get_target("host"), "model", CompileOptions(tiling="off"))
    tiled = compile_model(path, get_target("host"), "model", CompileOptions(tiling="auto"))
    assert "tiling" in tiled.stats and tiled.plan.arena < plain.plan.arena
    assert any(t.startswith("tiling:") for t in tiled.plan.techniques)
    assert tiled.weights_bytes == plain.weights_bytes  # clones share their constants
    check_model(data, seeds=(0,), options=CompileOptions(tiling="auto"))


def test_budget_switches_tiling_on():
    rng = np.random.default_rng(7)
    path = _write(chain_model(rng, 24, 24, 3, [dict(op="conv", k=(3, 3), oc=8),
                                               dict(op="conv", k=(1, 1), oc=16),
                                               dict(op="dw", k=(3, 3), stride=(2, 2))]))
    plain = compile_model(path, get_target("host"), "model")
    assert "tiling" not in plain.stats  # default: off without a budget
    budget = plain.plan.arena - 1
    c = compile_model(path, get_target("host"), "model", CompileOptions(ram_budget=budget))
    assert c.stats["tiling"]["arena"] <= budget
    # the cheapest tiling that fits: fewer extra MACs than the unconstrained choice
    auto = compile_model(path, get_target("host"), "model", CompileOptions(tiling="auto"))
    assert c.stats["tiling"]["extra_macs"] <= auto.stats["tiling"]["extra_macs"]
    off = compile_model(path, get_target("host"), "model", CompileOptions(tiling="off", ram_budget=budget))
    assert "tiling" not in off.stats


def test_choose_prefers_fewer_macs_under_a_budget():
    g0, _ = optimize(load_model(shared_model("person_detect")))
    lowered = lower_graph(g0, get_target("host"))
    pos = {id(n): i for i, n in enumerate(g0.nodes)}
    traits = {pos[id(lw.node)]: (lw.kernel.streams, lw.kernel.scratch) for lw in lowered}
    free = choose(g0, traits, alias_ops())
    tight = choose(g0, traits, alias_ops(), budget=30000)
    assert free and tight and all(t.peak <= 30000 for t in tight)
    assert tight[0].extra_macs <= free[0].extra_macs
    assert [t.extra_macs for t in tight] == sorted(t.extra_macs for t in tight)


def test_cli_tiling_flag(capsys, tmp_path):
    rng = np.random.default_rng(7)
    path = _write(chain_model(rng, 24, 24, 3, [dict(op="conv", k=(3, 3), oc=8),
                                               dict(op="conv", k=(1, 1), oc=16),
                                               dict(op="dw", k=(3, 3), stride=(2, 2))]))
    assert main(["plan", str(path), "--tiling", "auto", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["tiling"]["patches"] >= 2 and rep["ratio"] < 1
    assert main(["compile", str(path), "--tiling", "off", "-o", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tiling"] is None
    with pytest.raises(SystemExit) as e:
        main(["compile", str(path), "--tiling", "always", "-o", str(tmp_path)])
    assert e.value.code == 2


# ---- the reference models -------------------------------------------------------------------

@pytest.mark.parametrize("model", ["vww_96_int8", "person_detect"])
def test_reference_models_reach_six_tenths_of_lb(model):
    c = compile_model(shared_model(model), get_target("host"), "model", CompileOptions(tiling="auto"))
    lb = model_lower_bound(c.imported)
    assert lb == 55296
    assert c.plan.arena <= 0.6 * lb and c.plan.arena <= TFLM_ARENA[model]
    assert c.stats["tiling"]["extra_macs"] > 0


def test_person_detect_tiled_bit_exact_layer_by_layer():
    path = shared_model("person_detect")
    c = compile_model(path, get_target("host"), "model", CompileOptions(tiling="auto"))
    outs, traces = run_compiled(c, path, 0, "gcc", trace=True)
    assert outs == tflm_outputs(path, c, 0)
    ref = tflm_tensors(path, c, 0)
    compared = [i for i in traces if i in ref]
    assert len(compared) >= 10
    for i in compared:
        assert traces[i] == np.ascontiguousarray(ref[i]).tobytes(), i


@pytest.mark.slow
@pytest.mark.parametrize("model", ["vww_96_int8", "person_detect"])
def test_reference_models_tiled_bit_exact(model):
    from edgecc.verify import verify_model
    for cc in ("gcc", "clang"):
        for seed in (0, 1):
            r = verify_model(shared_model(model), get_target("host"), cc=cc, seed=seed,
                             options=CompileOptions(tiling="auto"))
            assert r.bit_exact and r.arena_bytes <= 0.6 * 55296, (cc, seed, r.first_bad_layer)


@pytest.mark.slow
def test_tiled_model_bit_exact_on_cortex_m4():
    from edgecc.verify import verify_model
    r = verify_model(shared_model("person_detect"), get_target("cortex-m4"),
                     options=CompileOptions(tiling="auto"))
    assert r.bit_exact and "tiling" in r.extra
