"""int16 activations (TFLite's 16x8 scheme): CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED (int8
weights, int64 bias), ADD, MUL, SOFTMAX, LOGISTIC, TANH; numpy reference and generated C (gcc,
clang) vs TFLite Micro on random single-op models, the int16 C helpers vs their numpy twins, and
the ML-zoo int16 DS-CNN end to end."""
import subprocess

import numpy as np
import pytest

from conftest import shared_model
from edgecc.errors import UnsupportedModel
from edgecc.frontends.tflite import load_tflite
from edgecc.interp import run_graph
from edgecc.ops import conv_out_size
from edgecc.ops._act16 import input_rescale, logistic16
from edgecc.ops._lstm_math import SIGMOID_TABLE, tanh16
from edgecc.ops._softmax16 import exp_lut, lut_lookup, one_over_one_plus_x_lut
from edgecc.numerics.fixed_point import mbqm64, mbqm64_prepare, quantize_multiplier
from edgecc.resources import data_dir
from edgecc.targets import get_target
from edgecc.tflite_writer import ModelBuilder
from edgecc.verify import verify_model
from edgecc.verify.reference import run_tflm
from opcheck import check_model
from opmodels import cases
from passes_util import load

# |x| ~ 18900 (uniform int16), |w| ~ 73 (uniform int8): an effective scale of SPREAD / sqrt(taps)
# puts the outputs around +-8000, inside int16 without sitting on the rails.
SPREAD = 8000 / (18900 * 73)
BIG_BIAS = 1 << 34  # beyond int32, as only an int64 bias can hold


def _out_scale(rng, act):
    """RELU_N1_TO_1 / RELU6 clamp at 1.0 / 6.0: put that rail about 1.5 spreads out."""
    return {2: 1.0 / 12000, 3: 6.0 / 12000}.get(act, float(rng.uniform(1e-3, 1e-2)))


def _eff(taps, big_bias, eff):
    """The effective scale in * w / out: the given one, else outputs around +-8000 from the
    products, or (big_bias) from a bias of up to 2**34, the products adding a few steps."""
    if eff is not None:
        return eff
    return 8000 / BIG_BIAS if big_bias else SPREAD / np.sqrt(taps)


def _w_scales(rng, oc, per_channel):
    return list(rng.uniform(0.002, 0.02, oc)) if per_channel else [float(rng.uniform(0.002, 0.02))]


def _weights(rng, shape, w_max):
    return rng.integers(-w_max, w_max + 1, shape).astype(np.int8)


def _bias(rng, mb, n, in_scale, w_scales, big):
    lim = BIG_BIAS if big else 1 << 22
    bs = [in_scale * s for s in w_scales] if len(w_scales) > 1 else [in_scale * w_scales[0]]
    return mb.const("b", rng.integers(-lim, lim, (n,)).astype(np.int64), scale=bs,
                    zero_point=[0] * len(bs))


