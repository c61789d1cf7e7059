"""SignalFramer (TFLite Micro's signal library): cuts each row of the input's last axis, frame_step
samples per step, into overlapping frames of frame_size samples.

Input x int16 [..., n * frame_step]; outputs y int16 [..., n, frame_size] and a bool scalar
`valid`. State (TFLite Micro's circular buffer, one per row): the row's last frame_size -
frame_step samples, zeros after a reset (`prefill`). Step k's frame is the state followed by the
step's frame_step new samples; the state becomes that frame's last frame_size - frame_step.
Supported where every frame is complete, so `valid` is always true: prefill set, or frame_size
equal to frame_step (no overlap). Without prefill TFLite Micro leaves the output unwritten until
enough samples arrived, which no generated code can reproduce.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, in_type, out_type, register
from edgecc.ops._signal import flag, last_dim, opt, signal_op, types_are

STATE = 1  # the state input the importer adds (OpDef.state)


def _geometry(n: Node, shape: tuple[int, ...]) -> tuple[int, int, int, int, int]:
    """(rows, frames per run, frame_size, frame_step, state samples per row)."""
    size, step = opt(n, "frame_size"), opt(n, "frame_step")
    inner = int(shape[-1]) if shape else 1
    rows = int(np.prod(shape[:-1], dtype=np.int64)) if len(shape) > 1 else 1
    return rows, inner // max(step, 1), size, step, size - step


def framing(g: Graph, n: Node) -> bool:
    """frame_step must be positive and divide the input's last axis, frame_size >= frame_step, and prefill must be set unless frame_size equals frame_step (every frame complete)"""
    size, step, inner = opt(n, "frame_size"), opt(n, "frame_step"), last_dim(g, n)
    return (step >= 1 and inner >= step and inner % step == 0 and size >= step
            and (flag(n, "prefill") or size == step))


def state(attrs: dict, ins: list[TensorType]) -> tuple[tuple[int, ...], np.dtype] | None:
    n = Node("", [], [], attrs)
    if not ins or not ins[0].shape:
        return None
    rows, _, size, step, keep = _geometry(n, ins[0].shape)
    return ((rows, keep), np.dtype(np.int16)) if step >= 1 and keep > 0 else None


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    shape = in_type(g, n).shape
    _, frames, size, _, _ = _geometry(n, shape)
    return [TensorType((*shape[:-1], frames, size), DType.INT16), TensorType((), DType.BOOL)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    rows, frames, size, step, keep = _geometry(n, in_type(g, n).shape)
    x = ins[0].reshape(rows, frames, step)
    st = ins[STATE].copy() if keep > 0 else np.zeros((rows, 0), np.int16)
    y = np.zeros((rows, frames, size), np.int16)
    for k in range(frames):
        y[:, k] = np.concatenate([st, x[:, k]], axis=1)
        st = y[:, k, step:]
    outs = [y.reshape(out_type(g, n).shape), np.array(True)]
    return outs + ([st.copy()] if keep > 0 else [])


def lower(g: Graph, n: Node, target) -> Kernel:
    rows, frames, size, step, keep = _geometry(n, in_type(g, n).shape)
    return Kernel("signal_framer.c.j2" if keep else "signal_framer_plain.c.j2",
                  params=dict(rows=rows, frames=frames, size=size, step=step, keep=keep,
                              keep_bytes=2 * keep, step_bytes=2 * step,
                              all_bytes=2 * rows * frames * step))


OP = register(signal_op("SignalFramer", infer, reference, lower,
                        [types_are((DType.INT16,), (DType.INT16, DType.BOOL)), framing],
                        dtypes="int16 -> int16 frames, bool valid", state=state,
                        updates=(STATE,)))
