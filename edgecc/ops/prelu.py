"""PRELU: y = x >= 0 ? x : alpha * x, alpha broadcast against x (rank <= 5); int8 and float32.

int8 (TFLite Micro's PreluPrepare): m1 = QuantizeMultiplier(s_in / s_out),
m2 = QuantizeMultiplier(s_in * s_alpha / s_out) (double). v = q - zp_in;
out = zp_out + (v >= 0 ? MBQM(v, m1) : MBQM(v * (a - zp_alpha), m2)), clamped to int8.
float32: x >= 0 ? x : x * alpha.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops import _arith as ew
from edgecc.ops._loops import loop_text
from edgecc.numerics.fixed_point import mbqm, quantize_multiplier


def supported_type(g: Graph, n: Node) -> bool:
    """input, alpha and output must all be int8 or all float32"""
    types = {in_type(g, n).dtype, in_type(g, n, 1).dtype, out_type(g, n).dtype}
    return len(types) == 1 and types <= {DType.INT8, DType.FLOAT32}


def alpha_broadcasts(g: Graph, n: Node) -> bool:
    """alpha must broadcast to the input's shape, which is the output's (rank <= 5)"""
    x, a = in_type(g, n).shape, in_type(g, n, 1).shape
    return (ew.broadcast_shape(x, a) == tuple(x) == tuple(out_type(g, n).shape)
            and len(x) <= 5)


def quant_params(g: Graph, n: Node) -> dict:
    si, sa, so = (float(ew.scale32(t)) for t in (in_type(g, n), in_type(g, n, 1), out_type(g, n)))
    m1, s1 = quantize_multiplier(si / so)
    m2, s2 = quantize_multiplier(si * sa / so)
    return dict(off0=-ew.in_zp(g, n, 0), off1=-ew.in_zp(g, n, 1), out_zp=ew.zp(out_type(g, n)),
                m1=m1, sh1=s1, m2=m2, sh2=s2)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    x, a = ins
    if x.dtype == np.float32:
        return [np.where(x >= 0, x, (x * a).astype(np.float32)).astype(np.float32)]
    p = quant_params(g, n)
    v = x.astype(np.int64) + p["off0"]
    av = a.astype(np.int64) + p["off1"]
    out = np.where(v >= 0, mbqm(v, p["m1"], p["sh1"]), mbqm(v * av, p["m2"], p["sh2"]))
    return [np.clip(out + p["out_zp"], -128, 127).astype(np.int8)]


def lower(g: Graph, n: Node, target) -> Kernel:
    dt = in_type(g, n).dtype
    params = dict(ew.loop_params(g, n), ctype=dt.c, kind=dt.name.lower())
    if dt == DType.INT8:
        params.update(quant_params(g, n))
    return Kernel("prelu.c.j2", params=params, consts=ew.const_inputs(g, n),
                  derived=loop_text(params))


OP = register(OpDef("PRELU", infer, reference, lower,
                    [supported_type, ew.per_tensor_quantized, alpha_broadcasts],
                    dtypes="int8, float32", inplace=((0, 0),)))
