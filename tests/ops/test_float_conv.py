"""float32 CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and pools against TFLite Micro
(edgecc/ops/_float_conv.py): numpy reference bit-exact, generated C too (no libm involved)."""
import numpy as np
import pytest

from edgecc.ops import conv_out_size
from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model
from opmodels import cases


def _f32(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


def conv_model(rng, op, case):
    n, h, w = int(rng.integers(1, 3)), int(rng.integers(3, 9)), int(rng.integers(3, 9))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    dh, dw = (1, 1) if case % 3 else (2, 1)
    # TFLite Micro crashes on a float DEPTHWISE_CONV_2D without bias: CONV_2D only
    padding, act, bias = case % 2, case % 4, case % 5 != 4 or op != "CONV_2D"
    ic = int(rng.integers(1, 6))
    mb = ModelBuilder()
    x = mb.tensor("x", (n, h, w, ic), "float32")
    if op == "CONV_2D":
        groups = 2 if case == 3 and ic % 2 == 0 else 1
        oc = int(rng.integers(1, 5)) * groups
        wt = mb.const("w", _f32(rng, (oc, kh, kw, ic // groups)))
        opts = {}
    else:
        mult = int(rng.integers(1, 3))
        oc = ic * mult
        wt = mb.const("w", _f32(rng, (1, kh, kw, oc)))
        opts = {"depth_multiplier": mult}
    b = mb.const("b", _f32(rng, (oc,))) if bias else -1
    oh = conv_out_size(padding, h, kh, sh, dh)
    ow = conv_out_size(padding, w, kw, sw, dw)
    y = mb.tensor("y", (n, oh, ow, oc), "float32")
    mb.op(op, [x, wt, b], [y], {"padding": padding, "stride_h": sh, "stride_w": sw,
                                "dilation_h_factor": dh, "dilation_w_factor": dw,
                                "fused_activation_function": act, **opts},
          version=1 if op == "CONV_2D" else 2)
    return mb.finish([x], [y])


@pytest.mark.parametrize("case", cases(6, 3))
@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D"])
def test_float_conv(op, case):
    rng = np.random.default_rng(1300 + case + (20 if op == "DEPTHWISE_CONV_2D" else 0))
    check_model(conv_model(rng, op, case))


@pytest.mark.parametrize("case", cases(4, 2))
def test_float_fully_connected(case):
    rng = np.random.default_rng(1340 + case)
    batches, units, depth = int(rng.integers(1, 4)), int(rng.integers(1, 12)), int(rng.integers(1, 40))
    mb = ModelBuilder()
    x = mb.tensor("x", (batches, depth), "float32")
    w = mb.const("w", _f32(rng, (units, depth)))
    b = mb.const("b", _f32(rng, (units,))) if case % 2 == 0 else -1
    y = mb.tensor("y", (batches, units), "float32")
    mb.op("FULLY_CONNECTED", [x, w, b], [y], {"fused_activation_function": case % 4})
    check_model(mb.finish([x], [y]))


@pytest.mark.parametrize("case", cases(6, 2))
@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
def test_float_pool(op, case):
    rng = np.random.default_rng(1350 + case + (10 if op == "MAX_POOL_2D" else 0))
    fh, fw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    h, w, c = int(rng.integers(fh, fh + 7)), int(rng.integers(fw, fw + 7)), int(rng.integers(1, 9))
    padding, act = case % 2, case % 4
    mb = ModelBuilder()
    x = mb.tensor("x", (1, h, w, c), "float32")
    oh, ow = conv_out_size(padding, h, fh, sh, 1), conv_out_size(padding, w, fw, sw, 1)
    y = mb.tensor("y", (1, oh, ow, c), "float32")
    mb.op(op, [x], [y], {"padding": padding, "stride_h": sh, "stride_w": sw, "filter_height": fh,
                         "filter_width": fw, "fused_activation_function": act})
    check_model(mb.finish([x], [y]))
