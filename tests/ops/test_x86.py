"""x86 AVX2 kernels (runtime_c/x86/, edgecc/lower/vec/): CONV_2D, DEPTHWISE_CONV_2D and
FULLY_CONNECTED on random shapes and on every shared model, bit-exact with TFLite Micro on the
host, built with gcc and clang.

Each case runs the x86-avx2 target's build (`-mavx2 -mfma`) forced to its plain AVX2 kernels
(`-DEDGECC_X86_MAX=0`: sign-extended VPMADDWD) and, when this CPU has them, forced to AVX-VNNI
(`-DEDGECC_X86_MAX=1`: VPDPBUSD on YMM under a target attribute, chosen at run time), as it is (the
AVX-512 VNNI kernels chosen at run time), the AVX512-VNNI path on 256-bit registers from the
flags (`-mavx512vnni -mavx512vl`) and the x86-avx512 target's 512-bit paths at compile time: the
same generated C everywhere (runtime_c/x86/kernels.h).
"""
from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

import numpy as np
import pytest

from conftest import MODELS, shared_model
from edgecc.compiler import compile_model
from edgecc.targets import get_target
from edgecc.verify import verify_model
from edgecc.build.host import cpu_flags
from test_conv_2d import conv_model
from test_depthwise_conv_2d import dw_model


def _forced(level: int):
    """The x86-avx2 target capped at run-time level `level` (runtime_c/x86/levels.h)."""
    base = get_target("x86-avx2")
    return dataclasses.replace(base, cflags=base.cflags + (f"-DEDGECC_X86_MAX={level}",))


def _paths() -> list:
    """(name, Target) for every code path of the AVX2 kernels this CPU can run: the x86-avx2
    target's build capped to plain AVX2, capped to AVX-VNNI (chosen at run time), and as it is
    (the best level of this CPU at run time); 256-bit AVX512-VNNI from the build flags; the
    x86-avx512 target (512-bit paths at compile time)."""
    base = get_target("x86-avx2")
    flags = cpu_flags()
    if "avx2" not in flags:
        pytest.skip("this CPU has no AVX2")
    out = [("avx2", _forced(0))]
    if "avx_vnni" in flags:
        out.append(("avx-vnni", _forced(1)))
    if {"avx512_vnni", "avx512vl", "avx512bw"} <= flags:
        out.append(("dispatch", base))  # AVX-512 VNNI chosen at run time
        out.append(("avx512-vnni", dataclasses.replace(
            base, cflags=base.cflags + ("-mavx512vnni", "-mavx512vl", "-DEDGECC_X86_MAX=1"))))
        out.append(("x86-avx512", get_target("x86-avx512")))  # the 512-bit (ZMM) paths
    return out


def _compile(data: bytes):
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.tflite"
        p.write_bytes(data)
        return compile_model(p, get_target("x86-avx2"), "m")


def check_x86(data: bytes, seeds=(0,), expect: str | None = "x86-") -> None:
    """Bit-exact vs TFLite Micro on every AVX2 code path with gcc and clang; when `expect` is
    given, every conv-like layer must have taken a kernel whose variant starts with it."""
    if expect is not None:
        c = _compile(data)
        got = [lw.kernel.variant for lw in c.lowered]
        assert got and all(v.startswith(expect) for v in got), \
            [(v, lw.kernel.reason) for v, lw in zip(got, c.lowered)]
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.tflite"
        p.write_bytes(data)
        for name, target in _paths():
            # clang on the plain AVX2 path; the VNNI paths (the same C, other instructions) with
            # gcc here and with clang on the shared models
            for cc in ("gcc", "clang") if name == "avx2" else ("gcc",):
                for seed in seeds:
                    r = verify_model(p, target, cc=cc, seed=seed)
                    assert r.bit_exact, (name, cc, seed, r.mismatched_bytes, r.first_bad_layer)


