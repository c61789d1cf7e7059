"""Stateful test models with resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE,
CALL_ONCE), written with edgecc.tflite_writer as TensorFlow's converter lays out a Keras model
holding a tf.Variable: subgraph 0 runs CALL_ONCE on an init subgraph that assigns the initial
value, then reads, updates and assigns the variable on every invoke.
"""
from __future__ import annotations

import numpy as np

from edgecc.tflite_writer import ModelBuilder

Q = dict(scale=0.05, zero_point=-3)


def counter(shape=(1, 4), init=None, read_after=False, dtype="int8",
            init_graph=True) -> bytes:
    """acc = acc + x; output acc (read back after the assignment when `read_after`)."""
    mb = ModelBuilder()
    q = Q if dtype == "int8" else {}
    x = mb.tensor("x", shape, dtype, **q)
    h = mb.tensor("acc_handle", (), "resource")
    r = mb.tensor("acc_read", shape, dtype, **q)
    s = mb.tensor("acc_sum", shape, dtype, **q)
    if init_graph:
        mb.op("CALL_ONCE", [], [], {"init_subgraph_index": 1})
    mb.op("VAR_HANDLE", [], [h], {"container": "", "shared_name": "acc"})
    mb.op("READ_VARIABLE", [h], [r])
    mb.op("ADD", [r, x], [s], {"fused_activation_function": 0})
    mb.op("ASSIGN_VARIABLE", [h, s], [])
    out = s
    if read_after:
        out = mb.tensor("acc_after", shape, dtype, **q)
        mb.op("READ_VARIABLE", [h], [out])
    if not init_graph:  # unassigned: TFLM fills it with the zero point
        return mb.finish([x], [out])
    mb.end_subgraph([x], [out])
    h0 = mb.tensor("acc_handle", (), "resource")
    if init is None:
        init = np.arange(int(np.prod(shape))).reshape(shape) % 7 - 3
    c = mb.const("acc_init", np.asarray(init).astype(dtype), **q)
    mb.op("VAR_HANDLE", [], [h0], {"container": "", "shared_name": "acc"})
    mb.op("ASSIGN_VARIABLE", [h0, c], [])
    return mb.finish([], [])


def ring_buffer(frames: int = 3, width: int = 4) -> bytes:
    """A streaming window, as a stateful Keras layer keeps one: window = concat(state, x) along
    time; the state takes the newest `frames` rows; the output is a FULLY_CONNECTED of the window.
    Its init subgraph assigns a constant; two variables (`state` and an unrelated `bias_acc`
    counter) check that shared names stay apart."""
    rng = np.random.default_rng(5)
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 1, width), "int8", **Q)
    h = mb.tensor("state_handle", (), "resource")
    st = mb.tensor("state_read", (1, frames, width), "int8", **Q)
    win = mb.tensor("window", (1, frames + 1, width), "int8", **Q)
    new = mb.tensor("state_new", (1, frames, width), "int8", **Q)
    flat = mb.tensor("flat", (1, (frames + 1) * width), "int8", **Q)
    w = mb.const("w", rng.integers(-127, 128, (3, (frames + 1) * width)).astype(np.int8),
                 scale=0.02, zero_point=0)
    b = mb.const("b", rng.integers(-500, 500, 3).astype(np.int32), scale=0.05 * 0.02,
                 zero_point=0)
    y = mb.tensor("y", (1, 3), "int8", scale=0.2, zero_point=1)
    mb.op("CALL_ONCE", [], [], {"init_subgraph_index": 1})
    mb.op("VAR_HANDLE", [], [h], {"shared_name": "state"})
    mb.op("READ_VARIABLE", [h], [st])
    mb.op("CONCATENATION", [st, x], [win], {"axis": 1})
    begin = mb.const("begin", np.array([0, 1, 0], np.int32))
    end = mb.const("end", np.array([1, frames + 1, width], np.int32))
    stride = mb.const("stride", np.array([1, 1, 1], np.int32))
    mb.op("STRIDED_SLICE", [win, begin, end, stride], [new])
    mb.op("ASSIGN_VARIABLE", [h, new], [])
    shape = mb.const("shape", np.array([1, (frames + 1) * width], np.int32))
    mb.op("RESHAPE", [win, shape], [flat])
    mb.op("FULLY_CONNECTED", [flat, w, b], [y], {"fused_activation_function": 0})
    mb.end_subgraph([x], [y])
    h0 = mb.tensor("state_handle", (), "resource")
    c = mb.const("state_init", rng.integers(-128, 128, (1, frames, width)).astype(np.int8), **Q)
    mb.op("VAR_HANDLE", [], [h0], {"shared_name": "state"})
    mb.op("ASSIGN_VARIABLE", [h0, c], [])
    return mb.finish([], [])
