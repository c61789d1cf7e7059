"""AArch64 NEON kernels that stream (edgecc/lower/neon/conv.py's Kernel.streams): the convolution
(blocks of 4 output pixels in flat order, each read before written: (0, 4, 1)) and the depthwise kernel (pixel by pixel,
(1, 1)) run under qemu-aarch64 with their output placed at the planner's shift bound over their
input, bit-exact with TFLite Micro on both NEON paths (SDOT and SMULL); one block further the
checker refuses the plan and the outputs go wrong (so the runs really overlap). The arena on
aarch64 is at most the portable kernels' (host) arena on the shared models.
"""
from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

import numpy as np
import pytest

from cnnchain import chain_model, tflm_outputs
from conftest import SHARED, shared_model
from edgecc.build.boards import default_board
from edgecc.compiler import compile_model
from edgecc.lower import alias_ops
from edgecc.plan.check import PlanError, check_graph_plan
from edgecc.plan.stream import geometry, stream_pair
from edgecc.targets import get_target
from edgecc.verify import _build_and_run
from edgecc.build.harness import parse_output
from edgecc.verify.reference import seeded_inputs
from test_streaming import _overlapped

pytestmark = pytest.mark.qemu

TARGET = get_target("aarch64")

# (input h, w, c; layer; the NEON template it must take)
CASES = [
    ((9, 7, 4), dict(op="conv", k=(3, 3), padding=0, oc=8), "conv_2d_4px"),   # blocks cross rows
    ((9, 7, 8), dict(op="conv", k=(1, 1), oc=24), "conv_2d_4px"),   # outputs staged: 2-3 blocks
    ((9, 8, 4), dict(op="conv", k=(3, 3), stride=(2, 2), padding=0, oc=12), "conv_2d_4px"),
    ((9, 7, 24), dict(op="dw", k=(3, 3), padding=0), "depthwise_conv_2d_taps"),  # 16 + 8 chans
    ((9, 7, 16), dict(op="dw", k=(3, 3), stride=(2, 2), padding=0), "depthwise_conv_2d_taps"),
    ((9, 7, 1), dict(op="dw", k=(3, 3), padding=0, mult=8), "conv_2d_4px"),  # dw-as-conv
]


def _boards() -> list:
    dot = default_board("aarch64")
    return [dot, dataclasses.replace(dot, cflags=("-march=armv8-a",))]


def _single(case: int):
    (h, w, ch), layer, template = CASES[case]
    data = chain_model(np.random.default_rng(7300 + case), h, w, ch, [layer])
    path = Path(tempfile.mkdtemp(prefix="edgecc-neonstream-")) / "m.tflite"
    path.write_bytes(data)
    c = compile_model(path, TARGET, "model")
    (lw,) = c.lowered
    assert lw.template_path == f"neon/{template}.c.j2", lw.template_path
    return path, c


def _run(c, board, seed: int) -> list[bytes]:
    with tempfile.TemporaryDirectory() as tmp:
        text = _build_and_run(c, Path(tmp), seeded_inputs(c.graph, seed), TARGET, None,
                              trace=False, board=board)
    outs, _, done = parse_output(text)
    assert done
    return [outs[i] for i in range(len(outs))]


def _check(c, c2, streams: bool) -> None:
    check_graph_plan(c2.graph, c2.plan.offsets, c2.plan.scratch,
                     {0: c.lowered[0].kernel.scratch}, c2.plan.arena, alias_ops(),
                     {0: c.lowered[0].kernel.streams} if streams else None)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_neon_output_at_the_bound_is_bit_exact(case):
    path, c = _single(case)
    lw = c.lowered[0]
    _, _, d = stream_pair(c.graph, lw.node, lw.kernel.streams)
    c2, _, y, _ = _overlapped(c, d)
    assert -d < c.graph.type(y).nbytes  # the output really overlaps the input
    _check(c, c2, True)
    with pytest.raises(PlanError):
        _check(c, c2, False)
    for board in _boards():
        for seed in (0, 1):
            assert _run(c2, board, seed) == tflm_outputs(path, c, seed), (board.cflags, seed)


@pytest.mark.parametrize("case", [0, 1, 3])
def test_neon_output_a_block_beyond_the_bound_goes_wrong(case):
    # Not a plan anyone may emit: shows that the runs above exercise the overlap.
    path, c = _single(case)
    lw = c.lowered[0]
    _, _, d = stream_pair(c.graph, lw.node, lw.kernel.streams)
    geo = geometry(c.graph, lw.node)
    c2, *_ = _overlapped(c, d + (geo.out_w + 4) * geo.out_px)
    with pytest.raises(PlanError):
        _check(c, c2, True)
    assert _run(c2, _boards()[0], 0) != tflm_outputs(path, c, 0)


def _model(name: str) -> Path:
    """A shared model: the .tflite ones by name, the ONNX ones (tfl_*, ox_*) in onnx_models/."""
    if not name.startswith(("tfl_", "ox_")):
        return shared_model(name)
    p = SHARED / "models" / "onnx_models" / f"{name}.onnx"
    if not p.is_file():
        pytest.fail(f"shared model missing: {p}")
    return p


FAST = ["kws_ref_model", "ox_dscnn_qdq_s8"]
MODELS = FAST + [pytest.param(m, marks=pytest.mark.slow) for m in
                 ["vww_96_int8", "person_detect", "pretrainedResnet_quant", "str_ww_ref_model",
                  "micro_speech_quantized", "tfl_kws_ref_model_qdq", "ox_se_mbv2_qdq_s8",
                  "ox_dscnn_qop_u8", "tfl_pretrainedResnet_quant_qdq"]]


@pytest.mark.parametrize("model", MODELS)
def test_aarch64_arena_at_most_the_portable_arena(model):
    c = compile_model(_model(model), TARGET, "model")
    assert any(lw.kernel.streams and lw.template_path.startswith("neon/") for lw in c.lowered)
    host = compile_model(_model(model), get_target("host"), "model").plan.arena
    assert c.plan.arena <= host, (c.plan.arena, host)
