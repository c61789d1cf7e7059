"""The Helium 3x3 convolution at stride 1 or 2 over a ring of padded input rows (runtime_c/mve/
conv_2d_ring.h, edgecc/lower/mve/conv.py) on cortex-m55 under QEMU, bit-exact with TFLite Micro:
each chunk count (in_c 16..80 at stride 1, 16..48 at stride 2), partial blocks of 4 pixels, odd
channel counts, batches, SAME and VALID padding, clamped activations (the C epilogue) and the
whole int8 range (the assembly one); its streaming declaration at the bound; and which layers
it takes."""
import tempfile
from pathlib import Path

import numpy as np
import pytest

from cnnchain import chain_model, run_compiled, tflm_outputs
from cnnchain import overlapped
from edgecc.compiler import compile_model
from edgecc.lower import alias_ops
from edgecc.lower.mve.conv import STREAMS, ring_stream
from edgecc.plan.check import check_graph_plan
from edgecc.plan.stream import geometry, stream_pair
from edgecc.targets import get_target
from simdcheck import check_on_target, variants
from test_conv_2d import conv_model

M55 = "cortex-m55"

CASES = [
    dict(h=6, w=8, ic=16, oc=6, padding=0, act=0),                 # SAME, int8 range
    dict(h=5, w=7, ic=32, oc=5, padding=0, act=1),                 # partial block, odd oc
    dict(n=2, h=4, w=6, ic=48, oc=4, padding=1, act=0),            # VALID, batches
    dict(h=3, w=9, ic=64, oc=10, padding=0, act=3, in_zp=-128),    # RELU6: clamped
    dict(h=4, w=4, ic=80, oc=2, padding=0, act=1, per_channel=False),
    dict(h=8, w=8, ic=16, oc=8, stride=(2, 2), padding=0, act=1),   # stride 2 SAME (pad 0/1)
    dict(h=9, w=11, ic=32, oc=3, stride=(2, 2), padding=0, act=0),  # odd sizes: pad 1/1, odd oc
    dict(n=2, h=7, w=10, ic=48, oc=6, stride=(2, 2), padding=1, act=3, in_zp=-128),
]


@pytest.mark.qemu
@pytest.mark.parametrize("case", range(len(CASES)))
def test_ring_conv_on_cortex_m55(case):
    rng = np.random.default_rng(5500 + case)
    check_on_target(conv_model(rng, kh=3, kw=3, **CASES[case]), M55, "mve-conv-ring",
                    seeds=(0, 1))


@pytest.mark.parametrize("layer,why", [
    (dict(ic=16, stride=(3, 3)), "strides"),
    (dict(ic=16, stride=(1, 2)), "strides"),
    (dict(ic=64, stride=(2, 2)), "multiple of 16"),
    (dict(ic=24), "multiple of 16"),
    (dict(ic=96), "multiple of 16"),
    (dict(ic=16, kh=1, kw=3), "3x3"),
    (dict(ic=16, dil=(2, 2), h=9, w=9), "dilated"),
])
def test_ring_refuses_other_layers(layer, why):
    rng = np.random.default_rng(55)
    kw = dict(h=7, w=8, oc=4, kh=3, kw=3, padding=0) | layer
    (v,) = variants(conv_model(rng, **kw), M55)
    assert not v.startswith("mve-conv-ring"), v


def test_ring_stream_layout():
    # per pair [row][chunk][tap][channel of the pair][16] int8, then 2 records: by hand
    oc, ic = 3, 32
    w = np.arange(oc * 9 * ic).reshape(oc, 3, 3, ic) % 251 - 125
    recs = np.arange(16).reshape(4, 4) + 1000
    pair = 9 * 32 * 2 + 32  # bytes
    out = ring_stream(w, recs).view(np.int8).reshape(2, pair)
    wts = out[:, :pair - 32].reshape(2, 3, 2, 3, 2, 16)
    assert wts[1, 2, 1, 0, 0, 5] == np.int8(w[2, 2, 0, 16 + 5])
    assert wts[0, 1, 0, 2, 1, 15] == np.int8(w[1, 1, 2, 15])
    assert (wts[1, :, :, :, 1] == 0).all()  # the padded 4th channel
    assert (out[1, pair - 32:].view(np.int32) == recs[2:].ravel()).all()


