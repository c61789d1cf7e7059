"""Seeded byte mutations of a .tflite file: random (truncation, bit flips, 4-byte boundary
values, chunks duplicated or removed) and targeted (a field the reader will use: a tensor's shape,
type, buffer index, an op's input/output index, opcode index, a scale, a zero point, the quantized
dimension, a word of a builtin options table), located through the flatbuffer's own tables.

`mutants(data, seed, count)` yields (kind, bytes); the same seed gives the same mutants.
"""
from __future__ import annotations

import struct
from typing import Iterator

import numpy as np
import tflite

INT32_VALUES = [0, 1, -1, 2, 3, 7, 255, 65535, 2**31 - 1, -2**31, 2**30, -2, 2**24]
FLOAT_VALUES = [0.0, -1.0, float("nan"), float("inf"), 1e-45, 1e-30, 1e30, 3e38, -0.0]
INT64_VALUES = [128, -129, 255, 2**40, -2**63, 2**63 - 1, 32768]


def _vector(tab, field: int) -> tuple[int, int] | None:
    """(absolute position of the first element, length) of a table's vector field, or None."""
    o = tab.Offset(field)
    if not o:
        return None
    return tab.Vector(o), tab.VectorLen(o)


def _scalar(tab, field: int) -> int | None:
    o = tab.Offset(field)
    return tab.Pos + o if o else None


def field_sites(data: bytes) -> list[tuple[str, int, str]]:
    """Every (field name, absolute offset, struct format) a targeted mutation may overwrite."""
    sites: list[tuple[str, int, str]] = []
    model = tflite.Model.GetRootAsModel(data, 0)
    sg = model.Subgraphs(0)
    for i in range(sg.TensorsLength()):
        t = sg.Tensors(i)
        v = _vector(t._tab, 4)
        if v:
            sites += [("shape", v[0] + 4 * k, "<i") for k in range(v[1])]
        for name, field, fmt in (("type", 6, "<b"), ("buffer", 8, "<I")):
            pos = _scalar(t._tab, field)
            if pos is not None:
                sites.append((name, pos, fmt))
        q = t.Quantization()
        if q is not None:
            for name, field, width, fmt in (("scale", 8, 4, "<f"), ("zero_point", 10, 8, "<q")):
                v = _vector(q._tab, field)
                if v:
                    sites += [(name, v[0] + width * k, fmt) for k in range(v[1])]
            pos = _scalar(q._tab, 16)
            if pos is not None:
                sites.append(("quantized_dimension", pos, "<i"))
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        for name, field in (("op_input", 6), ("op_output", 8)):
            v = _vector(op._tab, field)
            if v:
                sites += [(name, v[0] + 4 * k, "<i") for k in range(v[1])]
        pos = _scalar(op._tab, 4)
        if pos is not None:
            sites.append(("opcode_index", pos, "<I"))
        opts = op.BuiltinOptions()
        if opts is not None:  # the words of the options table after its vtable offset
            sites += [("options", opts.Pos + 4 + 4 * k, "<i") for k in range(4)]
    for name, field in (("graph_input", 8), ("graph_output", 10)):
        v = _vector(sg._tab, field)
        if v:
            sites += [(name, v[0] + 4 * k, "<i") for k in range(v[1])]
    return [s for s in sites if s[1] + struct.calcsize(s[2]) <= len(data)]


def _value_for(fmt: str, rng: np.random.Generator):
    if fmt == "<f":
        return FLOAT_VALUES[rng.integers(len(FLOAT_VALUES))]
    if fmt == "<q":
        return INT64_VALUES[rng.integers(len(INT64_VALUES))]
    v = INT32_VALUES[rng.integers(len(INT32_VALUES))] if rng.random() < 0.8 else \
        int(rng.integers(-300, 300))
    if fmt == "<b":
        return ((v & 0xFF) ^ 0x80) - 0x80
    if fmt == "<I":
        return v & 0xFFFFFFFF
    return v


def targeted(data: bytes, rng: np.random.Generator, sites) -> tuple[str, bytes]:
    name, pos, fmt = sites[rng.integers(len(sites))]
    out = bytearray(data)
    out[pos:pos + struct.calcsize(fmt)] = struct.pack(fmt, _value_for(fmt, rng))
    return f"field-{name}", bytes(out)


def random_mutation(data: bytes, rng: np.random.Generator) -> tuple[str, bytes]:
    out = bytearray(data)
    kind = ["truncate", "bitflip", "boundary", "duplicate", "remove"][rng.integers(5)]
    n = len(out)
    if kind == "truncate":
        return kind, bytes(out[:int(rng.integers(0, n))])
    if kind == "bitflip":
        for _ in range(int(rng.integers(1, 9))):
            p = int(rng.integers(n))
            out[p] ^= 1 << int(rng.integers(8))
        return kind, bytes(out)
    if kind == "boundary":
        p = int(rng.integers(0, max(n - 4, 1))) & ~3
        out[p:p + 4] = struct.pack("<I", INT32_VALUES[rng.integers(len(INT32_VALUES))] & 0xFFFFFFFF)
        return kind, bytes(out)
    a = int(rng.integers(n))
    size = int(rng.integers(1, 65))
    if kind == "duplicate":
        return kind, bytes(out[:a + size] + out[a:a + size] + out[a + size:])
    return kind, bytes(out[:a] + out[a + size:])


def mutants(data: bytes, seed: int, count: int) -> Iterator[tuple[str, bytes]]:
    """`count` mutants of `data`: half targeted field overwrites, half random byte mutations."""
    rng = np.random.default_rng(seed)
    sites = field_sites(data)
    for _ in range(count):
        if sites and rng.random() < 0.5:
            yield targeted(data, rng, sites)
        else:
            yield random_mutation(data, rng)
