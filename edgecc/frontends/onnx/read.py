"""Reading an ONNX file into a checked, shape-inferred ModelProto (no IR yet).

Owns: loading with the `onnx` package (external-data files next to the model), the failures that
make a file bad ONNX (unparsable protobuf, `onnx.checker` findings, an opset outside 10..21, a
cycle or a value read before anything defines it (opsets 22..25 only for graphs of plain
QuantizeLinear / DequantizeLinear), an input or initializer of an element type
edgecc does not know), `onnx.shape_inference`, symbolic or unknown dimensions resolved to 1, and
the constants (initializers and Constant nodes) as numpy arrays. Each failure is one
ModelFormatError line naming the file and, where there is one, the node (index, type, name).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from edgecc.errors import ModelFormatError, UnsupportedModel

OPSET_MIN, OPSET_MAX = 10, 21
OPSET_QDQ_MAX = 25  # accepted for graphs of plain QuantizeLinear / DequantizeLinear only
_LATE_QDQ_ATTRS = ("block_size", "output_dtype", "precision")
# ONNX TensorProto element types edgecc reads (the rest are reported as unsupported)
ELEM_TYPES = {1: "float32", 2: "uint8", 3: "int8", 5: "int16", 6: "int32", 7: "int64", 9: "bool"}
# opset 21's 4-bit initializers (weights and their zero points), read as 8-bit ones
INT4_TYPES = {21: np.uint8, 22: np.int8}


@dataclass
class OnnxModel:
    path: Path
    graph: onnx.GraphProto
    opset: int
    consts: dict[str, np.ndarray] = field(default_factory=dict)
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    dtypes: dict[str, int] = field(default_factory=dict)


def type_name(code: int) -> str:
    """An ONNX element type's name (FLOAT, COMPLEX64 ...), or its number when it has none."""
    try:
        return onnx.TensorProto.DataType.Name(code)
    except ValueError:
        return f"element type {code}"


def where(i: int, node: onnx.NodeProto) -> str:
    """How an error names a node: its index, type and (when it has one) name."""
    return f"node {i} ({node.op_type}" + (f" '{node.name}')" if node.name else ")")


def _dims(t: onnx.TypeProto) -> tuple[int, ...] | None:
    if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    # symbolic (dim_param) or unknown dimensions are fixed at 1, as for TFLite's -1
    return tuple(int(d.dim_value) if d.HasField("dim_value") and d.dim_value > 0 else 1
                 for d in t.tensor_type.shape.dim)


def _load(path: Path) -> onnx.ModelProto:
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ModelFormatError(f"{path}: cannot read: {e.strerror}") from None
    try:
        m = onnx.ModelProto()
        m.ParseFromString(raw)
    except Exception:
        raise ModelFormatError(f"{path}: not a valid ONNX protobuf (truncated or corrupt)") from None
    if not m.HasField("graph"):
        raise ModelFormatError(f"{path}: not an ONNX model (no graph)")
    try:  # tensors stored in files next to the model
        onnx.external_data_helper.load_external_data_for_model(m, str(path.parent))
    except Exception as e:
        raise ModelFormatError(f"{path}: cannot read external data: {e}") from None
    return m


def _opset(m: onnx.ModelProto, path: Path) -> int:
    ver = next((int(o.version) for o in m.opset_import if o.domain in ("", "ai.onnx")), None)
    if ver is None:
        raise ModelFormatError(f"{path}: the model imports no default-domain (ai.onnx) opset")
    if OPSET_MAX < ver <= OPSET_QDQ_MAX and _only_plain_qdq(m.graph):
        return ver
    if not OPSET_MIN <= ver <= OPSET_MAX:
        raise ModelFormatError(f"{path}: opset {ver} is outside the supported {OPSET_MIN}..{OPSET_MAX}")
    return ver


