"""Structure-aware hostile ONNX models, built with onnx.helper (no checker: the point is what
edgecc does with models the checker or shape inference would also reject, or accept).

Each base is a small valid model of one ONNX flavour (QDQ conv, QLinearConv / QLinearMatMul with
weight zero points, ConvInteger, MatMulInteger, DynamicQuantizeLinear, QLinearAdd, per-channel
QuantizeLinear); each mutation edits a copy of its ModelProto: huge, zero, negative and symbolic
dims, rank 0 and 7, a cycle, a dangling or empty input name, a missing initializer, initializers
of the wrong element type or of data that does not fit their shape, scales 0 / negative / NaN /
inf / 1e-30, zero points of the wrong type or length, attributes with extreme or wrong-typed
values, an unknown or huge opset, an unknown domain, hostile names, duplicated nodes, graph
outputs that are inputs or initializers, and an empty graph. `cases()` is the full set, named
"base-mutation", as serialized bytes (None-free: a mutation that does not apply is skipped).
"""
from __future__ import annotations

import copy
from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from fuzz.hostile import named_cases

U8, I8, F32 = TensorProto.UINT8, TensorProto.INT8, TensorProto.FLOAT


def _model(nodes, inputs, outputs, inits: dict, opset: int = 13) -> onnx.ModelProto:
    g = helper.make_graph(nodes, "g", inputs, outputs,
                          [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _vi(name, et, shape):
    return helper.make_tensor_value_info(name, et, shape)


def qdq_conv() -> onnx.ModelProto:
    r = np.random.default_rng(1)
    inits = dict(s=np.float32(0.05), z=np.int8(-3), w=r.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8),
                 ws=np.full(4, 0.01, np.float32), wz=np.zeros(4, np.int8),
                 b=r.integers(-500, 500, 4).astype(np.int32), bs=np.full(4, 0.0005, np.float32),
                 ys=np.float32(0.1), yz=np.int8(0))
    nodes = [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], axis=0),
             helper.make_node("DequantizeLinear", ["b", "bs"], ["bf"], axis=0),
             helper.make_node("Conv", ["xf", "wf", "bf"], ["yf"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["yf"], ["yr"]),
             helper.make_node("QuantizeLinear", ["yr", "ys", "yz"], ["y"])]
    return _model(nodes, [_vi("x", I8, [1, 3, 6, 6])], [_vi("y", I8, [1, 4, 6, 6])], inits)


def qlinear_conv() -> onnx.ModelProto:
    r = np.random.default_rng(2)
    inits = dict(xs=np.float32(0.02), xz=np.uint8(130), w=r.integers(0, 256, (4, 2, 2, 2)).astype(np.uint8),
                 ws=np.full(4, 0.01, np.float32), wz=np.full(4, 117, np.uint8),
                 ys=np.float32(0.1), yz=np.uint8(120), b=np.arange(4, dtype=np.int32) * 100)
    nodes = [helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                              ["y"], group=2, strides=[2, 1], pads=[0, 1, 1, 0])]
    return _model(nodes, [_vi("x", U8, [1, 4, 5, 5])], [_vi("y", U8, [1, 4, 3, 5])], inits, 10)


def qlinear_matmul() -> onnx.ModelProto:
    r = np.random.default_rng(3)
    inits = dict(a_s=np.float32(0.02), az=np.int8(-4), b=r.integers(-128, 128, (2, 4, 3)).astype(np.int8),
                 bs=np.float32(0.01), bz=np.int8(9), ys=np.float32(0.1), yz=np.int8(-2))
    nodes = [helper.make_node("QLinearMatMul", ["a", "a_s", "az", "b", "bs", "bz", "ys", "yz"],
                              ["y"])]
    return _model(nodes, [_vi("a", I8, [2, 3, 4])], [_vi("y", I8, [2, 3, 3])], inits, 10)


def conv_integer() -> onnx.ModelProto:
    r = np.random.default_rng(4)
    inits = dict(w=r.integers(0, 256, (2, 3, 3, 3)).astype(np.uint8), xz=np.uint8(12),
                 wz=np.uint8(200))
    nodes = [helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], pads=[1, 1, 1, 1])]
    return _model(nodes, [_vi("x", U8, [1, 3, 4, 4])], [_vi("y", TensorProto.INT32, [1, 2, 4, 4])],
                  inits, 10)


def matmul_integer() -> onnx.ModelProto:
    r = np.random.default_rng(5)
    inits = dict(b=r.integers(0, 256, (5, 3)).astype(np.uint8), az=np.uint8(3), bz=np.uint8(250))
    nodes = [helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])]
    return _model(nodes, [_vi("a", U8, [4, 5])], [_vi("y", TensorProto.INT32, [4, 3])], inits, 10)


