"""READ_VARIABLE: a resource variable's current value copied into a new tensor (TFLite Micro
copies the resource buffer into the output).

The importer (frontends/tflite_resources.py) makes its input the variable tensor `var_<name>`
(Value.variable, in the arena's state region); the copy cannot alias the state, since a later
ASSIGN_VARIABLE overwrites it within the same run.
"""
from __future__ import annotations

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import OpDef, in_type, out_type, register
from edgecc.ops._resource import byte_copy


def reads_a_variable(g: Graph, n: Node) -> bool:
    """the input must be a resource variable of the same shape and type as the output"""
    v, y = g.value(n.inputs[0]), out_type(g, n)
    return v.variable and v.type.shape == y.shape and v.type.dtype == y.dtype


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    x = in_type(g, n)
    return [TensorType(x.shape, x.dtype, out_type(g, n).q)]


reference, lower = byte_copy(0, "read_variable.c.j2",
                             "copies a resource variable out of the state region")


register(OpDef("READ_VARIABLE", infer, reference, lower, [reads_a_variable],
               dtypes="any (a resource variable's bytes)"))
