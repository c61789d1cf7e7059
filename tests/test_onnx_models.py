"""The shared ONNX models (../shared/models/onnx_models/) end to end against onnxruntime: each
compiles and, over 3 seeded frames, matches onnxruntime on host gcc (fast tests) and on host
clang, cortex-m4, cortex-m55, aarch64 and x86-avx2 (slow: one test per model and target, so the
SIMD kernels each target picks are covered model by model), in the --onnx-float modes; no
Transpose runs inside an ox_* convolutional model."""
from __future__ import annotations

import pytest

from edgecc.compiler import compile_model
from edgecc.options import CompileOptions
from edgecc.targets import get_target
from edgecc.verify import verify_model
from test_onnx_frontend import onnx_model

QUANT = [f"ox_{m}_{f}_{t}" for m in ("autoenc", "conv1d", "dscnn", "se_mbv2")
         for f in ("qdq", "qop") for t in ("s8", "u8")]
TFL = ["tfl_ad01_int8_qdq", "tfl_kws_ref_model_qdq", "tfl_pretrainedResnet_quant_qdq"]
MODELS = [*QUANT, "ox_dscnn_fp32", *TFL]
TARGETS = ["clang", "cortex-m4", "cortex-m55", "aarch64", "x86-avx2"]

# onnxruntime runs 6 of tfl_pretrainedResnet_quant_qdq's Convs, 2 Adds, its AveragePool and
# Gemm in float32 (its x86 s8->u8 rewrite leaves those QDQ groups unfused). With --onnx-float
# ort edgecc computes them in its order (edgecc/numerics/ort_order.py, ort_float.py); with the
# default 'integer', the Convs and Gemm run the integer kernels and recompute in its order the
# outputs a rigorous bound finds near a rounding boundary (edgecc/ops/_ort_near.py; without
# that, one conv2d_5 value of frame 1 lands a step off and the step grows to 2-4 in 3 of the 10
# outputs). Both modes: exact.
# onnxruntime computes ConvTranspose in float (and Resize, whose arithmetic edgecc follows
# exactly); edgecc's float ConvTranspose sums in another order: within one step is the contract
FLOAT_IN_ORT = {f"ox_autoenc_{f}_{t}" for f in ("qdq", "qop") for t in ("s8", "u8")}


# the models with QDQ groups onnxruntime runs in float32, where the two modes differ
FLOAT_GROUPS = {*TFL, "ox_autoenc_qdq_s8", "ox_conv1d_qdq_s8", "ox_se_mbv2_qdq_s8"}


def _check(name: str, target: str, mode: str) -> None:
    cc = "clang" if target == "clang" else None
    r = verify_model(onnx_model(name), get_target("host" if cc else target), cc=cc, frames=3,
                     options=CompileOptions(onnx_numerics=mode))
    assert r.oracle == "onnxruntime"
    if name in FLOAT_IN_ORT:
        assert r.passed, r.as_json()
    else:  # integer paths (and the float model, within 1e-5 relative): exact
        assert r.bit_exact, r.as_json()


# --onnx-float fused (DESIGN.md's integer semantics: every QDQ group as the integer kernel
# onnxruntime fuses it into where int8 is allowed, the oracle run so) changes the int8 QDQ models
FUSED = [*TFL, *(f"ox_{m}_qdq_s8" for m in ("autoenc", "conv1d", "dscnn", "se_mbv2"))]


def _params(targets):
    ps = [pytest.param(m, t, "x86-float", id=f"{m}-{t}-x86-float") for m in MODELS
          for t in targets]
    ps += [pytest.param(m, t, "x86", id=f"{m}-{t}-x86")
           for m in sorted(FLOAT_GROUPS) for t in targets]
    return ps + [pytest.param(m, t, "fused", id=f"{m}-{t}-fused")
                 for m in FUSED for t in targets if m in TFL or t in ("gcc", "cortex-m4")]


@pytest.mark.parametrize("name,target,mode", _params(["gcc"]))
def test_onnx_model_host_gcc(name, target, mode):
    _check(name, "host", mode)


@pytest.mark.slow
@pytest.mark.parametrize("name,target,mode", _params(TARGETS))
def test_onnx_model_on_target(name, target, mode):
    _check(name, target, mode)


def test_float_group_models_listed():
    """FLOAT_GROUPS is exactly the models where onnxruntime leaves a QDQ group in float32."""
    from edgecc.frontends.onnx.ortfuse import float_groups
    from edgecc.frontends.onnx.read import read_model
    got = {name for name in MODELS if name != "ox_dscnn_fp32"
           for m in [read_model(onnx_model(name))] if float_groups(m.graph, m.consts, m.dtypes)}
    assert got == FLOAT_GROUPS


def test_resnet_float_groups_exact_over_frames():
    """With --onnx-numerics x86-float the float32 groups stay exact frame after frame (the drift
    of the integer kernels begins in frame 1, on one conv2d_5 value)."""
    r = verify_model(onnx_model("tfl_pretrainedResnet_quant_qdq"), get_target("host"), frames=8,
                     seed=11, options=CompileOptions(onnx_numerics="x86-float"))
    assert r.bit_exact, r.as_json()


@pytest.mark.parametrize("name", [m for m in MODELS if m.startswith("ox_")])
def test_ox_model_runs_no_transpose(name):
    """The ox_* models start with an NHWC input and a Transpose to NCHW, which must cancel."""
    c = compile_model(onnx_model(name), get_target("host"), "model")
    ops = [lw.node.op for lw in c.lowered]
    assert "TRANSPOSE" not in ops and any(o.startswith("CONV_2D") for o in ops), ops
