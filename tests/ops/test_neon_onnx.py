"""AArch64 NEON kernels with onnxruntime's epilogue (ONNX numerics, runtime_c/neon/,
edgecc/lower/neon/, neon/eltwise_onnx.py): QLinearConv (plain, depthwise, one channel with a depth
multiplier), QGemm, QLinearAdd and QLinearMul on random shapes with int8 and uint8 activations, bit-exact with
onnxruntime under qemu-aarch64 on the dot-product and the plain Armv8-A builds; and the shared
ONNX models, every layer's output byte for byte the portable kernels' (host) on the same inputs.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

import qop_models as qm
from edgecc.compiler import compile_model
from edgecc.lower.neon.eltwise_onnx import fma_matches_double
from edgecc.targets import get_target
from edgecc.verify import _build_and_run
from edgecc.build.harness import parse_frames
from edgecc.verify.reference import seeded_frames
from test_neon import TARGET, _boards
from test_onnx_frontend import onnx_model, qdq_conv_model

pytestmark = pytest.mark.qemu

HOST = get_target("host")


def check_neon_onnx(data: bytes, seeds=(0,)) -> list[str]:
    """Bit-exact vs onnxruntime on both NEON builds; every conv-like / ADD layer must take a NEON
    kernel with the ONNX epilogue. Returns the layers' kernel variants."""
    from edgecc.verify import verify_model
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.onnx"
        p.write_bytes(data)
        c = compile_model(p, TARGET, "m")
        got = [(lw.node.op, lw.kernel.variant, lw.kernel.reason) for lw in c.lowered
               if lw.node.op in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "MUL")]
        assert got and all(v.startswith("neon-") for _, v, _ in got), got
        assert all("onnx" in v or "onnxruntime" in r for _, v, r in got), got
        for name, board in _boards():
            for seed in seeds:
                r = verify_model(p, TARGET, board=board, seed=seed)
                assert r.bit_exact, (name, seed, r.mismatched_bytes, r.first_bad_layer)
    return [v for _, v, _ in got]


CONV_CASES = [  # (n, c, h, w, m, k, stride, pads, dil, dtype)
    (1, 3, 10, 9, 20, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), np.int8),
    (2, 8, 7, 7, 16, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), np.uint8),
    (1, 5, 12, 11, 9, (3, 3), (2, 1), (0, 2, 1, 0), (1, 2), np.int8),
    (1, 16, 6, 6, 33, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), np.uint8),
    (1, 1, 13, 10, 8, (4, 3), (2, 2), (1, 1, 1, 1), (1, 1), np.int8),
]


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_neon_onnx_conv(case):
    n, c, h, w, m, k, s, pads, dil, dt = CONV_CASES[case]
    data = qm.qlinear_conv(np.random.default_rng(8100 + case), n, c, h, w, m, k, s, pads, dil,
                           dtype=dt, bias=case != 2)
    assert check_neon_onnx(data) == ["neon-conv-4px"]


DW_CASES = [  # (c, h, w, multiplier, k, stride, pads, dtype)
    (16, 9, 9, 1, (3, 3), (1, 1), (1, 1, 1, 1), np.int8),
    (24, 8, 7, 1, (5, 5), (2, 2), (2, 2, 2, 2), np.uint8),
    (1, 10, 10, 8, (3, 3), (1, 1), (1, 1, 1, 1), np.uint8),  # one channel: run as a convolution
]


@pytest.mark.parametrize("case", range(len(DW_CASES)))
def test_neon_onnx_depthwise(case):
    c, h, w, mult, k, s, pads, dt = DW_CASES[case]
    data = qm.qlinear_conv(np.random.default_rng(8200 + case), 1, c, h, w, c * mult, k, s, pads,
                           group=c, dtype=dt)
    assert check_neon_onnx(data) == ["neon-conv-4px" if c == 1 else "neon-dw"]


@pytest.mark.parametrize("case", range(4))
def test_neon_onnx_fully_connected(case):
    batches, depth, units = [(1, 5, 7), (3, 100, 40), (2, 64, 16), (1, 250, 70)][case]
    data = qm.qgemm(np.random.default_rng(8300 + case), batches, depth, units,
                    per_channel=case % 2 == 1, dtype=np.uint8 if case >= 2 else np.int8)
    assert check_neon_onnx(data)[0].startswith("neon-fc")


def test_neon_onnx_fused_relu():
    """A QDQ Conv -> Relu: the clamp range of the fused activation. onnxruntime leaves this group
    in float32 under its x86 defaults, so the x86 numerics run it on the portable near-tie
    kernel (edgecc/ops/_ort_near.py; AArch64 has no NEON twin yet), bit-exact on both NEON
    builds."""
    from edgecc.options import CompileOptions
    from edgecc.verify import verify_model
    x86 = CompileOptions(onnx_numerics="x86")
    m = qdq_conv_model(np.random.default_rng(5), relu=True)
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.onnx"
        p.write_bytes(m.SerializeToString())
        c = compile_model(p, TARGET, "m", x86)
        assert [lw.kernel.variant for lw in c.lowered if lw.node.op == "CONV_2D"] == \
            ["portable-ort-near"]
        for name, board in _boards():
            for seed in (0, 1):
                r = verify_model(p, TARGET, board=board, seed=seed, options=x86)
                assert r.bit_exact, (name, seed, r.mismatched_bytes, r.first_bad_layer)


