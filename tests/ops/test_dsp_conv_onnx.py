"""The Cortex-M DSP convolution with ONNX numerics' epilogue (ec_dsp_conv_2d_6px_onnx_s8, and
ec_dsp_conv_2d_6px_fixed_s8 with the proven integer lines), under
QEMU, bit-exact with onnxruntime: QLinearConv layers whose scales make many products exact ties
(x_scale * w_scale / y_scale a power of two: round half to even is exercised) and general ones,
with and without a fused clamp; and the same body with TFLite's epilogue keeps its speed."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from edgecc.compiler import compile_model
from edgecc.targets import get_target
from edgecc.verify import verify_model

pytestmark = pytest.mark.qemu


def _qlinearconv(rng, c: int, oc: int, k: int, hw: int, pad: int, tie: bool, relu: bool,
                 per_channel: bool) -> onnx.ModelProto:
    xs, ys = np.float32(0.05), np.float32(0.1)
    if tie:  # x_scale * w_scale / y_scale = 2^-3, 2^-4 ...: half the outputs land on .5
        ws = np.float32(2.0) ** -rng.integers(2, 6, oc if per_channel else 1).astype(np.float32)
    else:
        ws = rng.uniform(0.002, 0.02, oc if per_channel else 1).astype(np.float32)
    w = rng.integers(-127, 128, (oc, c, k, k)).astype(np.int8)
    bias = rng.integers(-3000, 3000, oc).astype(np.int32)
    xz, yz = np.int8(rng.integers(-20, 20)), np.int8(-128 if relu else rng.integers(-20, 20))
    inits = [numpy_helper.from_array(np.array(v), nm) for nm, v in
             (("xs", xs), ("xz", xz), ("ws", ws if per_channel else ws[0]),
              ("wz", np.zeros(oc, np.int8) if per_channel else np.int8(0)), ("ys", ys),
              ("yz", yz), ("w", w), ("b", bias))]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                            ["y"], pads=[pad] * 4, kernel_shape=[k, k])
    out = hw + 2 * pad - k + 1
    g = helper.make_graph([node], "t",
                          [helper.make_tensor_value_info("x", TensorProto.INT8, [1, c, hw, hw])],
                          [helper.make_tensor_value_info("y", TensorProto.INT8,
                                                         [1, oc, out, out])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


# (c, oc, k, hw, pad, tie, relu, per_channel): 1x1 in place, 3x3 padded (gathered), a partial
# last block of pixels (5x5 = 25 pixels), per-tensor weights.
CASES = [
    (16, 8, 1, 5, 0, True, False, True),
    (8, 12, 3, 6, 1, True, True, True),
    (4, 5, 3, 7, 0, False, False, True),
    (3, 6, 3, 7, 1, False, True, False),
]


@pytest.mark.parametrize("lines", [False, True])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_dsp_conv_onnx_epilogue_bit_exact(tmp_path, monkeypatch, case, lines):
    """Both epilogues: the float32 one, and the proven integer lines (edgecc/numerics/qlinear.py
    fixed_epilogue) wherever a channel has one. The tie cases have none: exact ties rounded half
    to even alternate between rounding down and up, which no line does."""
    from edgecc.numerics import qlinear as _onnx_rq
    monkeypatch.setattr(_onnx_rq, "LINES", lines)
    p = tmp_path / "m.onnx"
    p.write_bytes(_qlinearconv(np.random.default_rng(60 + case), *CASES[case]).SerializeToString())
    c = compile_model(p, get_target("cortex-m4"), "m")
    convs = [lw for lw in c.lowered if lw.node.op == "CONV_2D"]
    want = "fixed" if lines and not CASES[case][5] else "onnx"
    assert [lw.kernel.params["fn"] for lw in convs] == [f"ec_dsp_conv_2d_6px_{want}_s8"], \
        [lw.kernel.reason for lw in c.lowered]
    for seed in (0, 1):
        r = verify_model(p, get_target("cortex-m4"), seed=seed)
        assert r.bit_exact, r.as_json()
