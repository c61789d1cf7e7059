"""LOG_SOFTMAX over the last axis, int8 -> int8 (output scale 16/256, zero point 127).

TFLite Micro's LogSoftmaxQuantized: (m, left) = PreprocessSoftmaxScaling(beta 1, s_in, 5 integer
bits) and a reverse multiplier QuantizeMultiplierSmallerThanOneExp(2**(31 - left) / m);
diff_min = -CalculateInputRadius(5, left). Per row: d = q - max; sum the exps of the diffs
>= diff_min (exp_on_negative_values of MBQM(d, m, left) in Q5.26, rescaled to Q12.19); log of the
sum in Q5.26 (log_x_for_x_greater_than_or_equal_to_1); out = RoundingDivideByPOT(MBQM(d) - log, 22)
+ 127 for d above an adjusted diff_min, else -128. The exp of every possible diff (-255..0) is a
256-entry int32 table built at compile time; the log is runtime_c/edgecc_log.h.
"""
from __future__ import annotations

import numpy as np

from edgecc.numerics.gemmlowp import (calculate_input_radius, count_leading_zeros32,
                               exp_on_negative_values, one_over_one_plus_x_for_x_in_0_1,
                               preprocess_softmax_scaling, rescale, rounding_half_sum, sat_shl)
from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops import _arith as ew
from edgecc.ops import _float_act
from edgecc.ops._float import twin
from edgecc.numerics.fixed_point import (INT32_MAX, INT32_MIN, mbqm,
                                         quantize_multiplier_smaller_than_one_exp, rdbpot, srdhm,
                                         wrap32)

IN_BITS, ACC_BITS, OUT_BITS = 5, 12, 4


def log_x_ge_1(x, in_bits: int, out_bits: int) -> np.ndarray:
    """TFLite log_x_for_x_greater_than_or_equal_to_1 on FixedPoint<int32, in_bits> raws."""
    x = np.asarray(x, dtype=np.int64)
    acc = out_bits + 1
    quarter = rdbpot(536870912, acc)
    sat = lambda v: np.clip(v, INT32_MIN, INT32_MAX)  # noqa: E731
    hp1 = count_leading_zeros32(x)
    r_a = np.array([int(sat_shl(int(srdhm(int(sat_shl(int(v), int(h) - 1)), 1518500250)), 1))
                    for v, h in zip(x.ravel(), hp1.ravel())]).reshape(x.shape)
    za = sat(np.array([int(sat_shl(int(in_bits - h), 31 - acc)) for h in hp1.ravel()])
             .reshape(x.shape) + quarter)
    z_b = srdhm(x, 1518500250)
    zbh = count_leading_zeros32(z_b) - 1
    r_b = np.array([int(sat_shl(int(v), int(h))) for v, h in zip(x.ravel(), zbh.ravel())]
                   ).reshape(x.shape)
    zb = sat(np.array([int(sat_shl(int(in_bits - h), 31 - acc)) for h in zbh.ravel()])
             .reshape(x.shape) - quarter)
    r = np.minimum(r_a, r_b)
    z_adj = np.maximum(za, zb)
    p = rounding_half_sum(r, 1805811301)
    q = wrap32(r - 1805811301)
    q = wrap32(q + q)
    sq = srdhm(q, q)
    num = wrap32(srdhm(q, r) + srdhm(srdhm(q, sq), 117049297))
    den = wrap32(srdhm(p, wrap32(wrap32(1057819769 + q) + srdhm(127690142, sq)))
                  + srdhm(638450708, q))
    total = wrap32(srdhm(z_adj, 1488522236)
                    + srdhm(rdbpot(num, acc), one_over_one_plus_x_for_x_in_0_1(den)))
    return rescale(total, acc, out_bits)


def params(g: Graph, n: Node) -> dict:
    m, left = preprocess_softmax_scaling(1.0, float(ew.scale32(in_type(g, n))), IN_BITS)
    rev_div, rev_shift = quantize_multiplier_smaller_than_one_exp((1 << (31 - left)) / float(m))
    return dict(mult=m, left=left, rev_div=rev_div, rev_shift=rev_shift,
                diff_min=-calculate_input_radius(IN_BITS, left))


def exp_table(p: dict) -> np.ndarray:
    """Rescale<12>(exp(MBQM(d))) for d = -255 .. 0 (index d + 255); 0 below diff_min."""
    d = np.arange(-255, 1, dtype=np.int64)
    ok = d >= p["diff_min"]
    e = rdbpot(exp_on_negative_values(mbqm(np.where(ok, d, 0), p["mult"], p["left"]), IN_BITS),
               ACC_BITS)
    return np.where(ok, e, 0)


def output_quantization(g: Graph, n: Node) -> bool:
    """input and output must be int8; the output must have scale 16/256 and zero point 127"""
    y = out_type(g, n)
    return (in_type(g, n).dtype == DType.INT8 and y.dtype == DType.INT8
            and float(ew.scale32(y)) == 16.0 / 256 and ew.zp(y) == 127)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    p = params(g, n)
    table = exp_table(p)
    depth = in_type(g, n).shape[-1]
    x = ins[0].astype(np.int64).reshape(-1, depth)
    out = np.empty(x.shape, np.int8)
    for r, row in enumerate(x):
        d = row - row.max()
        total = int(wrap32(table[d + 255].sum()))
        log_sum = int(log_x_ge_1(total, ACC_BITS, IN_BITS))
        adj = max(p["diff_min"] - 1,
                  int(mbqm(int(wrap32(log_sum + INT32_MIN)), p["rev_div"], p["rev_shift"])))
        v = rdbpot(wrap32(mbqm(d, p["mult"], p["left"]) - log_sum), 31 - IN_BITS - OUT_BITS) + 127
        out[r] = np.where(d > adj, np.clip(v, -128, 127), -128)
    return [out.reshape(in_type(g, n).shape)]


def lower(g: Graph, n: Node, target) -> Kernel:
    p = params(g, n)
    depth = in_type(g, n).shape[-1]
    return Kernel("log_softmax.c.j2",
                  params=dict(p, rows=in_type(g, n).numel // depth, depth=depth,
                              out_shift=31 - IN_BITS - OUT_BITS),
                  consts=dict(exp=exp_table(p).astype(np.int32)),
                  derived=dict(below_diff_min=p["diff_min"] - 1))


OP = register(OpDef("LOG_SOFTMAX", infer, reference, lower,
                    [output_quantization, ew.per_tensor_quantized], dtypes="int8"))
twin(OP, _float_act.LOG_SOFTMAX)  # float32: edgecc/ops/_float_act.py
