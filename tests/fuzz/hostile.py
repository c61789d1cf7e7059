"""Structure-aware hostile models, written with edgecc's own TFLite writer.

Each base is a small valid model (one or two ops); each mutation edits the builder before it is
serialized: huge, zero and negative dims, rank 0 and 7, dangling, cyclic and negative indices, bad
quantization (scale 0/negative/NaN/inf/extreme, zero points outside the dtype, per-channel arrays of
the wrong length), option tables of the wrong type or with extreme values, several subgraphs,
hostile names, and graph outputs that are constants or inputs. `cases()` is the full set, named.
"""
from __future__ import annotations

import copy
from typing import Callable

import numpy as np

from edgecc.tflite_writer import ModelBuilder

Base = Callable[[], tuple[ModelBuilder, list[int], list[int]]]
I32 = 2**31 - 1


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def fc() -> tuple[ModelBuilder, list[int], list[int]]:
    mb, r = ModelBuilder(), _rng(1)
    x = mb.tensor("x", (1, 8), "int8", scale=0.05, zero_point=-3)
    w = mb.const("w", r.integers(-127, 128, (4, 8)).astype(np.int8), scale=0.01)
    b = mb.const("b", r.integers(-500, 500, 4).astype(np.int32), scale=0.0005)
    y = mb.tensor("y", (1, 4), "int8", scale=0.1, zero_point=2)
    mb.op("FULLY_CONNECTED", [x, w, b], [y], {}, version=4)
    return mb, [x], [y]


def conv() -> tuple[ModelBuilder, list[int], list[int]]:
    mb, r = ModelBuilder(), _rng(2)
    x = mb.tensor("x", (1, 6, 6, 3), "int8", scale=0.05, zero_point=-3)
    w = mb.const("w", r.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8), scale=[0.01] * 4,
                 zero_point=[0] * 4, axis=0)
    b = mb.const("b", r.integers(-500, 500, 4).astype(np.int32), scale=[0.0005] * 4,
                 zero_point=[0] * 4)
    y = mb.tensor("y", (1, 6, 6, 4), "int8", scale=0.1, zero_point=0)
    mb.op("CONV_2D", [x, w, b], [y], {"padding": 0, "stride_w": 1, "stride_h": 1}, version=3)
    return mb, [x], [y]


def dwconv() -> tuple[ModelBuilder, list[int], list[int]]:
    mb, r = ModelBuilder(), _rng(3)
    x = mb.tensor("x", (1, 6, 6, 4), "int8", scale=0.05, zero_point=1)
    w = mb.const("w", r.integers(-127, 128, (1, 3, 3, 4)).astype(np.int8), scale=[0.01] * 4,
                 zero_point=[0] * 4, axis=3)
    b = mb.const("b", r.integers(-500, 500, 4).astype(np.int32), scale=[0.0005] * 4,
                 zero_point=[0] * 4)
    y = mb.tensor("y", (1, 6, 6, 4), "int8", scale=0.1, zero_point=0)
    mb.op("DEPTHWISE_CONV_2D", [x, w, b], [y], {"padding": 0, "stride_w": 1, "stride_h": 1,
                                                "depth_multiplier": 1}, version=3)
    return mb, [x], [y]


def unary(op: str, options: dict | None = None, out_q=(1 / 256, -128)) -> Base:
    def build():
        mb = ModelBuilder()
        x = mb.tensor("x", (1, 4, 4, 8), "int8", scale=0.05, zero_point=-3)
        y = mb.tensor("y", (1, 4, 4, 8), "int8", scale=out_q[0], zero_point=out_q[1])
        mb.op(op, [x], [y], options or {}, version=1)
        return mb, [x], [y]
    build.__name__ = op.lower()
    return build


def pool() -> tuple[ModelBuilder, list[int], list[int]]:
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 6, 6, 4), "int8", scale=0.05, zero_point=-3)
    y = mb.tensor("y", (1, 3, 3, 4), "int8", scale=0.05, zero_point=-3)
    mb.op("AVERAGE_POOL_2D", [x], [y], {"padding": 1, "stride_w": 2, "stride_h": 2,
                                        "filter_width": 2, "filter_height": 2})
    return mb, [x], [y]


def add() -> tuple[ModelBuilder, list[int], list[int]]:
    mb = ModelBuilder()
    a = mb.tensor("a", (1, 4, 4, 8), "int8", scale=0.05, zero_point=-3)
    b = mb.tensor("b", (1, 4, 4, 8), "int8", scale=0.07, zero_point=4)
    y = mb.tensor("y", (1, 4, 4, 8), "int8", scale=0.1, zero_point=0)
    mb.op("ADD", [a, b], [y], {})
    return mb, [a, b], [y]


