"""The Cortex-M DSP kernels that need no arena scratch (edgecc/lower/dsp/depthwise.py, dsp/fc.py) and the
streaming of the DSP depthwise kernels, on Cortex-M4 under QEMU, bit-exact with TFLite Micro:
the in-place depthwise (one-column filters, filters over 8 rows, padding on every side) and the
planes kernel with its output over its input."""
import tempfile
from pathlib import Path

import numpy as np
import pytest

from edgecc.compiler import compile_model
from edgecc.targets import get_target
from edgecc.verify import verify_model
from simdcheck import check_on_target
from test_simd_depthwise import dw_model

pytestmark = pytest.mark.qemu

DIRECT_CASES = [
    dict(h=7, w=5, ic=16, padding=0, act=0),                               # 3x3 SAME, unrolled
    dict(h=9, w=8, ic=8, stride=(2, 2), padding=0, act=1),                 # 3x3 stride 2
    dict(h=14, w=3, ic=8, kh=5, kw=1, padding=0, act=1),                  # 5x1 SAME
    dict(h=16, w=2, ic=12, kh=10, kw=1, stride=(2, 1), padding=1, act=0),  # 10x1 stride 2
    dict(n=2, h=11, w=5, ic=4, kh=9, kw=3, stride=(1, 2), padding=0, act=3,
         per_channel=False),                                               # 9x3, pads all sides
]


@pytest.mark.parametrize("case", range(len(DIRECT_CASES)))
def test_dsp_depthwise_direct_on_cortex_m4(case):
    rng = np.random.default_rng(6100 + case)
    check_on_target(dw_model(rng, **DIRECT_CASES[case]), "cortex-m4", "dsp-dw-direct")


# one input channel (micro_speech's first layer): widths off the 4-tap word, padding all round
ONE_CASES = [
    dict(h=13, w=11, ic=1, dm=8, kh=10, kw=8, stride=(2, 2), padding=0, act=1),
    dict(n=2, h=9, w=10, ic=1, dm=4, kh=3, kw=5, padding=0, act=3, per_channel=False),
    dict(h=8, w=9, ic=1, dm=12, kh=2, kw=2, stride=(1, 2), padding=1, act=0),
]


@pytest.mark.parametrize("case", range(len(ONE_CASES)))
def test_dsp_depthwise_one_channel_on_cortex_m4(case):
    rng = np.random.default_rng(6700 + case)
    check_on_target(dw_model(rng, **ONE_CASES[case]), "cortex-m4", "dsp-dw-one")


# (kernel variant, case): the planes kernel streams by whole rows, the others by pixels
STREAM_CASES = [("dsp-dw3x3-s1", dict(h=9, w=6, ic=6, padding=0, act=1)),
                ("dsp-dw3x3-s2", dict(h=10, w=7, ic=4, dm=2, stride=(2, 2), padding=0, act=0)),
                ("dsp-dw-direct", dict(h=9, w=5, ic=8, padding=0, act=3)),
                ("dsp-dw-direct", dict(h=12, w=3, ic=8, kh=5, kw=1, padding=1, act=0)),
                ("dsp-dw-one", dict(h=14, w=12, ic=1, dm=4, kh=4, kw=3, padding=0, act=0))]


@pytest.mark.parametrize("case", range(len(STREAM_CASES)))
def test_dsp_depthwise_streams_bit_exact(case):
    variant, cfg = STREAM_CASES[case]
    model = dw_model(np.random.default_rng(6200 + case), **cfg)
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.tflite"
        p.write_bytes(model)
        c = compile_model(p, get_target("cortex-m4"), "m")
        (lw,) = c.lowered
        assert lw.kernel.variant == variant and lw.kernel.streams
        node = lw.node
        nx, ny = (c.graph.type(v).nbytes for v in (node.inputs[0], node.outputs[0]))
        assert c.plan.streaming and c.plan.arena < nx + ny + lw.kernel.scratch
        r = verify_model(p, get_target("cortex-m4"))
        assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)


# The in-place FC (dsp-fc-4u-rd): depths with and without a tail of under 8 inputs, units off
# the multiple of 4, several batches whose rows start unaligned, clamps.
FC_RD_CASES = [
    dict(depth=13, units=6, act=1),
    dict(batches=2, depth=42, units=9, act=3, w_max=40),
    dict(depth=5, units=3, act=0),                    # no 8-input step at all: the tail only
]


