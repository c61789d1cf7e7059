"""The shared ONNX models (../shared/models/onnx_models/) end to end against onnxruntime: each
compiles and, over 3 seeded frames, matches onnxruntime on host gcc (fast tests) and on host
clang, cortex-m4, cortex-m55, aarch64 and x86-avx2 (slow: one test per model and target, so the
SIMD kernels each target picks are covered model by model): every model under the default ONNX
numerics (fused: every QDQ group as the integer kernel onnxruntime fuses it into where int8 is
allowed, the oracle run with session.qdqisint8allowed=1), and under the x86 numerics where they
differ; no Transpose runs inside an ox_* convolutional model."""
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

# Under onnxruntime's x86 defaults (the x86 numerics), it runs 6 of
# tfl_pretrainedResnet_quant_qdq's Convs, 2 Adds, its AveragePool and Gemm in float32 (its x86
# s8->u8 rewrite leaves those QDQ groups unfused). With x86-float edgecc computes them in its
# order (edgecc/numerics/ort_order.py, ops/_ort_float.py); with x86, the Convs and Gemm run the
# integer kernels and recompute in its order the outputs a rigorous bound finds near a rounding
# boundary (edgecc/numerics/ort_near.py; without that, one conv2d_5 value of frame 1 lands a step
# off and the step grows to 2-4 in 3 of the 10 outputs). Both: exact.
# onnxruntime computes ConvTranspose in float (and Resize, whose arithmetic edgecc follows
# exactly); edgecc's float ConvTranspose sums in another order: within one step is the contract
FLOAT_IN_ORT = {f"ox_autoenc_{f}_{t}" for f in ("qdq", "qop") for t in ("s8", "u8")}


# the models with QDQ groups onnxruntime's x86 defaults run in float32, where x86 and x86-float
# differ
FLOAT_GROUPS = {*TFL, "ox_autoenc_qdq_s8", "ox_conv1d_qdq_s8", "ox_se_mbv2_qdq_s8"}


def _check(name: str, target: str, mode: str) -> None:
    """mode: an --onnx-numerics value, or "default" (CompileOptions())."""
    cc = "clang" if target == "clang" else None
    options = CompileOptions() if mode == "default" else CompileOptions(onnx_numerics=mode)
    r = verify_model(onnx_model(name), get_target("host" if cc else target), cc=cc, frames=3,
                     options=options)
    assert r.oracle == "onnxruntime"
    if options.onnx_numerics == "fused":  # its oracle: onnxruntime with int8 QDQ fusion
        assert r.extra["onnxruntime_session_config"] == {"session.qdqisint8allowed": "1"}
    if name in FLOAT_IN_ORT:
        assert r.passed, r.as_json()
    elif name == "ox_dscnn_fp32":  # float32 outputs: within 1e-5 relative
        assert r.passed and r.mismatched_bytes == 0, r.as_json()
        assert r.extra["max_rel_error"] <= r.extra["float_rtol"] == 1e-5, r.as_json()
    else:  # integer paths: exact
        assert r.bit_exact, r.as_json()


# the models whose x86 numerics differ from the fused default: the int8 QDQ models (onnxruntime's
# x86 defaults rewrite their groups s8 -> u8; QOperator and uint8 models compile the same in
# every mode)
X86_DIFFERS = [*TFL, *(f"ox_{m}_qdq_s8" for m in ("autoenc", "conv1d", "dscnn", "se_mbv2"))]


def _params(targets):
    ps = [pytest.param(m, t, "default", id=f"{m}-{t}") for m in MODELS for t in targets]
    ps += [pytest.param(m, t, "x86", id=f"{m}-{t}-x86") for m in X86_DIFFERS for t in targets]
    return ps + [pytest.param(m, t, "x86-float", id=f"{m}-{t}-x86-float")
                 for m in sorted(FLOAT_GROUPS) for t in targets]


@pytest.mark.parametrize("name,target,mode", _params(["gcc"]))
def test_onnx_model_host_gcc(name, target, mode):
    _check(name, "host", mode)


@pytest.mark.slow
@pytest.mark.parametrize("name,target,mode", _params(TARGETS))
def test_onnx_model_on_target(name, target, mode):
    _check(name, target, mode)


def test_float_group_models_listed():
    """FLOAT_GROUPS is exactly the models where onnxruntime's x86 defaults leave a QDQ group in
    float32, and X86_DIFFERS those whose groups it fuses otherwise than with int8 allowed."""
    from edgecc.frontends.onnx.ortfuse import float_groups, fused_groups
    from edgecc.frontends.onnx.read import read_model
    ms = {name: read_model(onnx_model(name)) for name in MODELS if name != "ox_dscnn_fp32"}
    got = {name for name, m in ms.items() if float_groups(m.graph, m.consts, m.dtypes)}
    assert got == FLOAT_GROUPS
    differ = {name for name, m in ms.items()
              if fused_groups(m.graph, m.consts, m.dtypes, False) !=
              fused_groups(m.graph, m.consts, m.dtypes, True)
              or float_groups(m.graph, m.consts, m.dtypes)}
    assert differ == set(X86_DIFFERS)


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
