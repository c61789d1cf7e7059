"""The shared models on Cortex-M4 (DSP kernels) and Cortex-M55 (Helium kernels) under QEMU:
bit-exact with TFLite Micro, and every conv / depthwise / fully connected / add / pool layer
really runs a SIMD kernel (none fell back to the portable one)."""
import pytest

from conftest import shared_model
from edgecc.compiler import compile_model
from edgecc.targets import get_target
from edgecc.verify import verify_model

pytestmark = pytest.mark.qemu

SIMD_OPS = {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "AVERAGE_POOL_2D",
            "MAX_POOL_2D"}
CASES = ["kws_ref_model", "ad01_int8", pytest.param("vww_96_int8", marks=pytest.mark.slow),
         pytest.param("pretrainedResnet_quant", marks=pytest.mark.slow)]


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
@pytest.mark.parametrize("model", CASES)
def test_shared_model_on_simd_kernels(model, target):
    path = shared_model(model)
    c = compile_model(path, get_target(target), "m")
    prefix = "mve-" if target == "cortex-m55" else "dsp-"
    fallbacks = [(lw.node.op, lw.kernel.variant, lw.kernel.reason) for lw in c.lowered
                 if lw.node.op in SIMD_OPS and not lw.kernel.variant.startswith(("dsp-", prefix))]
    assert not fallbacks, fallbacks
    r = verify_model(path, get_target(target))
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)
    assert r.extra["instructions"] > 0
