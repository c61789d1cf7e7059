"""Dead-channel elimination (edgecc/passes/channels.py): channels that only meet zero weights are
dropped from producers and consumers, bit-exact with TFLite Micro; tensors read by anything else
keep every channel; verify's layer trace still lines pruned tensors up with TFLM's."""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

from conftest import shared_model
from edgecc.compiler import compile_model, load_model
from edgecc.passes import optimize
from edgecc.passes.channels import live_channels
from edgecc.targets import get_target
from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model

# input columns of the last conv that are all zero: 18 of 40, so 22 channels are read and 24
# kept (rounded up to a multiple of 8 with the lowest dead ones, 1 and 4)
DEAD = [1, 4, 5, 9, 17, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 33, 35, 38]
KEEP = [c for c in range(40) if c not in DEAD] + [1, 4]


def chain_model(rng, *, c=40, oc=8, add_branch=False, dead=tuple(DEAD)) -> bytes:
    """x -> CONV 1x1 (c ch) -> DEPTHWISE 3x3 SAME -> CONV 1x1 whose input columns `dead` are
    zero. Optionally the depthwise output is also ADDed to itself (a reader of every channel)."""
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 6, 5, 16), "int8", scale=0.05, zero_point=-3)
    ws1 = list(rng.uniform(0.002, 0.02, c))
    w1 = mb.const("w1", rng.integers(-127, 128, (c, 1, 1, 16)).astype(np.int8), scale=ws1,
                  zero_point=[0] * c, axis=0)
    b1 = mb.const("b1", rng.integers(-3000, 3000, c).astype(np.int32),
                  scale=[0.05 * s for s in ws1], zero_point=[0] * c)
    t1 = mb.tensor("t1", (1, 6, 5, c), "int8", scale=0.1, zero_point=-128)
    mb.op("CONV_2D", [x, w1, b1], [t1], {"padding": 1, "stride_h": 1, "stride_w": 1,
                                         "fused_activation_function": 1}, version=3)
    wsd = list(rng.uniform(0.005, 0.03, c))
    wd = mb.const("wd", rng.integers(-127, 128, (1, 3, 3, c)).astype(np.int8), scale=wsd,
                  zero_point=[0] * c, axis=3)
    bd = mb.const("bd", rng.integers(-2000, 2000, c).astype(np.int32),
                  scale=[0.1 * s for s in wsd], zero_point=[0] * c)
    t2 = mb.tensor("t2", (1, 6, 5, c), "int8", scale=0.15, zero_point=-128)
    mb.op("DEPTHWISE_CONV_2D", [t1, wd, bd], [t2],
          {"padding": 0, "stride_h": 1, "stride_w": 1, "depth_multiplier": 1,
           "fused_activation_function": 1}, version=3)
    w3 = rng.integers(-127, 128, (oc, 1, 1, c)).astype(np.int8)
    w3[..., [d for d in dead if d < c]] = 0
    ws3 = list(rng.uniform(0.002, 0.02, oc))
    wt3 = mb.const("w3", w3, scale=ws3, zero_point=[0] * oc, axis=0)
    b3 = mb.const("b3", rng.integers(-3000, 3000, oc).astype(np.int32),
                  scale=[0.15 * s for s in ws3], zero_point=[0] * oc)
    y = mb.tensor("y", (1, 6, 5, oc), "int8", scale=0.2, zero_point=5)
    mb.op("CONV_2D", [t2, wt3, b3], [y], {"padding": 1, "stride_h": 1, "stride_w": 1}, version=3)
    outs = [y]
    if add_branch:
        z = mb.tensor("z", (1, 6, 5, c), "int8", scale=0.3, zero_point=-128)
        mb.op("ADD", [t2, t2], [z], {"fused_activation_function": 0})
        outs.append(z)
    return mb.finish([x], outs)


def _load(data: bytes, tmp: Path):
    p = tmp / "m.tflite"
    p.write_bytes(data)
    return p, load_model(p)