@pytest.mark.parametrize("case", range(len(FC_RD_CASES)))
def test_dsp_fc_in_place_on_cortex_m4(case):
    from test_simd_fc import fc_model
    rng = np.random.default_rng(6500 + case)
    check_on_target(fc_model(rng, **FC_RD_CASES[case]), "cortex-m4", "dsp-fc-4u-rd")


def _fc_entries(model: bytes) -> list[str]:
    """The C function of every FULLY_CONNECTED layer of a TFLite model on cortex-m4."""
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.tflite"
        p.write_bytes(model)
        c = compile_model(p, get_target("cortex-m4"), "m")
        return [lw.kernel.params["fn"] for lw in c.lowered if lw.node.op == "FULLY_CONNECTED"]


# The 8-unit step (dsp/fully_connected_8u.h) enters by n's bits: an odd 8-input block, an odd
# 16-input block, then 32-input loop turns; every combination, in both forms (in place, and the
# extended row in scratch, forced here as where dead bytes allow it), with a 4-unit block after.
# These models are small: FC8_MIN_WEIGHT_BYTES is lowered so they take the 8u entries.
FC8_CASES = [
    dict(depth=8, units=12, act=1),                   # the 8-input block only
    dict(batches=2, depth=16, units=8, act=0),        # the 16-input block only
    dict(depth=56, units=20, act=3),                  # 8 + 16 + one loop turn
    dict(depth=88, units=16, act=0, w_max=60),        # 8 + 16 + two loop turns
    dict(depth=1040, units=20, act=0, w_max=12),      # -ub: the row in chunks (weights skip)
]


@pytest.mark.parametrize("form", ["rd", "ub"])
@pytest.mark.parametrize("case", range(len(FC8_CASES)))
def test_dsp_fc_8_unit_step_entries_on_cortex_m4(case, form, monkeypatch):
    from test_simd_fc import fc_model
    from edgecc.lower.dsp import common as dsp_common, fc as dsp_fc
    if form == "ub":
        monkeypatch.setattr(dsp_common, "dead_bytes", lambda g, n, t: 1 << 20)
    monkeypatch.setattr(dsp_fc, "FC8_MIN_WEIGHT_BYTES", 0)
    model = fc_model(np.random.default_rng(6600 + case), **FC8_CASES[case])
    assert _fc_entries(model) == [f"ec_dsp_fully_connected_8u_{form}_s8"]
    check_on_target(model, "cortex-m4", f"dsp-fc-4u-{form}")


@pytest.mark.parametrize("form", ["rd", "ub"])
def test_dsp_fc_without_the_8_unit_step_on_cortex_m4(form, monkeypatch):
    """A model whose weights cannot pay for the 8-unit step's code (FC8_MIN_WEIGHT_BYTES) takes
    the 4u entries, weights laid out in 4-unit blocks only: 20 units (two would-be 8-unit
    blocks), both forms, bit-exact."""
    from test_simd_fc import fc_model
    from edgecc.lower.dsp import common as dsp_common
    if form == "ub":
        monkeypatch.setattr(dsp_common, "dead_bytes", lambda g, n, t: 1 << 20)
    model = fc_model(np.random.default_rng(6650), depth=56, units=20, act=3)
    assert _fc_entries(model) == [f"ec_dsp_fully_connected_4u_{form}_s8"]
    check_on_target(model, "cortex-m4", f"dsp-fc-4u-{form}")


@pytest.mark.parametrize("model,eight", [("hello_world_int8", False), ("trained_lstm_int8", False),
                                         ("ad01_int8", True), ("kws_ref_model", True)])
def test_dsp_fc_8_unit_step_only_where_the_weights_pay_for_it(model, eight):
    """The 8-unit entries (~1.8 KB of code each) in ad01_int8 and kws_ref_model, not in the
    small models, whose flash it grew by 12-77%; the generated C calls only the chosen ones."""
    from conftest import shared_model
    c = compile_model(shared_model(model), get_target("cortex-m4"), "m")
    fns = {lw.kernel.params["fn"] for lw in c.lowered if lw.node.op == "FULLY_CONNECTED"}
    assert fns and all(("_8u_" in f) == eight for f in fns), fns
    calls = "".join(c.files[f] for f in c.files if f.endswith(".c"))
    assert ("ec_dsp_fully_connected_8u_" in calls) == eight
    assert ("ec_dsp_fully_connected_4u_" in calls) != eight


