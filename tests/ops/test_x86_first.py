"""x86 kernel for CONV_2D with few input channels (runtime_c/x86/conv_2d_first.h,
edgecc/lower/x86/conv.py): random shapes bit-exact with TFLite Micro on every x86 path this CPU
has (plain AVX2, AVX-VNNI, 256-bit AVX512-VNNI, the x86-avx512 target's 512-bit paths), gcc and
clang, and the layers it must (and must not) take."""
from __future__ import annotations

import numpy as np
import pytest

from test_x86 import _compile, check_x86
from test_conv_2d import conv_model

# Each case covers a path: input channels 1..4, strides 1/2 (and mixed), SAME (padding=0) / VALID (1),
# 3x3, kws's 10x4, 5x5, 1x1, dilation (one move per tap), output channels 8 (the block of 8
# alone), 16, 20 (a block of 16 + a block of 8 with 4 real channels), 64 (4 blocks at once), 90
# (4 blocks, then 2 more, the last partial), 60 (4 blocks, the last partial), 12 / 27 (a partial
# block of 16, then 8 + 3), batches, images smaller than the filter, rows whose pixel count
# leaves partial groups of 4 and 8, extreme input zero points, clamped activations, no bias,
# per-tensor weights, a left shift (effective scale > 1).
FIRST_CASES = [
    dict(h=13, w=13, ic=3, oc=8, kh=3, kw=3, stride=(2, 2), padding=1, act=3),
    dict(h=9, w=11, ic=3, oc=16, kh=3, kw=3, padding=1, act=1),
    dict(h=17, w=10, ic=1, oc=64, kh=10, kw=4, stride=(2, 2), padding=1, act=1),
    dict(h=8, w=9, ic=4, oc=20, kh=5, kw=5, padding=0, act=0),
    dict(h=6, w=7, ic=2, oc=12, kh=1, kw=1, stride=(1, 2), padding=1, act=2),
    dict(n=2, h=5, w=6, ic=3, oc=27, kh=3, kw=3, stride=(2, 1), padding=1, act=0, bias=False),
    dict(h=3, w=2, ic=1, oc=8, kh=5, kw=5, padding=0, act=0, in_zp=-128),
    dict(h=7, w=21, ic=4, oc=16, kh=3, kw=3, dil=(2, 3), padding=1, act=0, in_zp=127),
    dict(h=9, w=9, ic=2, oc=8, kh=3, kw=2, padding=0, act=1, per_channel=False),
    dict(h=6, w=5, ic=4, oc=16, kh=3, kw=3, padding=1, act=0, w_max=1, eff=1.7),
    dict(n=3, h=4, w=19, ic=3, oc=24, kh=2, kw=3, stride=(1, 2), padding=0, act=3, in_zp=-128),
    dict(h=12, w=12, ic=1, oc=40, kh=3, kw=3, stride=(2, 2), padding=1, act=0, in_zp=127),
    dict(h=7, w=6, ic=2, oc=90, kh=3, kw=3, padding=0, act=1),
    dict(n=2, h=5, w=9, ic=1, oc=60, kh=4, kw=2, stride=(2, 1), padding=0, act=0, bias=False),
]


@pytest.mark.parametrize("case", range(len(FIRST_CASES)))
def test_x86_first_conv(case):
    rng = np.random.default_rng(5600 + case)
    data = conv_model(rng, **FIRST_CASES[case])
    k, = [lw.kernel for lw in _compile(data).lowered]
    assert k.variant == "x86-conv-first", (k.variant, k.reason)
    check_x86(data, seeds=(0, 1))


def test_x86_first_not_for_many_channels():
    """Five input channels: the general kernel (ec_x86_conv_2d_avx2) as before."""
    data = conv_model(np.random.default_rng(5650), h=6, w=6, ic=5, oc=8, kh=3, kw=3, padding=1)
    k, = [lw.kernel for lw in _compile(data).lowered]
    assert k.variant == "x86-conv-4px"


def test_x86_first_wide_rows_fall_back():
    """An output row whose patches exceed the stack buffer: the general kernel, bit-exact."""
    data = conv_model(np.random.default_rng(5660), h=2, w=700, ic=3, oc=8, kh=3, kw=3, padding=0)
    k, = [lw.kernel for lw in _compile(data).lowered]
    assert k.variant == "x86-conv-4px"
    check_x86(data)