# Each case covers a path of ec_x86_conv_2d_avx2: 1x1 read in place, a 3-channel first layer (segments
# of 9 bytes padded to 12), kws's 10x4x1 (segments of 4), channel counts leaving 8-channel and
# partial blocks, dilation (one segment per tap), batches, no interior pixel at all, pixel
# counts that leave a partial block of 4, left shifts (effective scale > 1), per-tensor weights,
# extreme input zero points, clamped activations.
CONV_CASES = [
    dict(h=5, w=5, ic=16, oc=12, kh=1, kw=1, padding=1, act=1),
    dict(h=9, w=8, ic=3, oc=8, kh=3, kw=3, stride=(2, 2), padding=0, act=3),
    dict(h=13, w=6, ic=1, oc=20, kh=10, kw=4, stride=(2, 2), padding=0, act=1),
    dict(h=6, w=7, ic=16, oc=40, kh=3, kw=3, padding=0, act=0),
    dict(h=9, w=9, ic=5, oc=9, kh=3, kw=3, dil=(2, 2), padding=0, act=0),
    dict(n=2, h=5, w=4, ic=6, oc=24, kh=2, kw=3, padding=1, act=3, per_channel=False),
    dict(h=4, w=3, ic=2, oc=3, kh=5, kw=5, stride=(2, 2), padding=0, act=0, bias=False),
    dict(h=5, w=3, ic=8, oc=33, kh=1, kw=1, stride=(1, 2), padding=1, act=2),
    dict(h=6, w=5, ic=4, oc=16, kh=3, kw=3, padding=0, act=0, bias=False, w_max=1, eff=1.7),
    dict(h=7, w=7, ic=7, oc=17, kh=3, kw=2, stride=(2, 1), dil=(1, 2), padding=0, act=1),
    dict(h=6, w=6, ic=12, oc=8, kh=3, kw=3, padding=0, act=0, in_zp=-128),
    dict(h=6, w=6, ic=12, oc=8, kh=3, kw=3, padding=1, act=0, in_zp=127),
    # the 512-bit kernel's tiles (ec_x86_conv_2d_x512): 1x1 stride 1 in chunks of pixels (the last one
    # partial) with 16-channel tiles and an 8-channel block; 4 pixels x 64 channels plus a last
    # 8-channel block at stride 2 with padding; 8 pixels x 32 channels at stride 2; and a band
    # too large for the stack (the 256-bit kernel runs)
    dict(h=17, w=17, ic=64, oc=24, kh=1, kw=1, padding=0, act=0),
    dict(h=9, w=10, ic=32, oc=72, kh=3, kw=3, stride=(2, 2), padding=1, act=1),
    dict(h=9, w=9, ic=16, oc=32, kh=1, kw=1, stride=(2, 2), padding=0, act=3),
    dict(h=3, w=30, ic=200, oc=16, kh=3, kw=3, padding=1, act=0),
    # 16 pixels sliding along a 3-wide filter row (stride 1) with an effective scale above 1
    dict(h=6, w=19, ic=8, oc=16, kh=3, kw=3, padding=1, act=3, w_max=1, eff=1.7),
    # the pixel strides ec_x86_conv_2d_x512 takes as constants: 16 (sliding 16 pixels), 32 (sliding
    # 8 pixels x 32 channels, then an 8-channel block), 64 (4 pixels x 64 channels, 1x1)
    dict(h=5, w=18, ic=16, oc=16, kh=3, kw=3, padding=1, act=1),
    dict(h=4, w=9, ic=32, oc=40, kh=3, kw=3, padding=1, act=0),
    dict(h=5, w=5, ic=64, oc=64, kh=1, kw=1, padding=0, act=1),
    dict(h=3, w=5, ic=32, oc=72, kh=1, kw=1, padding=0, act=0),
    dict(h=7, w=3, ic=16, oc=32, kh=1, kw=1, padding=0, act=2),
    dict(h=4, w=9, ic=8, oc=16, kh=1, kw=1, padding=0, act=0),
]


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_x86_conv(case):
    rng = np.random.default_rng(5100 + case)
    check_x86(conv_model(rng, **CONV_CASES[case]))


