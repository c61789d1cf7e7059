"""edgecc/numerics/ort_order.py (onnxruntime's float32 order for the QDQ groups it leaves unfused)
against onnxruntime's own intermediate tensors of tfl_pretrainedResnet_quant_qdq, value for
value, and frontends/onnx/ortfuse.py's `float_groups` against onnxruntime's optimized graph."""
from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np
import onnx
import onnxruntime as ort  # a reference extra: CI installs it, and a missing one fails here
import pytest
from onnx import helper, numpy_helper

from edgecc.frontends.onnx.ortfuse import float_groups
from edgecc.frontends.onnx.read import read_model
from edgecc.numerics import ort_order as of
from edgecc.options import CompileOptions
from test_onnx_frontend import onnx_model


# These tests are about --onnx-numerics x86-float (onnxruntime's float32 order throughout).
X86_FLOAT = CompileOptions(onnx_numerics="x86-float")


def test_onnx_numerics_x86_and_bad():
    """An unknown numerics is the user's error (exit 2), and the x86 numerics run the float
    groups' Convs and Gemm on the integer kernels that recompute near-tie outputs in
    onnxruntime's order (edgecc/ops/_ort_near.py), their Adds and AveragePool in its order."""
    from edgecc.compiler import compile_model
    from edgecc.errors import EdgeccError
    from edgecc.targets import get_target
    c = compile_model(onnx_model(RESNET), get_target("host"), "model",
                      CompileOptions(onnx_numerics="x86"))
    kinds = {(lw.node.op, lw.kernel.variant) for lw in c.lowered
             if lw.node.numerics.float_group}
    assert kinds == {("CONV_2D", "portable-ort-near"), ("FULLY_CONNECTED", "portable-ort-near"),
                     ("ADD", "portable-ort-float"), ("AVERAGE_POOL_2D", "portable-ort-float")}
    with pytest.raises(EdgeccError, match="--onnx-numerics"):
        compile_model(onnx_model(RESNET), get_target("host"), "model",
                      CompileOptions(onnx_numerics="float64"))

THREADS = 2  # the session's intra-op threads; the conv's summation slices depend on it
RESNET = "tfl_pretrainedResnet_quant_qdq"


def test_fma32_rounds_once():
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    libm.fmaf.restype = ctypes.c_float
    libm.fmaf.argtypes = [ctypes.c_float] * 3
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 4000)).astype(np.float32)
    c = (-(a.astype(np.float64) * b)).astype(np.float32)  # cancellation: the hard cases
    c[::2] = rng.standard_normal(2000).astype(np.float32)
    # ties of the float64 sum: a * b an exact float32 midpoint above c, plus a tiny remainder
    a[:4] = np.float32(1 + 2 ** -12)
    b[:4] = np.float32(1 + 2 ** -12)
    c[:4] = np.float32(2 ** -60)
    got = of.fma32(a, b, c)
    want = np.array([libm.fmaf(*map(float, t)) for t in zip(a, b, c)], np.float32)
    assert np.array_equal(got, want)


