import numpy as np
import pytest

from edgecc.ops import conv_out_size
from edgecc.tflite_writer import ModelBuilder
from opmodels import cases
from opcheck import check_model


def tconv_model(rng, nb, ih, iw, ic, oc, kh, kw, sh, sw, padding, bias, per_channel, act=0):
    # an output size whose forward conv gives back the input size
    oh = ih * sh if padding == 0 else (ih - 1) * sh + kh
    ow = iw * sw if padding == 0 else (iw - 1) * sw + kw
    assert conv_out_size(padding, oh, kh, sh, 1) == ih
    mb = ModelBuilder()
    s_in, s_w = float(rng.uniform(0.01, 0.1)), rng.uniform(0.002, 0.02, oc if per_channel else 1)
    x = mb.tensor("x", (nb, ih, iw, ic), "int8", scale=s_in, zero_point=int(rng.integers(-20, 20)))
    w = mb.const("w", rng.integers(-127, 128, (oc, kh, kw, ic)).astype(np.int8), scale=list(s_w),
                 zero_point=[0] * len(s_w), axis=0)
    shape = mb.const("shape", np.array([nb, oh, ow, oc], np.int32))
    spread = s_in * float(np.mean(s_w)) * 128 * 64 * np.sqrt(ic * kh * kw / (sh * sw))
    y = mb.tensor("y", (nb, oh, ow, oc), "int8", scale=float(spread / 60),
                  zero_point=int(rng.integers(-20, 20)))
    ins = [shape, w, x]
    if bias:
        ins.append(mb.const("b", rng.integers(-2000, 2000, oc).astype(np.int32),
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
