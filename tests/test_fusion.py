"""Fusion rules: activations into CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED / ADD, and PAD into
convs and pools. Each applies where the bytes are provably identical (checked again here against
TFLite Micro through the generated C) and refuses, with its reason, where they are not."""
import numpy as np
import pytest

from edgecc.passes import fuse, optimize
from edgecc.tflite_writer import ModelBuilder
from passes_util import Q, apply, assert_same_numbers, check_c, fc_weights, load, ops

OUT_Q = dict(scale=0.03, zero_point=-100)  # RELU6 ([-100, 100]) differs from RELU


def fc_then(act_ops, fc_act=0, act_in_q=OUT_Q, act_out_q=OUT_Q, extra_consumer=False):
    """x -> FC (fused fc_act) -> act_ops[0] -> act_ops[1] ... -> y. act_ops items: op name, or
    (op, bound) for MINIMUM/MAXIMUM with a scalar constant bound."""
    rng = np.random.default_rng(3)
    mb = ModelBuilder()
    x = mb.tensor("x", (2, 16), "int8", **Q)
    w, b = fc_weights(mb, rng, 6, 16)
    cur = mb.tensor("fc", (2, 6), "int8", **act_in_q)
    mb.op("FULLY_CONNECTED", [x, w, b], [cur], {"fused_activation_function": fc_act}, version=4)
    outs = []
    if extra_consumer:
        other = mb.tensor("other", (2, 6), "int8", **act_in_q)
        mb.op("RELU", [cur], [other])
        outs.append(other)
    for i, a in enumerate(act_ops):
        nxt = mb.tensor(f"a{i}", (2, 6), "int8", **act_out_q)
        if isinstance(a, tuple):
            bound = mb.const(f"c{i}", np.array([a[1]], np.int8).reshape(()), **act_in_q)
            mb.op(a[0], [cur, bound], [nxt])
        else:
            mb.op(a, [cur], [nxt])
        cur = nxt
    return mb.finish([x], [cur, *outs])


def _fused(g):
    return [(n.op, int(n.attrs.get("fused_activation_function", 0))) for n in g.nodes]


@pytest.mark.parametrize("act,code", [("RELU", 1), ("RELU6", 3)])
def test_fuse_relu_into_fully_connected(act, code):
    data = fc_then([act])
    g = load(data)
    g2, rep = apply(g, fuse.FUSE_ACTIVATION)
    assert _fused(g2) == [("FULLY_CONNECTED", code)]
    assert "identical bytes for all 256 values" in rep.applied[0]
    assert g2.nodes[0].outputs == g.outputs  # writes the activation's tensor: names unchanged
    assert_same_numbers(g, g2)
    check_c(data, seeds=(0,))


def test_fuse_min_max_clamp_pair_into_relu6():
    zp, s = OUT_Q["zero_point"], OUT_Q["scale"]
    six = zp + int(round(6 / s))
    data = fc_then([("MAXIMUM", zp), ("MINIMUM", six)])
    g = load(data)
    g2, rep = apply(g, fuse.FUSE_ACTIVATION)
    assert _fused(g2) == [("FULLY_CONNECTED", 3)] and len(rep.applied) == 2
    assert_same_numbers(g, g2)
    check_c(data, seeds=(0,))


def test_relu_after_relu6_keeps_relu6():
    g = load(fc_then(["RELU"], fc_act=3))
    g2, rep = apply(g, fuse.FUSE_ACTIVATION)
    assert _fused(g2) == [("FULLY_CONNECTED", 3)]
    assert_same_numbers(g, g2)


def test_fuse_activation_refuses_a_requantizing_relu():
    g = load(fc_then(["RELU"], act_out_q=dict(scale=0.05, zero_point=-100)))
    g2, rep = apply(g, fuse.FUSE_ACTIVATION)
    assert ops(g2) == ["FULLY_CONNECTED", "RELU"]
    assert "requantizes" in rep.refused[0]


def test_fuse_activation_refuses_a_clamp_no_fused_code_matches():
    g = load(fc_then([("MAXIMUM", OUT_Q["zero_point"] + 5)]))
    g2, rep = apply(g, fuse.FUSE_ACTIVATION)
    assert ops(g2) == ["FULLY_CONNECTED", "MAXIMUM"]
    assert "no fused activation gives that" in rep.refused[0] and "RELU [" in rep.refused[0]


def test_fuse_activation_refuses_a_shared_producer():
    g = load(fc_then(["RELU6"], extra_consumer=True))
    g2, rep = apply(g, fuse.FUSE_ACTIVATION)
    assert "FULLY_CONNECTED" in ops(g2) and ops(g2).count("RELU6") == 1
    assert any("2 consumers" in r for r in rep.refused)