DW_CASES = [
    dict(h=7, w=6, ic=16, kh=3, kw=3, padding=0, act=1),
    dict(h=9, w=8, ic=8, kh=3, kw=3, stride=(2, 2), padding=0, act=3),
    dict(h=6, w=6, ic=24, kh=3, kw=3, padding=1, act=0),
    dict(h=8, w=7, ic=64, kh=5, kw=5, padding=0, act=0, per_channel=False),
    dict(h=9, w=9, ic=8, kh=3, kw=3, dil=(2, 2), padding=0, act=2),
    dict(n=2, h=5, w=4, ic=40, kh=2, kw=2, padding=1, act=3, bias=False),
    dict(h=5, w=5, ic=16, kh=1, kw=1, padding=1, act=0),
    dict(h=3, w=2, ic=8, kh=4, kw=3, stride=(2, 2), padding=0, act=0, in_zp=-128),
    # ec_x86_depthwise_conv_2d_3x3_s8 (3x3 undilated): stride 1 / 2 / 3, SAME and VALID, 8/16/24/32/64+ channels,
    # batches, 1-pixel-wide images
    dict(h=9, w=11, ic=8, kh=3, kw=3, padding=0, act=1),
    dict(n=2, h=8, w=9, ic=32, kh=3, kw=3, stride=(2, 2), padding=0, act=0),
    dict(h=7, w=10, ic=64, kh=3, kw=3, stride=(2, 2), padding=1, act=3),
    dict(h=6, w=1, ic=16, kh=3, kw=3, padding=0, act=0),
    dict(h=5, w=3, ic=24, kh=3, kw=3, stride=(1, 2), padding=1, act=0),
    dict(h=10, w=12, ic=80, kh=3, kw=3, stride=(3, 3), padding=0, act=1, per_channel=False),
    # 8 / 16 channels at stride 1: 4 / 2 pixels per ZMM pair, then single pixels
    dict(n=2, h=4, w=9, ic=16, kh=3, kw=3, padding=1, act=0),
    dict(h=5, w=6, ic=8, kh=3, kw=3, padding=1, act=3, in_zp=-128),
    # whole blocks of 64 channels (AVX-512: VPDPBUSD quads), then 8 more; stride 1 and 2
    dict(n=2, h=4, w=5, ic=128, kh=3, kw=3, padding=0, act=1),
    dict(h=5, w=4, ic=72, kh=3, kw=3, stride=(2, 2), padding=0, act=0, in_zp=127),
    # 16-channel blocks on one ZMM: a 16-channel layer at stride 2, a 32 + 16 layer
    dict(h=7, w=9, ic=16, kh=3, kw=3, stride=(2, 2), padding=0, act=0),
    dict(h=5, w=5, ic=48, kh=3, kw=3, padding=1, act=2),
    # outputs wider than DW_NARROW (narrower ones run ec_x86_depthwise_conv_2d_taps_s8) at stride 2, 3
    dict(h=5, w=16, ic=32, kh=3, kw=3, stride=(2, 2), padding=0, act=0),
    dict(h=4, w=22, ic=24, kh=3, kw=3, stride=(3, 3), padding=1, act=1),
]

# ec_x86_depthwise_conv_2d_3x3_s8 with channel counts that are no multiple of 8 (its last block overlaps the one
# before); AVX2 only (NEON's depthwise kernel needs multiples of 8)
DW3_ODD_CASES = [
    dict(h=6, w=7, ic=17, kh=3, kw=3, padding=0, act=0),
    dict(n=2, h=5, w=6, ic=13, kh=3, kw=3, stride=(2, 2), padding=1, act=2, bias=False),
    dict(h=4, w=9, ic=9, kh=3, kw=3, padding=0, act=0, in_zp=-128),
    dict(h=3, w=3, ic=60, kh=3, kw=3, stride=(2, 1), padding=0, act=0),
]


@pytest.mark.parametrize("case", range(len(DW_CASES)))
def test_x86_depthwise(case):
    rng = np.random.default_rng(5200 + case)
    check_x86(dw_model(rng, **DW_CASES[case]))


@pytest.mark.parametrize("case", range(len(DW3_ODD_CASES)))
def test_x86_depthwise_any_channel_count(case):
    rng = np.random.default_rng(5270 + case)
    check_x86(dw_model(rng, **DW3_ODD_CASES[case]))


# One input channel with a depth multiplier (micro_speech's first layer) runs as the CONV_2D it
# equals (edgecc/lower/vec/depthwise.py: as_conv): per-channel and per-tensor filters, SAME and VALID,
# multipliers that leave partial channel blocks.
DW_AS_CONV_CASES = [
    dict(h=13, w=9, ic=1, mult=8, kh=10, kw=8, stride=(2, 2), padding=0, act=1),
    dict(h=7, w=6, ic=1, mult=20, kh=3, kw=3, padding=1, act=0, per_channel=False),
    dict(n=2, h=5, w=5, ic=1, mult=3, kh=2, kw=2, padding=0, act=3, bias=False),
]


@pytest.mark.parametrize("case", range(len(DW_AS_CONV_CASES)))
def test_x86_depthwise_one_channel_as_conv(case):
    data = dw_model(np.random.default_rng(5270 + case), **DW_AS_CONV_CASES[case])
    k, = [lw.kernel for lw in _compile(data).lowered]
    assert "run as a convolution" in k.reason, (k.variant, k.reason)
    check_x86(data)


@pytest.mark.parametrize("kw", [dict(ic=12, kh=2, kw=3), dict(ic=8, mult=2), dict(ic=5)])
def test_x86_depthwise_falls_back_with_reason(kw):
    """Channels not a multiple of 8 (not 3x3), fewer than 8, or a depth multiplier: the portable
    kernel, saying why."""
    c = _compile(dw_model(np.random.default_rng(5250), **dict(dict(h=5, w=5, kh=3, kw=3), **kw)))
    k, = [lw.kernel for lw in c.lowered]
    assert k.variant == "portable" and "portable kernel" in k.reason


