"""How an ONNX import error names what it is about: a node (index, type, name) and an element
type (its ONNX name, or its number when it has none)."""
from __future__ import annotations

import onnx


def type_name(code: int) -> str:
    """An ONNX element type's name (FLOAT, COMPLEX64 ...), or its number when it has none."""
    try:
        return onnx.TensorProto.DataType.Name(code)
    except ValueError:
        return f"element type {code}"


def where(i: int, node: onnx.NodeProto) -> str:
    """How an error names a node: its index, type and (when it has one) name."""
    return f"node {i} ({node.op_type}" + (f" '{node.name}')" if node.name else ")")
