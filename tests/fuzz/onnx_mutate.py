"""Seeded mutations of a .onnx file: random byte mutations (fuzz/mutate.py's truncation, bit
flips, 4-byte boundary values, chunks duplicated or removed) and targeted ones made on the parsed
ModelProto and re-serialized, so they reach the importer instead of the protobuf parser: an
initializer's dims, element type or raw bytes, a node's attribute value, input name or op type,
a graph input's dims or element type, the opset.

`onnx_mutants(data, seed, count)` yields (kind, bytes); the same seed gives the same mutants.
`field_mutants` yields protobuf field mutations only (issue 26): the targeted ones above plus the
spec's attribute edge cases (group 0 / -1 / 3 / 16, auto_pad bogus or with pads, strides and
dilations 0 or negative, axes out of range, a zero point of the other 8-bit type, a graph input
dim of 0, a node carrying a subgraph).
"""
from __future__ import annotations

from typing import Iterator

import numpy as np
import onnx

from fuzz.mutate import INT32_VALUES, random_mutation

OP_TYPES = ["QLinearConv", "Conv", "Add", "QGemm", "Reshape", "Squeeze", "ConvInteger",
            "MatMulInteger", "DynamicQuantizeLinear", "QuantizeLinear", "DequantizeLinear",
            "Transpose", "Identity", "MaxPool"]
ELEM_TYPES = [0, 1, 2, 3, 5, 6, 7, 9, 11, 14, 99]


def _pick(rng: np.random.Generator, seq):
    return seq[int(rng.integers(len(seq)))]


def _int(rng: np.random.Generator) -> int:
    return _pick(rng, INT32_VALUES) if rng.random() < 0.8 else int(rng.integers(-300, 300))


def _initializer(m: onnx.ModelProto, rng) -> str:
    t = _pick(rng, m.graph.initializer)
    k = int(rng.integers(4))
    if k == 0 and len(t.dims):
        t.dims[int(rng.integers(len(t.dims)))] = _int(rng)
        return "init-dims"
    if k == 1:
        t.data_type = _pick(rng, ELEM_TYPES)
        return "init-type"
    if k == 2 and t.raw_data:
        raw = bytearray(t.raw_data)
        for _ in range(int(rng.integers(1, 5))):
            raw[int(rng.integers(len(raw)))] = int(rng.integers(256))
        t.raw_data = bytes(raw)
        return "init-bytes"
    t.raw_data = t.raw_data[:int(rng.integers(len(t.raw_data) + 1))]
    return "init-truncate"


def _node(m: onnx.ModelProto, rng) -> str:
    n = _pick(rng, m.graph.node)
    k = int(rng.integers(3))
    if k == 0 and n.attribute:
        a = _pick(rng, n.attribute)
        if a.ints:
            a.ints[int(rng.integers(len(a.ints)))] = _int(rng)
        elif a.type == onnx.AttributeProto.INT:
            a.i = _int(rng)
        elif a.type == onnx.AttributeProto.FLOAT:
            a.f = _pick(rng, [0.0, -1.0, float("nan"), float("inf"), 1e30])
        else:
            n.attribute.remove(a)
        return "node-attr"
    if k == 1 and n.input:
        names = [v for x in m.graph.node for v in x.output] + [t.name for t in m.graph.initializer]
        n.input[int(rng.integers(len(n.input)))] = _pick(rng, names + ["", "nowhere"])
        return "node-input"
    n.op_type = _pick(rng, OP_TYPES)
    return "node-op"


def _graph_input(m: onnx.ModelProto, rng) -> str:
    vi = m.graph.input[0]
    dims = vi.type.tensor_type.shape.dim
    if dims and rng.random() < 0.7:
        dims[int(rng.integers(len(dims)))].dim_value = _int(rng) & 0x7FFFFFFFFFFFFFFF
        return "input-dims"
    vi.type.tensor_type.elem_type = _pick(rng, ELEM_TYPES)
    return "input-type"