def conv16_model(rng, *, n=1, h=7, w=6, ic=3, oc=4, kh=3, kw=3, stride=(1, 1), dil=(1, 1),
                 padding=0, act=0, bias=True, per_channel=True, w_max=127, eff=None, groups=1,
                 big_bias=False):
    mb = ModelBuilder()
    taps = kh * kw * ic // groups
    w_scale = _w_scales(rng, oc, per_channel)
    out_scale = _out_scale(rng, act)
    in_scale = _eff(taps, big_bias, eff) * out_scale / float(np.mean(w_scale))
    x = mb.tensor("x", (n, h, w, ic), "int16", scale=in_scale, zero_point=0)
    wt = mb.const("w", _weights(rng, (oc, kh, kw, ic // groups), w_max), scale=w_scale,
                  zero_point=[0] * len(w_scale), axis=0)
    ins = [x, wt, _bias(rng, mb, oc, in_scale, w_scale, big_bias) if bias else -1]
    oh = conv_out_size(padding, h, kh, stride[0], dil[0])
    ow = conv_out_size(padding, w, kw, stride[1], dil[1])
    y = mb.tensor("y", (n, oh, ow, oc), "int16", scale=out_scale, zero_point=0)
    mb.op("CONV_2D", ins, [y], {"padding": padding, "stride_h": stride[0], "stride_w": stride[1],
                                "dilation_h_factor": dil[0], "dilation_w_factor": dil[1],
                                "fused_activation_function": act}, version=4)
    return mb.finish([x], [y])


# The first few of each list run in the fast set (`-m "not slow"`), the rest are marked slow.
CONV_CASES = [
    dict(h=12, w=6, ic=1, oc=8, kh=10, kw=4, stride=(2, 2), padding=0, act=1),  # DS-CNN's first
    dict(h=6, w=6, ic=16, oc=8, kh=1, kw=1, padding=1, act=0, big_bias=True),
    dict(h=5, w=5, ic=48, oc=3, kh=5, kw=5, padding=0, act=0),  # sum |w| * 2**15 > int32: int64 acc
    dict(h=5, w=4, ic=1, oc=3, kh=1, kw=1, padding=1, w_max=1, eff=1.2, bias=False),  # shift > 0
    dict(h=7, w=6, ic=3, oc=4, kh=3, kw=3, padding=0, act=0),
    dict(h=9, w=8, ic=5, oc=6, kh=3, kw=3, stride=(2, 2), padding=0, act=1, per_channel=False),
    dict(h=8, w=9, ic=4, oc=3, kh=3, kw=2, stride=(1, 2), padding=1, act=3, bias=False),
    dict(h=10, w=10, ic=2, oc=5, kh=3, kw=3, dil=(2, 2), padding=0, act=2),
    dict(h=6, w=7, ic=4, oc=6, kh=3, kw=3, padding=0, groups=2, act=0),
]


@pytest.mark.parametrize("case", cases(len(CONV_CASES), 4))
def test_conv_2d_int16(case):
    check_model(conv16_model(np.random.default_rng(1600 + case), **CONV_CASES[case]))


def dw16_model(rng, *, n=1, h=7, w=6, ic=3, mult=1, kh=3, kw=3, stride=(1, 1), dil=(1, 1),
               padding=0, act=0, bias=True, per_channel=True, big_bias=False):
    mb = ModelBuilder()
    oc = ic * mult
    w_scale = _w_scales(rng, oc, per_channel)
    out_scale = _out_scale(rng, act)
    in_scale = _eff(kh * kw, big_bias, None) * out_scale / float(np.mean(w_scale))
    x = mb.tensor("x", (n, h, w, ic), "int16", scale=in_scale, zero_point=0)
    wt = mb.const("w", _weights(rng, (1, kh, kw, oc), 127), scale=w_scale,
                  zero_point=[0] * len(w_scale), axis=3)
    ins = [x, wt]
    if bias:  # no bias: leave the slot out (TFLM's depthwise kernel crashes on an explicit -1)
        ins.append(_bias(rng, mb, oc, in_scale, w_scale if per_channel else w_scale * oc, big_bias))
    oh = conv_out_size(padding, h, kh, stride[0], dil[0])
    ow = conv_out_size(padding, w, kw, stride[1], dil[1])
    y = mb.tensor("y", (n, oh, ow, oc), "int16", scale=out_scale, zero_point=0)
    mb.op("DEPTHWISE_CONV_2D", ins, [y],
          {"padding": padding, "stride_h": stride[0], "stride_w": stride[1],
           "dilation_h_factor": dil[0], "dilation_w_factor": dil[1], "depth_multiplier": mult,
           "fused_activation_function": act}, version=5)
    return mb.finish([x], [y])


DW_CASES = [
    dict(h=25, w=5, ic=8, kh=3, kw=3, padding=0, act=1),  # DS-CNN's shape, fewer channels
    dict(n=2, h=6, w=5, ic=5, kh=5, kw=4, padding=0, act=0, big_bias=True),
    dict(h=3, w=3, ic=3, kh=5, kw=5, padding=0, act=1),  # no interior pixel
    dict(h=9, w=8, ic=3, mult=2, kh=3, kw=3, stride=(2, 2), padding=0, act=3),
    dict(h=8, w=9, ic=4, kh=2, kw=3, stride=(1, 2), padding=1, act=0, bias=False),
    dict(h=10, w=10, ic=2, mult=3, kh=3, kw=3, dil=(2, 2), padding=0, act=2, per_channel=False),
    dict(h=12, w=11, ic=2, kh=11, kw=10, padding=0),  # 110 taps: looped, not unrolled
]


@pytest.mark.parametrize("case", cases(len(DW_CASES), 3))
def test_depthwise_conv_2d_int16(case):
    check_model(dw16_model(np.random.default_rng(1700 + case), **DW_CASES[case]))


def fc16_model(rng, batches, depth, units, act=0, bias=True, big_bias=False, keep_num_dims=False):
    mb = ModelBuilder()
    w_scale = float(rng.uniform(0.002, 0.02))
    out_scale = _out_scale(rng, act)
    in_scale = _eff(depth, big_bias, None) * out_scale / w_scale
    x = mb.tensor("x", (batches, depth), "int16", scale=in_scale, zero_point=0)
    w = mb.const("w", _weights(rng, (units, depth), 127), scale=w_scale, zero_point=0)
    ins = [x, w, _bias(rng, mb, units, in_scale, [w_scale], big_bias) if bias else -1]
    y = mb.tensor("y", (batches, units), "int16", scale=out_scale, zero_point=0)
    mb.op("FULLY_CONNECTED", ins, [y], {"fused_activation_function": act,
                                        "keep_num_dims": keep_num_dims}, version=7)
    return mb.finish([x], [y])


FC_CASES = [
    dict(batches=1, depth=64, units=12, act=0),  # DS-CNN's classifier
    dict(batches=1, depth=1200, units=4, act=0),  # int64 accumulator
    dict(batches=2, depth=20, units=5, act=3, big_bias=True),
    dict(batches=3, depth=37, units=9, act=1, bias=False),
    dict(batches=1, depth=5, units=30, act=2),
]


@pytest.mark.parametrize("case", cases(len(FC_CASES), 3))
def test_fully_connected_int16(case):
    check_model(fc16_model(np.random.default_rng(1800 + case), **FC_CASES[case]))


def binary16_model(rng, op, a_shape, b_shape, act=0, zps=(0, 0, 0), const_b=False):
    mb = ModelBuilder()
    # outputs near +-8000: the sum of two uniform int16s (~1.4 * 18900), or their product (~2**28)
    so = _out_scale(rng, act)
    sa, sb = rng.uniform(0.3, 1.0, 2) * (8000 * so / 26000 if op == "ADD" else
                                         np.sqrt(8000 * so / (1 << 28)))
    sa, sb = float(sa), float(sb)
    a = mb.tensor("a", a_shape, "int16", scale=sa, zero_point=zps[0])
    if const_b:
        b = mb.const("b", rng.integers(-32768, 32768, b_shape).astype(np.int16), scale=sb,
                     zero_point=zps[1])
    else:
        b = mb.tensor("b", b_shape, "int16", scale=sb, zero_point=zps[1])
    out_shape = tuple(np.broadcast_shapes(a_shape, b_shape))
    y = mb.tensor("y", out_shape, "int16", scale=so, zero_point=zps[2])
    mb.op(op, [a, b], [y], {"fused_activation_function": act}, version=3)
    return mb.finish([a] if const_b else [a, b], [y])


BINARY_CASES = [
    dict(a_shape=(2, 1, 6), b_shape=(5, 1), act=3),
    dict(a_shape=(7, 3), b_shape=(7, 3), zps=(5, -3, 2)),  # ADD: TFLM applies int16 offsets too
    dict(a_shape=(2, 3, 5), b_shape=(2, 3, 5)),
    dict(a_shape=(1, 4, 4, 3), b_shape=(3,), act=1),
    dict(a_shape=(4, 6), b_shape=(6,), const_b=True, act=2),
]


@pytest.mark.parametrize("op", ["ADD", "MUL"])
@pytest.mark.parametrize("case", cases(len(BINARY_CASES), 2))
def test_add_mul_int16(op, case):
    data = binary16_model(np.random.default_rng(1900 + case), op, **BINARY_CASES[case])
    if op == "MUL" and any(BINARY_CASES[case].get("zps", ())):  # TFLM refuses these
        with pytest.raises(UnsupportedModel, match="must have zero point 0"):
            load(data)
        return
    check_model(data)


def softmax16_model(shape, in_scale, beta=1.0):
    mb = ModelBuilder()
    x = mb.tensor("x", shape, "int16", scale=in_scale, zero_point=0)
    y = mb.tensor("y", shape, "int16", scale=1.0 / 32768, zero_point=0)
    mb.op("SOFTMAX", [x], [y], {"beta": beta}, version=3)
    return mb.finish([x], [y])


@pytest.mark.parametrize("shape,scale,beta", [
    ((1, 12), 0.00177876, 1.0),  # DS-CNN's layer
    ((3, 4, 17), 1e-4, 1.0),  # every tap counts
    pytest.param((2, 40), 0.003, 0.5, marks=pytest.mark.slow),
    pytest.param((5, 1), 0.01, 1.0, marks=pytest.mark.slow),  # one value per row: exactly 1
    pytest.param((1, 300), 2e-4, 2.0, marks=pytest.mark.slow),
])
def test_softmax_int16(shape, scale, beta):
    check_model(softmax16_model(shape, scale, beta))


def act16_model(op, shape, in_scale):
    mb = ModelBuilder()
    x = mb.tensor("x", shape, "int16", scale=in_scale, zero_point=0)
    y = mb.tensor("y", shape, "int16", scale=1.0 / 32768, zero_point=0)
    mb.op(op, [x], [y], {}, version=3)
    return mb.finish([x], [y])


# 2**-12 / 2**-11: TFLM's power-of-two cases (LOGISTIC only the first); others rescale by a
# 16-bit multiplier and a rounding shift; 2.6 is near the largest scale the multiplier allows.
ACT_SCALES = [2.0 ** -12, 2.0 ** -11, 1e-4, 3.3e-4, 2.2e-3, 0.05, 2.6]


@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
@pytest.mark.parametrize("case", cases(len(ACT_SCALES), 3))
def test_logistic_tanh_int16(op, case):
    check_model(act16_model(op, (3, 100), ACT_SCALES[case]), seeds=(0,))


@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
def test_logistic_tanh_int16_every_input(op, tmp_path):
    """The numpy reference on all 65536 int16 inputs against TFLM, for each scale."""
    values = np.arange(-32768, 32768, dtype=np.int16)
    for scale in ACT_SCALES:
        path = tmp_path / f"{op}_{scale}.tflite"
        path.write_bytes(act16_model(op, (values.size,), scale))
        g = load_tflite(path)
        want, _ = run_tflm(path, [values], 1)
        got = run_graph(g, [values])[g.outputs[0]]
        bad = np.flatnonzero(got != want[0])
        assert bad.size == 0, (scale, values[bad[:5]], got[bad[:5]], want[0][bad[:5]])


# ---- unsupported 16x8 cases are refused with their reason ---------------------------------

def test_int16_nonzero_zero_point_rejected():
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 8), "int16", scale=1e-3, zero_point=3)
    w = mb.const("w", np.ones((2, 8), np.int8), scale=0.01, zero_point=0)
    y = mb.tensor("y", (1, 2), "int16", scale=1e-2, zero_point=0)
    mb.op("FULLY_CONNECTED", [x, w, -1], [y], {}, version=7)
    with pytest.raises(UnsupportedModel, match="int16 input and output must have zero point 0"):
        load(mb.finish([x], [y]))


