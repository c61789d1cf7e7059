"""TRANSPOSE_CONV against TFLite Micro: int8 (int32 bias) and 16x8 (int16 activations, int8
weights, int64 bias)."""
import numpy as np
import pytest

from edgecc.ops import conv_out_size
from edgecc.tflite_writer import ModelBuilder
from opmodels import cases
from opcheck import check_frames, check_model


def tconv_model(rng, nb, ih, iw, ic, oc, kh, kw, sh, sw, padding, bias, per_channel, act=0,
                dtype="int8"):
    # an output size whose forward conv gives back the input size
    oh = ih * sh if padding == 0 else (ih - 1) * sh + kh
    ow = iw * sw if padding == 0 else (iw - 1) * sw + kw
    assert conv_out_size(padding, oh, kh, sh, 1) == ih
    mb = ModelBuilder()
    s_in, s_w = float(rng.uniform(0.01, 0.1)), rng.uniform(0.002, 0.02, oc if per_channel else 1)
    s16 = dtype == "int16"
    zp = (lambda: 0) if s16 else (lambda: int(rng.integers(-20, 20)))  # noqa: E731
    if s16:  # 16x8: an int16 input spans 256 times the int8 range at 1/256 of the scale
        s_in /= 256
    x = mb.tensor("x", (nb, ih, iw, ic), dtype, scale=s_in, zero_point=zp())
    w = mb.const("w", rng.integers(-127, 128, (oc, kh, kw, ic)).astype(np.int8), scale=list(s_w),
                 zero_point=[0] * len(s_w), axis=0)
    shape = mb.const("shape", np.array([nb, oh, ow, oc], np.int32))
    spread = s_in * float(np.mean(s_w)) * 128 * 64 * np.sqrt(ic * kh * kw / (sh * sw))
    if s16:
        spread *= 256 * 256 / 256  # the int16 output: 256 times int8's levels over the same range
    y = mb.tensor("y", (nb, oh, ow, oc), dtype, scale=float(spread / 60 / (256 if s16 else 1)),
                  zero_point=zp())
    ins = [shape, w, x]
    if bias:
        bt, span = (np.int64, 500_000) if s16 else (np.int32, 2000)
        ins.append(mb.const("b", rng.integers(-span, span, oc).astype(bt),
                            scale=list(s_in * s_w), zero_point=[0] * len(s_w)))
    opts = {"padding": padding, "stride_h": sh, "stride_w": sw}
    if act:
        opts["fused_activation_function"] = act
    mb.op("TRANSPOSE_CONV", ins, [y], opts, version=3)
    return mb.finish([x], [y])


@pytest.mark.parametrize("case", cases(8, 4))
def test_transpose_conv(case):
    rng = np.random.default_rng(2200 + case)
    nb, ih, iw = int(rng.integers(1, 3)), int(rng.integers(1, 6)), int(rng.integers(1, 6))
    ic, oc = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    check_model(tconv_model(rng, nb, ih, iw, ic, oc, kh, kw, sh, sw, case % 2, case % 3 != 0,
                            case % 4 != 1))


def test_transpose_conv_relu():
    rng = np.random.default_rng(2290)
    check_model(tconv_model(rng, 1, 4, 4, 3, 4, 3, 3, 2, 2, 0, True, True, act=1))


@pytest.mark.parametrize("case", range(4))
def test_transpose_conv_16x8(case):
    """int16 activations, int8 weights, int64 bias (TFLite Micro's 16x8 kernel), 3 frames on the
    host and the Cortex-M4."""
    rng = np.random.default_rng(2300 + case)
    nb, ih, iw = 1, int(rng.integers(2, 6)), int(rng.integers(2, 6))
    ic, oc = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    check_frames(tconv_model(rng, nb, ih, iw, ic, oc, kh, kw, sh, sw, case % 2, case != 3,
                             case % 2 == 0, act=1 if case == 2 else 0, dtype="int16"),
                 "tflite-micro")
