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


def float_tail_model() -> bytes:
    """A quantized input, DEQUANTIZE, then a float32 CONV_2D (RELU), AVERAGE_POOL_2D, RESHAPE,
    FULLY_CONNECTED without bias, TANH and LOG_SOFTMAX: the float tail a converter leaves."""
    rng = np.random.default_rng(1390)
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 6, 6, 3), "int8", scale=0.05, zero_point=3)
    f = mb.tensor("f", (1, 6, 6, 3), "float32")
    mb.op("DEQUANTIZE", [x], [f])
    c = mb.tensor("c", (1, 6, 6, 4), "float32")
    mb.op("CONV_2D", [f, mb.const("w", _f32(rng, (4, 3, 3, 3))), mb.const("b", _f32(rng, (4,)))],
          [c], {"padding": 0, "stride_h": 1, "stride_w": 1, "fused_activation_function": 1})
    p = mb.tensor("p", (1, 3, 3, 4), "float32")
    mb.op("AVERAGE_POOL_2D", [c], [p], {"padding": 1, "stride_h": 2, "stride_w": 2,
                                        "filter_height": 2, "filter_width": 2})
    r = mb.tensor("r", (1, 36), "float32")
    mb.op("RESHAPE", [p, mb.const("s", np.array([1, 36], np.int32))], [r])
    o = mb.tensor("o", (1, 5), "float32")
    mb.op("FULLY_CONNECTED", [r, mb.const("fw", _f32(rng, (5, 36))), -1], [o])
    t = mb.tensor("t", (1, 5), "float32")
    mb.op("TANH", [o], [t])
    y = mb.tensor("y", (1, 5), "float32")
    mb.op("LOG_SOFTMAX", [t], [y])
    return mb.finish([x], [y])


def test_float_tail_after_dequantize_host():
    check_model(float_tail_model())


@pytest.mark.qemu
@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55", "aarch64", "x86-avx2"])
def test_float_tail_after_dequantize_targets(tmp_path, target):
    """edgecc_math.h and the float templates build with each target's compiler (-Werror) and
    match TFLite Micro there too."""
    from edgecc.targets import get_target
    from edgecc.verify import verify_model
    path = tmp_path / "m.tflite"
    path.write_bytes(float_tail_model())
    r = verify_model(path, get_target(target))
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)


def test_float_net_through_the_passes():
    """PAD before a CONV_2D with a dead (all-zero) output channel, RELU, DEPTHWISE, MAXIMUM with 0,
    MAX_POOL, MEAN, SOFTMAX all in float32: the passes leave the float nodes intact (the integer
    fusions refuse them) and the result matches TFLite Micro."""
    rng = np.random.default_rng(1395)
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 6, 6, 3), "float32")
    p = mb.tensor("p", (1, 8, 8, 3), "float32")
    mb.op("PAD", [x, mb.const("pads", np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32))], [p])
    w = _f32(rng, (4, 3, 3, 3))
    w[2] = 0
    c = mb.tensor("c", (1, 6, 6, 4), "float32")
    mb.op("CONV_2D", [p, mb.const("w", w), mb.const("b", np.zeros(4, np.float32))], [c],
          {"padding": 1, "stride_h": 1, "stride_w": 1})
    r = mb.tensor("r", (1, 6, 6, 4), "float32")
    mb.op("RELU", [c], [r])
    d = mb.tensor("d", (1, 6, 6, 4), "float32")
    mb.op("DEPTHWISE_CONV_2D", [r, mb.const("w2", _f32(rng, (1, 3, 3, 4))),
                                mb.const("b2", _f32(rng, (4,)))], [d],
          {"padding": 0, "stride_h": 1, "stride_w": 1, "depth_multiplier": 1})
    m = mb.tensor("m", (1, 6, 6, 4), "float32")
    mb.op("MAXIMUM", [d, mb.const("zero", np.array([0.0], np.float32))], [m])
    mp = mb.tensor("mp", (1, 3, 3, 4), "float32")
    mb.op("MAX_POOL_2D", [m], [mp], {"padding": 1, "stride_h": 2, "stride_w": 2,
                                     "filter_height": 2, "filter_width": 2})
    mn = mb.tensor("mn", (1, 4), "float32")
    mb.op("MEAN", [mp, mb.const("ax", np.array([1, 2], np.int32))], [mn], {"keep_dims": False})
    y = mb.tensor("y", (1, 4), "float32")
    mb.op("SOFTMAX", [mn], [y], {"beta": 1.0})
    check_model(mb.finish([x], [y]))
