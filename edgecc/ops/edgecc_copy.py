"""EDGECC_COPY: an internal op that writes a graph output from a constant or from a graph input.

Made only by passes/outputs.py, so that every graph output is written by a kernel into its own
arena buffer (a constant-only path, e.g. a RESHAPE of weights, folds to a constant that nothing
would otherwise write; an output that is also an input needs its own bytes). The kernel is one
memcpy from the constant (emitted as `in0`) or from the input's arena bytes.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register


def same_type(g: Graph, n: Node) -> bool:
    """input and output must have the same shape and type"""
    a, b = in_type(g, n), out_type(g, n)
    return a.shape == b.shape and a.dtype == b.dtype


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [in_type(g, n)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    return [np.array(ins[0], copy=True)]


def lower(g: Graph, n: Node, target) -> Kernel:
    v = g.value(n.inputs[0])
    consts = {"in0": np.ascontiguousarray(v.data)} if v.is_const else {}
    return Kernel("edgecc_copy.c.j2", dict(nbytes=out_type(g, n).nbytes), consts,
                  reason="writes a graph output from a constant or an input")


register(OpDef("EDGECC_COPY", infer, reference, lower, [same_type],
               dtypes="any (internal: graph outputs from constants or inputs)",
               reference_oracle="edgecc (internal op)"))
