"""SignalWindow (TFLite Micro's signal library): y = saturate_int16((int32(x) * w) >> shift), the
int16 weights w applied to each row of the input's last axis (arithmetic shift, floor).

Inputs (x int16, any rank >= 1; w int16 constant, 1-D, the last axis' length); option `shift`.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, const, in_type, register
from edgecc.ops._signal import last_dim, opt, signal_op, types_are


def constant_weights(g: Graph, n: Node) -> bool:
    """the weights must be a constant 1-D tensor as long as the input's last axis, shift 0..31"""
    w = const(g, n, 1) if len(n.inputs) > 1 else None
    return (w is not None and w.ndim == 1 and w.size == last_dim(g, n)
            and 0 <= opt(n, "shift") <= 31)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, DType.INT16)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    raw = (ins[0].astype(np.int32) * ins[1].astype(np.int32)) >> opt(n, "shift")
    return [np.clip(raw, -32768, 32767).astype(np.int16)]


def lower(g: Graph, n: Node, target) -> Kernel:
    size = last_dim(g, n)
    return Kernel("signal_window.c.j2",
                  params=dict(rows=in_type(g, n).numel // size, size=size, shift=opt(n, "shift")),
                  consts=dict(w=const(g, n, 1).astype(np.int16)))


OP = register(signal_op("SignalWindow", infer, reference, lower,
                        [types_are((DType.INT16, DType.INT16), (DType.INT16,)), constant_weights],
                        dtypes="int16 (int16 weights)", inplace=((0, 0),)))
