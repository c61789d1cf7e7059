"""State across runs: variable tensors (LSTM and SVDF state) carried from one run to the next.

The numpy reference (interp.run_graph with one `state` dict) against TFLite Micro invoked on one
interpreter over consecutive frames, the state region of the plan, and `name_reset` in the C.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import shared_model
from edgecc.compiler import compile_model
from edgecc.frontends.tflite import load_tflite
from edgecc.interp import run_graph
from edgecc.targets import get_target
from edgecc.verify.reference import run_tflm_frames, seeded_frames

STATEFUL = ["trained_lstm_int8", "micro_speech_lstm", "keyword_scrambled_8bit"]


@pytest.mark.parametrize("model", STATEFUL)
def test_reference_keeps_state_like_tflm(model):
    path = shared_model(model)
    g = load_tflite(path)
    frames = seeded_frames(g, 0, 5)
    ref = run_tflm_frames(path, frames, len(g.outputs), preserve=True, n_tensors=len(g.values))
    state: dict = {}
    for k, (inputs, (outs, tensors)) in enumerate(zip(frames, ref)):
        env = run_graph(g, inputs, state)
        for n in g.nodes:
            v = n.outputs[0]
            if int(v[1:]) in tensors:
                np.testing.assert_array_equal(env[v].ravel(), tensors[int(v[1:])].ravel(),
                                              err_msg=f"frame {k} {n.name}")
    assert set(state) == set(g.variables())


def test_state_matters():
    """Resetting before every frame differs from TFLite Micro (so the tests above can fail)."""
    path = shared_model("trained_lstm_int8")
    g = load_tflite(path)
    frames = seeded_frames(g, 0, 5)
    ref = run_tflm_frames(path, frames, len(g.outputs))
    fresh = [run_graph(g, f)[g.outputs[0]] for f in frames]
    assert any(not np.array_equal(a.ravel(), r[0].ravel()) for a, (r, _) in zip(fresh, ref))


def test_state_region_in_plan_and_reset_in_c():
    c = compile_model(shared_model("keyword_scrambled_8bit"), get_target("host"), "kw")
    g = c.graph
    assert c.plan.state == g.variables() and len(c.plan.state) == 7
    state_bufs = [b for b in c.plan.buffers if b.name.startswith("state:")]
    assert all(b.first == 0 and b.last == len(g.nodes) - 1 for b in state_bufs)
    end = max(b.offset + b.size for b in state_bufs)
    others = [b for b in c.plan.buffers if not b.name.startswith("state:")]
    assert min(b.offset for b in others) >= end  # nothing planned over the state region
    src = c.files["kw.c"]
    reset = src[src.index("void kw_reset(uint8_t *arena) {"):]
    reset = reset[:reset.index("\n}\n")]
    assert reset.count("memset(arena + ") + reset.count("memcpy(arena + ") == 7
    run = src[src.index("int kw_run("):src.index("void kw_reset(uint8_t *arena) {")]
    assert "memset" not in run and "kw_reset" not in run  # name_run never resets
    assert "void kw_reset(uint8_t *arena);" in c.files["kw.h"]
    assert c.plan.state_bytes == end and c.plan.arena <= c.plan.model_lower_bound
    from edgecc.plan_view import plan_report, plan_svg
    kinds = {r["kind"] for r in plan_report(g, c.plan)["buffers"]}
    assert "state" in kinds and "<svg" in plan_svg(g, c.plan, "kw")


def test_stateless_model_reset_is_a_no_op():
    c = compile_model(shared_model("hello_world_int8"), get_target("host"), "hw")
    src = c.files["hw.c"]
    body = src[src.index("void hw_reset(uint8_t *arena) {"):]
    body = body[:body.index("\n}\n")]
    assert "(void)arena;" in body and "mem" not in body
    assert c.plan.state == []