def _single(w: int = 9):
    rng = np.random.default_rng(5510)
    path = Path(tempfile.mkdtemp(prefix="edgecc-ring-")) / "m.tflite"
    path.write_bytes(chain_model(rng, 7, w, 16, [dict(op="conv", k=(3, 3), oc=16)]))
    return path, compile_model(path, get_target(M55), "model")


@pytest.mark.qemu
def test_ring_at_the_stream_bound_is_bit_exact_and_the_ring_is_what_keeps_it():
    path, c = _single()
    (lw,) = c.lowered
    assert lw.kernel.variant == "mve-conv-ring" and lw.kernel.streams == STREAMS
    _, _, d = stream_pair(c.graph, lw.node, STREAMS)
    row = geometry(c.graph, lw.node).out_w * 16
    assert d == -row  # one row below: each pass has copied its last input row before it writes
    c2, *_ = overlapped(c, d)
    check_graph_plan(c2.graph, c2.plan.offsets, c2.plan.scratch, {0: lw.kernel.scratch},
                     c2.plan.arena, alias_ops(), {0: STREAMS})
    for seed in (0, 1):
        outs, _ = run_compiled(c2, path, seed, "gcc", target=M55)
        assert outs == tflm_outputs(path, c, seed), seed
    # The bound is not vacuous: the ring holds rows up to oy + 1 when row oy is written, so an
    # output a row above its input is still right, and one 2 rows above overwrites the next
    # input row before it is copied.
    for shift, right in ((row, True), (2 * row, False)):
        c3, *_ = overlapped(c, shift)
        outs, _ = run_compiled(c3, path, 0, "gcc", target=M55)
        assert (outs == tflm_outputs(path, c, 0)) == right, shift


@pytest.mark.qemu
def test_ring_onnx_numerics_exact_on_the_resnet_qdq():
    # onnxruntime's float32 epilogue (ec_mve_rq_ch with the ONNX records) on 16-, 32- and
    # 64-channel layers of the QDQ ResNet, against onnxruntime
    from conftest import SHARED
    from edgecc.verify import verify_model
    path = SHARED / "models" / "onnx_models" / "tfl_pretrainedResnet_quant_qdq.onnx"
    assert path.exists(), path
    c = compile_model(path, get_target(M55), "m")
    assert "mve-conv-ring-onnx" in {lw.kernel.variant for lw in c.lowered}
    r = verify_model(path, get_target(M55))
    assert r.bit_exact, r.as_json()


@pytest.mark.parametrize("opt", ["-Og", "-O1", "-Os", "-O2", "-O3", "-O2 -fno-omit-frame-pointer"])
def test_ring_builds_at_every_optimization_level(tmp_path, opt):
    # the assembly names at most 10 general registers a statement (an optimized build with a
    # frame pointer cannot free 12); -O0 and clang take the intrinsic twin (-O0 of a whole
    # Helium output also needs mve/common.h's twins: tests/test_opt_levels.py)
    import subprocess
    rng = np.random.default_rng(5520)
    model = tmp_path / "m.tflite"
    model.write_bytes(conv_model(rng, h=6, w=8, ic=32, oc=4, kh=3, kw=3, padding=0, act=0))
    c = compile_model(model, get_target(M55), "m")
    assert [lw.kernel.variant for lw in c.lowered] == ["mve-conv-ring"]
    out = tmp_path / "gen"
    out.mkdir()
    for name, text in c.files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    flags = ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-std=c99", "-Wall", "-Wextra",
             "-Werror", *opt.split(), "-I", str(out), "-c", str(out / "m.c"), "-o",
             str(tmp_path / "m.o")]
    r = subprocess.run(["arm-none-eabi-gcc", *flags], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-800:]
