"""Helium (cortex-m55) kernels and RAM: each MVE window kernel that declares `Kernel.streams` runs
bit-exact under QEMU with its output placed exactly at the streaming bound over its input (and
goes wrong a row beyond it, so the overlap is exercised); the kernels that need no scratch ask
for none; and the default cortex-m55 arena of the shared models is at or under the lower bound
of their activations (edgecc/plan model_lower_bound)."""
import tempfile
from pathlib import Path

import numpy as np
import pytest

from cnnchain import chain_model, run_compiled, tflm_outputs
from conftest import shared_model
from edgecc.options import CompileOptions
from edgecc.compiler import compile_model
from edgecc.lower import alias_ops
from edgecc.plan.check import PlanError, check_graph_plan
from edgecc.plan.stream import geometry, stream_pair
from edgecc.targets import get_target
from test_streaming import _overlapped

# (layer (c: input channels, default 16), the MVE variant it must get, its streams
# declaration, its scratch or None = any)
CASES = [
    (dict(op="conv", k=(3, 3), padding=0, oc=8, c=4), "mve-conv-4ch-m1", (1,), None),
    (dict(op="conv", k=(1, 1), oc=12), "mve-conv-4ch-m0", (1,), 0),            # in place
    (dict(op="conv", k=(3, 3), stride=(2, 2), padding=0, oc=6, c=24), "mve-conv-2ch3px", (3,),
     None),
    (dict(op="conv", k=(3, 3), padding=1, oc=6, c=24), "mve-conv-2ch3px", (3,), None),  # VALID
    (dict(op="conv", k=(3, 3), padding=1, oc=6), "mve-conv-ring", (1, 0, 1), None),  # VALID
    (dict(op="conv", k=(3, 3), stride=(2, 2), padding=0, oc=6), "mve-conv-ring", (1, 0, 1),
     None),
    (dict(op="dw", k=(3, 3), padding=0), "mve-dw-gather", (1,), None),
    (dict(op="dw", k=(3, 3), stride=(2, 2), padding=0, mult=2), "mve-dw-gather", (1,), None),
    # one input channel (person_detect's first layer): the convolution, fields by byte gathers
    (dict(op="dw", k=(3, 3), stride=(2, 2), padding=0, mult=8, c=1), "mve-conv-4ch-m2", (1,),
     None),
]


def _single(case: int, w: int = 7):
    layer, *_ = CASES[case]
    rng = np.random.default_rng(1600 + case)
    path = Path(tempfile.mkdtemp(prefix="edgecc-mve-")) / "m.tflite"
    path.write_bytes(chain_model(rng, 9, w, layer.get("c", 16), [layer]))
    return path, compile_model(path, get_target("cortex-m55"), "model")


@pytest.mark.qemu
@pytest.mark.parametrize("case", range(len(CASES)))
def test_mve_kernel_at_the_stream_bound_is_bit_exact(case):
    _, variant, decl, scratch = CASES[case]
    path, c = _single(case)
    (lw,) = c.lowered
    assert lw.kernel.variant.startswith(variant) and lw.kernel.streams == decl
    if scratch is not None:
        assert lw.kernel.scratch == scratch
    _, _, d = stream_pair(c.graph, lw.node, decl)
    c2, x, y, _ = _overlapped(c, d)
    check_graph_plan(c2.graph, c2.plan.offsets, c2.plan.scratch, {0: lw.kernel.scratch},
                     c2.plan.arena, alias_ops(), {0: decl})
    assert -d < c.graph.type(y).nbytes  # the two really overlap
    for seed in (0, 1):
        outs, _ = run_compiled(c2, path, seed, "gcc", target="cortex-m55")
        assert outs == tflm_outputs(path, c, seed), seed


def test_triples_stream_in_whole_rows_when_rows_hold_whole_triples():
    _, c = _single(2, w=11)  # SAME stride 2: 6 pixels a row
    assert c.lowered[0].kernel.streams == (1,)


@pytest.mark.qemu
def test_mve_conv_a_row_beyond_the_bound_goes_wrong():
    # Not a plan anyone may emit: shows that the runs above exercise the overlap. (The
    # depthwise kernel copies its rows ahead into its ring, and the triples read 3 rows as
    # declared: both survive a block beyond their declaration, which only bounds them.)
    path, c = _single(0)
    (lw,) = c.lowered
    _, _, d = stream_pair(c.graph, lw.node, lw.kernel.streams)
    geo = geometry(c.graph, lw.node)
    c2, *_ = _overlapped(c, d + geo.out_w * geo.out_px * lw.kernel.streams[0])
    with pytest.raises(PlanError):
        check_graph_plan(c2.graph, c2.plan.offsets, c2.plan.scratch, {0: lw.kernel.scratch},
                         c2.plan.arena, alias_ops(), {0: lw.kernel.streams})
    outs, _ = run_compiled(c2, path, 0, "gcc", target="cortex-m55")
    assert outs != tflm_outputs(path, c, 0)


MODELS = ["kws_ref_model", "str_ww_ref_model", "vww_96_int8", "hello_world_int8", "ad01_int8",
          "pretrainedResnet_quant", "micro_speech_quantized", "person_detect"]


@pytest.mark.parametrize("model", MODELS)
def test_cortex_m55_default_arena_at_or_under_the_lower_bound(model):
    c = compile_model(shared_model(model), get_target("cortex-m55"), "m")
    assert c.plan.arena <= c.plan.model_lower_bound, (c.plan.arena, c.plan.model_lower_bound)
    assert any(lw.kernel.variant.startswith("mve-") for lw in c.lowered)


def test_mve_fc_short_rows_copy_to_the_stack_not_the_arena():
    from simdcheck import scratches
    from test_simd_fc import fc_model
    rng = np.random.default_rng(16)
    # rows of at most 64 inputs off the 16-byte chunks (hello_world's depth 1): no scratch;
    # (bit-exact: test_simd_fc's depth 37 and 8 cases on cortex-m55)
    assert scratches(fc_model(rng, depth=1, units=16), "cortex-m55") == [0]
    assert scratches(fc_model(rng, depth=37, units=10), "cortex-m55") == [0]
    assert scratches(fc_model(rng, depth=130, units=7), "cortex-m55") == [144]


@pytest.mark.parametrize("model", ["kws_ref_model", "pretrainedResnet_quant"])
def test_cortex_m55_scratch_fit_keeps_the_helium_kernels(model):
    # their scratch fits in what their streaming overlap frees (edgecc/lower stream_saving), so
    # `--scratch fit` costs no instructions
    m = get_target("cortex-m55")
    fast = compile_model(shared_model(model), m, "m")
    fit = compile_model(shared_model(model), m, "m", CompileOptions(scratch="fit"))
    assert [lw.kernel.variant for lw in fit.lowered] == [lw.kernel.variant for lw in fast.lowered]
    assert any(lw.kernel.scratch and lw.kernel.streams for lw in fit.lowered)
    assert fit.plan.arena <= fit.plan.model_lower_bound
