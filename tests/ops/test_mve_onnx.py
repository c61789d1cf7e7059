"""Helium kernels with ONNX numerics (onnxruntime's float32 epilogue, edgecc/lower/mve/onnx.py):
each conv / depthwise / fully connected variant runs ONNX-numerics nodes on cortex-m55 under
QEMU, bit-exact with onnxruntime (as the portable ONNX kernels are), and the kernels it replaces
really are the Helium ones."""
import numpy as np
import pytest

from conftest import SHARED
from edgecc.compiler import compile_model
from edgecc.options import CompileOptions
from edgecc.targets import get_target
from edgecc.verify import verify_model
from test_onnx_frontend import _save, qdq_conv_model

pytestmark = pytest.mark.qemu

M55 = get_target("cortex-m55")
# onnxruntime's x86 defaults: the QDQ groups it leaves in float32, on the near-tie kernels, beside
# the Helium ones (under the fused default every group is a Helium ONNX kernel)
X86 = CompileOptions(onnx_numerics="x86")


def _onnx_variants(path, options=None) -> set[str]:
    c = compile_model(path, M55, "m", options)
    return {lw.kernel.variant for lw in c.lowered if lw.kernel.variant.endswith("-onnx")
            and lw.node.op != "ADD"}


@pytest.mark.parametrize("group,relu", [(1, False), (1, True), (4, False)])
def test_mve_onnx_conv_and_depthwise_exact(tmp_path, group, relu):
    # a 3x3 conv of 4 channels (fields of filter rows padded to 16 B), clamped by a fused
    # Relu or not, and its grouped (depthwise) twin
    # (onnxruntime's x86 defaults leave the group-1 conv in float32: the x86 numerics run it on
    # the Cortex-M DSP near-tie kernel, edgecc/ops/_ort_near.py; Helium has no twin yet)
    p = _save(qdq_conv_model(np.random.default_rng(16 + group), relu=relu, group=group), tmp_path)
    if group > 1:
        assert _onnx_variants(p, X86) == {"mve-dw-gather-onnx"}
    else:
        c = compile_model(p, M55, "m", X86)
        assert [(lw.kernel.variant, lw.node.numerics.float_group) for lw in c.lowered
                if lw.node.op == "CONV_2D"] == [("dsp-conv-6px", True)]
        assert _onnx_variants(p) == {"mve-conv-4ch-m1-onnx"}  # fused: the Helium kernel
    for seed in (0, 1):
        for options in (X86, None):
            r = verify_model(p, M55, seed=seed, options=options)
            assert r.bit_exact, r.as_json()


@pytest.mark.parametrize("name,variants", [
    # (x86 numerics: its first conv and its fully connected layer are groups onnxruntime runs in
    # float32, on the DSP near-tie kernels, edgecc/ops/_ort_near.py)
    ("tfl_kws_ref_model_qdq", {"mve-conv-4ch-m0-onnx", "mve-dw-gather-onnx"}),
    pytest.param("ox_se_mbv2_qdq_u8", {"mve-conv-4ch-m1-onnx", "mve-conv-4ch-m0-onnx",
                                       "mve-dw-gather-onnx", "mve-conv-2ch3px-m0-onnx",
                                       "mve-fc-4u-pc-onnx",
                                       # the squeeze-and-excitation scale: Helium has no MUL
                                       # kernel, the Cortex-M DSP one serves (M55 has DSP)
                                       "dsp-mul-onnx"}, marks=pytest.mark.slow),
])
def test_mve_onnx_models_exact(name, variants):
    path = SHARED / "models" / "onnx_models" / f"{name}.onnx"
    assert path.exists(), path
    assert _onnx_variants(path, X86) == variants
    r = verify_model(path, M55, frames=2, options=X86)
    assert r.bit_exact, r.as_json()


@pytest.mark.parametrize("seed", [0, 1])
def test_mve_onnx_add_every_int8_pair_exact(tmp_path, seed, monkeypatch):
    # onnxruntime's QLinearAdd on every int8 pair (a, b) (test_onnx_numerics's model and
    # inputs), in float32 fused multiply-adds on Helium
    import edgecc.verify as v
    from test_onnx_numerics import ALL_PAIRS, _binary_model
    p = tmp_path / "m.onnx"
    p.write_bytes(_binary_model("QLinearAdd", np.random.default_rng(seed)).SerializeToString())
    assert _onnx_variants(p) == set() and "mve-add-onnx" in {
        lw.kernel.variant for lw in compile_model(p, M55, "m").lowered}
    monkeypatch.setattr(v, "seeded_frames",
                        lambda g, s, n: [[a.copy() for a in ALL_PAIRS] for _ in range(n)])
    r = verify_model(p, M55)
    assert r.bit_exact, r.as_json()
