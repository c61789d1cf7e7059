"""Multiply-accumulate counts of a graph as the benchmark defines them (../shared/bench/anchors.md).

Owns: the one MAC definition that the benchmark (benchmarks/metrics.py) and the HTML report
(edgecc/report.py) both print: output elements x kernel volume for CONV_2D, DEPTHWISE_CONV_2D and
FULLY_CONNECTED; other layers have no MAC figure.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node

MAC_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")


def node_macs(g: Graph, n: Node) -> int | None:
    """Multiply-accumulates of one layer, or None for layers the MAC definition leaves out."""
    if n.op not in MAC_OPS:
        return None
    out = g.type(n.outputs[0]).numel
    w = g.type(n.inputs[1]).shape  # type: ignore[arg-type]
    if n.op == "CONV_2D":
        vol = int(np.prod(w[1:]))      # [oc, kh, kw, in_c / groups]
    elif n.op == "DEPTHWISE_CONV_2D":
        vol = int(w[1] * w[2])         # [1, kh, kw, oc]: one input channel per output
    else:
        vol = int(w[-1])               # [units, depth]
    return out * vol


def count_macs(g: Graph) -> int:
    """MACs of one inference: the sum of node_macs over the graph's layers."""
    return sum(node_macs(g, n) or 0 for n in g.nodes)


def const_bytes(g: Graph) -> int:
    """The bytes of the constants g's nodes read (weights, biases), as the IR holds them."""
    used = {i for n in g.nodes for i in n.inputs if i is not None}
    return sum(v.data.nbytes for k, v in g.values.items() if v.is_const and k in used)
