"""The Cortex-M DSP convolution's streaming declaration and what it buys in RAM.

ec_dsp_conv_2d_6px_s8 (runtime_c/dsp/conv_2d.h) sign-extends the fields of PX (EC_DSP_CONV_PX)
consecutive output pixels into its scratch before it writes any of their outputs, so it declares
`streams = (0, PX, 1)` (plan/stream.py): its output may sit over the input it consumes up to the bound. Run under
QEMU with the output placed exactly at the bound (bit-exact) and a block beyond it (wrong, so the
overlap is exercised); on the shared models its scratch never lifts a step above the lower bound.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

from cnnchain import chain_model, overlapped, run_compiled, tflm_outputs
from conftest import shared_model
from edgecc.compiler import _lower_and_plan, compile_model, load_model
from edgecc.lower import alias_ops
from edgecc.lower.dsp.conv import PX
from edgecc.passes import optimize
from edgecc.plan import model_lower_bound
from edgecc.plan.check import PlanError, check_graph_plan
from edgecc.plan.liveness import buffers_for, lower_bound
from edgecc.plan.stream import geometry, stream_pair
from edgecc.targets import get_target

# 1x1 in place with in_c == out_c (the bound is 0: fully in place), 1x1 growing, 3x3 SAME gathered
# with a partial last block, the one-channel first layer (10x4 stride 2).
CASES = [
    (9, 7, 16, dict(op="conv", k=(1, 1), oc=16)),
    (5, 5, 8, dict(op="conv", k=(1, 1), oc=12, act=1)),
    (7, 5, 4, dict(op="conv", k=(3, 3), padding=0, oc=4)),
    (13, 6, 1, dict(op="conv", k=(10, 4), stride=(2, 2), padding=0, oc=8, act=1)),
]


def _compiled(case: int):
    h, w, c, layer = CASES[case]
    data = chain_model(np.random.default_rng(700 + case), h, w, c, [layer])
    path = Path(tempfile.mkdtemp(prefix="edgecc-dspstream-")) / "m.tflite"
    path.write_bytes(data)
    comp = compile_model(path, get_target("cortex-m4"), "model")
    assert [lw.kernel.variant for lw in comp.lowered] == ["dsp-conv-6px"]
    assert comp.lowered[0].kernel.streams == (0, PX, 1)
    return path, comp


@pytest.mark.qemu
@pytest.mark.parametrize("case", range(len(CASES)))
def test_dsp_conv_output_at_the_bound_is_bit_exact(case):
    path, c = _compiled(case)
    _, _, d = stream_pair(c.graph, c.lowered[0].node, c.lowered[0].kernel.streams)
    if case == 0:
        assert d == 0  # 1x1, same depth: the output may sit exactly on its input
    c2 = overlapped(c, d)[0]
    check_graph_plan(c2.graph, c2.plan.offsets, c2.plan.scratch, {0: c.lowered[0].kernel.scratch},
                     c2.plan.arena, alias_ops(), {0: c.lowered[0].kernel.streams})
    outs, _ = run_compiled(c2, path, 0, "gcc", target="cortex-m4")
    assert outs == tflm_outputs(path, c, 0)


@pytest.mark.qemu
def test_dsp_conv_a_block_beyond_the_bound_goes_wrong():
    path, c = _compiled(0)
    node = c.lowered[0].node
    _, _, d = stream_pair(c.graph, node, c.lowered[0].kernel.streams)
    c2 = overlapped(c, d + PX * geometry(c.graph, node).out_px)[0]
    with pytest.raises(PlanError):
        check_graph_plan(c2.graph, c2.plan.offsets, c2.plan.scratch,
                         {0: c.lowered[0].kernel.scratch}, c2.plan.arena, alias_ops(),
                         {0: c.lowered[0].kernel.streams})
    outs, _ = run_compiled(c2, path, 0, "gcc", target="cortex-m4")
    assert outs != tflm_outputs(path, c, 0)


CONV_MODELS = ["kws_ref_model", "str_ww_ref_model", "vww_96_int8", "person_detect",
               "pretrainedResnet_quant"]


@pytest.mark.parametrize("model", CONV_MODELS)
@pytest.mark.parametrize("scratch", ["any", "fit"])
def test_dsp_conv_scratch_stays_under_the_lower_bound(model, scratch):
    """The activations plus the DSP convolutions' scratch (their streaming counted) peak at or
    under the model's lower bound, and 'fit' keeps every convolution on the DSP kernel. (The
    other DSP kernels' scratch is left out: that is their own test.)"""
    imported = load_model(shared_model(model))
    g, _ = optimize(imported)
    g, lowered, _ = _lower_and_plan(g, get_target("cortex-m4"), scratch, imported)
    pos = {id(n): i for i, n in enumerate(g.nodes)}
    convs = [lw for lw in lowered if lw.node.op == "CONV_2D"]
    assert convs and all(lw.kernel.variant == "dsp-conv-6px" for lw in convs), \
        [lw.kernel.variant for lw in convs]
    sizes = {pos[id(lw.node)]: lw.kernel.scratch for lw in convs}
    streams = {pos[id(lw.node)]: lw.kernel.streams for lw in convs}
    peak = lower_bound(buffers_for(g, sizes, alias_ops(), streams=streams))
    assert peak <= model_lower_bound(imported), (peak, model_lower_bound(imported))


@pytest.mark.parametrize("model", ["vww_96_int8", "person_detect", "pretrainedResnet_quant"])
def test_arena_at_or_under_the_lower_bound_on_cortex_m4(model):
    c = compile_model(shared_model(model), get_target("cortex-m4"), "m")
    assert c.plan.arena <= model_lower_bound(c.imported), (c.plan.arena,
                                                           model_lower_bound(c.imported))