ELT_CASES = [  # (a_shape, b_shape, dtype, b constant)
    ((1, 8, 10, 7), (1, 8, 10, 7), np.int8, False),
    ((1, 8, 10, 7), (1, 8, 10, 7), np.uint8, False),
    ((1, 10, 7, 24), (1, 1, 1, 24), np.uint8, False),  # b a per-channel row (NHWC): b first
    ((1, 1, 19), (2, 5, 19), np.int8, False),          # a the repeated row: a's term first
    ((1, 6, 5, 40), (1, 1, 1, 40), np.int8, True),     # a constant per-channel row
]


@pytest.mark.parametrize("case", range(len(ELT_CASES)))
def test_neon_onnx_add(case):
    a, b, dtype, const_b = ELT_CASES[case]
    data = qm.qlinear_add(np.random.default_rng(8400 + case), a, b, dtype, const_b=const_b)
    assert check_neon_onnx(data, seeds=(0, 1)) == ["neon-add-onnx"]


def test_neon_onnx_add_broadcast_falls_back():
    data = qm.qlinear_add(np.random.default_rng(8401), (1, 8, 10, 7), (1, 8, 1, 1))
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.onnx"
        p.write_bytes(data)
        [lw] = [lw for lw in compile_model(p, TARGET, "m").lowered if lw.node.op == "ADD"]
    assert lw.kernel.variant == "portable"
    assert ("neon-add-onnx", "broadcast other than one row of the last dimension: portable "
            "kernel") in lw.refused


@pytest.mark.parametrize("case", [0, 2, 3, 4])
def test_neon_onnx_mul(case):
    a, b, dtype, const_b = ELT_CASES[case]
    data = qm.qlinear_add(np.random.default_rng(8500 + case), a, b, dtype, op="QLinearMul",
                          const_b=const_b)
    assert check_neon_onnx(data, seeds=(0, 1)) == ["neon-mul-onnx"]


def test_neon_onnx_mul_other_broadcast_falls_back():
    data = qm.qlinear_add(np.random.default_rng(8501), (1, 8, 10, 7), (1, 8, 1, 1),
                          op="QLinearMul")
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.onnx"
        p.write_bytes(data)
        [lw] = [lw for lw in compile_model(p, TARGET, "m").lowered if lw.node.op == "MUL"]
    assert lw.kernel.variant == "portable"
    assert lw.refused[-1][0] == "neon-mul-onnx" and "broadcast" in lw.refused[-1][1]


def test_fma_proof_detects_inexact_double_sums():
    """The ADD kernel's proof: ordinary QLinearAdd constants pass; a k whose size puts b * r_b
    below the double sum's last bit fails (the portable kernel's double sum would round)."""
    assert fma_matches_double(np.float32(0.7), np.float32(1.3), np.float32(-20.25))
    assert not fma_matches_double(np.float32(2.0 ** -20), np.float32(2.0 ** -20 / 3),
                                  np.float32(3.0e7))


def _traces(c, target, frames) -> dict[int, bytes]:
    with tempfile.TemporaryDirectory() as tmp:
        text = _build_and_run(c, Path(tmp), None, target, None, trace=True, frames=frames)
    return parse_frames(text)[0][0][1]


@pytest.mark.parametrize("model", [
    "tfl_kws_ref_model_qdq", "ox_dscnn_qop_u8",
    pytest.param("tfl_pretrainedResnet_quant_qdq", marks=pytest.mark.slow),
    pytest.param("ox_se_mbv2_qdq_s8", marks=pytest.mark.slow),
    pytest.param("ox_conv1d_qdq_u8", marks=pytest.mark.slow),
    pytest.param("tfl_ad01_int8_qdq", marks=pytest.mark.slow)])
def test_neon_onnx_models_equal_portable(model):
    """Every layer's output on aarch64 (NEON kernels, ONNX epilogue) is the portable kernels'
    (host) byte for byte on the same seeded input."""
    path = onnx_model(model)
    neon = compile_model(path, TARGET, "m")
    assert any(lw.kernel.variant.startswith("neon-") for lw in neon.lowered)
    frames = seeded_frames(neon.graph, 0, 1)
    got, want = _traces(neon, TARGET, frames), _traces(compile_model(path, HOST, "m"), HOST, frames)
    assert got.keys() == want.keys() and got
    bad = [k for k in want if got[k] != want[k]]
    assert not bad, bad