# (str_ww_ref_model, kws_ref_model: over only at CONV_2D steps, the DSP convolution's scratch)
@pytest.mark.parametrize("model", ["ad01_int8", "hello_world_int8", "micro_speech_quantized"])
def test_dsp_arena_at_or_under_the_lower_bound(model):
    """The default cortex-m4 build of these models needs no more RAM than their live bytes."""
    from conftest import shared_model
    from edgecc.plan import model_lower_bound
    c = compile_model(shared_model(model), get_target("cortex-m4"), "m")
    assert c.plan.arena <= model_lower_bound(c.imported), (c.plan.arena, model)


def _qdq_gemm(rng, batches: int, depth: int, units: int, per_channel: bool, ys: float = 0.4,
              relu: bool = False):
    """float input -> Q -> DQ -> Gemm (int8 weights, int32 bias, transB) [-> Relu] -> Q -> DQ,
    as onnxruntime's quantize_static writes a fully connected layer."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    init = numpy_helper.from_array
    xs, ys = np.float32(0.05), np.float32(ys)
    ws = (rng.random(units if per_channel else 1) * 0.02 + 0.005).astype(np.float32)
    w = rng.integers(-127, 128, size=(units, depth)).astype(np.int8)
    inits = [init(xs, "xs"), init(np.int8(5), "xz"), init(ys, "ys"), init(np.int8(-3), "yz"),
             init(w, "w"), init(ws if per_channel else ws[0], "ws"),
             init(np.zeros(units, np.int8) if per_channel else np.int8(0), "wz"),
             init(rng.integers(-900, 900, size=units).astype(np.int32), "b"),
             init((xs * ws).astype(np.float32) if per_channel else xs * ws[0], "bs"),
             init(np.zeros(units, np.int32) if per_channel else np.int32(0), "bz")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
             helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bd"], axis=0),
             helper.make_node("Gemm", ["xd", "wd", "bd"], ["gy"], transB=1),
             *([helper.make_node("Relu", ["gy"], ["ry"])] if relu else []),
             helper.make_node("QuantizeLinear", ["ry" if relu else "gy", "ys", "yz"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    g = helper.make_graph(
        nodes, "fc", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batches, depth])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batches, units])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


# ONNX numerics through the in-place FC: onnxruntime's float32 epilogue, per tensor and per unit
# (a tiny output scale: products past 2^15, the kernel keeps ec_onnx_rq's float clamp)
ONNX_FC_CASES = [dict(batches=1, depth=21, units=6, per_channel=False),
                 dict(batches=2, depth=40, units=9, per_channel=True),
                 dict(batches=1, depth=48, units=5, per_channel=True, ys=0.0001)]


@pytest.mark.parametrize("case", range(len(ONNX_FC_CASES)))
def test_dsp_fc_onnx_epilogue_on_cortex_m4(case, tmp_path, monkeypatch):
    from edgecc.lower.dsp import common as dsp_common
    monkeypatch.setattr(dsp_common, "dead_bytes", lambda g, n, t: 0)  # as at a peak step
    p = tmp_path / "m.onnx"
    p.write_bytes(_qdq_gemm(np.random.default_rng(6600 + case),
                            **ONNX_FC_CASES[case]).SerializeToString())
    c = compile_model(p, get_target("cortex-m4"), "m")
    fc = [lw.kernel.variant for lw in c.lowered if lw.node.op == "FULLY_CONNECTED"]
    assert fc == ["dsp-fc-4u-rd-onnx"], [lw.kernel.variant for lw in c.lowered]
    r = verify_model(p, get_target("cortex-m4"))
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)


@pytest.mark.parametrize("numerics,variants", [
    # the default: every layer fused, the scratch form where its scratch is dead, else in place
    ("fused", {"dsp-fc-4u-rd-onnx", "dsp-fc-4u-ub-onnx"}),
    # onnxruntime's x86 defaults leave the first and the last in float32: the near-tie kernel
    # (edgecc/lower/dsp/near.py); the scratch form elsewhere
    ("x86", {"dsp-fc-near", "dsp-fc-4u-ub-onnx"})])
def test_dsp_fc_onnx_ad01_on_cortex_m4(numerics, variants):
    """tfl_ad01_int8_qdq.onnx (ad01's int8 weights through tf2onnx): every FC layer on a DSP
    kernel with onnxruntime's epilogue, bit-exact, the arena at the lower bound."""
    from conftest import SHARED
    from edgecc.options import CompileOptions
    from edgecc.plan import model_lower_bound
    p = SHARED / "models" / "onnx_models" / "tfl_ad01_int8_qdq.onnx"
    assert p.is_file(), f"shared model missing: {p}"
    options = CompileOptions(onnx_numerics=numerics)
    c = compile_model(p, get_target("cortex-m4"), "m", options)
    assert {lw.kernel.variant for lw in c.lowered if lw.node.op == "FULLY_CONNECTED"} == variants
    assert c.plan.arena <= model_lower_bound(c.imported)
    r = verify_model(p, get_target("cortex-m4"), options=options)
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)