def conv_model(op="CONV_2D", pad=None, pad_value=None, padding=1, act=None, in_shape=(1, 7, 6, 3),
               k=(3, 3), stride=1, pool=None, q_pad_out=None):
    """x -> [PAD/PADV2] -> CONV_2D / DEPTHWISE_CONV_2D / pool -> [act] -> y."""
    rng = np.random.default_rng(11)
    mb = ModelBuilder()
    x = mb.tensor("x", in_shape, "int8", **Q)
    cur, shape = x, in_shape
    if pad is not None:
        shape = tuple(d + a + b for d, (a, b) in zip(in_shape, pad))
        p = mb.tensor("padded", shape, "int8", **(q_pad_out or Q))
        ins = [x, mb.const("pads", np.array(pad, np.int32))]
        if pad_value is not None:
            ins.append(mb.const("pv", np.array(pad_value, np.int8).reshape(()), **(q_pad_out or Q)))
        mb.op("PADV2" if pad_value is not None else "PAD", ins, [p])
        cur = p
    n, h, w, c = shape

    def out_size(size, kk):
        return (size - kk) // stride + 1 if padding == 1 else -(-size // stride)
    oh, ow = out_size(h, k[0]), out_size(w, k[1])
    if pool:
        y = mb.tensor("y", (n, oh, ow, c), "int8", **(q_pad_out or Q))
        mb.op(pool, [cur], [y], {"padding": padding, "stride_h": stride, "stride_w": stride,
                                 "filter_height": k[0], "filter_width": k[1],
                                 "fused_activation_function": 0})
        return mb.finish([x], [y])
    oc = 4 if op == "CONV_2D" else c
    wshape = (oc, k[0], k[1], c) if op == "CONV_2D" else (1, k[0], k[1], oc)
    wq = mb.const("w", rng.integers(-127, 128, wshape).astype(np.int8),
                  scale=[0.01 + 0.001 * i for i in range(oc)], zero_point=[0] * oc,
                  axis=0 if op == "CONV_2D" else 3)
    b = mb.const("b", rng.integers(-900, 900, (oc,)).astype(np.int32),
                 scale=[5e-4] * oc, zero_point=[0] * oc)
    y = mb.tensor("conv", (n, oh, ow, oc), "int8", **OUT_Q)
    opts = {"padding": padding, "stride_h": stride, "stride_w": stride,
            "fused_activation_function": 0}
    if op == "DEPTHWISE_CONV_2D":
        opts["depth_multiplier"] = 1
    mb.op(op, [cur, wq, b], [y], opts, version=3 if op == "CONV_2D" else 2)
    if act:
        z = mb.tensor("act", (n, oh, ow, oc), "int8", **OUT_Q)
        mb.op(act, [y], [z])
        y = z
    return mb.finish([x], [y])


def test_fuse_relu6_into_conv_end_to_end():
    data = conv_model(act="RELU6")
    g = load(data)
    g2, results = optimize(g, debug=True)
    assert _fused(g2) == [("CONV_2D", 3)]
    check_c(data, seeds=(0,))


IMAGE_PAD = [[0, 0], [1, 2], [2, 1], [0, 0]]


@pytest.mark.parametrize("op,padding", [("CONV_2D", 1), ("CONV_2D", 0), ("DEPTHWISE_CONV_2D", 1),
                                        ("DEPTHWISE_CONV_2D", 0)])
def test_fuse_pad_into_conv(op, padding):
    data = conv_model(op, pad=IMAGE_PAD, padding=padding, stride=2 if padding == 0 else 1)
    g = load(data)
    g2, rep = apply(g, fuse.FUSE_PAD)
    assert ops(g2) == [op] and g2.nodes[0].inputs[0] == g.inputs[0]
    assert "pad value == input zero point" in rep.applied[0]
    assert_same_numbers(g, g2)
    check_c(data, seeds=(0,))


def test_fuse_pad_refuses_a_pad_value_other_than_the_zero_point():
    g = load(conv_model(pad=IMAGE_PAD, pad_value=Q["zero_point"] + 1))
    g2, rep = apply(g, fuse.FUSE_PAD)
    assert ops(g2) == ["PADV2", "CONV_2D"] and "not the input zero point" in rep.refused[0]


def test_fuse_pad_refuses_channel_padding():
    g = load(conv_model(pad=[[0, 0], [1, 1], [1, 1], [0, 1]]))
    g2, rep = apply(g, fuse.FUSE_PAD)
    assert ops(g2) == ["PAD", "CONV_2D"] and "not only height and width" in rep.refused[0]


def test_fuse_pad_into_max_pool_with_type_minimum():
    data = conv_model(pad=[[0, 0], [1, 0], [1, 1], [0, 0]], pad_value=-128, pool="MAX_POOL_2D",
                      k=(2, 2), stride=2)
    g = load(data)
    g2, rep = apply(g, fuse.FUSE_PAD)
    assert ops(g2) == ["MAX_POOL_2D"] and "type minimum" in rep.applied[0]
    assert_same_numbers(g, g2)
    check_c(data, seeds=(0,))


