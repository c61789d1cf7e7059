"""ADD, int8 or int16, with TFLite's input rescaling and numpy-style broadcasting.

TFLite Micro (CalculateOpDataAdd + reference_integer_ops::AddFunc): both inputs are brought to a
common scale before the sum. With twice_max = 2 * max(s1, s2) (the float max, then double):
input multipliers s_i / twice_max and output multiplier twice_max / (2**20 * s_out), each
quantized with QuantizeMultiplierSmallerThanOneExp. Per element:
    v_i = (x_i - zp_i) * 2**20
    r_i = RoundingDivideByPOT(SRDHM(v_i, m_i), -shift_i)
    y   = RoundingDivideByPOT(SRDHM(r_1 + r_2, m_out), -shift_out) + zp_out, clamped to the
          fused activation range.
Broadcasting follows numpy (TFLM's BroadcastAdd6DSlow applies the same element function).
int16 (TFLM calls reference_ops::Add with pot_scale false, i.e. the same general path): the
inputs are scaled up by 2**15 instead of 2**20, everything else as above.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, const, in_type, operand, out_type, register
from edgecc.ops._conv_common import act_range, supported_activation
from edgecc.ops import _float_act
from edgecc.ops._float import twin
from edgecc.numerics.fixed_point import mbqm_smaller_than_one, quantize_multiplier

LEFT_SHIFT = 20  # int8 inputs
LEFT_SHIFT_INT16 = 15  # int16 inputs: (2**16 - 1) * 2**15 still fits int32
MAX_DIMS = 4  # loops in the template after collapsing dimensions


def int8_tensors(g: Graph, n: Node) -> bool:
    """both inputs and the output must be int8, or all int16, with quantization parameters"""
    ts = [in_type(g, n, 0), in_type(g, n, 1), out_type(g, n)]
    return (all(t.q is not None for t in ts)
            and any(all(t.dtype == d for t in ts) for d in (DType.INT8, DType.INT16)))


def _left_shift(g: Graph, n: Node) -> int:
    return LEFT_SHIFT_INT16 if out_type(g, n).dtype == DType.INT16 else LEFT_SHIFT


def per_tensor(g: Graph, n: Node) -> bool:
    """inputs and output must be quantized per tensor"""
    return not any(t.q.per_channel for t in (in_type(g, n, 0), in_type(g, n, 1), out_type(g, n)))


def broadcastable(g: Graph, n: Node) -> bool:
    """input shapes must be equal or broadcastable (numpy rules)"""
    try:
        np.broadcast_shapes(in_type(g, n, 0).shape, in_type(g, n, 1).shape)
    except ValueError:
        return False
    return True


def collapsible(g: Graph, n: Node) -> bool:
    """the broadcast pattern must collapse to at most 4 dimensions"""
    return len(_loops(g, n)[0]) <= MAX_DIMS


def multipliers_in_range(g: Graph, n: Node) -> bool:
    """scales must give an output multiplier below 1 (TFLite's QuantizeMultiplierSmallerThanOneExp)"""
    _, _, real_out = _real_multipliers(g, n)
    return 0.0 < real_out < 1.0


def _real_multipliers(g: Graph, n: Node) -> tuple[float, float, float]:
    s1 = np.float32(in_type(g, n, 0).q.scale[0])
    s2 = np.float32(in_type(g, n, 1).q.scale[0])
    so = float(np.float32(out_type(g, n).q.scale[0]))
    twice_max = 2.0 * float(max(s1, s2))
    return (float(s1) / twice_max, float(s2) / twice_max,
            twice_max / (float(1 << _left_shift(g, n)) * so))


def add_quant(g: Graph, n: Node) -> dict:
    r1, r2, ro = _real_multipliers(g, n)
    (m1, sh1), (m2, sh2), (mo, sho) = (quantize_multiplier(r) for r in (r1, r2, ro))
    lo, hi = act_range(g, n)
    return dict(in1_off=-int(in_type(g, n, 0).q.zero_point[0]),
                in2_off=-int(in_type(g, n, 1).q.zero_point[0]),
                out_zp=int(out_type(g, n).q.zero_point[0]), left_mult=1 << _left_shift(g, n),
                m1=m1, s1=sh1, m2=m2, s2=sh2, mo=mo, so=sho, act_min=lo, act_max=hi)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    shape = np.broadcast_shapes(in_type(g, n, 0).shape, in_type(g, n, 1).shape)
    return [TensorType(tuple(shape), out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    if n.numerics.float_group:  # onnxruntime's float32 group: edgecc/ops/_ort_float.py
        from edgecc.ops._ort_float import reference as ort_reference
        return ort_reference(g, n, ins)
    if n.numerics.qlinear:  # onnxruntime's QLinearAdd: edgecc/ops/_onnx_elt.py
        from edgecc.ops._onnx_elt import reference_add
        return reference_add(g, n, ins)
    q = add_quant(g, n)
    a, b = (np.asarray(x).astype(np.int64) for x in ins[:2])
    a, b = np.broadcast_arrays(a + q["in1_off"], b + q["in2_off"])
    ra = mbqm_smaller_than_one(a * q["left_mult"], q["m1"], q["s1"])
    rb = mbqm_smaller_than_one(b * q["left_mult"], q["m2"], q["s2"])
    y = mbqm_smaller_than_one(ra + rb, q["mo"], q["so"]) + q["out_zp"]
    return [np.clip(y, q["act_min"], q["act_max"]).astype(out_type(g, n).dtype.np)]


def _loops(g: Graph, n: Node) -> tuple[list[int], list[int], list[int]]:
    """Output loop extents and each input's element stride per loop, with adjacent dimensions
    merged wherever both inputs walk them contiguously (so an equal-shape ADD is one flat loop)."""
    sa, sb = in_type(g, n, 0).shape, in_type(g, n, 1).shape
    out = tuple(np.broadcast_shapes(sa, sb))
    rank = len(out)

    def strides(shape: tuple[int, ...]) -> list[int]:
        shape = (1,) * (rank - len(shape)) + tuple(shape)
        st, acc = [0] * rank, 1
        for i in reversed(range(rank)):
            st[i] = 0 if shape[i] == 1 else acc
            acc *= shape[i]
        return st

    st_a, st_b = strides(sa), strides(sb)
    dims = [(d, x, y) for d, x, y in zip(out, st_a, st_b) if d != 1]
    merged: list[tuple[int, int, int]] = []
    for d, x, y in dims:
        if merged:
            pd, px, py = merged[-1]
            if px == x * d and py == y * d:  # the outer dim continues the inner one for both
                merged[-1] = (pd * d, x, y)
                continue
        merged.append((d, x, y))
    if not merged:
        merged = [(1, 0, 0)]
    return [m[0] for m in merged], [m[1] for m in merged], [m[2] for m in merged]


def lower(g: Graph, n: Node, target) -> Kernel:
    if n.numerics.float_group:  # onnxruntime's float32 group: edgecc/ops/_ort_float.py
        from edgecc.ops._ort_float import lower as ort_lower
        return ort_lower(g, n, target)
    """The portable kernel (the optimized ones are edgecc/lower/'s tables)."""
    if n.numerics.qlinear:
        from edgecc.ops._onnx_elt import lower_add
        return lower_add(g, n, target)
    ext, st_a, st_b = _loops(g, n)
    pad = MAX_DIMS - len(ext)
    params = dict(add_quant(g, n), ext=[1] * pad + ext, sa=[0] * pad + st_a, sb=[0] * pad + st_b,
                  ctype=out_type(g, n).dtype.c, left_shift=_left_shift(g, n))
    consts = {}
    for key, i in (("a", 0), ("b", 1)):
        data = const(g, n, i)
        params[f"{key}_const"] = data is not None
        if data is not None:  # e.g. a constant bias added to an activation
            consts[key] = np.ascontiguousarray(data).astype(out_type(g, n).dtype.np)
    return Kernel("add.c.j2", params=params, consts=consts,
                  derived=dict(a_operand=operand(params["a_const"]),
                               b_operand=operand(params["b_const"])))


OP = register(OpDef(
    "ADD", infer, reference, lower,
    [int8_tensors, per_tensor, broadcastable, collapsible, multipliers_in_range,
     supported_activation],
    dtypes="int8 + int8 -> int8, int16 + int16 -> int16 (broadcast)",
    inplace=((0, 0), (0, 1))))  # y[i] is written after a[i], b[i] are read (full-shape input)
twin(OP, _float_act.ADD)  # float32: edgecc/ops/_float_act.py
