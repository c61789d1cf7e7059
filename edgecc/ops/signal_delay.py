"""SignalDelay (TFLite Micro's signal library): delays each row of the input's last axis by
delay_length samples across runs (stateful).

Input and output int16 of one shape [..., frame]. State (TFLite Micro's circular buffer per row):
the row's last delay_length samples, zeros after a reset. Output = (state, x) [:frame]; the state
becomes (state, x) [frame:].
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, in_type, register
from edgecc.ops._signal import opt, signal_op, types_are

STATE = 1


def _rows(shape: tuple[int, ...]) -> tuple[int, int]:
    frame = int(shape[-1]) if shape else 1
    return int(np.prod(shape, dtype=np.int64)) // max(frame, 1), frame


def delay_positive(g: Graph, n: Node) -> bool:
    """delay_length must be positive and the output the input's shape"""
    return opt(n, "delay_length") >= 1 and g.type(n.outputs[0]).shape == in_type(g, n).shape


def state(attrs: dict, ins: list[TensorType]) -> tuple[tuple[int, ...], np.dtype] | None:
    d = attrs.get("delay_length")
    if not ins or not isinstance(d, int) or d < 1:
        return None
    return (_rows(ins[0].shape)[0], d), np.dtype(np.int16)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, DType.INT16)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    rows, frame = _rows(in_type(g, n).shape)
    both = np.concatenate([ins[STATE], ins[0].reshape(rows, frame)], axis=1)
    return [both[:, :frame].reshape(ins[0].shape).copy(), both[:, frame:].copy()]


def lower(g: Graph, n: Node, target) -> Kernel:
    rows, frame = _rows(in_type(g, n).shape)
    d = opt(n, "delay_length")
    return Kernel("signal_delay.c.j2",
                  params=dict(rows=rows, frame=frame, delay=d,
                              direct=min(d, frame), from_x=max(frame - d, 0),
                              kept=max(d - frame, 0), x_at=frame - d))


OP = register(signal_op("SignalDelay", infer, reference, lower,
                        [types_are((DType.INT16,), (DType.INT16,)), delay_positive],
                        dtypes="int16", state=state, updates=(STATE,)))
