"""Streaming overlap: a window op's output placed partly over the input it consumes.

The bound (plan/stream.py) is checked against the independent checker (plan/check.py) on random
geometries and pass orders: safe everywhere, and exact (one byte more is refused) where the
window's first tap is its first in-image pixel. Generated C runs bit-exact against TFLite Micro
(gcc and clang) with the output placed exactly at the bound, and goes wrong a row beyond it (so
the overlap tests are not vacuous). Plans of random chains and of real models overlap and stay
proven by the checker.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cnnchain import chain_model, random_layers, run_compiled, tflm_outputs
from cnnchain import overlapped as _overlapped
from conftest import shared_model
from edgecc.compiler import compile_model
from edgecc.options import CompileOptions
from edgecc.lower import alias_ops
from edgecc.plan import model_lower_bound
from edgecc.plan.check import PlanError, check_buffers, check_graph_plan, stream_safe
from edgecc.plan.liveness import Buffer, lower_bound
from edgecc.plan.place import place
from edgecc.plan.stream import Geometry, d_max, geometry, stream_pair
from edgecc.targets import get_target
from opcheck import check_model

# The templates whose access order was derived and tested here; a kernel declaring
# Kernel.streams must be one of them (add a template only with its own overlap test).
VERIFIED = {"c/conv_2d.c.j2", "c/depthwise_conv_2d.c.j2", "c/average_pool_2d.c.j2",
            "c/max_pool_2d.c.j2",
            "dsp/conv_2d_6px.c.j2",  # (0, PX, 1): tests/ops/test_dsp_conv_stream.py
            # tests/ops/test_dsp_dwfc.py: test_dsp_depthwise_streams_bit_exact
            "dsp/depthwise_conv_2d_planes.c.j2", "dsp/depthwise_conv_2d_direct.c.j2",
            "dsp/depthwise_conv_2d_one.c.j2"}
VERIFIED |= {"mve/conv_2d_4ch.c.j2", "mve/conv_2d_2ch3px.c.j2",  # tests/ops/test_mve_memory.py
             "mve/depthwise_conv_2d_gather.c.j2"}
VERIFIED |= {"mve/conv_2d_ring.c.j2"}  # tests/ops/test_mve_ring.py, test_mve_memory.py
VERIFIED |= {"neon/conv_2d_4px.c.j2", "neon/depthwise_conv_2d_taps.c.j2"}  # test_neon_streaming.py


# ---- the bound ------------------------------------------------------------------------------

@st.composite
def geometries(draw, dilated: bool = True) -> Geometry:
    k_h, k_w = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    s_h, s_w = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    d_h = draw(st.integers(1, 2)) if dilated else 1
    d_w = draw(st.integers(1, 2)) if dilated else 1
    in_h, in_w = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    same = draw(st.booleans())
    eh, ew = (k_h - 1) * d_h + 1, (k_w - 1) * d_w + 1
    if same:
        out_h, out_w = -(-in_h // s_h), -(-in_w // s_w)
        pad_t = max(((out_h - 1) * s_h + eh - in_h) // 2, 0)
        pad_l = max(((out_w - 1) * s_w + ew - in_w) // 2, 0)
    else:
        out_h, out_w = (in_h - eh) // s_h + 1, (in_w - ew) // s_w + 1
        pad_t = pad_l = 0
    if out_h < 1 or out_w < 1:
        out_h, out_w, pad_t, pad_l = 1, 1, 0, 0
        in_h, in_w = max(in_h, eh), max(in_w, ew)
    esize = draw(st.sampled_from([1, 1, 2]))
    return Geometry(draw(st.integers(1, 2)), in_h, in_w, draw(st.integers(1, 8)), out_h, out_w,
                    draw(st.integers(1, 16)), k_h, k_w, s_h, s_w, d_h, d_w, pad_t, pad_l,
                    esize, esize)


DECLS = st.sampled_from([(1, 1), (1, 2), (1, 0), (2, 0), (2, 3), (3,), (0, 4), (0, 3), (0, 4, 1),
                         (1, 1, 1), (0, 3, 1), (0, 6, 1)])


@settings(max_examples=300, deadline=None)
@given(geo=geometries(), decl=DECLS)
def test_bound_is_proven_by_the_checker(geo, decl):
    in_bytes = geo.batches * geo.in_h * geo.in_w * geo.in_px
    d = d_max(geo, decl)
    assert stream_safe(geo, decl, d, in_bytes) is None
    assert stream_safe(geo, decl, d - 16, in_bytes) is None  # any lower shift is safe too


@settings(max_examples=300, deadline=None)
@given(geo=geometries(dilated=False), decl=DECLS)
def test_bound_is_exact_without_dilation(geo, decl):
    # The first tap of every window is then its first in-image pixel: one byte more overlaps an
    # input byte a later pass still reads, whenever the shifted output still meets the input.
    in_bytes = geo.batches * geo.in_h * geo.in_w * geo.in_px
    d = d_max(geo, decl)
    if d + 1 < in_bytes:
        assert stream_safe(geo, decl, d + 1, in_bytes) is not None


# ---- hand-made overlapping plans, run -------------------------------------------------------

SINGLE = [
    dict(op="conv", k=(3, 3), padding=0, oc=4),                  # SAME, same size
    dict(op="conv", k=(3, 3), stride=(2, 2), padding=0, oc=8),   # stride 2, channels grow
    dict(op="conv", k=(1, 1), oc=12),                            # 1x1 growing: output below
    dict(op="conv", k=(5, 3), padding=1, oc=3),                  # VALID, shrinking
    dict(op="dw", k=(3, 3), padding=0, mult=2),
    dict(op="dw", k=(3, 3), padding=0, dil=(2, 2)),
    dict(op="dw", k=(3, 3), stride=(2, 2), padding=0),
    dict(op="avg", k=(3, 3), stride=(1, 1), padding=0),          # scratch beside the pair
    dict(op="max", k=(2, 2), stride=(2, 2), padding=1),
    dict(op="max", k=(3, 3), stride=(1, 1), padding=0),
]


def _single(case: int, dtype: str = "int8") -> tuple[Path, object]:
    rng = np.random.default_rng(900 + case)
    data = chain_model(rng, 9, 7, 4, [SINGLE[case]], dtype)
    tmp = Path(tempfile.mkdtemp(prefix="edgecc-stream-"))
    path = tmp / "m.tflite"
    path.write_bytes(data)
    return path, compile_model(path, get_target("host"), "model")


@pytest.mark.parametrize("case", range(len(SINGLE)))
def test_output_at_the_bound_is_bit_exact(case):
    path, c = _single(case)
    node = c.lowered[0].node
    _, _, d = stream_pair(c.graph, node, c.lowered[0].kernel.streams)
    c2, x, y, base = _overlapped(c, d)
    # the checker accepts exactly this plan, and refuses it without the declaration
    streams = {0: c.lowered[0].kernel.streams}
    check_graph_plan(c2.graph, c2.plan.offsets, c2.plan.scratch,
                     {0: c.lowered[0].kernel.scratch}, c2.plan.arena, alias_ops(), streams)
    if -d < c.graph.type(y).nbytes:  # the two really overlap
        with pytest.raises(PlanError):
            check_graph_plan(c2.graph, c2.plan.offsets, c2.plan.scratch,
                             {0: c.lowered[0].kernel.scratch}, c2.plan.arena, alias_ops())
    for cc in ("gcc", "clang"):
        for seed in (0, 1):
            outs, _ = run_compiled(c2, path, seed, cc)
            assert outs == tflm_outputs(path, c, seed), (cc, seed)


@pytest.mark.parametrize("case", [0, 2, 4, 7, 9])
def test_output_a_row_beyond_the_bound_goes_wrong(case):
    # Not a plan anyone may emit: shows that the runs above exercise the overlap.
    path, c = _single(case)
    node = c.lowered[0].node
    _, _, d = stream_pair(c.graph, node, c.lowered[0].kernel.streams)
    geo = geometry(c.graph, node)
    c2, *_ = _overlapped(c, d + geo.out_w * geo.out_px)
    with pytest.raises(PlanError):
        check_graph_plan(c2.graph, c2.plan.offsets, c2.plan.scratch,
                         {0: c.lowered[0].kernel.scratch}, c2.plan.arena, alias_ops(),
                         {0: c.lowered[0].kernel.streams})
    outs, _ = run_compiled(c2, path, 0, "gcc")
    assert outs != tflm_outputs(path, c, 0)


@pytest.mark.parametrize("op", ["avg", "max"])
def test_int16_pool_at_the_bound(op):
    case = 7 if op == "avg" else 9
    path, c = _single(case, "int16")
    _, _, d = stream_pair(c.graph, c.lowered[0].node, c.lowered[0].kernel.streams)
    c2, *_ = _overlapped(c, d)
    for cc in ("gcc", "clang"):
        outs, _ = run_compiled(c2, path, 0, cc)
        assert outs == tflm_outputs(path, c, 0), cc


def test_compiled_single_ops_stream():
    for case in (0, 4, 7, 9):
        _, c = _single(case)
        assert c.plan.streaming, case
        assert "streaming overlap (1 ops)" in c.plan.techniques
        node = c.lowered[0].node
        nx, ny = (c.graph.type(v).nbytes for v in (node.inputs[0], node.outputs[0]))
        assert c.plan.arena < nx + ny


def test_only_verified_templates_declare_streaming():
    rng = np.random.default_rng(5)
    data = chain_model(rng, 12, 12, 8, [dict(op="conv", k=(3, 3), oc=8),
                                        dict(op="dw", k=(3, 3)), dict(op="avg", k=(2, 2),
                                                                      stride=(2, 2))])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.tflite"
        path.write_bytes(data)
        for target in ("host", "cortex-m4", "cortex-m55", "x86-avx2", "aarch64"):
            c = compile_model(path, get_target(target), "model")
            for lw in c.lowered:
                if lw.kernel.streams:
                    assert lw.template_path in VERIFIED, (target, lw.template_path)


# ---- placement and planning -----------------------------------------------------------------

@st.composite
def stream_chains(draw) -> list[Buffer]:
    """v0 -> v1 -> ...: v(k) lives at steps k and k+1, so neighbours share one step; some pairs
    stream with a random shift bound."""
    n = draw(st.integers(2, 12))
    bufs = [Buffer(f"v{k}", draw(st.integers(1, 40)) * 16, k, k + 1) for k in range(n)]
    for k in range(1, n):
        if draw(st.booleans()):
            bufs[k].shifts[f"v{k - 1}"] = draw(st.integers(-bufs[k].size - 64, 64))
    return bufs


@settings(max_examples=150, deadline=None)
@given(bufs=stream_chains())
def test_placement_respects_stream_bounds(bufs):
    arena, _ = place(bufs)
    check_buffers(bufs, arena)  # overlaps only within each pair's bound
    assert arena >= lower_bound(bufs)
    plain = [Buffer(b.name, b.size, b.first, b.last) for b in bufs]
    assert arena <= place(plain)[0]


def test_random_chains_stream_bit_exact():
    for seed in range(2):
        rng = np.random.default_rng(300 + seed)
        check_model(chain_model(rng, 10, 9, 3, random_layers(rng, 4)), seeds=(0,))


@pytest.mark.slow
def test_random_chains_stream_bit_exact_sweep():
    for seed in range(2, 12):
        rng = np.random.default_rng(300 + seed)
        check_model(chain_model(rng, 12, 11, 3, random_layers(rng, 5)), seeds=(0,))


@pytest.mark.parametrize("model", ["kws_ref_model", "vww_96_int8", "person_detect"])
def test_real_models_stream_below_lower_bound(model):
    c = compile_model(shared_model(model), get_target("host"), "model")
    lb = model_lower_bound(c.imported)
    assert c.plan.streaming and c.plan.arena < lb
    assert c.plan.arena <= 0.7 * lb or model == "kws_ref_model"


@pytest.mark.slow
@pytest.mark.parametrize("model", ["kws_ref_model", "vww_96_int8", "person_detect"])
def test_real_models_stream_bit_exact(model):
    from edgecc.verify import verify_model
    for cc in ("gcc", "clang"):
        r = verify_model(shared_model(model), get_target("host"), cc=cc)
        assert r.bit_exact, (cc, r.first_bad_layer)


# ---- memory first: portable streaming kernels where they set the peak -----------------------

def _critical_chain() -> Path:
    # 16x16x8 -> dw -> 1x1 conv to 32 channels -> dw stride 2 -> 1x1 conv to 8: the two middle
    # steps hold 10 KiB side by side, the others at most 4 KiB
    rng = np.random.default_rng(11)
    data = chain_model(rng, 16, 16, 8, [dict(op="dw", k=(3, 3)),
                                        dict(op="conv", k=(1, 1), oc=32),
                                        dict(op="dw", k=(3, 3), stride=(2, 2)),
                                        dict(op="conv", k=(1, 1), oc=8)])
    path = Path(tempfile.mkdtemp(prefix="edgecc-stream-")) / "m.tflite"
    path.write_bytes(data)
    return path


def test_memory_first_swaps_only_the_steps_that_set_the_peak():
    from edgecc.compiler import _lower_and_plan, load_model
    from edgecc.lower import lower_graph
    from edgecc.passes import optimize
    from edgecc.lower import prefer_streaming
    imported = load_model(_critical_chain())
    g, _ = optimize(imported)
    m4 = get_target("cortex-m4")
    plain = lower_graph(g, m4)
    # every DSP depthwise and conv kernel here streams (tests/ops/test_dsp_dwfc.py,
    # tests/ops/test_dsp_conv_stream.py)
    assert all(lw.kernel.streams is not None for lw in plain)
    swapped = prefer_streaming(g, plain, m4, alias_ops())
    for old, new in zip(plain, swapped):
        assert new is old or ("cannot stream" in new.kernel.reason and not old.kernel.streams)
    before = _lower_and_plan(g, m4, "any", imported)[2].arena
    after = _lower_and_plan(g, m4, "any", imported, memory_first=True)[2]
    assert after.arena <= before and after.streaming


@pytest.mark.slow
def test_memory_first_bit_exact_on_cortex_m4():
    from edgecc.verify import verify_model
    r = verify_model(_critical_chain(), get_target("cortex-m4"))
    r2 = verify_model(_critical_chain(), get_target("cortex-m4"),
                      options=CompileOptions(tiling="auto"))
    assert r.bit_exact and r2.bit_exact and r2.arena_bytes < r.arena_bytes