# The FC kernels' ONNX epilogue (ec_dsp_onnx_val: VCVTR + QADD) after the 8-unit step and a
# 4-unit block (20 units, the depth a multiple of 8), in place (rd) and over the extended row
# (ub): the plain int8 saturation and the Relu clamp, and a tiny output scale whose products pass
# 2^31 (VCVTR saturates, QADD keeps the side: the zero point is -3).
ONNX_FC8_CASES = [("rd", dict(depth=32, per_channel=False, relu=True)),
                  ("rd", dict(depth=48, per_channel=True, ys=1e-9)),
                  ("rd", dict(depth=40, per_channel=False, relu=True, ys=1e-9)),
                  ("ub", dict(depth=64, per_channel=True, relu=True)),
                  ("ub", dict(depth=24, per_channel=False, ys=1e-9))]


@pytest.mark.parametrize("case", range(len(ONNX_FC8_CASES)))
def test_dsp_fc_onnx_8_unit_epilogue_on_cortex_m4(case, tmp_path, monkeypatch):
    from edgecc.lower.dsp import common as dsp_common
    form, kw = ONNX_FC8_CASES[case]
    from edgecc.lower.dsp import fc as dsp_fc
    dead = 0 if form == "rd" else 1 << 20  # as at a peak step / scratch always dead
    monkeypatch.setattr(dsp_common, "dead_bytes", lambda g, n, t: dead)
    monkeypatch.setattr(dsp_fc, "FC8_MIN_WEIGHT_BYTES", 0)  # the 8u entries (a small model)
    p = tmp_path / "m.onnx"
    p.write_bytes(_qdq_gemm(np.random.default_rng(6700 + case), batches=2, units=20,
                            **kw).SerializeToString())
    c = compile_model(p, get_target("cortex-m4"), "m")
    fc = [lw.kernel.variant for lw in c.lowered if lw.node.op == "FULLY_CONNECTED"]
    assert fc == [f"dsp-fc-4u-{form}-onnx"], [lw.kernel.variant for lw in c.lowered]
    assert [lw.kernel.params["fn"] for lw in c.lowered if lw.node.op == "FULLY_CONNECTED"] == \
        [f"ec_dsp_fully_connected_8u_{form}_onnx_s8"]
    r = verify_model(p, get_target("cortex-m4"), frames=2)
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)


@pytest.mark.parametrize("lines", [False, True])
@pytest.mark.parametrize("ys", [None, 1e-5])
def test_dsp_depthwise_onnx_epilogue_on_cortex_m4(ys, lines, tmp_path, monkeypatch):
    """A QDQ depthwise Conv (group = channels, padding on three sides, stride 1 x 2) takes the
    in-place DSP kernel with onnxruntime's epilogue, bit-exact with onnxruntime; with a tiny
    output scale the products pass 2^15 and the kernel keeps ec_onnx_rq's float clamp. With the
    integer lines (edgecc/numerics/qlinear.py fixed_epilogue, scales under 1/4), the line kernel,
    bit-exact too."""
    from onnx import numpy_helper
    from test_onnx_frontend import qdq_conv_model
    from edgecc.numerics import qlinear as _onnx_rq
    monkeypatch.setattr(_onnx_rq, "LINES", lines)
    m = qdq_conv_model(np.random.default_rng(6800), group=4)
    if ys is not None:
        (init,) = [i for i in m.graph.initializer if i.name == "ys"]
        init.CopyFrom(numpy_helper.from_array(np.float32(ys), "ys"))
    p = tmp_path / "m.onnx"
    p.write_bytes(m.SerializeToString())
    c = compile_model(p, get_target("cortex-m4"), "m")
    dw = [lw.kernel.variant for lw in c.lowered if lw.node.op == "DEPTHWISE_CONV_2D"]
    line = lines and ys is None  # the tiny scale's products are too large for a line
    assert dw == ["dsp-dw-direct-line" if line else "dsp-dw-direct-onnx"], \
        [lw.kernel.variant for lw in c.lowered]
    (lw,) = [lw for lw in c.lowered if lw.node.op == "DEPTHWISE_CONV_2D"]
    if not line:
        assert set(lw.kernel.consts["rq"].reshape(-1, 3, 4)[:, 2].ravel()) == \
            {1 if ys is None else 0}
    r = verify_model(p, get_target("cortex-m4"))
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)