def targeted(data: bytes, rng: np.random.Generator) -> tuple[str, bytes]:
    m = onnx.ModelProto()
    m.ParseFromString(data)
    k = int(rng.integers(10))
    if k < 4 and m.graph.initializer:
        kind = _initializer(m, rng)
    elif k < 8 and m.graph.node:
        kind = _node(m, rng)
    elif k < 9 and m.graph.input:
        kind = _graph_input(m, rng)
    else:
        m.opset_import[0].version = _pick(rng, [1, 9, 10, 21, 22, 26, 2**40])
        kind = "opset"
    return f"field-{kind}", m.SerializeToString()


def onnx_mutants(data: bytes, seed: int, count: int) -> Iterator[tuple[str, bytes]]:
    """`count` mutants of `data`: half targeted proto edits, half random byte mutations."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        if rng.random() < 0.5:
            yield targeted(data, rng)
        else:
            yield random_mutation(data, rng)


SPEC_ATTRS = [("group", [0, -1, 3, 16]), ("strides", [[0, 1], [-1, -1], [1]]),
              ("dilations", [[0, 0], [1, -2]]), ("kernel_shape", [[0, 0], [9, 9]]),
              ("pads", [[-1, 0, 0, 0], [1, 1]]), ("axis", [5, 9, -9, 2**31 - 1]),
              ("auto_pad", [b"BOGUS", b"SAME_UPPER", b"VALID"]), ("transB", [2, -1]),
              ("perm", [[0, 0, 1, 2], [3, 2, 1]]), ("output_padding", [[5, 5]])]


def _spec_attr(m: onnx.ModelProto, rng) -> str:
    n = _pick(rng, m.graph.node)
    key, values = SPEC_ATTRS[int(rng.integers(len(SPEC_ATTRS)))]
    for a in list(n.attribute):
        if a.name == key:
            n.attribute.remove(a)
    n.attribute.append(onnx.helper.make_attribute(key, _pick(rng, values)))
    return f"spec-{key}"


def _zero_point_type(m: onnx.ModelProto, rng) -> str:
    zps = [t for t in m.graph.initializer if t.data_type in (2, 3) and len(t.dims) <= 1]
    if not zps:
        return _spec_attr(m, rng)
    t = _pick(rng, zps)
    arr = onnx.numpy_helper.to_array(t)
    other = arr.astype(np.int16).clip(-128, 127).astype(np.int8) if t.data_type == 2 else \
        arr.astype(np.int16).clip(0, 255).astype(np.uint8)
    t.CopyFrom(onnx.numpy_helper.from_array(other, t.name))
    return "spec-zp-type"


def _zero_dim(m: onnx.ModelProto, rng) -> str:
    dims = m.graph.input[0].type.tensor_type.shape.dim if m.graph.input else []
    if not dims:
        return _spec_attr(m, rng)
    dims[int(rng.integers(len(dims)))].dim_value = 0
    return "spec-input-dim-0"


def _subgraph(m: onnx.ModelProto, rng) -> str:
    n = _pick(rng, m.graph.node)
    n.attribute.append(onnx.helper.make_attribute("then_branch", onnx.helper.make_graph(
        [], "empty", [], [])))
    return "spec-subgraph"


def spec_targeted(data: bytes, rng: np.random.Generator) -> tuple[str, bytes]:
    m = onnx.ModelProto()
    m.ParseFromString(data)
    if not m.graph.node:
        return targeted(data, rng)
    k = int(rng.integers(10))
    kind = (_spec_attr if k < 6 else _zero_point_type if k < 8 else
            _zero_dim if k < 9 else _subgraph)(m, rng)
    return f"field-{kind}", m.SerializeToString()


def field_mutants(data: bytes, seed: int, count: int) -> Iterator[tuple[str, bytes]]:
    """`count` protobuf field mutants of `data`: half the targeted edits, half spec edge cases."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield (targeted if rng.random() < 0.5 else spec_targeted)(data, rng)