def reshape_const() -> tuple[ModelBuilder, list[int], list[int]]:
    """A RESHAPE of a constant straight to a graph output, beside a computed one."""
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 8), "int8", scale=0.05, zero_point=0)
    y = mb.tensor("y", (1, 8), "int8", scale=1 / 256, zero_point=-128)
    mb.op("LOGISTIC", [x], [y])
    c = mb.const("c", np.arange(-6, 6, dtype=np.int8).reshape(3, 4), scale=0.1, zero_point=0)
    z = mb.tensor("z", (2, 6), "int8", scale=0.1, zero_point=0)
    mb.op("RESHAPE", [c], [z], {"new_shape": [2, 6]})
    return mb, [x], [y, z]


def split() -> tuple[ModelBuilder, list[int], list[int]]:
    mb = ModelBuilder()
    ax = mb.const("axis", np.array([1], dtype=np.int32))
    x = mb.tensor("x", (1, 8), "int8", scale=0.05, zero_point=0)
    y0 = mb.tensor("y0", (1, 4), "int8", scale=0.05, zero_point=0)
    y1 = mb.tensor("y1", (1, 4), "int8", scale=0.05, zero_point=0)
    mb.op("SPLIT", [ax, x], [y0, y1], {"num_splits": 2})
    return mb, [x], [y0, y1]


def squeeze() -> tuple[ModelBuilder, list[int], list[int]]:
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 1, 8), "int8", scale=0.05, zero_point=0)
    s = mb.tensor("s", (1, 8), "int8", scale=0.05, zero_point=0)
    mb.op("SQUEEZE", [x], [s], {"squeeze_dims": [1]})
    y = mb.tensor("y", (1, 8), "int8", scale=0.05, zero_point=0)
    mb.op("RELU", [s], [y])
    return mb, [x], [y]


def resize() -> tuple[ModelBuilder, list[int], list[int]]:
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 2, 2, 3), "int8", scale=0.05, zero_point=0)
    size = mb.const("size", np.array([4, 4], dtype=np.int32))
    y = mb.tensor("y", (1, 4, 4, 3), "int8", scale=0.05, zero_point=0)
    mb.op("RESIZE_BILINEAR", [x, size], [y], {})
    return mb, [x], [y]


def svdf() -> tuple[ModelBuilder, list[int], list[int]]:
    mb, r = ModelBuilder(), _rng(4)
    x = mb.tensor("x", (1, 8), "int8", scale=0.1, zero_point=0)
    wf = mb.const("wf", r.integers(-127, 128, (4, 8)).astype(np.int8), scale=0.01)
    wt = mb.const("wt", r.integers(-127, 128, (4, 5)).astype(np.int8), scale=0.01)
    b = mb.const("b", r.integers(-500, 500, 4).astype(np.int32), scale=0.0001)
    st = mb.tensor("state", (1, 20), "int8", scale=0.2, zero_point=0, variable=True)
    y = mb.tensor("y", (1, 4), "int8", scale=0.1, zero_point=0)
    mb.op("SVDF", [x, wf, wt, b, st], [y], {"rank": 1}, version=3)
    return mb, [x], [y]


def with_const(op: str, shape_in, shape_out, const, options=None, q_out=(0.05, -3)) -> Base:
    """op(x, const) -> y: TRANSPOSE (perm), PAD (paddings), MEAN (axes), STRIDED_SLICE, ..."""
    def build():
        mb = ModelBuilder()
        x = mb.tensor("x", shape_in, "int8", scale=0.05, zero_point=-3)
        cs = [mb.const(f"c{i}", np.asarray(c, dtype=np.int32)) for i, c in enumerate(const)]
        y = mb.tensor("y", shape_out, "int8", scale=q_out[0], zero_point=q_out[1])
        mb.op(op, [x, *cs], [y], options or {})
        return mb, [x], [y]
    build.__name__ = op.lower()
    return build


def requantize() -> tuple[ModelBuilder, list[int], list[int]]:
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 16), "int8", scale=0.05, zero_point=-3)
    y = mb.tensor("y", (1, 16), "int8", scale=0.07, zero_point=5)
    mb.op("QUANTIZE", [x], [y])
    return mb, [x], [y]


