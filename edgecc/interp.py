"""Evaluating an IR graph with the ops' numpy references (the bit-exact model of the C).

Owns: running a graph node by node on numpy inputs and returning every value, so tests can compare
the numpy reference with TFLite Micro layer by layer, and constant folding can reuse it. Variable
tensors (Value.variable) start from their reset value; pass the same `state` dict to consecutive
calls to carry them from one run to the next, as the generated code and TFLite Micro do.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph
from edgecc.ops import get_op


def run_graph(g: Graph, inputs: list[np.ndarray],
              state: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    env: dict[str, np.ndarray] = {}
    state = {} if state is None else state
    for name, x in zip(g.inputs, inputs):
        env[name] = np.asarray(x).reshape(g.type(name).shape).astype(g.type(name).dtype.np)

    def arg(v: str | None):
        if v is None:
            return None
        val = g.value(v)
        if val.variable:
            return state.setdefault(v, val.data.copy())
        return val.data if val.is_const else env[v]

    for n in g.nodes:
        op = get_op(n.op)
        outs = op.reference(g, n, [arg(v) for v in n.inputs])
        for v, o in zip(n.outputs, outs):
            env[v] = np.asarray(o).reshape(g.type(v).shape)
        for i, new in zip(op.updates, outs[len(n.outputs):]):
            v = n.inputs[i]
            state[v] = np.asarray(new).reshape(g.type(v).shape).astype(g.type(v).dtype.np)
    return env
