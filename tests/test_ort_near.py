"""edgecc/ops/_ort_near.py: the default kernels of the Conv / Gemm groups onnxruntime runs in
float32. The error bound holds (onnxruntime's float32 order, edgecc/numerics/ort_order.py, against
the exact value, on random layers with cancellation and on tfl_pretrainedResnet_quant_qdq's real
ones), the kernels are exact end to end, and without the near-tie check a real case fails."""
from __future__ import annotations

import numpy as np
import pytest

from edgecc.numerics import ort_near as bound
from edgecc.numerics import ort_order as of
from edgecc.ops import _ort_near as on
from edgecc.options import CompileOptions
from test_onnx_frontend import onnx_model

X86 = CompileOptions(onnx_numerics="x86")  # these tests are about the near-tie check

F32, F64 = np.float32, np.float64
RESNET = "tfl_pretrainedResnet_quant_qdq"


def _check(xi, wk, sx, sw, ys, bf, op: str, tcheap=None) -> tuple[int, int, int]:
    """One layer: int columns xi [K, N] (q - zx), int8 weights wk [M, K], float32 scales sx,
    sw [M], ys, float32 bias bf [M]. Asserts onnxruntime's float32 value lies within delta
    (exact T) of the exact one and that every output whose rounding differs is flagged (by the
    exact T and by the cheap bound tcheap [M, N] when given); returns (outputs, flagged with
    the cheap bound, differing)."""
    k = wk.shape[1]
    cols = (xi.astype(F32) * F32(sx)).astype(F32)
    wf = (wk.astype(F32) * sw[:, None]).astype(F32)
    if op == "CONV_2D":
        s = of.gemm_columns(wf, cols, None, of.default_threads())
        slices = max(-(-k // sk) for _, _, sk in of.conv_segments(xi.shape[1], k, wk.shape[0],
                                                                   of.default_threads()))
    else:
        s = np.stack([of.gemm_row(cols[:, j], wf.T, None) for j in range(xi.shape[1])], 1)
        slices = 0
    v = ((s + bf[:, None]).astype(F32) / F32(ys)).astype(F32)
    sc = F64(sx) * sw.astype(F64)[:, None]
    exact = (wk.astype(np.int64) @ xi.astype(np.int64) * sc + bf.astype(F64)[:, None]) / ys
    t = np.abs(wk).astype(np.int64) @ np.abs(xi).astype(np.int64)
    c = bound.coefficient(bound.roundings(op, k, slices))
    delta = c * (t * sc + np.abs(bf.astype(F64))[:, None]) / ys + bound.ABS_SLACK
    assert (np.abs(v.astype(F64) - exact) <= delta).all()
    differ = np.rint(np.clip(v, -32768, 32767)) != np.rint(np.clip(exact, -32768, 32767))
    consts = dict(sc=(sc[:, 0] / ys).astype(F32), bb=(bf.astype(F64) / ys).astype(F32),
                  kt=(c * sc[:, 0] / ys).astype(F32), kb=(c * np.abs(bf) / ys +
                                                         bound.ABS_SLACK).astype(F32))
    acc = (wk.astype(np.int64) @ xi.astype(np.int64)).T
    assert not (differ.T & ~bound.near(acc, t.T, consts)).any()
    cheap = bound.near(acc, (t if tcheap is None else tcheap).T, consts)
    assert not (differ.T & ~cheap).any()
    return differ.size, int(cheap.sum()), int(differ.sum())


@pytest.mark.parametrize("op,k", [("CONV_2D", 27), ("CONV_2D", 144), ("CONV_2D", 288),
                                  ("CONV_2D", 1152), ("FULLY_CONNECTED", 64),
                                  ("FULLY_CONNECTED", 641)])