def dynamic_quantize() -> onnx.ModelProto:
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])]
    return _model(nodes, [_vi("x", F32, [2, 5])],
                  [_vi("y", U8, [2, 5]), _vi("s", F32, []), _vi("z", U8, [])], {}, 11)


def qlinear_add() -> onnx.ModelProto:
    inits = dict(as_=np.float32(0.05), az=np.uint8(128), bs=np.float32(0.07), bz=np.uint8(100),
                 ys=np.float32(0.1), yz=np.uint8(128))
    nodes = [helper.make_node("QLinearAdd", ["a", "as_", "az", "b", "bs", "bz", "ys", "yz"], ["y"],
                              domain="com.microsoft")]
    m = _model(nodes, [_vi("a", U8, [1, 4, 3]), _vi("b", U8, [1, 4, 3])], [_vi("y", U8, [1, 4, 3])],
               inits, 13)
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return m


def per_channel_q() -> onnx.ModelProto:
    inits = dict(s=np.array([0.1, 0.2, 0.3], np.float32), z=np.array([0, 10, 250], np.uint8))
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1)]
    return _model(nodes, [_vi("x", F32, [2, 3, 2])], [_vi("y", U8, [2, 3, 2])], inits, 13)


BASES: list[Callable[[], onnx.ModelProto]] = [
    qdq_conv, qlinear_conv, qlinear_matmul, conv_integer, matmul_integer, dynamic_quantize,
    qlinear_add, per_channel_q]
Mutation = Callable[[onnx.ModelProto], "onnx.ModelProto | None"]


def set_dim(value, which: str = "input") -> Mutation:
    def mutate(m):
        vi = (m.graph.input if which == "input" else m.graph.output)[0]
        dims = vi.type.tensor_type.shape.dim
        if not dims:
            return None
        if isinstance(value, str):
            dims[-1].dim_param = value
        else:
            dims[-1].dim_value = value
        return m
    return mutate


def set_rank(rank: int) -> Mutation:
    def mutate(m):
        vi = m.graph.input[0]
        vi.type.tensor_type.shape.ClearField("dim")
        for _ in range(rank):
            vi.type.tensor_type.shape.dim.add().dim_value = 2
        return m
    return mutate


def cycle(m):
    if len(m.graph.node) < 2:
        m.graph.node[0].input[0] = m.graph.node[0].output[0]  # a node reading itself
    else:
        m.graph.node[0].input[0] = m.graph.node[-1].output[0]
    return m


def set_input_name(pos: int, name: str) -> Mutation:
    def mutate(m):
        n = m.graph.node[-1]
        if pos >= len(n.input):
            return None
        n.input[pos] = name
        return m
    return mutate


def drop_initializer(i: int) -> Mutation:
    def mutate(m):
        if i >= len(m.graph.initializer):
            return None
        del m.graph.initializer[i]
        return m
    return mutate


def retype_initializer(i: int, dtype: int) -> Mutation:
    """Change an initializer's declared element type, keeping its bytes (a wrong dtype)."""
    def mutate(m):
        if i >= len(m.graph.initializer):
            return None
        m.graph.initializer[i].data_type = dtype
        return m
    return mutate


