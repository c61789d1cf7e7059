"""ASSIGN_VARIABLE: a resource variable takes a tensor's value (TFLite Micro copies the bytes
into the resource buffer, where the next READ_VARIABLE and the next invoke find them).

The importer (frontends/tflite_resources.py) makes input 0 the variable tensor `var_<name>` in
the arena's state region and input 1 the value; any further inputs are the READ_VARIABLE outputs
of this variable earlier in the run, order-only (never read) so that no schedule runs the
assignment before them. The node has no outputs: it updates input 0 (OpDef.updates), so the
reference returns just the new value and dead-code elimination keeps it.
"""
from __future__ import annotations

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import OpDef, in_type, register
from edgecc.ops._resource import byte_copy


def assigns_a_variable(g: Graph, n: Node) -> bool:
    """input 0 must be a resource variable and input 1 a value of its shape and type"""
    v = g.value(n.inputs[0])
    x = in_type(g, n, 1) if len(n.inputs) > 1 and n.inputs[1] is not None else None
    return v.variable and x is not None and x.shape == v.type.shape and x.dtype == v.type.dtype


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return []


reference, lower = byte_copy(1, "assign_variable.c.j2",
                             "writes a resource variable in the state region")


register(OpDef("ASSIGN_VARIABLE", infer, reference, lower, [assigns_a_variable],
               dtypes="any (a resource variable's bytes)", updates=(0,)))
