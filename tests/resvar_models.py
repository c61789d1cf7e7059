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
