"""CONV_2D SIMD kernels (Cortex-M DSP; Helium MVE) on their own cores under QEMU, bit-exact with
TFLite Micro, and the fast requantization they rely on (edgecc/numerics/fastrq.py) against TFLite's."""
import numpy as np
import pytest

from edgecc.numerics import fastrq
from edgecc.numerics.fixed_point import mbqm, quantize_multiplier
from simdcheck import check_on_target
from test_conv_2d import conv_model

pytestmark = pytest.mark.qemu


def _random_layer(rng, oc=16, k=27):
    w = rng.integers(-127, 128, (oc, k))
    w[rng.random((oc, k)) < 0.3] = 0
    w[0] = 0  # a constant channel
    bias = rng.integers(-40000, 40000, oc)
    bias[0] = int(rng.choice([1 << 30, -(1 << 30), 12345]))
    in_zp = int(rng.integers(-128, 128))
    scales = rng.uniform(1e-4, 0.3, oc)
    mq = [quantize_multiplier(float(s)) for s in scales]
    return w, bias, in_zp, np.array([a for a, _ in mq]), np.array([b for _, b in mq])


@pytest.mark.parametrize("seed", range(8))
def test_fast_requant_equals_tflite_on_the_whole_range(seed):
    rng = np.random.default_rng(seed)
    w, bias, in_zp, m, s = _random_layer(rng)
    out_zp = int(rng.integers(-128, 128))
    act = [(-128, 127), (out_zp, 127), (max(-128, out_zp - 3), min(127, out_zp + 60))][seed % 3]
    lo, hi = fastrq.acc_range(w, bias, in_zp)
    fr, why = fastrq.fast_requant(lo, hi, m, s, out_zp, *act)
    assert fr is not None, why
    # every channel: its range ends, zero, and many random accumulators in between
    acc = rng.integers(lo, hi + 1, (4000, len(lo)))
    acc[:3] = np.stack([lo, hi, np.clip(0, lo, hi)])
    want = np.clip(mbqm(acc, m, s) + out_zp, *act)
    assert (fastrq.emulate_fast(acc, fr) == want).all()
    assert (fastrq.emulate_fast(acc, fr, helium=True) == want).all()


def test_fast_requant_refuses_what_it_cannot_prove():
    lo, hi = np.array([-(1 << 29)]), np.array([1 << 29])
    m, s = quantize_multiplier(0.75)
    fr, why = fastrq.fast_requant(lo, hi, np.array([m]), np.array([s]), 0, -128, 127)
    assert fr is None and "right shift" in why
    m, s = quantize_multiplier(0.01)
    fr, why = fastrq.fast_requant(lo * 4, hi * 4, np.array([m]), np.array([s]), 0, -128, 127)
    assert fr is None and "too wide" in why


# Shapes chosen to cover each path of the kernels: 1x1 read in place (strided too), gathered
# fields with SAME padding, the few-input-channel first layers (kws 10x4x1, vww 3x3x3), dilation,
# batches, pixel counts that leave a partial block of 4, clamped activations (RELU6, RELU_N1_TO_1).
DSP_CASES = [
    dict(h=5, w=5, ic=16, oc=12, kh=1, kw=1, padding=1, act=1),
    dict(h=6, w=7, ic=8, oc=5, kh=1, kw=1, stride=(2, 2), padding=0, act=0),
    dict(h=7, w=6, ic=3, oc=8, kh=3, kw=3, stride=(2, 2), padding=0, act=1),
    dict(h=11, w=6, ic=1, oc=7, kh=10, kw=4, stride=(2, 2), padding=0, act=1),
    dict(h=6, w=6, ic=12, oc=9, kh=3, kw=3, padding=0, act=3),
    dict(n=2, h=5, w=4, ic=5, oc=3, kh=2, kw=3, padding=1, act=2, per_channel=False),
    dict(h=9, w=9, ic=4, oc=6, kh=3, kw=3, dil=(2, 2), padding=0, act=0),
    dict(h=4, w=3, ic=2, oc=3, kh=5, kw=5, stride=(2, 2), padding=0, act=0, bias=False),
]


@pytest.mark.parametrize("case", range(len(DSP_CASES)))
def test_dsp_conv_on_cortex_m4(case):
    rng = np.random.default_rng(4100 + case)
    check_on_target(conv_model(rng, **DSP_CASES[case]), "cortex-m4", "dsp-")


# in_c not a multiple of 4 but filter rows of whole words (k_w * in_c = 4, 8): the DSP kernel
# extends interior windows' rows in place and gathers the horizontally padded border ones.
DSP_ROW_CASES = [
    dict(h=7, w=9, ic=2, oc=5, kh=3, kw=2, padding=0, act=1),
    dict(h=12, w=10, ic=1, oc=8, kh=5, kw=8, stride=(2, 2), padding=0, act=0),
]


@pytest.mark.parametrize("case", range(len(DSP_ROW_CASES)))
def test_dsp_conv_word_rows_on_cortex_m4(case):
    rng = np.random.default_rng(4200 + case)
    check_on_target(conv_model(rng, **DSP_ROW_CASES[case]), "cortex-m4", "dsp-", seeds=(0, 1))


# Helium: the same shapes cover every field mode (pixels in place, rows in place, rows padded
# to 16 bytes, byte gathers, copies) and border pixels (copied with zero-point padding).
MVE_CASES = DSP_CASES + [
    dict(h=6, w=6, ic=16, oc=6, kh=3, kw=3, padding=0, act=1),                # rows, 48 B
    dict(h=9, w=20, ic=3, oc=8, kh=3, kw=3, stride=(2, 2), padding=0, act=1),  # rows padded
    dict(h=5, w=5, ic=70, oc=9, kh=1, kw=1, padding=1, act=0),                 # 1x1, kp 80
    # long fields (3 pixels per weight pass): batches, 40 pixels, 9 / 5 / 2 chunks, stride 2
    dict(n=2, h=5, w=4, ic=16, oc=5, kh=3, kw=3, padding=0, act=0),
    dict(h=7, w=7, ic=80, oc=6, kh=1, kw=1, stride=(2, 2), padding=1, act=1),
    dict(h=9, w=8, ic=32, oc=12, kh=3, kw=3, stride=(2, 2), padding=0, act=3),
    # one field of at most 64 B whose filter rows are longer than 16 B (a Conv1D, k 3, 16
    # channels, as cv_conv1d's dilated layer; 2 rows of 32 B): copied, not assembled by rows
    dict(n=2, h=1, w=12, ic=16, oc=6, kh=1, kw=3, padding=1, act=0),
    dict(h=4, w=5, ic=16, oc=4, kh=2, kw=2, padding=0, act=1),
]


@pytest.mark.parametrize("case", range(len(MVE_CASES)))
def test_mve_conv_on_cortex_m55(case):
    rng = np.random.default_rng(4200 + case)
    check_on_target(conv_model(rng, **MVE_CASES[case]), "cortex-m55", "mve-")