def test_fuse_pad_refuses_max_pool_window_of_padding_only():
    # rows: 1 pad + 7 real + 2 pad; the last 2x2 stride-2 window reads only padding
    g = load(conv_model(pad=IMAGE_PAD, pad_value=-128, pool="MAX_POOL_2D", k=(2, 2), stride=2))
    g2, rep = apply(g, fuse.FUSE_PAD)
    assert ops(g2) == ["PADV2", "MAX_POOL_2D"] and "must overlap the input" in rep.refused[0]


def test_fuse_pad_refuses_max_pool_with_zero_point_padding():
    g = load(conv_model(pad=IMAGE_PAD, pool="MAX_POOL_2D", k=(2, 2), stride=2))
    g2, rep = apply(g, fuse.FUSE_PAD)
    assert ops(g2) == ["PAD", "MAX_POOL_2D"] and "could win the max" in rep.refused[0]


def test_fuse_pad_refuses_average_pool_that_would_change_its_divisor():
    g = load(conv_model(pad=IMAGE_PAD, pool="AVERAGE_POOL_2D", k=(3, 3), stride=1))
    g2, rep = apply(g, fuse.FUSE_PAD)
    assert ops(g2) == ["PAD", "AVERAGE_POOL_2D"] and "divisor" in rep.refused[0]


def test_fuse_pad_into_average_pool_when_no_window_reaches_it():
    # 4x4 padded to 5x5 at the bottom/right: 2x2 stride-2 VALID windows cover rows/cols 0..3 only
    data = conv_model(in_shape=(1, 4, 4, 2), pad=[[0, 0], [0, 1], [0, 1], [0, 0]],
                      pool="AVERAGE_POOL_2D", k=(2, 2), stride=2)
    g = load(data)
    g2, rep = apply(g, fuse.FUSE_PAD)
    assert ops(g2) == ["AVERAGE_POOL_2D"] and "no window reaches" in rep.applied[0]
    assert_same_numbers(g, g2)
    check_c(data, seeds=(0,))


def test_fuse_relu_into_add():
    mb = ModelBuilder()
    a = mb.tensor("a", (1, 4, 4, 3), "int8", **Q)
    b = mb.tensor("b", (1, 4, 4, 3), "int8", scale=0.07, zero_point=5)
    s = mb.tensor("s", (1, 4, 4, 3), "int8", **OUT_Q)
    mb.op("ADD", [a, b], [s], {"fused_activation_function": 0})
    y = mb.tensor("y", (1, 4, 4, 3), "int8", **OUT_Q)
    mb.op("RELU", [s], [y])
    data = mb.finish([a, b], [y])
    g = load(data)
    g2, rep = apply(g, fuse.FUSE_ACTIVATION)
    assert _fused(g2) == [("ADD", 1)]
    assert_same_numbers(g, g2)
    check_c(data, seeds=(0,))


def test_fuse_relu_n1_to_1_into_fully_connected():
    """TFLM has no RELU_N1_TO_1 kernel, so only the numpy references can compare here (the op's
    own tests hold it against TFLite's reference kernel)."""
    q = dict(scale=0.01, zero_point=3)  # [-1, 1] is [-97, 103]: a real clamp on both sides
    g = load(fc_then(["RELU_N1_TO_1"], act_in_q=q, act_out_q=q))
    g2, rep = apply(g, fuse.FUSE_ACTIVATION)
    assert _fused(g2) == [("FULLY_CONNECTED", 2)] and "RELU_N1_TO_1" in rep.applied[0]
    assert_same_numbers(g, g2)


# ---- real models, unfused: every activation and SAME pad split out, then fused back -----------

def _unfused_case(model):
    import tempfile
    from pathlib import Path

    from conftest import shared_model
    from edgecc.compiler import load_model
    from edgecc.inspect import executes
    from unfuse import unfuse
    original = load_model(shared_model(model))
    data, counts = unfuse(shared_model(model))
    g = load(data)
    assert len(g.nodes) == len(original.nodes) + counts["activations"] + counts["pads"]
    g2, results = optimize(g, debug=True)
    fused = [a for r in results if r.name == "fuse" for a in r.applied]
    assert len(fused) == counts["activations"] + counts["pads"]
    assert [n.op for n in g2.nodes] == [n.op for n in original.nodes]
    assert sum(executes(n) for n in g2.nodes) == sum(executes(n) for n in original.nodes)
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / f"{model}_unfused.tflite"
        p.write_bytes(data)
        from edgecc.targets import get_target
        from edgecc.verify import verify_model
        r = verify_model(p, get_target("host"))
        assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)


@pytest.mark.parametrize("model", ["kws_ref_model", "pretrainedResnet_quant"])
def test_unfused_shared_model_fuses_back_bit_exact(model):
    _unfused_case(model)


@pytest.mark.slow
@pytest.mark.parametrize("model", ["person_detect", "vww_96_int8", "str_ww_ref_model",
                                   "micro_speech_quantized", "ad01_int8"])
def test_unfused_shared_model_fuses_back_bit_exact_slow(model):
    _unfused_case(model)
