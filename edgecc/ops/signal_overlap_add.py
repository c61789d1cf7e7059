"""SignalOverlapAdd (TFLite Micro's signal library): overlap-adds frames back into a signal
(stateful), int16 (saturating) or float32.

Input [..., n_frames, frame_size]; output [..., n_frames * frame_step]; option frame_step (and T).
State per row: a frame_size buffer, zeros after a reset. Per frame: buffer += frame (int16: the
int32 sum saturated to int16; float32: one float add), the output takes the buffer's first
frame_step values, the buffer moves left by frame_step and its tail becomes 0.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, in_type, register
from edgecc.ops._signal import opt, signal_op

STATE = 1
TYPES = (DType.INT16, DType.FLOAT32)


def _geometry(shape: tuple[int, ...]) -> tuple[int, int, int]:
    """(rows, frames, frame_size)."""
    size, frames = int(shape[-1]), int(shape[-2])
    return int(np.prod(shape, dtype=np.int64)) // max(size * frames, 1), frames, size


def supported(g: Graph, n: Node) -> bool:
    """input and output must both be int16 or both float32, the input at least 2-D, 1 <= frame_step <= frame_size"""
    x, y = in_type(g, n), g.type(n.outputs[0])
    return (x.dtype == y.dtype and x.dtype in TYPES and len(x.shape) >= 2
            and 1 <= opt(n, "frame_step") <= int(x.shape[-1]))


def state(attrs: dict, ins: list[TensorType]) -> tuple[tuple[int, ...], np.dtype] | None:
    if not ins or len(ins[0].shape) < 2 or ins[0].dtype not in TYPES:
        return None
    rows, _, size = _geometry(ins[0].shape)
    return (rows, size), ins[0].dtype.np


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    shape = in_type(g, n).shape
    return [TensorType((*shape[:-2], int(shape[-2]) * opt(n, "frame_step")), in_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    rows, frames, size = _geometry(in_type(g, n).shape)
    step, dt = opt(n, "frame_step"), in_type(g, n).dtype
    x = ins[0].reshape(rows, frames, size)
    buf = ins[STATE].copy()
    y = np.zeros((rows, frames, step), dt.np)
    for k in range(frames):
        if dt == DType.INT16:
            buf = np.clip(buf.astype(np.int32) + x[:, k], -32768, 32767).astype(np.int16)
        else:
            buf = (buf + x[:, k]).astype(np.float32)
        y[:, k] = buf[:, :step]
        buf = np.concatenate([buf[:, step:], np.zeros((rows, step), dt.np)], axis=1)
    return [y.reshape(g.type(n.outputs[0]).shape), buf]


def lower(g: Graph, n: Node, target) -> Kernel:
    rows, frames, size = _geometry(in_type(g, n).shape)
    dt, step = in_type(g, n).dtype, opt(n, "frame_step")
    add = ("{ const int32_t v = (int32_t)buf[i] + x[i]; "
           "buf[i] = (int16_t)(v < -32768 ? -32768 : (v > 32767 ? 32767 : v)); }"
           if dt == DType.INT16 else "buf[i] += x[i];")
    return Kernel("signal_overlap_add.c.j2", variant=dt.value[0],
                  params=dict(rows=rows, frames=frames, size=size, step=step, ctype=dt.c,
                              step_bytes=step * dt.size, rest=size - step,
                              rest_bytes=(size - step) * dt.size),
                  derived=dict(add=add))


OP = register(signal_op("SignalOverlapAdd", infer, reference, lower, [supported],
                        dtypes="int16 (saturating), float32", state=state, updates=(STATE,)))