def test_dsp_fc_onnx_with_scratch_where_it_fits(tmp_path):
    """A deep ONNX FC whose step leaves bytes dead (a wide input before it) takes the
    extended-input kernel with onnxruntime's epilogue, bit-exact."""
    p = tmp_path / "m.onnx"
    p.write_bytes(_qdq_gemm(np.random.default_rng(6900), batches=1, depth=64, units=12,
                            per_channel=True).SerializeToString())
    c = compile_model(p, get_target("cortex-m4"), "m")
    fc = [lw.kernel.variant for lw in c.lowered if lw.node.op == "FULLY_CONNECTED"]
    assert fc == ["dsp-fc-4u-ub-onnx"], [lw.kernel.variant for lw in c.lowered]
    r = verify_model(p, get_target("cortex-m4"))
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)


@pytest.mark.parametrize("seed,variant", [(0, "dsp-add-onnx"), (1, "dsp-add-onnx"),
                                          (0, "dsp-add-onnx-lut"), (1, "dsp-add-onnx-lut"),
                                          (0, "dsp-add-onnx-lin"), (3, "dsp-add-onnx-lin")])
def test_dsp_add_onnx_all_pairs_on_cortex_m4(tmp_path, seed, variant, monkeypatch):
    """QLinearAdd on the DSP kernels, every int8 pair (a, b) under QEMU, bit-exact with
    onnxruntime: the two multipliers where proven (dsp-add-onnx-lin), the integer tables with
    that form switched off (dsp-add-onnx-lut), and the table + fused multiply-add kernel with
    both switched off (dsp-add-onnx)."""
    import edgecc.verify as v
    import edgecc.lower.dsp.eltwise_onnx as dsp_add
    import edgecc.lower.dsp.near as dsp_near
    from test_onnx_numerics import ALL_PAIRS, _binary_model
    if variant != "dsp-add-onnx-lin":
        monkeypatch.setattr(dsp_near, "ADD_LINEAR", False)
    if variant == "dsp-add-onnx":
        monkeypatch.setattr(dsp_add.dsp_near, "add_kernel", lambda *a: None)
    p = tmp_path / "m.onnx"
    p.write_bytes(_binary_model("QLinearAdd", np.random.default_rng(seed)).SerializeToString())
    c = compile_model(p, get_target("cortex-m4"), "m")
    assert [lw.kernel.variant for lw in c.lowered] == [variant]
    monkeypatch.setattr(v, "seeded_frames",
                        lambda g, s, n: [[a.copy() for a in ALL_PAIRS] for _ in range(n)])
    r = verify_model(p, get_target("cortex-m4"))
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)


def test_dsp_add_onnx_lut_proof_is_exhaustive():
    """The integer form of QLinearAdd (dsp_add._onnx_add_lut) is either None or equal to the
    portable kernel's numpy reference on all 65536 pairs for random scales and zero points,
    emulating ec_dsp_add_lut_s8's arithmetic; and most scale sets are proven."""
    from edgecc.lower.dsp.eltwise_onnx import _onnx_add_lut
    rng = np.random.default_rng(7100)
    xs = np.arange(-128, 128, dtype=np.float64)
    proven = 0
    for _ in range(40):
        ra, rb = (np.float32(2.0 ** rng.uniform(-4, 2)) for _ in range(2))
        k = np.float32(rng.integers(-128, 128) - ra * rng.integers(-128, 128)
                       - rb * rng.integers(-128, 128))
        lo = int(rng.choice([-128, rng.integers(-128, 0)]))
        p = dict(ra=ra, rb=rb, k=k, act_min=lo, act_max=127)
        t = (xs * np.float64(rb) + np.float64(k)).astype(np.float32).astype(np.float64)[None, :]
        prod = xs[:, None] * np.float64(ra)
        lut = _onnx_add_lut(p, prod, t, xs)
        if lut is None:
            continue
        proven += 1
        m, n, e, ta, tb = lut
        s = ta.astype(np.int64)[:, None] + tb.astype(np.int64)[None, :]
        assert s.min() >= 0 and s.max() < 2 ** 31
        t_ = (n + ((s * m + 2 ** 31) >> 32) + (s >> 31)) >> e          # ec_dsp_rq
        got = np.clip(t_, lo, 127)
        v = (prod + t).astype(np.float32)                               # one rounding (FMA)
        want = np.clip(np.rint(np.clip(v, -32768, 32767)), lo, 127)
        assert (got == want).all()
    assert proven >= 30, proven


