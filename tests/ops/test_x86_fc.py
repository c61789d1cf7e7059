"""x86 int8 FULLY_CONNECTED kernel ec_x86_fully_connected_stream_s8
(runtime_c/x86/fully_connected_stream.h, edgecc/lower/x86/fc.py).

The packing against a direct numpy statement of the layout; FULLY_CONNECTED models on random
shapes bit-exact with TFLite Micro on every x86 path this CPU has (check_x86: plain AVX2 with
gcc and clang, AVX-VNNI, AVX512-VNNI on YMM, the x86-avx512 target's ZMM path): unit counts
covering every pass size (8, 4, 2, 1 blocks of 16) and partial last blocks, depths that are not
multiples of 4 or 64, batches 1-3, every fused activation; the exact-requantization path (fast
path refused); and the fallback to vec.lower_fc for rows deeper than the kernel's stack row.
"""
from __future__ import annotations

import numpy as np
import pytest

from edgecc.lower.x86 import fc as x86_fc
from edgecc.tflite_writer import ModelBuilder
from test_x86 import _compile, _fc_model, check_x86


@pytest.mark.parametrize("blocks,passes", [(1, [1]), (7, [4, 2, 1]), (8, [8]), (13, [8, 4, 1]),
                                           (44, [8, 8, 8, 8, 8, 4])])
def test_fc_passes(blocks, passes):
    assert x86_fc.fc_passes(blocks) == passes


@pytest.mark.parametrize("units,half", [(37, True), (45, False), (8, True), (16, False),
                                        (200, True), (700, False)])
def test_pack_fc_blocks_layout(units, half):
    """Byte (pass at block b of P blocks, step k, block j, unit u, tap t) holds
    w[16(b+j)+u][4k+t]; a last single-block pass with at most 8 real units holds 8 units."""
    rng = np.random.default_rng(units)
    depth = 10
    w = rng.integers(-128, 128, (units, depth)).astype(np.int8)
    packed, up, kp = x86_fc.pack_fc_blocks(w)
    assert x86_fc.half_block(units) == half
    assert (up, kp) == (-(-units // 16) * 16, 12)
    assert packed.size == (up - 8 * half) * kp
    wp = np.zeros((up, kp), np.int8)
    wp[:units, :depth] = w
    off, b = 0, 0
    passes = x86_fc.fc_passes(up // 16)
    for i, p in enumerate(passes):
        n = 8 if half and i == len(passes) - 1 else 16
        for k in range(kp // 4):
            for j in range(p):
                for u in range(n):
                    for t in range(4):
                        assert packed[off] == wp[16 * (b + j) + u, 4 * k + t]
                        off += 1
        b += p
    assert off == packed.size


# (units, depth, batches): one block; 8-block passes and a 4-block one with a partial block
# (700 = 43.75 blocks); 4 + 2 + 1 passes on a deep row; 8 + 4 + 1; depths 1, 3, 63, 129, 1000
# (not multiples of 4 / 64); the autoencoder's 128 -> 8 and 8 -> 128 shapes. Last passes of
# one half block (1, 100, 200, 8, 33 units) and of one full block (16, 45 units).
FC_CASES = [(1, 1, 1), (16, 3, 2), (17, 63, 3), (700, 37, 1), (100, 1000, 3), (200, 129, 2),
            (8, 128, 1), (128, 8, 2), (45, 250, 1), (33, 64, 3)]


@pytest.mark.parametrize("case", range(len(FC_CASES)))
def test_x86_fc_models(case):
    units, depth, batches = FC_CASES[case]
    rng = np.random.default_rng(7100 + case)
    data = _fc_model(rng, batches=batches, depth=depth, units=units, act=case % 4,
                     bias=case != 4)
    k, = [lw.kernel for lw in _compile(data).lowered]
    assert k.variant == "x86-fc16", k.reason
    check_x86(data)


def test_x86_fc_exact_requantization():
    """A bias near 2^30 defeats the fast requantization proof: ec_x86_fully_connected_stream_s8 runs TFLite's two
    roundings (ec_x86_mbqm8 on both halves of a ZMM), still bit-exact."""
    rng = np.random.default_rng(7200)
    mb = ModelBuilder()
    units, depth = 40, 21
    x = mb.tensor("x", (2, depth), "int8", scale=0.05, zero_point=-9)
    w = mb.const("w", rng.integers(-127, 128, (units, depth)).astype(np.int8), scale=0.01)
    bias = rng.integers(-20000, 20000, units).astype(np.int32)
    bias[19] = (1 << 30) + 12345
    b = mb.const("b", bias, scale=0.05 * 0.01)
    y = mb.tensor("y", (2, units), "int8", scale=0.9, zero_point=5)
    mb.op("FULLY_CONNECTED", [x, w, b], [y], {"fused_activation_function": 0}, version=4)
    data = mb.finish([x], [y])
    k, = [lw.kernel for lw in _compile(data).lowered]
    assert k.variant == "x86-fc16" and k.params["fast"] == 0
    check_x86(data, seeds=(0, 1))


def test_x86_fc_deep_row_falls_back():
    """A row deeper than EC_X86_FC_MAX_KP keeps edgecc/lower/vec/fc.py's kernel."""
    rng = np.random.default_rng(7300)
    data = _fc_model(rng, batches=1, depth=x86_fc.MAX_KP + 1, units=3, act=0, bias=True)
    k, = [lw.kernel for lw in _compile(data).lowered]
    assert k.variant == "x86-fc"


def test_x86_fc_constant_units():
    """All-zero weight rows make constant units, whose fast-path constants differ from the
    others': the requantization arrays stay per unit (uni == 0), still bit-exact."""
    rng = np.random.default_rng(7400)
    mb = ModelBuilder()
    units, depth = 50, 24
    wv = rng.integers(-127, 128, (units, depth)).astype(np.int8)
    wv[[3, 20, 49]] = 0
    x = mb.tensor("x", (1, depth), "int8", scale=0.1, zero_point=4)
    w = mb.const("w", wv, scale=0.01)
    b = mb.const("b", rng.integers(-3000, 3000, units).astype(np.int32), scale=0.1 * 0.01)
    y = mb.tensor("y", (1, units), "int8", scale=0.3, zero_point=-3)
    mb.op("FULLY_CONNECTED", [x, w, b], [y], {"fused_activation_function": 1}, version=4)
    data = mb.finish([x], [y])
    k, = [lw.kernel for lw in _compile(data).lowered]
    assert k.variant == "x86-fc16" and k.params["fast"] == 1 and k.params["uni"] == 0
    check_x86(data)


def test_x86_fc_uniform_requant_arrays():
    """Per-tensor layers on the fast path keep 16 requantization entries for every block."""
    data = _fc_model(np.random.default_rng(7500), batches=1, depth=128, units=128, act=0,
                     bias=True)
    k, = [lw.kernel for lw in _compile(data).lowered]
    assert k.params["fast"] == 1 and k.params["uni"] == 1
    assert all(len(k.consts[a]) == 16 for a in ("mult", "right", "c64"))
    check_x86(data)
