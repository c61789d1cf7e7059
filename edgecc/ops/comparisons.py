"""EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL: bool output, numpy broadcasting.

One module for the family: the six differ only in the C operator. int8 inputs are compared after
TFLite's rescaling (ComparisonsPrepare: left shift 8, each input's scale as a multiplier smaller
than one): x_k = MBQM_<1((q_k - zp_k) * 256, m_k), so inputs with different scales compare by real
value. int16/int32/int64/float32 (and bool for (NOT_)EQUAL) compare raw values.
"""
from __future__ import annotations

import operator

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops import _arith as ew
from edgecc.ops._loops import loop_text
from edgecc.numerics.fixed_point import mbqm_smaller_than_one, quantize_multiplier_smaller_than_one_exp

OPS = {"EQUAL": ("==", operator.eq), "NOT_EQUAL": ("!=", operator.ne),
       "LESS": ("<", operator.lt), "LESS_EQUAL": ("<=", operator.le),
       "GREATER": (">", operator.gt), "GREATER_EQUAL": (">=", operator.ge)}
LEFT_SHIFT = 8


def supported_types(g: Graph, n: Node) -> bool:
    """inputs must share one type (int8, int16, int32, int64, float32; bool for (NOT_)EQUAL) and the output must be bool"""
    t = in_type(g, n).dtype
    ok = {DType.INT8, DType.INT16, DType.INT32, DType.INT64, DType.FLOAT32}
    if n.op in ("EQUAL", "NOT_EQUAL"):
        ok.add(DType.BOOL)
    return t in ok and in_type(g, n, 1).dtype == t and out_type(g, n).dtype == DType.BOOL


def int8_scales_below_one(g: Graph, n: Node) -> bool:
    """int8 input scales must be below 1 (TFLite rescales with QuantizeMultiplierSmallerThanOneExp)"""
    if in_type(g, n).dtype != DType.INT8:
        return True
    return all(0 < ew.scale32(in_type(g, n, i)) < 1 for i in (0, 1))


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return ew.infer_broadcast(g, n, DType.BOOL)


def _scaled(g: Graph, n: Node, i: int, q: np.ndarray) -> np.ndarray:
    m, s = quantize_multiplier_smaller_than_one_exp(float(ew.scale32(in_type(g, n, i))))
    return mbqm_smaller_than_one((q.astype(np.int64) - ew.in_zp(g, n, i)) << LEFT_SHIFT, m, s)


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    fn = OPS[n.op][1]
    a, b = ins
    if in_type(g, n).dtype == DType.INT8:
        a, b = _scaled(g, n, 0, a), _scaled(g, n, 1, b)
    return [np.asarray(fn(a, b), dtype=bool)]


def lower(g: Graph, n: Node, target) -> Kernel:
    t = in_type(g, n).dtype
    params = dict(ew.loop_params(g, n), ctype=t.c, cmp=OPS[n.op][0], scaled=t == DType.INT8)
    if t == DType.INT8:
        for i in (0, 1):
            m, s = quantize_multiplier_smaller_than_one_exp(float(ew.scale32(in_type(g, n, i))))
            params.update({f"off{i}": -ew.in_zp(g, n, i), f"m{i}": m, f"sh{i}": s})
        params["left"] = 1 << LEFT_SHIFT
    return Kernel("comparison.c.j2", params=params, consts=ew.const_inputs(g, n),
                  derived=dict(loop_text(params), compare="scaled" if params["scaled"] else "raw"))


for _name in OPS:
    register(OpDef(_name, infer, reference, lower,
                   [supported_types, ew.per_tensor_quantized, ew.shapes_broadcast,
                    ew.rank_at_most_5, int8_scales_below_one],
                   dtypes="int8 (rescaled), int16, int32, int64, float32 -> bool"
                   + ("; bool" if _name in ("EQUAL", "NOT_EQUAL") else ""),
                   inplace=((0, 0), (0, 1))))  # y[i] written after a[i], b[i] are read
