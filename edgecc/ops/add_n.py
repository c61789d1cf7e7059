"""ADD_N: y = x_0 + x_1 + ... + x_{k-1}, all of one shape; float32, int8 and int32 (TFLite's AddN).

Per element, a total starting at 0 adds the inputs in order: float32 rounds after each add (the
numpy reference sums sequentially to match), int32 wraps around as two's complement. int8 (all
inputs sharing one scale and zero point, as TFLite Micro requires) is TFLM's rescaled sum,
edgecc/ops/_sum8.py (which counts -zp_in once more, as TFLM does).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops import _sum8
from edgecc.ops._arith import const_inputs, same_types, scale32, wrap32, zp
from edgecc.ops._elementwise import same_as_input
from edgecc.ops._float import seq_sum


def float_or_int32(g: Graph, n: Node) -> bool:
    """inputs and output must be float32, int8 or int32"""
    return out_type(g, n).dtype in (DType.FLOAT32, DType.INT8, DType.INT32)


def int8_shared_quantization(g: Graph, n: Node) -> bool:
    """int8 inputs must share one scale and zero point (per tensor), and the output be quantized"""
    if out_type(g, n).dtype != DType.INT8:
        return True
    ts = [g.type(v) for v in n.inputs] + [out_type(g, n)]
    if any(t.q is None or t.q.per_channel for t in ts):
        return False
    return len({(float(scale32(t)), zp(t)) for t in ts[:-1]}) == 1


def same_shapes(g: Graph, n: Node) -> bool:
    """every input must have the output's shape (no broadcasting), and there must be at least one"""
    shape = tuple(out_type(g, n).shape)
    return len(n.inputs) >= 1 and all(tuple(g.type(v).shape) == shape for v in n.inputs)


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    if out_type(g, n).dtype == DType.INT8:
        p = _sum8.params(in_type(g, n), out_type(g, n))
        return [_sum8.output(wrap32(_sum8.scale_in(0, p) + sum(_sum8.scale_in(x, p) for x in ins)),
                             p)]
    if out_type(g, n).dtype == DType.INT32:
        return [wrap32(np.sum([np.asarray(x, np.int64) for x in ins], axis=0))]
    return [seq_sum(np.stack([np.asarray(x, np.float32) for x in ins], axis=-1))]


def lower(g: Graph, n: Node, target) -> Kernel:
    dt = out_type(g, n).dtype
    q = _sum8.params(in_type(g, n), out_type(g, n)) if dt == DType.INT8 else {}
    return Kernel("add_n.c.j2", params=dict(q, count=out_type(g, n).numel, ctype=dt.c,
                                            kind=dt.name.lower()),
                  consts=const_inputs(g, n))


OP = register(OpDef("ADD_N", same_as_input, reference, lower,
                    [float_or_int32, same_types, same_shapes, int8_shared_quantization],
                    dtypes="float32, int8, int32",
                    reference_oracle="TFLite Micro (float32, int8); LiteRT BUILTIN_REF (int32)",
                    inplace=((0, 0),)))  # y[i] is written after every x_k[i] is read
