"""Scale cases: models that are valid but big in one direction (issue 26): long op chains, many
graph inputs or outputs alive at once, nested ONNX subgraphs, and one huge convolution. Each
builder returns the model's bytes; `cases()` is the named set the fuzzer runs.
"""
from __future__ import annotations

import numpy as np

from edgecc.tflite_writer import ModelBuilder


def relu_chain(n: int) -> bytes:
    """n RELU ops one after the other on a (1, 8) int8 tensor."""
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 8), "int8", scale=0.05, zero_point=-3)
    cur = x
    for i in range(n):
        y = mb.tensor(f"t{i}", (1, 8), "int8", scale=0.05, zero_point=-3)
        mb.op("RELU", [cur], [y], {})
        cur = y
    return mb.finish(inputs=[x], outputs=[cur])


def fc_relu_chain(n: int) -> bytes:
    """n FULLY_CONNECTED -> RELU pairs (n activation fusions for the rewrite engine)."""
    mb, r = ModelBuilder(), np.random.default_rng(0)
    x = mb.tensor("x", (1, 8), "int8", scale=0.05, zero_point=-3)
    w = mb.const("w", r.integers(-127, 128, (8, 8)).astype(np.int8), scale=0.01)
    b = mb.const("b", r.integers(-500, 500, 8).astype(np.int32), scale=0.0005)
    cur = x
    for i in range(n):
        y = mb.tensor(f"f{i}", (1, 8), "int8", scale=0.05, zero_point=-3)
        mb.op("FULLY_CONNECTED", [cur, w, b], [y], {}, version=4)
        z = mb.tensor(f"r{i}", (1, 8), "int8", scale=0.05, zero_point=-3)
        mb.op("RELU", [y], [z], {})
        cur = z
    return mb.finish(inputs=[x], outputs=[cur])


def add_inputs(n: int) -> bytes:
    """n graph inputs summed by a chain of n - 1 ADDs (every input alive from the start)."""
    mb = ModelBuilder()
    xs = [mb.tensor(f"x{i}", (1, 8), "int8", scale=0.05, zero_point=-3) for i in range(n)]
    cur = xs[0]
    for i in range(1, n):
        y = mb.tensor(f"t{i}", (1, 8), "int8", scale=0.05, zero_point=-3)
        mb.op("ADD", [cur, xs[i]], [y], {})
        cur = y
    return mb.finish(inputs=xs, outputs=[cur])


def many_outputs(n: int) -> bytes:
    """n RELUs of one input, each a graph output (all alive to the end)."""
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 8), "int8", scale=0.05, zero_point=-3)
    ys = []
    for i in range(n):
        y = mb.tensor(f"t{i}", (1, 8), "int8", scale=0.05, zero_point=-3)
        mb.op("RELU", [x], [y], {})
        ys.append(y)
    return mb.finish(inputs=[x], outputs=ys)


def huge_conv(hw: int = 4096, cin: int = 3, cout: int = 3) -> bytes:
    """One valid 3x3 CONV_2D over an hw x hw x cin image (the attacker's 4096x4096x3)."""
    mb, r = ModelBuilder(), np.random.default_rng(0)
    x = mb.tensor("x", (1, hw, hw, cin), "int8", scale=0.05, zero_point=-3)
    w = mb.const("w", r.integers(-127, 128, (cout, 3, 3, cin)).astype(np.int8),
                 scale=[0.01] * cout, zero_point=[0] * cout, axis=0)
    b = mb.const("b", r.integers(-500, 500, cout).astype(np.int32), scale=[0.0005] * cout,
                 zero_point=[0] * cout)
    y = mb.tensor("y", (1, hw, hw, cout), "int8", scale=0.1, zero_point=0)
    mb.op("CONV_2D", [x, w, b], [y], {"padding": 0, "stride_w": 1, "stride_h": 1}, version=3)
    return mb.finish(inputs=[x], outputs=[y])


def onnx_relu_chain(n: int) -> bytes:
    """n float Relu nodes one after the other (ONNX)."""
    import onnx  # the onnx package is slow to import: only for the ONNX cases
    from onnx import TensorProto, helper
    nodes = [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"r{i}") for i in range(n)]
    g = helper.make_graph(nodes, "chain",
                          [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [1, 8])],
                          [helper.make_tensor_value_info(f"v{n}", TensorProto.FLOAT, [1, 8])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()


def onnx_nested_if(depth: int) -> bytes:
    """An If whose then-branch is an If ... `depth` deep (a subgraph in every branch)."""
    import onnx  # see onnx_relu_chain
    from onnx import TensorProto, helper

    def branch(d: int, tag: str):
        out = helper.make_tensor_value_info(f"o{tag}{d}", TensorProto.FLOAT, [1])
        if d == 0:
            c = helper.make_node("Constant", [], [f"o{tag}{d}"],
                                 value=helper.make_tensor("c", TensorProto.FLOAT, [1], [1.0]))
            return helper.make_graph([c], f"g{tag}{d}", [], [out])
        n = helper.make_node("If", ["cond"], [f"o{tag}{d}"], then_branch=branch(d - 1, "t"),
                             else_branch=branch(d - 1, "e"))
        return helper.make_graph([n], f"g{tag}{d}", [], [out])

    top = branch(depth, "")
    g = helper.make_graph(list(top.node), "nested",
                          [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                          list(top.output))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()


def cases() -> dict[str, tuple[str, bytes]]:
    """name -> (suffix, bytes) of the scale cases the fuzzer compiles (small enough to run)."""
    return {
        "relu_chain_3000": (".tflite", relu_chain(3000)),
        "relu_chain_20001": (".tflite", relu_chain(20_001)),
        "fc_relu_chain_1500": (".tflite", fc_relu_chain(1500)),
        "add_inputs_300": (".tflite", add_inputs(300)),
        "many_outputs_300": (".tflite", many_outputs(300)),
        "onnx_relu_chain_3000": (".onnx", onnx_relu_chain(3000)),
        "onnx_nested_if_8": (".onnx", onnx_nested_if(8)),
    }
