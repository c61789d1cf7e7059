"""DEPTHWISE_CONV_2D SIMD kernels (Cortex-M DSP; Helium MVE) on their own cores under QEMU,
bit-exact with TFLite Micro: the 3x3 stride-1 / stride-2 kernels (odd and even widths, padding
rows and columns) and the general one (other sizes, depth multipliers, batches)."""
import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from edgecc.ops import conv_out_size
from simdcheck import check_on_target

pytestmark = pytest.mark.qemu


def dw_model(rng, *, n=1, h=7, w=6, ic=8, dm=1, kh=3, kw=3, stride=(1, 1), padding=0, act=0,
             bias=True, per_channel=True):
    mb = ModelBuilder()
    oc = ic * dm
    in_zp = int(rng.integers(-128, 128))
    w_scale = rng.uniform(0.002, 0.02, oc) if per_channel else [float(rng.uniform(0.002, 0.02))]
    out_scale = {2: 2.0 / 200, 3: 6.0 / 200}.get(act, float(rng.uniform(0.02, 0.2)))
    in_scale = out_scale * 60 / (float(np.mean(w_scale)) * 5400 * np.sqrt(kh * kw))
    x = mb.tensor("x", (n, h, w, ic), "int8", scale=in_scale, zero_point=in_zp)
    wt = mb.const("w", rng.integers(-127, 128, (1, kh, kw, oc)).astype(np.int8),
                  scale=list(w_scale), zero_point=[0] * len(w_scale), axis=3)
    ins = [x, wt]
    if bias:
        bs = [in_scale * s for s in w_scale]
        ins.append(mb.const("b", rng.integers(-20000, 20000, (oc,)).astype(np.int32), scale=bs,
                            zero_point=[0] * len(bs)))
    else:
        ins.append(-1)
    oh = conv_out_size(padding, h, kh, stride[0], 1)
    ow = conv_out_size(padding, w, kw, stride[1], 1)
    y = mb.tensor("y", (n, oh, ow, oc), "int8", scale=out_scale,
                  zero_point=int(rng.integers(-20, 20)))
    mb.op("DEPTHWISE_CONV_2D", ins, [y], {"padding": padding, "stride_h": stride[0],
                                          "stride_w": stride[1], "depth_multiplier": dm,
                                          "fused_activation_function": act}, version=2)
    return mb.finish([x], [y])


# (TFLite Micro's Python interpreter segfaults on a depthwise layer without bias: all have one.)
DW_CASES = [
    dict(h=7, w=6, ic=8, padding=0, act=1),                       # 3x3 s1, even width
    dict(h=5, w=5, ic=16, padding=0, act=0),                      # 3x3 s1, odd width
    dict(h=9, w=8, ic=12, stride=(2, 2), padding=0, act=1),       # 3x3 s2 SAME
    dict(h=8, w=7, ic=4, stride=(2, 2), padding=1, act=3),        # 3x3 s2 VALID, RELU6
    dict(h=6, w=9, ic=6, padding=0, act=2, per_channel=False),    # channels not a multiple of 4
    dict(h=7, w=7, ic=4, dm=2, kh=5, kw=5, padding=0, act=0),     # general 5x5, multiplier 2
    dict(n=2, h=6, w=5, ic=8, kh=2, kw=3, stride=(1, 2), padding=0, act=1),
    dict(h=3, w=3, ic=8, stride=(2, 2), padding=0, act=0),        # tiny, mostly padding
    # one input channel, filter taller than 8 rows (micro_speech's first layer): run as a conv
    dict(h=13, w=11, ic=1, dm=8, kh=10, kw=8, stride=(2, 2), padding=0, act=1),
    dict(h=12, w=9, ic=1, dm=3, kh=9, kw=4, stride=(1, 2), padding=1, act=0, per_channel=False),
]


@pytest.mark.parametrize("case", range(len(DW_CASES)))
def test_dsp_depthwise_on_cortex_m4(case):
    rng = np.random.default_rng(5200 + case)
    check_on_target(dw_model(rng, **DW_CASES[case]), "cortex-m4", "dsp-")


# Helium: windows of at most 16 taps gather (all but the 5x5 case, which runs the DSP kernel).
@pytest.mark.parametrize("case", range(len(DW_CASES)))
def test_depthwise_on_cortex_m55(case):
    rng = np.random.default_rng(5300 + case)
    cfg = DW_CASES[case]
    prefix = "dsp-" if cfg.get("kh", 3) * cfg.get("kw", 3) > 16 and cfg["ic"] > 1 else "mve-"
    check_on_target(dw_model(rng, **cfg), "cortex-m55", prefix)
