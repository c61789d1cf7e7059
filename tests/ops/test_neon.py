"""AArch64 NEON kernels (runtime_c/neon/, edgecc/lower/vec/): CONV_2D, DEPTHWISE_CONV_2D
and FULLY_CONNECTED on random shapes and on the shared models, run under qemu-aarch64, bit-exact
with TFLite Micro.

Each case runs the aarch64 target's dot-product path (-march=armv8.2-a+dotprod: SDOT) and the
plain Armv8-A path (-march=armv8-a: SMULL + SADALP) built from the same generated C.
"""
from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

import numpy as np
import pytest

from conftest import shared_model
from edgecc.build.boards import default_board
from edgecc.compiler import compile_model
from edgecc.targets import get_target
from edgecc.verify import verify_model
from test_x86 import CONV_CASES, DW_AS_CONV_CASES, DW_CASES, KEY, SHARED, _fc_model
from test_conv_2d import conv_model
from test_depthwise_conv_2d import dw_model

pytestmark = pytest.mark.qemu

TARGET = get_target("aarch64")


def _boards() -> list:
    dot = default_board("aarch64")
    return [("dotprod", dot), ("armv8-a", dataclasses.replace(dot, cflags=("-march=armv8-a",)))]


def check_neon(data: bytes, compilers=("gcc",)) -> None:
    """Bit-exact vs TFLite Micro on both NEON paths; every layer must take a NEON kernel."""
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.tflite"
        p.write_bytes(data)
        c = compile_model(p, TARGET, "m")
        got = [(lw.kernel.variant, lw.kernel.reason) for lw in c.lowered]
        assert all(v.startswith("neon-") for v, _ in got), got
        for name, board in _boards():
            for cc in compilers:
                r = verify_model(p, TARGET, cc=cc, board=board)
                assert r.bit_exact, (name, cc, r.mismatched_bytes, r.first_bad_layer)


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_neon_conv(case):
    check_neon(conv_model(np.random.default_rng(6100 + case), **CONV_CASES[case]))


@pytest.mark.parametrize("case", range(len(DW_CASES)))
def test_neon_depthwise(case):
    check_neon(dw_model(np.random.default_rng(6200 + case), **DW_CASES[case]))


@pytest.mark.parametrize("case", range(len(DW_AS_CONV_CASES)))
def test_neon_depthwise_one_channel_as_conv(case):
    """One input channel with a depth multiplier: the NEON convolution kernel on the CONV_2D
    it equals."""
    check_neon(dw_model(np.random.default_rng(6270 + case), **DW_AS_CONV_CASES[case]))


def test_neon_depthwise_with_a_weight_of_minus_128():
    """A -128 weight could overflow the int16 sum of two products: the kernel then widens each
    product on its own (geometry flag pair_sum = 0), still bit-exact."""
    from edgecc.tflite_writer import ModelBuilder
    rng = np.random.default_rng(6250)
    mb = ModelBuilder()
    c = 16
    x = mb.tensor("x", (1, 6, 6, c), "int8", scale=0.05, zero_point=-128)
    wq = rng.integers(-127, 128, (1, 3, 3, c)).astype(np.int8)
    wq[0, :, :, 3] = -128  # with inputs of -128: products of 16384, two of them 32768
    ws = list(rng.uniform(0.002, 0.02, c))
    w = mb.const("w", wq, scale=ws, zero_point=[0] * c, axis=3)
    b = mb.const("b", rng.integers(-5000, 5000, c).astype(np.int32),
                 scale=[0.05 * s for s in ws], zero_point=[0] * c)
    y = mb.tensor("y", (1, 6, 6, c), "int8", scale=0.3, zero_point=0)
    mb.op("DEPTHWISE_CONV_2D", [x, w, b], [y], {"padding": 0, "stride_h": 1, "stride_w": 1,
                                                "depth_multiplier": 1}, version=3)
    data = mb.finish([x], [y])
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.tflite"
        p.write_bytes(data)
        k, = [lw.kernel for lw in compile_model(p, TARGET, "m").lowered]
    assert k.variant == "neon-dw" and k.params["geom"][-1] == 0
    check_neon(data)


@pytest.mark.parametrize("case", range(8))
def test_neon_fully_connected(case):
    rng = np.random.default_rng(6300 + case)
    units = [1, 7, 8, 31, 32, 45, 70, 100][case]
    depth = [1, 3, 64, 70, 5, 129, 33, 250][case]
    check_neon(_fc_model(rng, batches=1 + case % 3, depth=depth, units=units, act=case % 4,
                         bias=case != 3), compilers=("gcc", "clang") if case < 2 else ("gcc",))


@pytest.mark.parametrize("model", [m if m in KEY else pytest.param(m, marks=pytest.mark.slow)
                                   for m in SHARED])
def test_neon_shared_models(model):
    """The shared models on both NEON paths (clang too on the dot-product path)."""
    path = shared_model(model)
    c = compile_model(path, TARGET, "m")  # every shared model must compile
    from edgecc.ir import DType
    conv_like = [lw for lw in c.lowered
                 if lw.node.op in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")
                 and c.graph.type(lw.node.inputs[0]).dtype == DType.INT8]
    # the kernels take every int8 conv-like layer of these models but depthwise layers with a
    # depth multiplier (micro_speech, person_detect), which keep the portable kernel
    assert all(lw.kernel.variant.startswith("neon-") or
               lw.kernel.reason == "depth multiplier above 1: portable kernel"
               for lw in conv_like), \
        [(lw.node.op, lw.kernel.variant, lw.kernel.reason) for lw in conv_like]
    if not conv_like:
        pytest.skip("no int8 conv-like layer (int16 activations)")
    for name, board in _boards():
        for cc in ("gcc", "clang") if name == "dotprod" else ("gcc",):
            r = verify_model(path, TARGET, cc=cc, board=board)
            assert r.bit_exact, (name, cc, r.mismatched_bytes, r.first_bad_layer)
