"""The Cortex-M DSP kernels that need no arena scratch (edgecc/lower/dsp_dwfc.py) and the
streaming of the DSP depthwise kernels, on Cortex-M4 under QEMU, bit-exact with TFLite Micro:
the in-place depthwise (one-column filters, filters over 8 rows, padding on every side) and the
planes kernel with its output over its input."""
import tempfile
from pathlib import Path

import numpy as np
import pytest

from edgecc.compiler import compile_model
from edgecc.targets import get_target
from edgecc.verify import verify_model
from simdcheck import check_on_target
from test_simd_depthwise import dw_model

pytestmark = pytest.mark.qemu

DIRECT_CASES = [
    dict(h=14, w=3, ic=8, kh=5, kw=1, padding=0, act=1),                  # 5x1 SAME
    dict(h=16, w=2, ic=12, kh=10, kw=1, stride=(2, 1), padding=1, act=0),  # 10x1 stride 2
    dict(n=2, h=11, w=5, ic=4, kh=9, kw=3, stride=(1, 2), padding=0, act=3,
         per_channel=False),                                               # 9x3, pads all sides
]


@pytest.mark.parametrize("case", range(len(DIRECT_CASES)))
def test_dsp_depthwise_direct_on_cortex_m4(case):
    rng = np.random.default_rng(6100 + case)
    check_on_target(dw_model(rng, **DIRECT_CASES[case]), "cortex-m4", "dsp-dw-direct")


# (kernel variant, case): the planes kernel streams by whole rows, the direct one by pixels
STREAM_CASES = [("dsp-dw3x3-s1", dict(h=9, w=6, ic=8, padding=0, act=1)),
                ("dsp-dw3x3-s2", dict(h=10, w=7, ic=8, stride=(2, 2), padding=0, act=0)),
                ("dsp-dw-direct", dict(h=12, w=3, ic=8, kh=5, kw=1, padding=1, act=0))]


@pytest.mark.parametrize("case", range(len(STREAM_CASES)))
def test_dsp_depthwise_streams_bit_exact(case):
    variant, cfg = STREAM_CASES[case]
    model = dw_model(np.random.default_rng(6200 + case), **cfg)
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.tflite"
        p.write_bytes(model)
        c = compile_model(p, get_target("cortex-m4"), "m")
        (lw,) = c.lowered
        assert lw.kernel.variant == variant and lw.kernel.streams
        node = lw.node
        nx, ny = (c.graph.type(v).nbytes for v in (node.inputs[0], node.outputs[0]))
        assert c.plan.streaming and c.plan.arena < nx + ny + lw.kernel.scratch
        r = verify_model(p, get_target("cortex-m4"))
        assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)


# The in-place FC (dsp-fc-4u-rd): depths with and without a tail of under 8 inputs, units off
# the multiple of 4, several batches whose rows start unaligned, clamps.
FC_RD_CASES = [
    dict(depth=13, units=6, act=1),
    dict(batches=2, depth=42, units=9, act=3, w_max=40),
    dict(depth=5, units=3, act=0),                    # no 8-input step at all: the tail only
]


@pytest.mark.parametrize("case", range(len(FC_RD_CASES)))
def test_dsp_fc_in_place_on_cortex_m4(case):
    from test_simd_fc import fc_model
    rng = np.random.default_rng(6500 + case)
    check_on_target(fc_model(rng, **FC_RD_CASES[case]), "cortex-m4", "dsp-fc-4u-rd")


# (str_ww_ref_model, kws_ref_model: over only at CONV_2D steps, the DSP convolution's scratch)
@pytest.mark.parametrize("model", ["ad01_int8", "hello_world_int8"])
def test_dsp_arena_at_or_under_the_lower_bound(model):
    """The default cortex-m4 build of these models needs no more RAM than their live bytes."""
    from conftest import shared_model
    from edgecc.plan import model_lower_bound
    c = compile_model(shared_model(model), get_target("cortex-m4"), "m")
    assert c.plan.arena <= model_lower_bound(c.imported), (c.plan.arena, model)
