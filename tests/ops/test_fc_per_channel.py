"""Per-channel FULLY_CONNECTED (one weight scale per unit, the converter's default for Dense
layers now), int8 and 16x8: numpy reference and generated C vs TFLite Micro on random shapes; the
portable kernel on the host, the Cortex-M4 DSP kernel under QEMU (the other SIMD kernels:
test_fc_per_channel_simd.py).
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

from edgecc.compiler import compile_model
from edgecc.targets import get_target
from edgecc.tflite_writer import ModelBuilder
from edgecc.verify import verify_model
from opcheck import check_model


def fc_pc_model(rng, batches: int, depth: int, units: int, act: int, dtype: str = "int8",
                bias: bool = True) -> bytes:
    mb = ModelBuilder()
    # unit scales spread over two decades: multipliers and shifts differ from unit to unit
    w_scales = (10.0 ** rng.uniform(-3.3, -1.3, units)).tolist()
    if dtype == "int8":
        x = mb.tensor("x", (batches, depth), "int8", scale=float(rng.uniform(0.01, 0.3)),
                      zero_point=int(rng.integers(-128, 128)))
        y_scale, y_zp = float(rng.uniform(0.05, 0.5)) * np.sqrt(depth) / 4, int(rng.integers(-128, 128))
        b = (mb.const("b", rng.integers(-3000, 3000, units).astype(np.int32),
                      scale=[1e-4] * units) if bias else -1)
    else:
        x = mb.tensor("x", (batches, depth), "int16", scale=float(rng.uniform(1e-4, 1e-3)),
                      zero_point=0)
        y_scale, y_zp = float(rng.uniform(1e-4, 1e-3)) * np.sqrt(depth) * 8, 0
        b = (mb.const("b", rng.integers(-300000, 300000, units).astype(np.int64),
                      scale=[1e-7] * units) if bias else -1)
    w = mb.const("w", rng.integers(-127, 128, (units, depth)).astype(np.int8), scale=w_scales,
                 zero_point=[0] * units, axis=0)
    y = mb.tensor("y", (batches, units), dtype, scale=y_scale, zero_point=y_zp)
    mb.op("FULLY_CONNECTED", [x, w, b], [y], {"fused_activation_function": act},
          version=4 if dtype == "int8" else 7)
    return mb.finish([x], [y])


def _random(case: int, dtype: str) -> bytes:
    rng = np.random.default_rng(4100 + case + (50 if dtype == "int16" else 0))
    return fc_pc_model(rng, int(rng.integers(1, 4)), int(rng.integers(1, 90)),
                       int(rng.integers(1, 24)), act=case % 4, dtype=dtype, bias=case != 2)


@pytest.mark.parametrize("case", range(6))
def test_fc_per_channel_int8(case):
    check_model(_random(case, "int8"), compilers=("gcc", "clang") if case < 2 else ("gcc",))


@pytest.mark.parametrize("case", range(4))
def test_fc_per_channel_int16(case):
    check_model(_random(case, "int16"), compilers=("gcc",))


def test_portable_kernel_on_host():
    """The host target has no SIMD table: the portable per-channel kernel (the SIMD ones:
    tests/ops/test_fc_per_channel_simd.py)."""
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.tflite"
        p.write_bytes(_random(0, "int8"))
        c = compile_model(p, get_target("host"), "m")
    (lw,) = c.lowered
    assert lw.template_path == "c/fully_connected_pc.c.j2"


# (batches, depth, units, act): chunked deep rows (depth > FC_CHUNK), units not a multiple of 4,
# more than 16 units, fused activations (a clamp inside int8)
DSP_CASES = [(1, 40, 8, 0), (2, 1200, 5, 1), (3, 33, 21, 3), (1, 7, 2, 0), (1, 520, 18, 2)]


@pytest.mark.qemu
@pytest.mark.parametrize("case", range(len(DSP_CASES)))
def test_fc_per_channel_dsp_kernel_on_cortex_m4(case):
    batches, depth, units, act = DSP_CASES[case]
    data = fc_pc_model(np.random.default_rng(4300 + case), batches, depth, units, act)
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.tflite"
        p.write_bytes(data)
        (lw,) = compile_model(p, get_target("cortex-m4"), "m").lowered
        assert lw.template_path == "dsp/fully_connected_4u_pc.c.j2", lw.kernel.reason
        for seed in (0, 1):
            r = verify_model(p, get_target("cortex-m4"), seed=seed)
            assert r.bit_exact, (seed, r.first_bad_layer)


@pytest.mark.parametrize("model", ["cv_dscnn", "cv_dscnn_int16", "cv_gru_unrolled",
                                   "cv_resnet8_u8io"])
def test_converter_models_with_per_channel_fc_exact_over_frames(model):
    """TensorFlow 2.21's converter writes per-channel Dense weights (int8 and 16x8) and uint8
    edges: these models compile and match TFLite Micro over 5 frames."""
    from conftest import SHARED
    p = SHARED / "models" / "converter" / f"{model}.tflite"
    if not p.is_file():
        pytest.fail(f"shared model missing: {p}")
    r = verify_model(p, get_target("host"), frames=5)
    assert r.bit_exact, (r.first_bad_frame, r.first_bad_layer)