def test_bound_holds_on_random_layers(op, k):
    """Random int8 layers, half of the outputs built to cancel (a large T, a small sum), the
    output scale chosen so values cross many rounding boundaries; every float32 error within
    the bound and every differing rounding flagged."""
    rng = np.random.default_rng(k)
    m, n = 8, 600
    xi = rng.integers(-255, 256, (k, n))
    wk = rng.integers(-127, 128, (m, k))
    wk[::2, : k // 2] = 127  # cancellation: the first half against its negation
    xi[k // 2: 2 * (k // 2), ::2] = -xi[: k // 2, ::2]
    wk[::2, k // 2: 2 * (k // 2)] = 127
    sw = (rng.random(m) * 0.02 + 0.001).astype(F32)
    bf = (rng.integers(-5000, 5000, m) * F32(1e-3)).astype(F32)
    for ys in (F32(0.0013), F32(0.37)):
        total, _, _ = _check(xi, wk, F32(0.0211), sw, ys, bf, op)
        assert total == m * n


def _resnet_layers(frames: int = 3):
    """(op, integer columns [K, N], int8 weights [M, K], sx, sw, ys, float32 bias, cheap T
    bound [M, N]) of each float-group Conv / Gemm of the resnet over seeded frames (compiled
    with --onnx-float ort: its nodes' references are onnxruntime's values)."""
    from edgecc.compiler import load_model
    from edgecc.interp import run_graph
    from edgecc.ops import _ort_float as orf
    from edgecc.ops import const, in_type, out_type
    from edgecc.passes import optimize
    from edgecc.verify.reference import seeded_frames
    g, _ = optimize(load_model(onnx_model(RESNET), X86))
    for ins in seeded_frames(g, 0, frames):
        env = run_graph(g, ins)
        for nd in g.nodes:
            if not nd.numerics.float_group or nd.op not in ("CONV_2D", "FULLY_CONNECTED"):
                continue
            x = np.asarray(env[nd.inputs[0]]).astype(np.int64)
            sx = F32(in_type(g, nd).q.scale[0])
            w = const(g, nd, 1).astype(np.int64)
            m = w.shape[0]
            sw = np.broadcast_to(np.asarray(in_type(g, nd, 1).q.scale, F32), (m,)).copy()
            if nd.op == "CONV_2D":  # the im2col columns back to integers (exact)
                xi = np.rint(orf._conv_columns(g, nd, x) / np.float64(sx)).astype(np.int64)
                wk = w.transpose(0, 3, 1, 2).reshape(m, -1)
                field = np.abs(xi).sum(0)  # the kernel's sum of |x - zx| over the field
            else:
                xi = (x.reshape(-1) - int(in_type(g, nd).q.zero_point[0]))[:, None]
                wk, field = w, np.abs(xi).sum(0)
            tcheap = np.abs(wk).max(1)[:, None] * field[None, :]
            yield (nd.op, xi, wk, sx, sw, F32(out_type(g, nd).q.scale[0]),
                   orf._bias(g, nd, m), tcheap)


def test_bound_holds_on_resnet_layers():
    """The real layers over 3 frames: the bound holds, the differing roundings (2, measured) are
    flagged, and the cheap bound recomputes under 1.5% of the outputs."""
    total = flagged = differ = 0
    for op, xi, wk, sx, sw, ys, bf, tcheap in _resnet_layers():
        t, f, d = _check(xi, wk, sx, sw, ys, bf, op, tcheap)
        total, flagged, differ = total + t, flagged + f, differ + d
    assert differ >= 1 and flagged < 0.015 * total, (total, flagged, differ)


def test_without_the_check_a_case_fails(tmp_path, monkeypatch):
    """A 3x3 conv of 16 channels over 32x32 (K = 144 in 128 + 16 slices), 40 frames: with the
    check exact; with delta = -1 (never recomputed: the exact value's rounding everywhere) 14
    values differ from onnxruntime (measured). The resnet's real layers show such values too
    (test_bound_holds_on_resnet_layers: 2 over 3 frames), though none reaches its outputs."""
    from edgecc.targets import get_target
    from edgecc.verify import verify_model
    from test_onnx_float import _float_group_model
    path = _float_group_model(tmp_path, "conv", (16, 32, 32, 16, 3, 3, 1, 1, 1))
    assert verify_model(path, get_target("host"), frames=40, seed=1, options=X86).bit_exact
    monkeypatch.setattr(on, "coefficient", lambda m: 0.0)
    monkeypatch.setattr(on, "ABS_SLACK", -1.0)
    r = verify_model(path, get_target("host"), frames=40, seed=1, options=X86)
    assert not r.bit_exact and r.mismatched_bytes > 0


@pytest.mark.parametrize("kind,shape", [
    ("conv", (5, 9, 7, 11, 3, 3, 2, 1, 1)), ("conv", (3, 8, 8, 8, 3, 3, 1, 2, 2)),
    ("conv", (16, 16, 16, 9, 3, 3, 1, 1, 1)), ("fc", (13, 9)), ("fc", (16, 7)), ("fc", (15, 4))])
def test_near_kernels_exact(tmp_path, kind, shape):
    """The near kernels end to end against onnxruntime (padding, stride, dilation, depth
    remainders), on the default mode's kernel."""
    from edgecc.compiler import compile_model
    from edgecc.targets import get_target
    from edgecc.verify import verify_model
    from test_onnx_float import _float_group_model
    path = _float_group_model(tmp_path, kind, shape)
    c = compile_model(path, get_target("host"), "model", X86)
    assert [lw.kernel.variant for lw in c.lowered
            if lw.node.op in ("CONV_2D", "FULLY_CONNECTED")] == ["portable-ort-near"]
    r = verify_model(path, get_target("host"), frames=4, seed=3, options=X86)
    assert r.bit_exact, r.as_json()


def test_resnet_exact_over_frames():
    """The x86 numerics stay exact frame after frame."""
    from edgecc.targets import get_target
    from edgecc.verify import verify_model
    r = verify_model(onnx_model(RESNET), get_target("host"), frames=8, seed=11, options=X86)
    assert r.bit_exact, r.as_json()


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_cortex_m4_near_kernel_builds_at_every_opt_level(tmp_path, cc):
    """tfl_pretrainedResnet_quant_qdq on cortex-m4: the DSP conv's near-tie epilogue
    (ec_dsp_conv_2d_6px_near_s8: VCVTR asm, calls to ec_ortn_conv_recompute) at every -O level."""
    from edgecc.build.boards import load_board
    from edgecc.build import cross
    from test_opt_levels import M4, _builds_at_every_opt_level
    _builds_at_every_opt_level(tmp_path, onnx_model(RESNET), "cortex-m4", M4,
                               cc=cross.compile_command(load_board("mps2-an386"), cc))


@pytest.mark.qemu
def test_cortex_m4_near_kernel_unoptimized_is_exact(monkeypatch):
    """-O0 (the DSP conv's C twins) on the resnet's float-group convs: exact under QEMU."""
    from edgecc.build.boards import load_board
    from edgecc.targets import get_target
    from edgecc.build import cross
    from edgecc.verify import verify_model
    real = cross.compile_sources
    monkeypatch.setattr(cross, "compile_sources", lambda *a, **kw: real(*a, **{**kw, "opt": "-O0"}))
    b = load_board("mps2-an386")
    r = verify_model(onnx_model(RESNET), get_target(b.target), board=b, frames=2, options=X86)
    assert r.bit_exact, r.as_json()


@pytest.mark.parametrize("mode,want", [
    ("x86", {("CONV_2D", "dsp-conv-6px"), ("ADD", "dsp-add-ortf-lin"),
                 ("ADD", "dsp-add-ortf-lut")}),
    ("x86-float", {("CONV_2D", "portable-ort-float"), ("ADD", "portable-ort-float")})])
def test_cortex_m4_float_group_kernels(mode, want):
    """cortex-m4 resnet_qdq: the default mode runs its float-group Convs on the DSP kernel's
    near-tie variant and its Adds as integer forms proven equal to onnxruntime's float32 ADD on
    all 65536 pairs (lower/dsp/near.py add_kernel: two multipliers for one, two tables for the
    other, whose linear form fails the proof); --onnx-numerics x86-float keeps the float kernels."""
    from edgecc.compiler import compile_model
    from edgecc.targets import get_target
    c = compile_model(onnx_model(RESNET), get_target("cortex-m4"), "model",
                      CompileOptions(onnx_numerics=mode))
    got = {(lw.node.op, lw.kernel.variant) for lw in c.lowered
           if lw.node.numerics.float_group and lw.node.op in ("CONV_2D", "ADD")}
    assert got == want, got


@pytest.mark.parametrize("name", [RESNET, "tfl_kws_ref_model_qdq", "ox_se_mbv2_qdq_s8",
                                  "ox_autoenc_qdq_s8"])
def test_dsp_derived_factors_bound(name):
    """The DSP records hold half the estimate's scale and the bias in output steps; the kernel
    derives kt = fl(h * ckt) and kb = fl(fl(|bb| * ckb) + cslack) in float32 (runtime_c/dsp/
    conv_2d.h ec_dsp_near6). On every float-group conv of the real models, both stay at or
    above the real c * sx * sw / ys and c * |bias| / ys + ABS_SLACK the bound needs, and the
    record's max|w| * kt above max|w| times the real kt."""
    from edgecc.compiler import load_model
    from edgecc.ops import const, in_type, out_type
    from edgecc.lower.dsp.conv import dsp_records
    from edgecc.ops import _ort_float as orf
    from edgecc.passes import optimize
    g, _ = optimize(load_model(onnx_model(name), X86))
    seen = 0
    for nd in g.nodes:
        if not nd.numerics.float_group or nd.op != "CONV_2D":
            continue
        w = const(g, nd, 1)
        rows = w.reshape(w.shape[0], -1)
        rec, _, factors = dsp_records(g, nd, rows)
        ckt, ckb, cslack = (F32(float.fromhex(f.rstrip("f"))) for f in factors[:3])
        h, bb, wk = (rec[:, i].astype(np.int32).view(F32) for i in (1, 2, 3))
        kt = (h * ckt).astype(F32)
        kb = ((np.abs(bb) * ckb).astype(F32) + cslack).astype(F32)
        _, m = on.conv_segments_sk(g, nd)
        c = bound.coefficient(m)
        sx = F64(F32(in_type(g, nd).q.scale[0]))
        ys = F64(F32(out_type(g, nd).q.scale[0]))
        sw = np.broadcast_to(np.asarray(in_type(g, nd, 1).q.scale, F32), (len(rows),)).astype(F64)
        real_kt = c * sx * sw / ys
        assert (kt.astype(F64) >= real_kt).all()
        assert (wk.astype(F64) >= np.abs(rows).max(axis=1) * real_kt).all()
        bf = orf._bias(g, nd, len(rows)).astype(F64)
        assert (kb.astype(F64) >= c * np.abs(bf) / ys + bound.ABS_SLACK).all()
        seen += 1
    assert seen


def test_fc_norm_bound():
    """The one-row Gemm's Cauchy-Schwarz bound: each unit's wnorm at or above its weights' real
    norm, and wnorm times the row norm the kernels compute (ec_ortn_row_norm, emulated in
    float32) at or above the exact bound T, on tfl_ad01_int8_qdq's float-group layers."""
    from edgecc.compiler import load_model
    from edgecc.ops import const, in_type
    from edgecc.ops import _ort_float as orf
    from edgecc.passes import optimize
    g, _ = optimize(load_model(onnx_model("tfl_ad01_int8_qdq"), X86))
    rng = np.random.default_rng(5)
    seen = 0
    for nd in g.nodes:
        if not nd.numerics.float_group or nd.op != "FULLY_CONNECTED":
            continue
        w = const(g, nd, 1).astype(np.int64)
        k = on.fc_constants(g, nd)
        assert (k["wnorm"].astype(F64) >= np.sqrt((w.astype(F64) ** 2).sum(axis=1))).all()
        zx = int(in_type(g, nd).q.zero_point[0])
        for _ in range(20):
            x = rng.integers(-128, 128, w.shape[1]) - zx
            xn = (np.sqrt(F32(int((x * x).sum()))).astype(F32) * F32(1.0000005)).astype(F32)
            t = np.abs(w) @ np.abs(x)
            assert ((k["wnorm"] * xn).astype(F64) * (1 + 2.0 ** -23) >= t).all()
        seen += 1
    assert seen == 2


@pytest.mark.parametrize("name,op,want", [
    ("ox_autoenc_qdq_s8", "CONV_2D", "portable-ort-near"),          # 9-tap filters
    ("tfl_kws_ref_model_qdq", "CONV_2D", "dsp-conv-6px"),           # 40 taps
    ("tfl_kws_ref_model_qdq", "FULLY_CONNECTED", "portable-ort-near"),  # 768 MACs
    ("tfl_ad01_int8_qdq", "FULLY_CONNECTED", "dsp-fc-near")])       # 81,920 MACs
def test_cortex_m4_small_float_groups_stay_portable(name, op, want):
    """Flash over speed on cortex-m4: a float-group conv of filters under 16 taps
    (lower/dsp/conv.py NEAR_MIN_TAPS) and a one-row Gemm under 4,096 MACs (lower/dsp/near.py
    FC_NEAR_MIN_MACS) take the portable near-tie kernel; larger ones the DSP kernels."""
    from edgecc.compiler import compile_model
    from edgecc.targets import get_target
    c = compile_model(onnx_model(name), get_target("cortex-m4"), "model", X86)
    got = {lw.kernel.variant for lw in c.lowered
           if lw.node.numerics.float_group and lw.node.op == op}
    assert got == {want}, got
