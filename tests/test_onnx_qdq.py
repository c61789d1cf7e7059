"""QDQ groups around data movement, elementwise tables, reductions and MatMul of activations
(edgecc/frontends/onnx/qdq.py, edgecc/ops/lookup.py, edgecc/numerics/onnx_elementwise.py): the
imported graph's numpy reference against onnxruntime (int8 fusion allowed, the default
numerics) on seeded frames, without building C (tests/test_onnx_corpus.py builds and runs
the same models); and the one-line refusal of what stays unsupported.
"""
from __future__ import annotations

import numpy as np
import pytest

from edgecc.errors import UnsupportedModel
from edgecc.frontends.onnx import load_onnx
from edgecc.interp import run_graph
from edgecc.numerics.onnx_elementwise import function
from edgecc.numerics.qlinear import table_of
from edgecc.verify.onnx_float import output_steps
from edgecc.verify.onnx_ref import run_onnxruntime
from edgecc.verify.reference import seeded_frames

from onnx_corpus import EXACT, nets, qdq, quantizers
from onnx_corpus._make import Net, case_builder

CASES = {c.name: c for c in [*qdq.CASES, *quantizers.CASES, *nets.CASES]}
# the forms the user trial found failing first (Pad, ReduceMean, Neg), then by how common
REF = ["qdq_pad_constant", "qdq_pad_value", "qdq_pad_reflect", "qdq_pad_edge",
       "qdq_reduce_mean", "qdq_neg", "qdq_prelu", "qdq_slice", "qdq_split", "qdq_gather",
       "qdq_resize_nearest", "qdq_depth_to_space", "qdq_leaky_relu", "qdq_matmul_batch",
       "qdq_clip", "qdq_max_min", "qdq_sub", "qdq_div", "net_prelu_neg", "qs_qdq_u8", "qs_qdq_s8_nobias",
       "qs_vendor_float_w_pc", "qs_qop_s8_sym"]


@pytest.mark.parametrize("name", REF)
def test_reference_matches_onnxruntime(name, tmp_path):
    case = CASES[name]
    path = case.build(tmp_path)
    g = load_onnx(path)
    steps = output_steps(g)
    for frame in seeded_frames(g, 0, 2):
        env = run_graph(g, frame)
        ref = run_onnxruntime(path, frame)[0]
        for v, r, step in zip(g.outputs, ref, steps):
            got = np.asarray(env[v]).reshape(r.shape)
            if case.check == EXACT:
                assert np.array_equal(got, r), name
            else:  # at most one quantization step away
                assert np.abs(got.astype(np.float64) - r).max() <= 1.001 * step, name


def test_piecewise_linear_tables_are_exact():
    """Neg, Abs, LeakyRelu and PRelu tables equal the float32 formula quantized directly."""
    xs, xz, ys, yz = 0.05, -3, 0.04, 7
    v = (np.arange(-128, 128) - xz).astype(np.float32) * np.float32(xs)
    for f, direct in [(function("Neg", {}), -v), (function("Abs", {}), np.abs(v)),
                      (function("LeakyRelu", {"alpha": 0.1}),
                       np.where(v >= 0, v, v * np.float32(0.1))),
                      (function("PRelu", {}, 0.3), np.where(v < 0, v * np.float32(0.3), v))]:
        want = np.clip(np.rint(direct.astype(np.float32) / np.float32(ys)) + yz, -128, 127)
        assert np.array_equal(table_of(xs, xz, ys, yz, f), want.astype(np.int8))


def test_pow_of_two_activations_is_refused(tmp_path):
    def g(n: Net):
        x = n.input((1, 4, 6, 6))
        n.output(n.op("Pow", [x, n.conv(x, 4, 4)]))
    path = case_builder("pow2", g, extra_ops=("Pow",))(tmp_path)
    with pytest.raises(UnsupportedModel, match=r"node \d+ \(Pow .*one DequantizeLinear'd"):
        load_onnx(path)


def test_softmax_fuses_when_its_dequantize_is_shared(tmp_path):
    """quantizers.py's net: the Gemm's DequantizeLinear feeds a graph output and the Softmax;
    where int8 is allowed onnxruntime still runs QLinearSoftmax (it copies the DQ per node
    unit), so ortfuse must say fused; x86's default keeps the old one-reader rule."""
    from edgecc.frontends.onnx.ortfuse import fused_groups
    from edgecc.frontends.onnx.read import read_model
    m = read_model(CASES["qs_qdq_s8"].build(tmp_path))
    softmax = [i for i, n in enumerate(m.graph.node) if n.op_type == "Softmax"]
    assert set(softmax) <= set(fused_groups(m.graph, m.consts, m.dtypes, True))
    assert not set(softmax) & set(fused_groups(m.graph, m.consts, m.dtypes, False))
