"""CONV_2D: random single-op models, numpy reference and generated C (gcc, clang) vs TFLite Micro."""
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from edgecc.compiler import compile_model
from edgecc.errors import UnsupportedModel
from edgecc.frontends.tflite import load_tflite
from edgecc.ops import conv_out_size, conv_pad, get_op
from edgecc.ops._conv_common import Window
from edgecc.resources import data_dir
from edgecc.targets import get_target
from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model
from passes_util import load


def conv_model(rng, *, n=1, h=7, w=6, ic=3, oc=4, kh=3, kw=3, stride=(1, 1), dil=(1, 1),
               padding=0, act=0, bias=True, per_channel=True, in_zp=None, in_dtype="int8",
               w_max=127, eff=None, groups=1):
    mb = ModelBuilder()
    in_zp = int(rng.integers(-128, 128)) if in_zp is None else in_zp
    w_scale = rng.uniform(0.002, 0.02, oc) if per_channel else [float(rng.uniform(0.002, 0.02))]
    out_scale = {2: 2.0 / 200, 3: 6.0 / 200}.get(act, float(rng.uniform(0.02, 0.2)))
    # Pick the input scale so the accumulator's spread (|x - zp| ~ 74, |w| ~ 73 on average)
    # lands around +-60 output steps: outputs then cover the int8 range without sitting on rails.
    in_scale = out_scale * 60 / (float(np.mean(w_scale)) * 5400 * np.sqrt(kh * kw * ic // groups))
    if eff is not None:  # a chosen effective scale in_scale * w_scale / out_scale (> 1: left shift)
        out_scale = in_scale * float(np.mean(w_scale)) / eff
    x = mb.tensor("x", (n, h, w, ic), in_dtype, scale=in_scale, zero_point=in_zp)
    wt = mb.const("w", rng.integers(-w_max, w_max + 1, (oc, kh, kw, ic // groups)).astype(np.int8),
                  scale=list(w_scale), zero_point=[0] * len(w_scale), axis=0)
    ins = [x, wt]
    if bias:
        bs = [in_scale * s for s in w_scale]
        ins.append(mb.const("b", rng.integers(-20000, 20000, (oc,)).astype(np.int32), scale=bs,
                            zero_point=[0] * len(bs)))
    else:
        ins.append(-1)
    oh = conv_out_size(padding, h, kh, stride[0], dil[0])
    ow = conv_out_size(padding, w, kw, stride[1], dil[1])
    y = mb.tensor("y", (n, oh, ow, oc), in_dtype, scale=out_scale,
                  zero_point=int(rng.integers(-20, 20)))
    mb.op("CONV_2D", ins, [y], {"padding": padding, "stride_h": stride[0], "stride_w": stride[1],
                                "dilation_h_factor": dil[0], "dilation_w_factor": dil[1],
                                "fused_activation_function": act}, version=3)
    return mb.finish([x], [y])


CASES = [
    dict(h=7, w=6, ic=3, oc=4, kh=3, kw=3, padding=0, act=0),
    dict(h=9, w=8, ic=5, oc=6, kh=3, kw=3, stride=(2, 2), padding=0, act=1, per_channel=False),
    dict(h=8, w=9, ic=4, oc=3, kh=3, kw=2, stride=(1, 2), padding=1, act=3, bias=False),
    dict(h=10, w=10, ic=2, oc=5, kh=3, kw=3, dil=(2, 2), padding=0, act=2),
    dict(h=11, w=7, ic=3, oc=2, kh=2, kw=3, dil=(1, 2), stride=(2, 1), padding=1, act=0),
    dict(h=6, w=6, ic=16, oc=8, kh=1, kw=1, padding=1, act=1),
    dict(n=2, h=5, w=4, ic=3, oc=3, kh=5, kw=4, padding=0, act=3, bias=False, per_channel=False),
    dict(h=4, w=3, ic=2, oc=3, kh=5, kw=5, stride=(2, 2), padding=0, act=0),  # no interior
    dict(h=12, w=1, ic=7, oc=4, kh=4, kw=1, stride=(2, 1), padding=0, act=1),
    # effective scale > 1 (positive shift): tiny weights and accumulators, no bias
    dict(h=5, w=5, ic=1, oc=5, kh=1, kw=1, padding=1, act=0, bias=False, w_max=1, eff=1.7),
    dict(h=6, w=5, ic=2, oc=6, kh=2, kw=2, padding=0, act=0, bias=False, w_max=1, eff=0.6),
    # grouped convolutions (filter input depth = input depth / groups)
    dict(h=7, w=6, ic=6, oc=6, kh=3, kw=3, padding=0, act=1, groups=3),
    dict(h=8, w=7, ic=4, oc=16, kh=3, kw=2, stride=(2, 1), dil=(1, 2), padding=0, act=0, groups=2,
         per_channel=False),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_conv_2d(case):
    rng = np.random.default_rng(2000 + case)
    check_model(conv_model(rng, **CASES[case]))


def test_conv_2d_random_sweep():
    rng = np.random.default_rng(7)
    for _ in range(3):
        k = int(rng.integers(1, 4))
        cfg = dict(h=int(rng.integers(k, 12)), w=int(rng.integers(k, 12)), ic=int(rng.integers(1, 9)),
                   oc=int(rng.integers(1, 9)), kh=k, kw=int(rng.integers(1, 4)),
                   stride=(int(rng.integers(1, 3)), int(rng.integers(1, 3))),
                   dil=(int(rng.integers(1, 3)), 1), padding=int(rng.integers(0, 2)),
                   act=int(rng.integers(0, 4)), bias=bool(rng.integers(0, 2)),
                   per_channel=bool(rng.integers(0, 2)))
        cfg["h"] = max(cfg["h"], (cfg["kh"] - 1) * cfg["dil"][0] + 1)
        check_model(conv_model(rng, **cfg), seeds=(0,))


def test_interior_matches_brute_force():
    for h, k, s, d, pad in [(7, 3, 1, 1, 0), (8, 3, 2, 1, 0), (10, 3, 1, 2, 0), (5, 5, 2, 1, 0),
                            (9, 2, 2, 1, 1), (3, 5, 1, 1, 0), (16, 4, 3, 2, 0)]:
        o = conv_out_size(pad, h, k, s, d)
        p = conv_pad(pad, h, k, s, d, o)
        win = Window(h, h, k, k, s, s, d, d, o, o, p, p)
        y0, y1, _, _ = win.interior()
        inside = [oy for oy in range(o)
                  if all(0 <= oy * s - p + f * d < h for f in range(k))]
        assert list(range(y0, y1)) == inside, (h, k, s, d, pad)


def test_folding_is_skipped_when_the_folded_bias_overflows():
    """bias - zp*sum(w) outside int32: every pixel takes the unfolded (TFLM-order) path."""
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 4, 4, 8), "int8", scale=0.01, zero_point=-128)
    w = mb.const("w", np.full((2, 3, 3, 8), 127, np.int8), scale=[0.01, 0.01], zero_point=[0, 0])
    b = mb.const("b", np.array([2_147_000_000, 0], np.int32), scale=[1e-4] * 2, zero_point=[0, 0])
    y = mb.tensor("y", (1, 2, 2, 2), "int8", scale=1.0, zero_point=0)
    mb.op("CONV_2D", [x, w, b], [y], {"padding": 0, "stride_h": 2, "stride_w": 2}, version=3)
    g = load(mb.finish([x], [y]))
    k = get_op("CONV_2D").lower(g, g.nodes[0], None)
    # (with bias 0 this layer has interior and border pixels: paths == "both")
    assert k.params["paths"] == "border" and "bias_folded" not in k.consts


def test_mbqm_pos_matches_mbqm_in_c(tmp_path):
    """ec_mbqm_pos (used by the conv kernels) equals ec_mbqm on random and tie-producing inputs."""
    src = tmp_path / "t.c"
    src.write_text(r"""
#include <stdio.h>
#include "edgecc_rt.h"
static unsigned long long s = 88172645463325252ULL;
static unsigned long long rnd(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; }
int main(void) {
    long bad = 0, i;
    for (i = 0; i < 3000000; ++i) {
        unsigned long long r = rnd();
        int32_t x = (r & 1) ? (int32_t)(rnd() >> 32) : (int32_t)(rnd() % 2000001) - 1000000;
        int32_t m = (int32_t)((1u << 30) + (uint32_t)(rnd() % (1u << 30)));
        int sh = (int)(rnd() % 42) - 33;
        if ((r & 30) == 0) m = 1 << 30;          /* x * 2^30: a rounding tie for odd x */
        if ((r & 30) == 2) m = INT32_MAX;
        if ((r & 30) == 4) m = 0;
        if ((r & 62) == 6) x = (r & 64) ? INT32_MIN : INT32_MAX;
        if (ec_mbqm(x, m, sh) != ec_mbqm_pos(x, m, sh)) ++bad;
    }
    printf("%ld\n", bad);
    return bad != 0;
}
""")
    exe = tmp_path / "t"
    for cc in ("gcc", "clang"):
        subprocess.run([cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic",
                        f"-I{data_dir('runtime_c')}", str(src), "-o", str(exe)], check=True)
        r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and r.stdout.strip() == "0", (cc, r.stdout)


def test_int16_with_int32_bias_rejected_with_message():
    """16x8 layers need TFLite's int64 bias (tests/ops/test_int16.py covers the supported ones)."""
    rng = np.random.default_rng(1)
    with pytest.raises(UnsupportedModel, match="int64 with int16 activations"):
        load(conv_model(rng, in_dtype="int16", in_zp=0))


def test_bad_options_rejected_with_message():
    rng = np.random.default_rng(3)
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 5, 5, 2), "int8", scale=0.1, zero_point=0)
    w = mb.const("w", rng.integers(-127, 128, (3, 3, 3, 2)).astype(np.int8), scale=0.01)
    y = mb.tensor("y", (1, 5, 5, 3), "int8", scale=0.1, zero_point=0)
    mb.op("CONV_2D", [x, w, -1], [y], {"padding": 0}, version=3)  # strides left at 0
    with pytest.raises(UnsupportedModel, match="strides and dilation factors must be >= 1"):
        load(mb.finish([x], [y]))


# ---- real layers: each CONV_2D / DEPTHWISE_CONV_2D of the shared models as a single-op model ----

def layer_model(g, n) -> bytes:
    """A single-op model with node `n`'s tensors (weights, quantization) and options."""
    mb = ModelBuilder()
    ids = []
    for v in [*n.inputs, *n.outputs]:
        if v is None:
            continue
        val = g.value(v)
        q = val.type.q
        kw = dict(scale=list(q.scale), zero_point=list(q.zero_point), axis=q.axis) if q else {}
        if val.is_const:
            ids.append(mb.const(v, val.data, **kw))
        else:
            ids.append(mb.tensor(v, val.type.shape, val.type.dtype.value[0], **kw))
    opts = {k: v for k, v in n.attrs.items() if k != "version"}
    n_in = len([v for v in n.inputs if v is not None])
    mb.op(n.op, ids[:n_in], ids[n_in:], opts, version=n.attrs.get("version", 1))
    return mb.finish([ids[0]], ids[n_in:])


def distinct_conv_layers(model: str, ops=("CONV_2D", "DEPTHWISE_CONV_2D")):
    """The model's conv layers, one per distinct (op, shapes, options) configuration."""
    from conftest import shared_model
    g = load_tflite(shared_model(model))
    seen, out = set(), []
    for n in g.nodes:
        if n.op not in ops:
            continue
        key = (n.op, g.type(n.inputs[0]).shape, g.type(n.inputs[1]).shape,
               tuple(sorted((k, v) for k, v in n.attrs.items() if k != "version")))
        if key not in seen:
            seen.add(key)
            out.append((g, n))
    return out


@pytest.mark.parametrize("model", ["pretrainedResnet_quant", "kws_ref_model", "str_ww_ref_model"])
def test_real_conv_layers(model):
    for g, n in distinct_conv_layers(model, ("CONV_2D",))[:4]:
        check_model(layer_model(g, n), seeds=(0,))


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D"])
def test_fused_pad_wider_than_the_filter(op):
    """PAD -> conv fuses into explicit padding; windows lying wholly in the padding give bias only."""
    rng = np.random.default_rng(41)
    mb = ModelBuilder()
    q = dict(scale=0.05, zero_point=-7)
    x = mb.tensor("x", (1, 5, 4, 3), "int8", **q)
    pads = mb.const("pads", np.array([[0, 0], [4, 1], [0, 3], [0, 0]], np.int32))
    xp = mb.tensor("xp", (1, 10, 7, 3), "int8", **q)
    mb.op("PAD", [x, pads], [xp])
    oc = 4 if op == "CONV_2D" else 3
    wshape = (oc, 3, 2, 3) if op == "CONV_2D" else (1, 3, 2, 3)
    w = mb.const("w", rng.integers(-127, 128, wshape).astype(np.int8), scale=[0.01] * oc,
                 zero_point=[0] * oc, axis=0 if op == "CONV_2D" else 3)
    b = mb.const("b", rng.integers(-3000, 3000, (oc,)).astype(np.int32), scale=[5e-4] * oc,
                 zero_point=[0] * oc)
    y = mb.tensor("y", (1, 4, 6, oc), "int8", scale=0.2, zero_point=3)
    opts = {"padding": 1, "stride_h": 2, "stride_w": 1}
    if op == "DEPTHWISE_CONV_2D":
        opts["depth_multiplier"] = 1
    mb.op(op, [xp, w, b], [y], opts, version=3)
    data = mb.finish([x], [y])
    g = load(data)
    with tempfile.TemporaryDirectory() as tmp:  # compiled: one conv with explicit padding
        p = Path(tmp) / "m.tflite"
        p.write_bytes(data)
        fused = compile_model(p, get_target("host"), "m").graph
    assert [n.op for n in g.nodes] == ["PAD", op] and [n.op for n in fused.nodes] == [op]
    check_model(data)