def short_data(m):
    """An initializer whose raw data is shorter than its shape says."""
    for t in m.graph.initializer:
        if t.raw_data and len(t.raw_data) > 1:
            t.raw_data = t.raw_data[:len(t.raw_data) // 2]
            return m
    return None


def replace_init(name_pred: Callable[[str], bool], value) -> Mutation:
    """Every initializer whose name matches takes `value` (its dtype and shape)."""
    def mutate(m):
        hit = False
        for i, t in enumerate(m.graph.initializer):
            if name_pred(t.name):
                m.graph.initializer[i].CopyFrom(numpy_helper.from_array(np.asarray(value), t.name))
                hit = True
        return m if hit else None
    return mutate


def _is_scale(n: str) -> bool:
    return n.endswith("s") or n.endswith("s_")


def _is_zp(n: str) -> bool:
    return n.endswith("z")


def set_attr(key: str, value) -> Mutation:
    def mutate(m):
        n = m.graph.node[-1]
        for a in list(n.attribute):
            if a.name == key:
                n.attribute.remove(a)
        n.attribute.append(helper.make_attribute(key, value))
        return m
    return mutate


def set_opset(version: int, domain: str = "") -> Mutation:
    def mutate(m):
        for o in m.opset_import:
            if o.domain == domain:
                o.version = version
        return m
    return mutate


def set_domain(domain: str) -> Mutation:
    def mutate(m):
        m.graph.node[-1].domain = domain
        return m
    return mutate


def hostile_names(name: str) -> Mutation:
    def mutate(m):
        old = m.graph.input[0].name
        m.graph.input[0].name = name
        for n in m.graph.node:
            for i, v in enumerate(n.input):
                if v == old:
                    n.input[i] = name
            n.name = name
        return m
    return mutate


def duplicate_node(m):
    m.graph.node.append(copy.deepcopy(m.graph.node[-1]))
    return m


def output_is_input(m):
    m.graph.output[0].CopyFrom(m.graph.input[0])
    return m


def output_is_initializer(m):
    if not m.graph.initializer:
        return None
    t = m.graph.initializer[0]
    m.graph.output.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    return m


def empty_graph(m):
    m.graph.ClearField("node")
    return m


def no_outputs(m):
    m.graph.ClearField("output")
    return m


def input_elem(et: int) -> Mutation:
    def mutate(m):
        m.graph.input[0].type.tensor_type.elem_type = et
        return m
    return mutate


def output_elem(et: int) -> Mutation:
    def mutate(m):
        m.graph.output[0].type.tensor_type.elem_type = et
        return m
    return mutate


MUTATIONS: dict[str, Mutation] = {
    "valid": lambda m: m,
    **{f"dim_{v}": set_dim(v) for v in (0, -5, 2**31 - 1, 10**6, "N")},
    **{f"outdim_{v}": set_dim(v, "output") for v in (0, 7, 10**6)},
    **{f"rank_{r}": set_rank(r) for r in (0, 1, 7)},
    "cycle": cycle,
    "dangling_input": set_input_name(0, "nowhere"),
    "dangling_weight": set_input_name(1, "nowhere"),
    "empty_input_name": set_input_name(1, ""),
    **{f"drop_init_{i}": drop_initializer(i) for i in range(0, 8, 2)},
    **{f"retype_init_{i}_{d}": retype_initializer(i, d)
       for i in (0, 1, 2) for d in (TensorProto.FLOAT, TensorProto.INT8, TensorProto.UINT8,
                                    TensorProto.INT32, TensorProto.INT64, TensorProto.DOUBLE,
                                    TensorProto.STRING, 99)},
    "short_data": short_data,
    **{f"scale_{v}": replace_init(_is_scale, np.float32(v))
       for v in (0.0, -1.0, float("nan"), float("inf"), 1e-30, 1e30)},
    "scale_vector_5": replace_init(_is_scale, np.full(5, 0.1, np.float32)),
    "scale_int": replace_init(_is_scale, np.int32(1)),
    "zp_int32": replace_init(_is_zp, np.int32(3)),
    "zp_vector_5": replace_init(_is_zp, np.full(5, 1, np.uint8)),
    "zp_int16": replace_init(_is_zp, np.int16(300)),
    "weights_float": replace_init(lambda n: n in ("w", "b"), np.ones((2, 3), np.float32)),
    "weights_rank1": replace_init(lambda n: n == "w", np.ones(3, np.uint8)),
    **{f"attr_{k}_{i}": set_attr(k, v) for i, (k, v) in enumerate([
        ("strides", [0, 0]), ("strides", [2**31 - 1, 1]), ("pads", [-1, 0, 0, 0]),
        ("pads", [100, 100, 100, 100]), ("pads", [1]), ("dilations", [0, 1]),
        ("dilations", [1000, 1000]), ("group", 0), ("group", 3), ("group", -1),
        ("kernel_shape", [9, 9]), ("auto_pad", "SAME_LOWER"), ("auto_pad", "BOGUS"),
        ("axis", 7), ("axis", -9), ("axis", 0), ("strides", "x"), ("unknown_attr", 5)])},
    **{f"opset_{v}": set_opset(v) for v in (1, 9, 22, 26, 10**6)},
    "ms_opset_99": set_opset(99, "com.microsoft"),
    "domain_unknown": set_domain("org.evil"),
    "names_control": hostile_names("x\x1b[31m\n\"*/"),
    "names_long": hostile_names("n" * 5000),
    "names_empty": hostile_names(""),
    "duplicate_node": duplicate_node,
    "output_is_input": output_is_input,
    "output_is_initializer": output_is_initializer,
    "empty_graph": empty_graph,
    "no_outputs": no_outputs,
    **{f"in_elem_{e}": input_elem(e) for e in (TensorProto.FLOAT, TensorProto.INT8,
                                               TensorProto.UINT8, TensorProto.INT32,
                                               TensorProto.BOOL, TensorProto.COMPLEX64, 0, 77)},
    **{f"out_elem_{e}": output_elem(e) for e in (TensorProto.FLOAT, TensorProto.INT8,
                                                 TensorProto.UINT8, TensorProto.INT32, 0)},
}


def build(base: Callable[[], onnx.ModelProto], mutation: Mutation) -> bytes | None:
    m = mutation(base())
    return None if m is None else m.SerializeToString()


def cases() -> dict[str, bytes]:
    return named_cases(BASES, MUTATIONS, build)
