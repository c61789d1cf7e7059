"""Evaluating an IR graph with the ops' numpy references (the bit-exact model of the C).

Owns: running a graph node by node on numpy inputs and returning every value, so tests can compare
the numpy reference with TFLite Micro layer by layer, and constant folding can reuse it.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph
from edgecc.ops import get_op


def run_graph(g: Graph, inputs: list[np.ndarray]) -> dict[str, np.ndarray]:
    env: dict[str, np.ndarray] = {}
    for name, x in zip(g.inputs, inputs):
        env[name] = np.asarray(x).reshape(g.type(name).shape).astype(g.type(name).dtype.np)
    for n in g.nodes:
        args = [None if v is None else (g.value(v).data if g.value(v).is_const else env[v])
                for v in n.inputs]
        outs = get_op(n.op).reference(g, n, args)
        for v, o in zip(n.outputs, outs):
            env[v] = np.asarray(o).reshape(g.type(v).shape)
    return env