def _qdq_depthwise(rng, c: int, dm: int, h: int, w: int, stride: int, pads, relu: bool,
                   ys: float = 0.11, k: int = 3):
    """float NCHW input -> Q -> DQ -> depthwise Conv (group = c, c * dm filters k x k,
    per-channel int8 weights, int32 bias) [-> Relu] -> Q -> DQ: onnxruntime's quantize_static
    form."""
    from onnx import TensorProto, helper, numpy_helper
    m = c * dm
    xs, ws = np.float32(0.05), (rng.random(m) * 0.02 + 0.005).astype(np.float32)
    init = [numpy_helper.from_array(np.asarray(a), k) for k, a in [
        ("xs", xs), ("xz", np.int8(3)), ("ys", np.float32(ys)), ("yz", np.int8(-7)),
        ("w", rng.integers(-127, 128, size=(m, 1, k, k)).astype(np.int8)), ("ws", ws),
        ("wz", np.zeros(m, np.int8)), ("b", rng.integers(-500, 500, size=m).astype(np.int32)),
        ("bs", (xs * ws).astype(np.float32)), ("bz", np.zeros(m, np.int32))]]
    y = "ry" if relu else "cy"
    spec = [("QuantizeLinear", "x xs xz", "xq", {}), ("DequantizeLinear", "xq xs xz", "xd", {}),
            ("DequantizeLinear", "w ws wz", "wd", dict(axis=0)),
            ("DequantizeLinear", "b bs bz", "bd", dict(axis=0)),
            ("Conv", "xd wd bd", "cy", dict(pads=pads, strides=[stride, stride], group=c))]
    spec += [("Relu", "cy", "ry", {})] if relu else []
    spec += [("QuantizeLinear", f"{y} ys yz", "yq", {}), ("DequantizeLinear", "yq ys yz", "y", {})]
    nodes = [helper.make_node(op, ins.split(), [out], **a) for op, ins, out, a in spec]
    oh = (h + pads[0] + pads[2] - k) // stride + 1
    ow = (w + pads[1] + pads[3] - k) // stride + 1
    g = helper.make_graph(nodes, "t",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, w])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, m, oh, ow])],
                          init)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


# ONNX depthwise layers the in-place kernel cannot run (depth multipliers 2 and 3, 6 or 2
# channels): the planes kernel with onnxruntime's epilogue; 3x3 stride 1 / stride 2 and the
# general form (5x5), with and without the clamp (Relu), and a tiny output scale whose
# products pass 2^15.
PLANES_ONNX_CASES = [
    ("dsp-dw3x3-s1-onnx", dict(c=4, dm=2, h=7, w=9, stride=1, pads=[1, 1, 1, 1], relu=True)),
    ("dsp-dw3x3-s2-onnx", dict(c=6, dm=1, h=9, w=11, stride=2, pads=[1, 0, 1, 1], relu=False)),
    ("dsp-dw3x3-s1-onnx", dict(c=6, dm=1, h=5, w=8, stride=1, pads=[0, 1, 1, 0], relu=False,
                               ys=1e-5)),
    ("dsp-dw-general-onnx", dict(c=2, dm=3, h=8, w=9, stride=1, pads=[2, 1, 2, 2], relu=True,
                                 k=5)),
]


@pytest.mark.parametrize("case", range(len(PLANES_ONNX_CASES)))
def test_dsp_depthwise_planes_onnx_on_cortex_m4(case, tmp_path):
    variant, cfg = PLANES_ONNX_CASES[case]
    p = tmp_path / "m.onnx"
    p.write_bytes(_qdq_depthwise(np.random.default_rng(7200 + case), **cfg).SerializeToString())
    c = compile_model(p, get_target("cortex-m4"), "m")
    dw = [lw.kernel.variant for lw in c.lowered if lw.node.op == "DEPTHWISE_CONV_2D"]
    assert dw == [variant], [lw.kernel.variant for lw in c.lowered]
    r = verify_model(p, get_target("cortex-m4"))
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)