def max_pool() -> tuple[ModelBuilder, list[int], list[int]]:
    mb, ins, outs = pool()
    mb.ops[0].name = "MAX_POOL_2D"
    return mb, ins, outs


BASES: list[Base] = [fc, conv, dwconv, pool, add, reshape_const, split, squeeze, resize, svdf,
                     unary("SOFTMAX", {"beta": 1.0}), unary("LOGISTIC"),
                     unary("RELU", out_q=(0.05, -3)), unary("TANH", out_q=(1 / 128, 0)),
                     unary("RELU6", out_q=(0.05, -3)), unary("LEAKY_RELU", {"alpha": 0.2}, (0.05, 0)),
                     unary("HARD_SWISH", out_q=(0.05, 0)), max_pool, requantize,
                     with_const("TRANSPOSE", (1, 2, 3, 4), (1, 4, 3, 2), [[0, 3, 2, 1]]),
                     with_const("PAD", (1, 2, 3, 4), (1, 4, 5, 4), [[[0, 0], [1, 1], [1, 1], [0, 0]]]),
                     with_const("MEAN", (1, 2, 3, 4), (1, 1, 1, 4), [[1, 2]], {"keep_dims": True}),
                     with_const("STRIDED_SLICE", (1, 4, 4, 4), (1, 2, 2, 4),
                                [[0, 0, 0, 0], [1, 4, 4, 4], [1, 2, 2, 1]])]

Mutation = Callable[[ModelBuilder, list[int], list[int]], None]


def _first_op(mb: ModelBuilder):
    return mb.ops[0]


def set_dim(value: int, tensor: str = "in") -> Mutation:
    def m(mb, ins, outs):
        t = mb.tensors[ins[0] if tensor == "in" else outs[0]]
        t.shape = (*t.shape[:-1], value) if t.shape else (value,)
    return m


def set_shape(shape: tuple, tensor: str = "in") -> Mutation:
    def m(mb, ins, outs):
        mb.tensors[ins[0] if tensor == "in" else outs[0]].shape = tuple(shape)
    return m


def set_input_index(pos: int, value) -> Mutation:
    def m(mb, ins, outs):
        op = _first_op(mb)
        if pos < len(op.inputs):
            op.inputs[pos] = value(mb, op) if callable(value) else value
    return m


def set_quant(tensor: str, scale=None, zero_point=None, axis=None) -> Mutation:
    def m(mb, ins, outs):
        op = _first_op(mb)
        idx = {"in": ins[0], "out": outs[0]}.get(tensor)
        if idx is None:
            pos = int(tensor[1:])
            if pos >= len(op.inputs):
                return
            idx = op.inputs[pos]
        t = mb.tensors[idx]
        if scale is not None:
            t.scale = list(scale) if isinstance(scale, (list, tuple)) else [scale] * len(t.scale or [0])
        if zero_point is not None:
            zp = list(zero_point) if isinstance(zero_point, (list, tuple)) else None
            t.zero_point = zp if zp is not None else [zero_point] * len(t.scale or [0])
        if axis is not None:
            t.axis = axis
    return m


def set_option(key: str, value) -> Mutation:
    def m(mb, ins, outs):
        _first_op(mb).options[key] = value
    return m


def wrong_options_table(mb, ins, outs):
    _first_op(mb).options = {}
    _first_op(mb).options_class = "SubOptions"


def two_subgraphs(mb, ins, outs):
    mb.subgraph_copies = 2


def hostile_names(name: str) -> Mutation:
    def m(mb, ins, outs):
        for t in mb.tensors:
            t.name = name
    return m


def output_is_input(mb, ins, outs):
    outs.append(ins[0])


def constant_data_input(mb, ins, outs):
    """The op's data input becomes a constant; the graph keeps its other inputs (or a dummy)."""
    op = _first_op(mb)
    t = mb.tensors[op.inputs[0]]
    data = np.zeros(t.shape, dtype=t.dtype)
    c = mb.const(t.name + "_c", data, scale=t.scale, zero_point=t.zero_point)
    op.inputs[0] = c
    if ins[0] not in [i for o in mb.ops for i in o.inputs]:
        d = mb.tensor("dummy", (1,), "int8", scale=0.1, zero_point=0)
        y = mb.tensor("dummy_out", (1,), "int8", scale=0.1, zero_point=0)
        mb.op("RELU", [d], [y])
        ins[0] = d
        outs.append(y)