def _only_plain_qdq(g: onnx.GraphProto) -> bool:
    """Whether every node is a QuantizeLinear / DequantizeLinear whose later-opset attributes
    (block_size, output_dtype, precision) keep their defaults: such a graph means the same at
    opsets 22..25 as at 21."""
    for n in g.node:
        if n.domain not in ("", "ai.onnx") or n.op_type not in ("QuantizeLinear", "DequantizeLinear"):
            return False
        if any(a.name in _LATE_QDQ_ATTRS and onnx.helper.get_attribute_value(a)
               for a in n.attribute):
            return False
    return True


def _check_wiring(g: onnx.GraphProto, path: Path) -> None:
    """Every node reads only graph inputs, initializers and outputs of earlier nodes; one writer
    per value. ONNX requires topological order, so a cycle shows up as a read-before-write."""
    if not g.output:  # nothing to compute (and C with zero-length arrays)
        raise ModelFormatError(f"{path}: the graph has no outputs")
    defined = {i.name for i in g.input} | {t.name for t in g.initializer} | {""}
    for i, n in enumerate(g.node):
        for v in n.input:
            if v not in defined:
                later = any(v in m.output for m in g.node[i:])
                raise ModelFormatError(
                    f"{path}: {where(i, n)} reads '{v}', "
                    + ("which a later node writes (a cycle or nodes out of order)" if later else
                       "which no input, initializer or node defines (missing initializer?)"))
        for v in n.output:
            if v in defined and v:
                raise ModelFormatError(f"{path}: {where(i, n)} writes '{v}', which is already "
                                       "defined")
            defined.add(v)
    for o in g.output:
        if o.name not in defined:
            raise ModelFormatError(f"{path}: graph output '{o.name}' is not computed by any node")


def read_model(path: str | Path) -> OnnxModel:
    path = Path(path)
    m = _load(path)
    opset = _opset(m, path)
    g = m.graph
    _check_wiring(g, path)
    try:
        onnx.checker.check_model(m)
    except Exception as e:  # onnx.checker.ValidationError and friends
        msg = " ".join(str(e).split())[:300]
        raise ModelFormatError(f"{path}: invalid ONNX model: {msg}") from None
    try:
        m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    except Exception as e:
        msg = " ".join(str(e).split())[:300]
        raise ModelFormatError(f"{path}: ONNX shape inference failed: {msg}") from None
    g = m.graph
    out = OnnxModel(path, g, opset)
    for t in g.initializer:
        if t.data_type not in ELEM_TYPES and t.data_type not in INT4_TYPES:
            raise UnsupportedModel(f"{path}: initializer '{t.name}' has element type "
                                   f"{type_name(t.data_type)}")
        try:
            out.consts[t.name] = numpy_helper.to_array(t).copy()
            if t.data_type in INT4_TYPES:  # unpacked: the same values in 8 bits, exactly
                out.consts[t.name] = out.consts[t.name].astype(INT4_TYPES[t.data_type])
        except Exception as e:  # data that does not fit the declared shape or type
            raise ModelFormatError(f"{path}: initializer '{t.name}' is malformed "
                                   f"({' '.join(str(e).split())[:120]})") from None
    for vi in [*g.input, *g.value_info, *g.output]:
        d = _dims(vi.type)
        if d is not None:
            out.shapes[vi.name] = d
        if vi.type.HasField("tensor_type"):
            out.dtypes[vi.name] = int(vi.type.tensor_type.elem_type)
    for i, n in enumerate(g.node):
        if n.op_type == "Constant" and n.domain in ("", "ai.onnx"):
            a = n.attribute[0] if n.attribute else None
            if a is None or a.name != "value":
                raise UnsupportedModel(f"{path}: {where(i, n)}: only Constant 'value' is supported")
            try:
                out.consts[n.output[0]] = numpy_helper.to_array(a.t).copy()
            except Exception as e:
                raise ModelFormatError(f"{path}: {where(i, n)}: malformed value "
                                       f"({' '.join(str(e).split())[:120]})") from None
    for vi in g.input:
        if vi.name in out.consts:
            continue
        et = vi.type.tensor_type.elem_type
        if et not in ELEM_TYPES:
            raise ModelFormatError(f"{path}: graph input '{vi.name}' has element type "
                                   f"{type_name(et)}, which edgecc cannot take")
    return out
