"""Seeded mutations of a .onnx file: random byte mutations (fuzz/mutate.py's truncation, bit
flips, 4-byte boundary values, chunks duplicated or removed) and targeted ones made on the parsed
ModelProto and re-serialized, so they reach the importer instead of the protobuf parser: an
initializer's dims, element type or raw bytes, a node's attribute value, input name or op type,
a graph input's dims or element type, the opset.

`onnx_mutants(data, seed, count)` yields (kind, bytes); the same seed gives the same mutants.
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