@pytest.fixture(scope="module")
def resnet_run():
    path = onnx_model(RESNET)
    m = onnx.load(str(path))
    g = m.graph
    consts = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    prod = {o: n for n in g.node for o in n.output}
    ops = [(i, n) for i, n in enumerate(g.node)
           if n.op_type in ("Conv", "Add", "AveragePool", "MatMul")]
    extra = []
    for _, n in ops:
        extra += [x for x in n.input if x in prod and prod[x].op_type == "DequantizeLinear"
                  and prod[x].input[0] not in consts] + [n.output[0]]
    for e in dict.fromkeys(extra):
        m.graph.output.append(onnx.ValueInfoProto(name=e))
    o = ort.SessionOptions()
    o.log_severity_level = 3
    o.intra_op_num_threads = THREADS
    s = ort.InferenceSession(m.SerializeToString(), o, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(7)
    runs = []
    for _ in range(2):
        x = rng.integers(-128, 128, (1, 32, 32, 3), dtype=np.int8)
        r = s.run(None, {s.get_inputs()[0].name: x})
        runs.append(dict(zip([v.name for v in s.get_outputs()], r)))
    return g, consts, prod, ops, runs


def _dq_const(consts, prod, name):
    d = prod[name]
    q, s = consts[d.input[0]], consts[d.input[1]]
    zp = consts[d.input[2]] if len(d.input) > 2 else np.zeros(1, np.int8)
    axis = next((a.i for a in d.attribute if a.name == "axis"), 1)
    if np.size(s) > 1:
        shape = [1] * q.ndim
        shape[axis] = -1
        s, zp = s.reshape(shape), np.asarray(zp).reshape(shape)
    return of.dequantize(q, zp, s)


def _slices(w, y, threads):
    return {k for *_, k in of.conv_segments(y.shape[2] * y.shape[3], w[0].size, len(w), threads)}


def test_emulation_matches_onnxruntime_float_nodes(resnet_run):
    g, consts, prod, ops, runs = resnet_run
    users = {x: n for n in g.node for x in n.input}
    checked = 0
    for r in runs:
        for _, n in ops:
            if n.op_type == "Conv":
                a = {at.name: helper.get_attribute_value(at) for at in n.attribute}
                w = _dq_const(consts, prod, n.input[1])
                b = _dq_const(consts, prod, n.input[2]).ravel() if len(n.input) > 2 else None
                p = a.get("pads", [0, 0, 0, 0])
                y = of.conv2d_nchw(r[n.input[0]], w, b, a.get("strides", [1, 1]),
                                   (p[0], p[1], p[2], p[3]), THREADS)
                want = r[n.output[0]]
            elif n.op_type == "MatMul":  # + its bias Add: one Gemm in onnxruntime
                add = users[n.output[0]]
                bias = _dq_const(consts, prod, add.input[1]).ravel()
                y = of.gemm_row(r[n.input[0]], _dq_const(consts, prod, n.input[1]), bias)
                want = r[add.output[0]].ravel() if add.output[0] in r else None
            elif n.op_type == "AveragePool":
                y = of.avg_pool_window(r[n.input[0]])
                want = r[n.output[0]].reshape(y.shape)
            else:
                if not all(x in r for x in n.input):
                    continue
                y = (r[n.input[0]] + r[n.input[1]]).astype(np.float32)
                want = r[n.output[0]]
            if want is None:
                continue
            assert np.array_equal(y, want), (n.op_type, n.name, int(np.sum(y != want)))
            checked += 1
            if n.op_type == "Conv" and _slices(w, want, 1) != _slices(w, want, THREADS):
                # the test tells orders apart: one thread's K slices give other float32 sums
                one = of.conv2d_nchw(r[n.input[0]], w, b, a.get("strides", [1, 1]),
                                     (p[0], p[1], p[2], p[3]), 1)
                assert not np.array_equal(one, want)
    assert checked >= 2 * 10


def test_conv_summation_slices():
    """The MlasConv segments and K slices of the model's float convolutions (2 threads)."""
    assert of.conv_segments(1024, 144, 16, 2) == [(0, 512, 128), (512, 512, 128)]
    assert of.conv_segments(64, 288, 64, 2) == [(0, 32, 512), (32, 32, 512)]
    assert of.conv_segments(1024, 27, 16, 1) == [(0, 1024, 32)]


def test_quantize_half_even():
    assert of.quantize(np.float32([2.5, 3.5, -2.5, 1e30]), 1.0, 0).tolist() == [2, 4, -2, 127]


def test_float_groups_match_onnxruntime_graph(tmp_path):
    """Which groups onnxruntime leaves in float32 in the resnet (the first convolution: int8 in
    and out, which x86 onnxruntime never fuses into QLinearConv)."""
    m = read_model(onnx_model(RESNET))
    got = {m.graph.node[i].name for i in float_groups(m.graph, m.consts, m.dtypes)}
    o = ort.SessionOptions()
    o.log_severity_level = 3
    o.optimized_model_filepath = str(tmp_path / "opt.onnx")
    ort.InferenceSession(str(onnx_model(RESNET)), o, providers=["CPUExecutionProvider"])
    names = {n.name for n in m.graph.node}
    real = set()
    for n in onnx.load(o.optimized_model_filepath).graph.node:
        if n.op_type in ("Conv", "Gemm", "Add", "AveragePool"):
            name = n.name.replace("_nchwc", "").replace("/MatMulAddFusion", "")
            assert name in names, name
            real.add(name)
    assert got == real
    assert len(real) == 10


def _fma_cases() -> np.ndarray:
    """(a, b, c) float32 triples with the hard cases of a once-rounded fma: cancellation, and
    exact products half an ulp from a float plus a remainder below the double sum's ulp."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 600)).astype(np.float32)
    c = (-(a.astype(np.float64) * b)).astype(np.float32)
    c[::2] = rng.standard_normal(300).astype(np.float32)
    t = np.float32(1 + 2 ** -12)
    a[:4], b[:4] = t, t
    c[:4] = np.float32([2.0 ** -60, -2.0 ** -60, 2.0 ** -40, -2.0 ** -45])
    a[4:8], b[4:8] = -t, t
    c[4:8] = np.float32([2.0 ** -60, -2.0 ** -60, 2.0 ** -40, -2.0 ** -45])
    return np.stack([a, b, c], 1)


@pytest.mark.parametrize("flags", [[], ["-mfma"]], ids=["double", "fma-instruction"])
def test_ec_fmaf_c_rounds_once(tmp_path, flags):
    """runtime_c/edgecc_rt.h ec_fmaf, its libm-free double path and gcc's instruction."""
    import subprocess
    from edgecc.resources import data_dir
    cases = _fma_cases()
    want = of.fma32(cases[:, 0], cases[:, 1], cases[:, 2])
    lit = ",".join(f"{float(v)!r}f" if np.isfinite(v) else "0.0f" for v in cases.ravel())
    src = tmp_path / "t.c"
    src.write_text('#include <stdio.h>\n#include "edgecc_rt.h"\n'
                   f"static const float t[] = {{{lit}}};\n"
                   "int main(void) { int i; for (i = 0; i < %d; ++i) "
                   'printf("%%a\\n", (double)ec_fmaf(t[3*i], t[3*i+1], t[3*i+2])); return 0; }\n'
                   % len(cases))
    exe = tmp_path / "t"
    subprocess.run(["gcc", "-std=c99", "-O2", "-ffp-contract=off", *flags,
                    f"-I{data_dir('runtime_c')}", str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
    got = np.array([float.fromhex(v) for v in out], np.float32)
    assert np.array_equal(got, want)


def _float_group_model(tmp_path, kind: str, shape: tuple):
    """An int8-in, int8-out QDQ Conv or MatMul + bias Add: x86 onnxruntime runs it in float32
    (float_groups), so edgecc's kernel must follow its order exactly."""
    from onnx import TensorProto
    from test_onnx_float_ops import _init, _qdq
    rng = np.random.default_rng(sum(shape))
    if kind == "conv":
        c, h, w, m, kh, kw, s, p, d = shape
        wq = rng.integers(-127, 128, (m, c, kh, kw), dtype=np.int8)
        ws = (rng.random(m) * 0.02 + 0.005).astype(np.float32)
        nodes = [helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
                 helper.make_node("DequantizeLinear", ["b", "bs"], ["bd"], axis=0),
                 helper.make_node("Conv", ["xd", "wd", "bd"], ["yf"], strides=[s, s],
                                  pads=[p, p, p, p], dilations=[d, d])]
        inits = [_init("w", wq), _init("ws", ws), _init("wz", np.zeros(m, np.int8)),
                 _init("b", rng.integers(-3000, 3000, m, dtype=np.int32)),
                 _init("bs", (ws * np.float32(0.05)).astype(np.float32))]
        oh, ow = ((h + 2 * p - d * (kh - 1) - 1) // s + 1, (w + 2 * p - d * (kw - 1) - 1) // s + 1)
        model = _qdq(nodes, [1, c, h, w], [1, m, oh, ow], inits, yq=(0.25, 3))
    else:
        k, n = shape
        nodes = [helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"]),
                 helper.make_node("DequantizeLinear", ["b", "bs"], ["bd"]),
                 helper.make_node("MatMul", ["xd", "wd"], ["mm"]),
                 helper.make_node("Add", ["mm", "bd"], ["yf"])]
        inits = [_init("w", rng.integers(-127, 128, (k, n), dtype=np.int8)),
                 _init("ws", np.float32(0.013)), _init("wz", np.int8(0)),
                 _init("b", rng.integers(-3000, 3000, n, dtype=np.int32)),
                 _init("bs", np.float32(0.013 * 0.05))]
        model = _qdq(nodes, [1, k], [1, n], inits, yq=(0.2, -2))
    assert model.graph.input[0].type.tensor_type.elem_type == TensorProto.INT8
    path = tmp_path / f"{kind}.onnx"
    onnx.save(model, str(path))
    return path


@pytest.mark.parametrize("kind,shape", [
    ("conv", (5, 9, 7, 11, 3, 3, 2, 1, 1)),   # stride 2, padding, 11 = 8 + 3 channels
    ("conv", (3, 8, 8, 8, 3, 3, 1, 2, 2)),    # dilation 2
    ("conv", (4, 5, 5, 9, 3, 3, 1, 0, 1)),    # 9 pixels: the last pass has one
    ("conv", (16, 16, 16, 9, 3, 3, 1, 1, 1)),  # K = 144 over 128-pixel segments: 128 + 16
    ("fc", (13, 9)), ("fc", (14, 5)), ("fc", (15, 4)), ("fc", (16, 7)), ("fc-int8w", (15, 9))])
def test_float_group_kernels_exact(tmp_path, monkeypatch, kind, shape):
    """Shapes (padding, stride, dilation, channel and depth remainders) end to end against
    onnxruntime. An int8 output rarely shows the summation order (a float32 rounding difference
    must land on a rounding tie); the order itself is what the tensor test above checks."""
    from edgecc.compiler import compile_model
    from edgecc.targets import get_target
    from edgecc.ops import _ort_float
    from edgecc.verify import verify_model
    if kind == "fc-int8w":  # the large-layer path: int8 weights dequantized in the kernel
        monkeypatch.setattr(_ort_float, "FLOAT_WEIGHT_BYTES", 0)
        kind = "fc"
    path = _float_group_model(tmp_path, kind, shape)
    c = compile_model(path, get_target("host"), "model", X86_FLOAT)
    assert [lw.node.numerics.float_group for lw in c.lowered
            if lw.node.op in ("CONV_2D", "FULLY_CONNECTED")] == [True]
    r = verify_model(path, get_target("host"), frames=4, seed=3, options=X86_FLOAT)
    assert r.bit_exact, r.as_json()


def test_float_conv_order_over_many_values(tmp_path):
    """A 3x3 conv of 16 channels over 32x32 (K = 144 in 128 + 16 slices on 512-pixel thread
    segments), 40 frames (655,360 values): enough for float32 order to show in the int8 output;
    summing each value in one slice instead puts 2 values a step off (measured)."""
    from edgecc.targets import get_target
    from edgecc.verify import verify_model
    path = _float_group_model(tmp_path, "conv", (16, 32, 32, 16, 3, 3, 1, 1, 1))
    r = verify_model(path, get_target("host"), frames=40, seed=1, options=X86_FLOAT)
    assert r.bit_exact, r.as_json()