def test_dead_channels_dropped_and_bit_exact(tmp_path):
    data = chain_model(np.random.default_rng(0))
    p, g = _load(data, tmp_path)
    g2, rep = optimize(g)
    note, = [r for r in rep if r.name == "channels"]
    assert len(note.applied) == 2 and "24 of 40 channels kept" in note.applied[0]
    conv1, dw, conv3 = g2.nodes
    keep = sorted(KEEP)
    assert g2.type(conv1.outputs[0]).shape == (1, 6, 5, 24)
    assert g2.value(dw.outputs[0]).channels == tuple(keep)
    assert g2.value(conv1.inputs[1]).data.shape == (24, 1, 1, 16)
    assert g2.type(conv1.inputs[1]).q.scale == tuple(np.asarray(g.type(g.nodes[0].inputs[1]).q.scale)[keep])
    assert g2.value(dw.inputs[1]).data.shape == (1, 3, 3, 24)
    assert len(g2.type(dw.inputs[2]).q.scale) == 24
    assert g2.value(conv3.inputs[1]).data.shape == (8, 1, 1, 24)
    assert g2.type(g2.outputs[0]).shape == (1, 6, 5, 8)
    check_model(data)  # numpy reference and generated C (gcc, clang) vs TFLite Micro


@pytest.mark.parametrize("target", ["x86-avx2", "cortex-m4"])
def test_dead_channels_on_simd_targets(tmp_path, target):
    from edgecc.verify import verify_model
    p, _ = _load(chain_model(np.random.default_rng(1), oc=16), tmp_path)
    r = verify_model(p, get_target(target))
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)


def test_a_tensor_read_by_another_op_keeps_every_channel(tmp_path):
    _, g = _load(chain_model(np.random.default_rng(2), add_branch=True), tmp_path)
    assert live_channels(g) == {} or all(m.all() for m in live_channels(g).values())
    g2, _ = optimize(g)
    assert all(g2.type(n.outputs[0]).shape[-1] == 40 for n in g2.nodes[:2])


def test_nothing_dead_nothing_changes(tmp_path):
    _, g = _load(chain_model(np.random.default_rng(3), dead=()), tmp_path)
    g2, rep = optimize(g)
    assert not [r for r in rep if r.name == "channels"][0].applied
    assert [g2.type(n.outputs[0]).shape[-1] for n in g2.nodes] == [40, 40, 8]


def test_few_read_channels_round_up_to_a_block(tmp_path):
    """3 channels read of 16: 8 kept (the SIMD kernels' block); exact with step 1 too."""
    from edgecc.passes.channels import live_channels
    p, g = _load(chain_model(np.random.default_rng(5), c=16, oc=4,
                             dead=[c for c in range(16) if c not in (2, 7, 11)]), tmp_path)
    g2, _ = optimize(g)
    assert g2.type(g2.nodes[0].outputs[0]).shape[-1] == 8
    assert sorted(np.flatnonzero(next(iter(live_channels(g, step=1).values())))) == [2, 7, 11]
    check_model(p.read_bytes(), seeds=(0,))


def test_layer_trace_lines_pruned_tensors_up_with_tflm(tmp_path):
    """verify's first-mismatch search compares a pruned tensor with TFLM's kept channels: no
    false alarm on a correct run, and a corrupted byte of a pruned tensor is found there."""
    from edgecc.verify import _build_and_run, first_mismatch
    from edgecc.build.harness import parse_output
    from edgecc.verify.reference import run_tflm, seeded_inputs
    p, _ = _load(chain_model(np.random.default_rng(4)), tmp_path)
    c = compile_model(p, get_target("host"), "m")
    inputs = seeded_inputs(c.graph, 0)
    _, ref_t = run_tflm(p, inputs, len(c.graph.outputs), preserve=True,
                        n_tensors=len(c.imported.values))
    with tempfile.TemporaryDirectory() as tmp:
        _, traces, _ = parse_output(_build_and_run(c, Path(tmp), inputs, get_target("host"),
                                                   None, trace=True))
    assert first_mismatch(c, traces, ref_t) is None
    dw = c.graph.nodes[1]
    idx = int(dw.outputs[0][1:])
    bad = bytearray(traces[idx])
    bad[7] ^= 1
    traces[idx] = bytes(bad)
    assert "DEPTHWISE_CONV_2D" in first_mismatch(c, traces, ref_t)


def test_vww_pruned_layers():
    """vww_96_int8's late pointwise layers are 64-99% zero: their tensors shrink (e.g. 256 ->
    31 channels) and the model's weights with them."""
    g = load_model(shared_model("vww_96_int8"))
    g2, rep = optimize(g)
    note, = [r for r in rep if r.name == "channels"]
    assert len(note.applied) >= 10
    before = sum(v.data.nbytes for v in g.values.values() if v.is_const)
    after = sum(v.data.nbytes for v in g2.values.values() if v.is_const)
    assert after < 0.5 * before
