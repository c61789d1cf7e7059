"""Per-channel FULLY_CONNECTED (one weight scale per unit) on the SIMD kernels: the per-channel
table entries (edgecc/lower/dsp/ and mve/ fc-4u-pc, neon/ and x86/ fc-pc, x86/ fc16-pc) are the
ones chosen, and their per-unit epilogue is bit-exact with TFLite Micro on random shapes:
Cortex-M4 (DSP) and Cortex-M55 (Helium) under qemu-system-arm, AArch64 (NEON) under qemu-aarch64,
x86 on the host (every x86 path this CPU has: test_x86.check_x86).
"""
from __future__ import annotations

import numpy as np
import pytest

from edgecc.targets import get_target
from edgecc.verify import verify_model
from simdcheck import check_on_target, variants
from test_x86 import check_x86
from test_fc_per_channel import fc_pc_model
from test_fully_connected import fc_model

# (batches, depth, units, act): a depth of one; > 16 units with a partial last block; a depth that is
# no multiple of 4, 8 or 16; a deep row (the DSP kernel's chunks of 512, Helium's row copy);
# every fused activation
SHAPES = [(1, 1, 2, 0), (2, 37, 21, 1), (3, 90, 5, 2), (1, 700, 35, 3), (2, 16, 40, 0)]

KERNELS = {"cortex-m4": "dsp-fc-4u-pc", "cortex-m55": "mve-fc-4u-pc", "aarch64": "neon-fc-pc",
           "x86-avx2": "x86-fc16-pc"}


def _model(i: int, bias: bool = True) -> bytes:
    batches, depth, units, act = SHAPES[i]
    return fc_pc_model(np.random.default_rng(7300 + i), batches, depth, units, act, bias=bias)


@pytest.mark.parametrize("target,variant", sorted(KERNELS.items()))
def test_per_channel_entry_chosen(target, variant):
    assert variants(_model(1), target) == [variant]


@pytest.mark.parametrize("target", sorted(KERNELS))
def test_per_tensor_layers_keep_their_kernels(target):
    """The per-channel entries refuse per-tensor weights: those keep the per-tensor kernels."""
    got = variants(fc_model(np.random.default_rng(7350), 2, 37, 21, 1), target)
    assert len(got) == 1 and not got[0].endswith("-pc") and not got[0].startswith("portable"), got


@pytest.mark.qemu
@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55", "aarch64"])
@pytest.mark.parametrize("i", range(len(SHAPES)))
def test_per_channel_fc_exact_on_arm(target, i):
    check_on_target(_model(i, bias=i != 2), target, KERNELS[target])


@pytest.mark.parametrize("i", range(len(SHAPES)))
def test_per_channel_fc_exact_on_x86(i):
    check_x86(_model(i, bias=i != 2), expect="x86-fc16-pc")


def test_per_channel_fc_deep_row_on_x86():
    """Rows deeper than ec_x86_fc's stack row: vec.py's per-channel kernel (fc-pc)."""
    data = fc_pc_model(np.random.default_rng(7399), 1, 8200, 3, 0)
    check_x86(data, expect="x86-fc-pc")



@pytest.mark.parametrize("target", [pytest.param(t, marks=pytest.mark.qemu)
                                    for t in ("cortex-m4", "cortex-m55", "aarch64")] + ["x86-avx2"])
def test_converter_dscnn_per_channel_dense_on_simd(target):
    """TensorFlow 2.21's converter writes the Dense layer per channel: cv_dscnn's FC takes the
    target's per-channel SIMD kernel and the model stays bit-exact (one frame)."""
    from conftest import SHARED
    p = SHARED / "models" / "converter" / "cv_dscnn.tflite"
    if not p.is_file():
        pytest.fail(f"shared model missing: {p}")
    assert KERNELS[target] in variants(p, target)
    r = verify_model(p, get_target(target))
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)
