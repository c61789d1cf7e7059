"""SignalStacker (TFLite Micro's signal library): stacks the last stacker_left_context + 1 input
vectors into one (stateful).

Input int16 [num_channels]; outputs int16 [num_channels (left + 1)] and a bool `valid`. State:
the previous `left` vectors, oldest first, and a flag saying whether a first vector was seen
(TFLite Micro repeats the first vector `left` times to pad). Output: the state's vectors then the
input; the state becomes the output's last `left` vectors. Supported with stacker_right_context 0
and stacker_step 1, where every run's output is complete (`valid` true); otherwise TFLite Micro
leaves the output unwritten on some runs, which no generated code can reproduce.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, in_type, register
from edgecc.ops._signal import opt, signal_op, types_are

STATE = 1


def every_run_complete(g: Graph, n: Node) -> bool:
    """stacker_right_context must be 0 and stacker_step 1 (every output complete), the input 1-D num_channels long"""
    ch, left = opt(n, "num_channels"), opt(n, "stacker_left_context")
    return (opt(n, "stacker_right_context") == 0 and opt(n, "stacker_step") == 1 and left >= 0
            and in_type(g, n).shape == (ch,) and g.type(n.outputs[0]).shape == (ch * (left + 1),))


def state(attrs: dict, ins: list[TensorType]) -> tuple[tuple[int, ...], np.dtype] | None:
    ch, left = attrs.get("num_channels"), attrs.get("stacker_left_context")
    if not isinstance(ch, int) or not isinstance(left, int) or ch < 1 or left < 1:
        return None
    return (ch * left + 1,), np.dtype(np.int16)  # the vectors, then the first-vector flag


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    ch, left = opt(n, "num_channels"), opt(n, "stacker_left_context")
    return [TensorType((ch * (left + 1),), DType.INT16), TensorType((), DType.BOOL)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    left, x = opt(n, "stacker_left_context"), ins[0].astype(np.int16)
    if left == 0:
        return [x.copy(), np.array(True)]
    st = ins[STATE]
    past = st[:-1] if st[-1] else np.tile(x, left)
    y = np.concatenate([past, x])
    return [y, np.array(True), np.concatenate([y[x.size:], [1]]).astype(np.int16)]


def lower(g: Graph, n: Node, target) -> Kernel:
    ch, left = opt(n, "num_channels"), opt(n, "stacker_left_context")
    return Kernel("signal_stacker.c.j2" if left else "signal_stacker_plain.c.j2",
                  params=dict(left=left, ch=ch, past=ch * left, ch_bytes=2 * ch, past_bytes=2 * ch * left))


OP = register(signal_op("SignalStacker", infer, reference, lower,
                        [types_are((DType.INT16,), (DType.INT16, DType.BOOL)),
                         every_run_complete],
                        dtypes="int16 -> int16, bool valid", state=state, updates=(STATE,)))
