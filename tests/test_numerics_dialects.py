"""Each node's arithmetic dialect (ir.Node.numerics, edgecc/numerics/): set once by the frontends
from the compile options, carried by every pass that copies a node (activation fusion, tiling's
patches, the depthwise-as-conv rewrite), and what the ops and kernel tables ask."""
from __future__ import annotations

import pytest

from conftest import SHARED, shared_model
from edgecc.compiler import compile_model
from edgecc.ir import FIXED_POINT, FLOAT, NEAR, QLINEAR, OrtFloatGroup
from edgecc.options import CompileOptions
from edgecc.targets import get_target

ONNX_MODELS = SHARED / "models" / "onnx_models"
M4, HOST = get_target("cortex-m4"), get_target("host")
ARITH = {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "MUL", "AVERAGE_POOL_2D"}


def _dialects(c) -> set[tuple[str, object]]:
    return {(lw.node.op, lw.node.numerics) for lw in c.lowered}


def test_tflite_nodes_are_fixed_point():
    c = compile_model(shared_model("pretrainedResnet_quant"), HOST, "m")
    assert {d for _, d in _dialects(c)} == {FIXED_POINT}


@pytest.mark.parametrize("numerics,group", [("x86", OrtFloatGroup(NEAR, 3)),
                                            ("x86-float", OrtFloatGroup(FLOAT, 3)),
                                            ("fused", None)])
def test_onnx_dialect_follows_the_options(numerics, group):
    """The resnet's int8 layers: QLinear, or (x86 numerics) the groups onnxruntime's x86 defaults
    leave in float32 with the options' order and thread count; the fused default has none."""
    c = compile_model(ONNX_MODELS / "tfl_pretrainedResnet_quant_qdq.onnx", HOST, "m",
                      CompileOptions(onnx_numerics=numerics, ort_threads=3))
    got = {d for op, d in _dialects(c) if op in ARITH}
    assert got == ({QLINEAR} if group is None else {QLINEAR, group}), got
    if group is not None:  # the tables ask the value: the near-tie kernels only in x86
        conv = {lw.kernel.variant for lw in c.lowered
                if lw.node.op == "CONV_2D" and lw.node.numerics.float_group}
        want = "portable-ort-near" if group.near_checked else "portable-ort-float"
        assert conv == {want}, conv


@pytest.mark.slow  # tiling's search: about 90 s
def test_passes_carry_the_dialect():
    """ox_se_mbv2_qdq_s8 tiled on cortex-m4: every patch of its first layers (copies tiling
    makes) and every layer with a fused activation keeps QLinear; only the patch reads and
    writes, which move bytes, are fixed point."""
    c = compile_model(ONNX_MODELS / "ox_se_mbv2_qdq_s8.onnx", M4, "m",
                      CompileOptions(onnx_numerics="fused", tiling="auto"))
    assert c.stats.get("tiling"), "the model no longer tiles: pick another"
    patches = {(lw.node.op, lw.node.numerics) for lw in c.lowered if "/patch" in lw.node.name}
    assert ("CONV_2D", QLINEAR) in patches and \
        {op for op, d in patches if d != QLINEAR} == set(), patches
    assert all(lw.node.numerics == QLINEAR for lw in c.lowered if lw.node.op in ARITH)


def test_dialect_values_are_checked():
    with pytest.raises(ValueError):
        OrtFloatGroup("fast", 1)
    with pytest.raises(ValueError):
        OrtFloatGroup(NEAR, 0)
    assert not FIXED_POINT.onnxruntime and QLINEAR.qlinear and QLINEAR.exact_float_steps