MUTATIONS: dict[str, Mutation] = {
    "valid": lambda mb, ins, outs: None,
    **{f"dim_{v}": set_dim(v) for v in (0, -1, -5, -2**31, 2**31 - 1, 2**32, 2**20)},
    **{f"outdim_{v}": set_dim(v, "out") for v in (0, -3, 2**31 - 1, 2**34)},
    "rank0": set_shape(()), "rank7": set_shape((1, 1, 1, 1, 2, 2, 2)),
    "out_rank0": set_shape((), "out"), "out_rank7": set_shape((1,) * 7, "out"),
    "huge_both": lambda mb, ins, outs: [setattr(mb.tensors[t], "shape", (65536, 65536, 8))
                                        for t in (*ins, *outs)],
    **{f"in0_index_{v}": set_input_index(0, v) for v in (-1, -2, -2**31, 9999, 2**31 - 1)},
    **{f"in1_index_{v}": set_input_index(1, v) for v in (-1, -2, 4096)},
    "cyclic_self": set_input_index(0, lambda mb, op: op.outputs[0]),
    "cyclic_later": lambda mb, ins, outs: setattr(mb.ops[0], "inputs",
                                                  [mb.ops[-1].outputs[0], *mb.ops[0].inputs[1:]]),
    **{f"scale_{k}": set_quant("in", scale=v) for k, v in
       (("0", 0.0), ("neg", -0.05), ("nan", float("nan")), ("inf", float("inf")),
        ("1e-45", 1e-45), ("1e-30", 1e-30), ("1e30", 1e30), ("3e38", 3e38))},
    **{f"out_scale_{k}": set_quant("out", scale=v) for k, v in
       (("0", 0.0), ("nan", float("nan")), ("1e-45", 1e-45), ("1e-30", 1e-30), ("3e38", 3e38))},
    **{f"w_scale_{k}": set_quant("i1", scale=v) for k, v in
       (("0", 0.0), ("nan", float("nan")), ("1e30", 1e30), ("1e-45", 1e-45))},
    **{f"bias_scale_{k}": set_quant("i2", scale=v) for k, v in
       (("nan", float("nan")), ("0", 0.0), ("3e38", 3e38))},
    **{f"zp_{v}": set_quant("in", zero_point=v) for v in (128, -129, 2**40, -2**63, 255)},
    **{f"out_zp_{v}": set_quant("out", zero_point=v) for v in (128, -129, -2**63)},
    "perchannel_short": set_quant("i1", scale=[0.01] * 3, zero_point=[0] * 3),
    "perchannel_long": set_quant("i1", scale=[0.01] * 9, zero_point=[0] * 9),
    "perchannel_zp_len": set_quant("i1", zero_point=[0, 0]),
    "perchannel_axis_9": set_quant("i1", axis=9),
    "wrong_options": wrong_options_table,
    **{f"opt_{k}_{v}": set_option(k, v) for k, v in
       (("stride_w", 0), ("stride_h", -1), ("stride_w", I32), ("dilation_h_factor", I32),
        ("dilation_w_factor", 0), ("filter_width", 0), ("filter_height", I32), ("padding", 7),
        ("fused_activation_function", 9), ("num_splits", 3), ("num_splits", 0), ("beta", float("nan")),
        ("depth_multiplier", 0), ("squeeze_dims", [5]), ("squeeze_dims", [-9]),
        ("new_shape", [-1, -1]), ("keep_num_dims", True))},
    "two_subgraphs": two_subgraphs,
    "names_control": hostile_names("\x1b[31mred\x07bell\n*/ #include <x>"),
    "names_long": hostile_names("n" * 10_000),
    "names_utf8": hostile_names("\u202eevil\u0000nul"),
    "output_is_input": output_is_input,
    "const_data_input": constant_data_input,
}


def build(base: Base, mutation: Mutation) -> bytes | None:
    """The mutated model's bytes, or None when the writer itself cannot express the mutation."""
    mb, ins, outs = base()
    mb = copy.deepcopy(mb)
    try:
        mutation(mb, ins, outs)
        return mb.finish(ins, outs)
    except Exception:  # e.g. an option the table has no field for, or an int the writer rejects
        return None


def named_cases(bases, mutations: dict, build_one) -> dict[str, bytes]:
    """{"base-mutation": bytes} over every base and mutation that build_one can express (None
    = skipped); shared with fuzz/onnx_hostile.py."""
    out = {}
    for base in bases:
        for mname, mut in mutations.items():
            data = build_one(base, mut)
            if data is not None:
                out[f"{base.__name__}-{mname}"] = data
    return out


def cases() -> dict[str, bytes]:
    return named_cases(BASES, MUTATIONS, build)