@pytest.mark.parametrize("seed,variant", [(0, "dsp-add-onnx-row-lin"), (1, "dsp-add-onnx-row-lin"),
                                          (2, "dsp-add-onnx-row-lin"), (0, "dsp-add-onnx-row"),
                                          (2, "dsp-add-onnx-row")])
def test_dsp_add_onnx_constant_row_on_cortex_m4(tmp_path, seed, variant, monkeypatch):
    """QLinearAdd of an activation [1, 16, 16, c] and a constant row [c] (a folded
    BatchNorm's shift): a's term linear (dsp-add-onnx-row-lin: no table), and with that form
    switched off the 256-entry table (dsp-add-onnx-row); every int8 value in every channel
    under QEMU, bit-exact with onnxruntime."""
    import edgecc.verify as v
    import edgecc.lower.dsp.eltwise_onnx as dsp_add
    from onnx import numpy_helper
    from test_onnx_numerics import _binary_model
    monkeypatch.setattr(dsp_add, "ROW_LINEAR", variant.endswith("-lin"))
    rng = np.random.default_rng(7300 + seed)
    c = (12, 32, 5)[seed]
    m = _binary_model("QLinearAdd", rng, b_shape=(c,), a_shape=(1, 16, 16, c))
    (b_in,) = [i for i in m.graph.input if i.name == "b"]
    m.graph.input.remove(b_in)
    m.graph.initializer.append(numpy_helper.from_array(
        rng.integers(-128, 128, size=c).astype(np.int8), "b"))
    p = tmp_path / "m.onnx"
    p.write_bytes(m.SerializeToString())
    comp = compile_model(p, get_target("cortex-m4"), "m")
    assert [lw.kernel.variant for lw in comp.lowered] == [variant]
    every = np.repeat(np.arange(-128, 128, dtype=np.int8), c).reshape(1, 16, 16, c)
    monkeypatch.setattr(v, "seeded_frames", lambda g, s, n: [[every.copy()] for _ in range(n)])
    r = verify_model(p, get_target("cortex-m4"))
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)


@pytest.mark.parametrize("seed", [0, 1])
def test_dsp_mul_onnx_all_pairs_on_cortex_m4(tmp_path, seed, monkeypatch):
    """QLinearMul of two same-shape activations on the DSP kernel (dsp-mul-onnx), every int8
    pair (a, b) under QEMU, bit-exact with onnxruntime."""
    import edgecc.verify as v
    from test_onnx_numerics import ALL_PAIRS, _binary_model
    p = tmp_path / "m.onnx"
    p.write_bytes(_binary_model("QLinearMul", np.random.default_rng(seed)).SerializeToString())
    c = compile_model(p, get_target("cortex-m4"), "m")
    assert [lw.kernel.variant for lw in c.lowered] == ["dsp-mul-onnx"]
    monkeypatch.setattr(v, "seeded_frames",
                        lambda g, s, n: [[a.copy() for a in ALL_PAIRS] for _ in range(n)])
    r = verify_model(p, get_target("cortex-m4"))
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)


@pytest.mark.parametrize("c", [48, 7])
def test_dsp_mul_onnx_row_on_cortex_m4(tmp_path, c):
    """QLinearMul of an activation [1, 16, 16, c] by an activation row [1, 1, 1, c] (a
    squeeze-and-excitation scale): dsp-mul-onnx with the row broadcast, 3 seeded frames,
    bit-exact with onnxruntime."""
    from test_onnx_numerics import _binary_model
    p = tmp_path / "m.onnx"
    p.write_bytes(_binary_model("QLinearMul", np.random.default_rng(7400 + c), b_shape=(1, 1, 1, c),
                                a_shape=(1, 16, 16, c)).SerializeToString())
    comp = compile_model(p, get_target("cortex-m4"), "m")
    assert [lw.kernel.variant for lw in comp.lowered] == ["dsp-mul-onnx"]
    assert comp.lowered[0].kernel.params["c"] == c
    r = verify_model(p, get_target("cortex-m4"), frames=3)
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)