def _fc_model(rng, batches: int, depth: int, units: int, act: int, bias: bool) -> bytes:
    """A FULLY_CONNECTED model whose bias scale is input scale x weight scale (TFLite Micro
    rejects others) and whose outputs spread over the int8 range."""
    from edgecc.tflite_writer import ModelBuilder
    mb = ModelBuilder()
    in_s, w_s = float(rng.uniform(0.01, 0.5)), float(rng.uniform(0.001, 0.02))
    out_s = in_s * w_s * 75 * 73 * np.sqrt(depth) / 60
    x = mb.tensor("x", (batches, depth), "int8", scale=in_s, zero_point=int(rng.integers(-128, 128)))
    w = mb.const("w", rng.integers(-127, 128, (units, depth)).astype(np.int8), scale=w_s)
    b = mb.const("b", rng.integers(-3000, 3000, (units,)).astype(np.int32), scale=in_s * w_s) \
        if bias else -1
    y = mb.tensor("y", (batches, units), "int8", scale=float(out_s),
                  zero_point=int(rng.integers(-20, 20)))
    mb.op("FULLY_CONNECTED", [x, w, b], [y], {"fused_activation_function": act}, version=4)
    return mb.finish([x], [y])


@pytest.mark.parametrize("case", range(8))
def test_x86_fully_connected(case):
    rng = np.random.default_rng(5300 + case)
    # units across 32-unit passes, 8-unit tails and partial stores; depth not a multiple of 4
    units = [1, 7, 8, 31, 32, 45, 70, 100][case]
    depth = [1, 3, 64, 70, 5, 129, 33, 250][case]
    check_x86(_fc_model(rng, batches=1 + case % 3, depth=depth, units=units, act=case % 4,
                         bias=case != 3))


def test_x86_exact_requantization_path():
    """A channel whose accumulators reach 2^30 defeats the fast requantization proof: the layer
    runs TFLite's two roundings as they are (ec_x86_mbqm8), still bit-exact."""
    from edgecc.tflite_writer import ModelBuilder
    rng = np.random.default_rng(5400)
    mb = ModelBuilder()
    oc, ic = 16, 8
    x = mb.tensor("x", (1, 5, 5, ic), "int8", scale=0.05, zero_point=3)
    ws = list(rng.uniform(0.002, 0.02, oc))
    wt = mb.const("w", rng.integers(-127, 128, (oc, 3, 3, ic)).astype(np.int8), scale=ws,
                  zero_point=[0] * oc, axis=0)
    bias = rng.integers(-20000, 20000, oc).astype(np.int32)
    bias[5] = (1 << 30) + 12345
    b = mb.const("b", bias, scale=[0.05 * s for s in ws], zero_point=[0] * oc)
    y = mb.tensor("y", (1, 5, 5, oc), "int8", scale=0.5, zero_point=-7)
    mb.op("CONV_2D", [x, wt, b], [y], {"padding": 0, "stride_h": 1, "stride_w": 1}, version=3)
    data = mb.finish([x], [y])
    k, = [lw.kernel for lw in _compile(data).lowered]
    assert k.variant == "x86-conv-4px" and k.params["fast"] == 0
    check_x86(data, seeds=(0, 1))


SHARED = sorted(p.stem for p in MODELS.glob("*.tflite"))
KEY = ("ad01_int8", "kws_ref_model", "pretrainedResnet_quant", "vww_96_int8")  # the benchmarks'


def test_shared_models_present(models_dir):
    assert len(SHARED) >= 12


@pytest.mark.parametrize("model", [m if m in KEY else pytest.param(m, marks=pytest.mark.slow)
                                   for m in SHARED])
def test_x86_shared_models(model):
    """Every shared model on every AVX2 path (gcc; clang too where the level is chosen at run
    time above AVX2): bit-exact with
    TFLite Micro."""
    path = shared_model(model)
    c = compile_model(path, get_target("x86-avx2"), "m")  # every shared model must compile
    from edgecc.ir import DType
    conv_like = [lw for lw in c.lowered
                 if lw.node.op in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")
                 and c.graph.type(lw.node.inputs[0]).dtype == DType.INT8]
    # the kernels take every int8 conv-like layer of these models but depthwise layers with a
    # depth multiplier (micro_speech, person_detect), which keep the portable kernel
    assert all(lw.kernel.variant.startswith("x86-") or
               lw.kernel.reason == "depth multiplier above 1: portable kernel"
               for lw in conv_like), \
        [(lw.node.op, lw.kernel.variant, lw.kernel.reason) for lw in conv_like]
    if not conv_like:
        pytest.skip("no int8 conv-like layer (int16 activations)")
    for name, target in _paths():
        if name == "avx512-vnni":
            continue  # covered by the random cases; same instructions as AVX-VNNI
        for cc in ("gcc", "clang") if name in ("avx-vnni", "dispatch") else ("gcc",):
            r = verify_model(path, target, cc=cc)
            assert r.bit_exact, (name, cc, r.mismatched_bytes, r.first_bad_layer)