def test_int16_softmax_output_scale_rejected():
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 8), "int16", scale=1e-3, zero_point=0)
    y = mb.tensor("y", (1, 8), "int16", scale=1.0 / 65536, zero_point=-32768)
    mb.op("SOFTMAX", [x], [y], {"beta": 1.0}, version=3)
    with pytest.raises(UnsupportedModel, match="scale 1/32768, zero point 0"):
        load(mb.finish([x], [y]))


# ---- C twins of the int16 arithmetic ------------------------------------------------------

def test_int16_c_twins_match_numpy(tmp_path):
    """ec_mbqm64, ec_mbqm64_pre (prepared constants) and ec_lut16 against quant.mbqm64 /
    _softmax16.lut_lookup on edge values;
    ec_logistic16 / ec_tanh16 against _act16 on every int16 input for every tested scale."""
    rng = np.random.default_rng(7)
    xs = np.concatenate([rng.integers(-(1 << 40), 1 << 40, 300), [0, 1, -1, (1 << 40), -(1 << 40)]])
    ms = np.concatenate([rng.integers(1 << 30, (1 << 31) - 1, 300), [0x7FFF0000, 0x7FFEFFFF,
                                                                     (1 << 30), 0, 0x7FFFFFFF]])
    ss = np.concatenate([rng.integers(-31, 15, 300), [14, -31, 0, 7, -8]])
    vals = np.arange(-32768, 32768, 97)
    lut = exp_lut()
    src = ['#include <stdio.h>', '#include "edgecc_fixedpoint.h"', '#include "edgecc_lstm.h"',
           f"static const int16_t lut[513] = {{{', '.join(map(str, lut))}}};",
           f"static const uint16_t tab[256] = {{{', '.join(map(str, SIGMOID_TABLE))}}};",
           "int main(void) {"]
    for x, m, s in zip(xs, ms, ss):
        src.append(f'    printf("%d\\n", (int)ec_mbqm64((int64_t){int(x)}LL, {int(m)}, {int(s)}));')
    src.append(f"    {{ int v; for (v = -32768; v < 32768; v += 97) "
               f'printf("%d\\n", (int)ec_lut16((int16_t)v, lut)); }}')
    # ec_mbqm64_pre with quant.mbqm64_prepare's constants == mbqm64 on int32 inputs
    pre_cases = []
    for eff in 10 ** rng.uniform(-9, -0.31, 60):
        m, s = quantize_multiplier(float(eff))
        (mp,), (rp,), (k,) = mbqm64_prepare(np.array([m]), np.array([s]))
        for x in rng.integers(-(1 << 31), 1 << 31, 20):
            pre_cases.append((int(x), m, s))
            src.append(f'    printf("%d\\n", (int)ec_mbqm64_pre({int(x)}, {int(mp)}, '
                       f'(int64_t){int(rp)}LL, {int(k)}));')
    rescales = [input_rescale(sc, tanh) for sc in ACT_SCALES for tanh in (False, True)]
    for (m, sh), tanh in zip(rescales, [False, True] * len(ACT_SCALES)):
        fn = "ec_tanh16" if tanh else "ec_logistic16"
        src.append(f"    {{ int v; for (v = -32768; v < 32768; ++v) "
                   f'printf("%d\\n", (int){fn}((int16_t)v, {m}, {sh}, tab)); }}')
    src += ["    return 0;", "}"]
    (tmp_path / "t.c").write_text("\n".join(src) + "\n")
    exe = tmp_path / "t"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
                    f"-I{data_dir('runtime_c')}", str(tmp_path / "t.c"), "-o", str(exe)],
                   check=True)
    got = [int(v) for v in subprocess.run([str(exe)], capture_output=True, text=True,
                                          check=True).stdout.split()]
    want = list(mbqm64(xs, ms, ss)) + list(lut_lookup(vals, lut))
    want += [int(mbqm64(x, m, s)) for x, m, s in pre_cases]
    every = np.arange(-32768, 32768)
    for (m, sh), tanh in zip(rescales, [False, True] * len(ACT_SCALES)):
        want += list((tanh16 if tanh else logistic16)(every, m, sh))
    assert got == [int(v) for v in want]


def test_softmax_tables_shape():
    """The tables TFLM builds: exp(0) = 1 saturates to 32767 at the end, 1/(1+0) likewise at the
    start, both monotone (the bit-exact comparison with TFLM is test_softmax_int16)."""
    e, r = exp_lut(), one_over_one_plus_x_lut()
    assert e.shape == r.shape == (513,)
    assert e[-1] == 32767 and r[0] == 32767 and r[-1] == 16384
    assert np.all(np.diff(e.astype(int)) >= 0) and np.all(np.diff(r.astype(int)) <= 0)


# ---- the ML-zoo int16 DS-CNN end to end ---------------------------------------------------

@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_mlzoo_ds_cnn_int16_bit_exact(cc):
    path = shared_model("mlzoo_ds_cnn_s_quantized_int16")
    for seed in (0, 1):
        r = verify_model(path, get_target("host"), cc=cc, seed=seed)
        assert r.bit_exact, (seed, r.mismatched_bytes, r.first_bad_layer)


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
def test_mlzoo_ds_cnn_int16_bit_exact_under_qemu(target):
    r = verify_model(shared_model("mlzoo_ds_cnn_s_quantized_int16"), get_target(target), seed=0)
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)
