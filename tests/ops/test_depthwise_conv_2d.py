"""DEPTHWISE_CONV_2D: random single-op models, numpy reference and generated C vs TFLite Micro."""
import numpy as np
import pytest

from edgecc.errors import UnsupportedModel
from edgecc.ops import conv_out_size
from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model
from passes_util import load


def dw_model(rng, *, n=1, h=7, w=6, ic=3, mult=1, kh=3, kw=3, stride=(1, 1), dil=(1, 1),
             padding=0, act=0, bias=True, per_channel=True, in_zp=None, in_dtype="int8",
             bias_axis=0, depth_multiplier_attr=None):
    mb = ModelBuilder()
    oc = ic * mult
    in_zp = int(rng.integers(-128, 128)) if in_zp is None else in_zp
    w_scale = rng.uniform(0.002, 0.02, oc) if per_channel else [float(rng.uniform(0.002, 0.02))]
    out_scale = {2: 2.0 / 200, 3: 6.0 / 200}.get(act, float(rng.uniform(0.02, 0.2)))
    # Spread the accumulator over about +-60 output steps (see test_conv_2d.py).
    in_scale = out_scale * 60 / (float(np.mean(w_scale)) * 5400 * np.sqrt(kh * kw))
    x = mb.tensor("x", (n, h, w, ic), in_dtype, scale=in_scale, zero_point=in_zp)
    wt = mb.const("w", rng.integers(-127, 128, (1, kh, kw, oc)).astype(np.int8),
                  scale=list(w_scale), zero_point=[0] * len(w_scale), axis=3)
    ins = [x, wt]
    if bias:
        bs = [in_scale * s for s in w_scale] if per_channel else [in_scale * w_scale[0]] * oc
        ins.append(mb.const("b", rng.integers(-5000, 5000, (oc,)).astype(np.int32), scale=bs,
                            zero_point=[0] * len(bs), axis=bias_axis))
    # No bias: leave the slot out. (TFLM's depthwise kernel crashes on an explicit -1 slot.)
    oh = conv_out_size(padding, h, kh, stride[0], dil[0])
    ow = conv_out_size(padding, w, kw, stride[1], dil[1])
    y = mb.tensor("y", (n, oh, ow, oc), in_dtype, scale=out_scale,
                  zero_point=int(rng.integers(-20, 20)))
    mb.op("DEPTHWISE_CONV_2D", ins, [y],
          {"padding": padding, "stride_h": stride[0], "stride_w": stride[1],
           "dilation_h_factor": dil[0], "dilation_w_factor": dil[1],
           "depth_multiplier": mult if depth_multiplier_attr is None else depth_multiplier_attr,
           "fused_activation_function": act}, version=3)
    return mb.finish([x], [y])


CASES = [
    dict(h=7, w=6, ic=3, kh=3, kw=3, padding=0, act=0),
    dict(h=9, w=8, ic=4, kh=3, kw=3, stride=(2, 2), padding=0, act=1, per_channel=False),
    # person_detect's first layer: 1 input channel, depth multiplier 8, RELU6, 1-D bias with
    # quantized_dimension 3
    dict(h=12, w=12, ic=1, mult=8, kh=3, kw=3, stride=(2, 2), padding=0, act=3, bias_axis=3),
    # micro_speech's layer: 1 input channel, multiplier 8, a 10x8 filter, stride 2, SAME
    dict(h=13, w=11, ic=1, mult=8, kh=10, kw=8, stride=(2, 2), padding=0, act=1),
    dict(h=10, w=9, ic=3, mult=2, kh=3, kw=2, dil=(2, 2), padding=0, act=2),
    dict(h=11, w=1, ic=6, kh=5, kw=1, padding=1, act=0, bias=False),
    dict(n=2, h=6, w=5, ic=2, mult=3, kh=3, kw=3, stride=(1, 2), padding=1, act=3),
    dict(h=3, w=4, ic=5, kh=5, kw=5, padding=0, act=1, bias=False),  # no interior
    # more taps than the C unrolls: the interior loops over them
    dict(h=14, w=12, ic=2, mult=2, kh=11, kw=10, stride=(1, 2), padding=0, act=0),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_depthwise_conv_2d(case):
    rng = np.random.default_rng(3000 + case)
    check_model(dw_model(rng, **CASES[case]))


def test_depthwise_conv_2d_random_sweep():
    rng = np.random.default_rng(11)
    for _ in range(3):
        k = int(rng.integers(1, 5))
        cfg = dict(h=int(rng.integers(k, 12)), w=int(rng.integers(1, 12)), ic=int(rng.integers(1, 9)),
                   mult=int(rng.integers(1, 4)), kh=k, kw=int(rng.integers(1, 4)),
                   stride=(int(rng.integers(1, 3)), int(rng.integers(1, 3))),
                   dil=(int(rng.integers(1, 3)), int(rng.integers(1, 3))),
                   padding=int(rng.integers(0, 2)), act=int(rng.integers(0, 4)),
                   bias=bool(rng.integers(0, 2)), per_channel=bool(rng.integers(0, 2)))
        cfg["h"] = max(cfg["h"], (cfg["kh"] - 1) * cfg["dil"][0] + 1)
        cfg["w"] = max(cfg["w"], (cfg["kw"] - 1) * cfg["dil"][1] + 1)
        check_model(dw_model(rng, **cfg), seeds=(0,))


def test_int16_with_int32_bias_rejected_with_message():
    """16x8 layers need TFLite's int64 bias (tests/ops/test_int16.py covers the supported ones)."""
    rng = np.random.default_rng(1)
    with pytest.raises(UnsupportedModel, match="int64 with int16 activations"):
        load(dw_model(rng, in_dtype="int16", in_zp=0))


def test_inconsistent_depth_multiplier_rejected():
    rng = np.random.default_rng(2)
    with pytest.raises(UnsupportedModel, match="depth_multiplier"):
        load(dw_model(rng, ic=2, mult=2, depth_multiplier_attr=3))


@pytest.mark.parametrize("model", ["person_detect", "micro_speech_quantized", "str_ww_ref_model",
                                   "kws_ref_model"])
def test_real_depthwise_layers(model):
    from test_conv_2d import distinct_conv_layers, layer_model
    for g, n in distinct_conv_layers(model, ("DEPTHWISE_CONV_2D",))[:4]:
        check_model(layer_model(g, n), seeds=(0,))
