"""Shape subgraphs as exporters write them (issue 25): Shape -> Gather -> Cast -> Slice -> Concat
feeding Reshape, Tile, Resize sizes; ConstantOfShape, Range, Expand, Equal / Where and Size on
static shapes. edgecc folds them at import (frontends/onnx/shapefold.py), so the compute ops read
constants; the models are quantized (QDQ) or float.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from onnx_corpus import EXACT, FLOAT, Case
from onnx_corpus._graph import F32, G


def _i64(g: G, *v) -> str:
    return g.init(np.array(v, np.int64), "k")


def _stem(g: G, c: int = 3, cout: int = 8, hw: int = 8) -> str:
    return g.qdq(g.conv(g.qdq("x", 0.03), 0.03, c, cout), 0.04)


def reshape_from_shape(folder):
    """Shape -> Gather -> Unsqueeze -> Cast, Slice -> ReduceProd, Concat -> Reshape of a DQ'd map
    to [n, c, h*w], then Transpose: the flatten a PyTorch export writes."""
    g = G(21)
    y = _stem(g)
    s = g.op("Shape", [y])
    n = g.op("Cast", [g.op("Unsqueeze", [g.op("Gather", [s, g.init(np.int64(0))]),
                                         _i64(g, 0)])], to=7)
    c = g.op("Slice", [s, _i64(g, 1), _i64(g, 2)])
    hw = g.op("ReduceProd", [g.op("Slice", [s, _i64(g, 2), _i64(g, 4)])], keepdims=1)
    y = g.op("Reshape", [y, g.op("Concat", [n, c, hw], axis=0)])
    y = g.qdq(g.op("Transpose", [y], perm=[0, 2, 1]), 0.04)
    return g.save(folder, "shape_reshape", [("x", F32, [1, 3, 8, 8])], [(y, F32)])


def tile_from_shape(folder):
    """A pooled [1, c, 1, 1] map tiled back to another map's spatial size (repeats from its
    Shape), then added to it (QDQ Add)."""
    g = G(22)
    y = _stem(g)
    p = g.qdq(g.op("GlobalAveragePool", [y]), 0.04)
    reps = g.op("Concat", [_i64(g, 1, 1), g.op("Slice", [g.op("Shape", [y]), _i64(g, 2),
                                                         _i64(g, 4)])], axis=0)
    t = g.qdq(g.op("Tile", [p, reps]), 0.04)
    out = g.qdq(g.op("Add", [y, t]), 0.06)
    return g.save(folder, "shape_tile", [("x", F32, [1, 3, 8, 8])], [(out, F32)])


def resize_sizes_from_shape(folder):
    """Resize (linear) to sizes = Shape[:2] ++ 2 * Shape[2:], computed as Mul of a Slice."""
    g = G(23)
    y = _stem(g)
    s = g.op("Shape", [y])
    sizes = g.op("Concat", [g.op("Slice", [s, _i64(g, 0), _i64(g, 2)]),
                            g.op("Mul", [g.op("Slice", [s, _i64(g, 2), _i64(g, 4)]),
                                         _i64(g, 2)])], axis=0)
    r = g.op("Resize", [y, "", "", sizes], mode="linear",
             coordinate_transformation_mode="half_pixel")
    out = g.qdq(r, 0.04)
    return g.save(folder, "shape_resize_sizes", [("x", F32, [1, 3, 8, 8])], [(out, F32)])


def constant_of_shape(folder):
    """x + ConstantOfShape(Shape(x), 0.25) in float32 before the first QuantizeLinear."""
    g = G(24)
    c = g.op("ConstantOfShape", [g.op("Shape", ["x"])],
             value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.25]))
    x = g.op("Add", ["x", c])
    y = g.qdq(g.conv(g.qdq(x, 0.03), 0.03, 3, 8), 0.04)
    return g.save(folder, "shape_constant_of_shape", [("x", F32, [1, 3, 8, 8])], [(y, F32)])


def range_positions(folder):
    """Position offsets Range(0, W) * 0.0625 added to the input (W from Shape -> Gather)."""
    g = G(25)
    w = g.op("Gather", [g.op("Shape", ["x"]), g.init(np.int64(3))])
    pos = g.op("Cast", [g.op("Range", [g.init(np.int64(0)), w, g.init(np.int64(1))])], to=1)
    x = g.op("Add", ["x", g.op("Mul", [pos, g.init(np.float32(0.0625))])])
    y = g.qdq(g.conv(g.qdq(x, 0.03), 0.03, 3, 8), 0.04)
    return g.save(folder, "shape_range", [("x", F32, [1, 3, 8, 8])], [(y, F32)])


def expand_gate(folder):
    """A float squeeze-excite gate: Sigmoid(GlobalAveragePool(z)) Expanded to Shape(z), times z."""
    g = G(26)
    z = g.op("Relu", [g.fconv("x", 3, 8)])
    gate = g.op("Sigmoid", [g.op("GlobalAveragePool", [z])])
    out = g.op("Mul", [z, g.op("Expand", [gate, g.op("Shape", [z])])])
    return g.save(folder, "shape_expand", [("x", F32, [1, 3, 8, 8])], [(out, F32)])


def where_equal_reshape(folder):
    """Reshape target [n, c, -1] from Where(Equal(shape, 0), 1, shape), as exporters guard
    zero-sized dims; then Size / c for the flat length, Squeeze of a unit axis."""
    g = G(27)
    y = _stem(g)
    s = g.op("Shape", [y])
    safe = g.op("Where", [g.op("Equal", [s, _i64(g, 0)]), _i64(g, 1), s])
    t = g.op("Reshape", [y, g.op("Concat", [g.op("Slice", [safe, _i64(g, 0), _i64(g, 2)]),
                                            _i64(g, -1)], axis=0)])
    flat = g.op("Div", [g.op("Size", [t]), g.op("Gather", [safe, g.init(np.int64(1))])])
    t = g.op("Reshape", [t, g.op("Concat", [_i64(g, 1, 8), g.op("Unsqueeze", [flat, _i64(g, 0)]),
                                            _i64(g, 1)], axis=0)])
    out = g.qdq(g.op("Squeeze", [t, _i64(g, 3)]), 0.04)
    return g.save(folder, "shape_where_equal", [("x", F32, [1, 3, 8, 8])], [(out, F32)])


CASES = [
    Case("shape_reshape", reshape_from_shape, EXACT),
    Case("shape_tile", tile_from_shape, EXACT),
    Case("shape_resize_sizes", resize_sizes_from_shape, EXACT),
    Case("shape_constant_of_shape", constant_of_shape, EXACT),
    Case("shape_range", range_positions, EXACT),
    Case("shape_expand", expand_gate, FLOAT),
    Case("shape_where_equal", where_equal_reshape, EXACT),
]
