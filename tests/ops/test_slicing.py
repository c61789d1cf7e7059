"""SHAPE, STRIDED_SLICE and PACK vs TFLite Micro.

STRIDED_SLICE has a kernel and is checked end to end; SHAPE and PACK exist to be folded, so their
numpy references are checked against TFLite Micro on shape-computing graphs (Keras style).
"""
import tempfile
from pathlib import Path

import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model, check_reference


def slice_model(shape, begin, end, strides, dtype="int8", **masks):
    """A single STRIDED_SLICE; the output shape comes from the op's own inference (TFLM's Prepare
    then checks it)."""
    from edgecc.ir import DType, Graph, Node, TensorType, Value
    from edgecc.ops import get_op
    dt = {"int8": DType.INT8, "int16": DType.INT16, "int32": DType.INT32}[dtype]
    vals = {"x": Value("x", TensorType(tuple(shape), dt)), "y": Value("y", TensorType((1,), dt))}
    for k, v in (("b", begin), ("e", end), ("s", strides)):
        a = np.array(v, dtype=np.int32)
        vals[k] = Value(k, TensorType(a.shape, DType.INT32), a)
    node = Node("STRIDED_SLICE", ["x", "b", "e", "s"], ["y"], dict(masks))
    out_shape = get_op("STRIDED_SLICE").infer(Graph(vals, [node], ["x"], ["y"]), node)[0].shape

    mb = ModelBuilder()
    q = dict(scale=0.1, zero_point=0) if dtype in ("int8", "int16") else {}
    x = mb.tensor("x", shape, dtype, **q)
    ins = [x] + [mb.const(k, np.array(v, dtype=np.int32)) for k, v in
                 (("begin", begin), ("end", end), ("strides", strides))]
    y = mb.tensor("y", out_shape, dtype, **q)
    mb.op("STRIDED_SLICE", ins, [y], dict(masks))
    return mb.finish([x], [y])


@pytest.mark.parametrize("shape,begin,end,strides,masks", [
    ((4, 6), [1, 0], [3, 6], [1, 2], {}),
    ((4, 6), [-3, -1], [0, 0], [1, -2], {"end_mask": 1, "begin_mask": 0}),
    ((2, 5, 3), [0, 1, 0], [1, 4, 3], [1, 1, 1], {"shrink_axis_mask": 1}),
    ((1, 8, 8, 4), [0, 2, 0, 1], [1, 7, 8, 3], [1, 2, 3, 1], {"begin_mask": 4}),
    ((3, 4, 5), [2, 3, 4], [-10, -10, -10], [-1, -1, -2], {}),
    ((6,), [1], [2], [1], {}),
    ((2, 3, 2, 3), [0, 0, 1, 2], [2, 3, 2, 0], [1, 2, 1, -1], {"shrink_axis_mask": 4}),
])
def test_strided_slice_vs_tflm(shape, begin, end, strides, masks):
    check_model(slice_model(shape, begin, end, strides, **masks), seeds=(0,), compilers=("gcc",))


def test_strided_slice_int16_clang():
    check_model(slice_model((3, 7), [0, 1], [3, 7], [2, 3], dtype="int16"), seeds=(0,),
                compilers=("clang",))


def keras_shape_chain(shape, pack_tail, axis=0):
    """x -> SHAPE -> STRIDED_SLICE(batch, shrink) -> PACK([batch, *pack_tail]) as a graph output."""
    mb = ModelBuilder()
    x = mb.tensor("x", shape, "int8", scale=0.1, zero_point=0)
    s = mb.tensor("shape", (len(shape),), "int32")
    mb.op("SHAPE", [x], [s], {"out_type": 2})
    c = [mb.const(k, np.array(v, dtype=np.int32)) for k, v in (("b", [0]), ("e", [1]), ("st", [1]))]
    b = mb.tensor("batch", (), "int32")
    mb.op("STRIDED_SLICE", [s, *c], [b], {"shrink_axis_mask": 1})
    ins = [b] + [mb.const(f"t{i}", np.array(v, dtype=np.int32)) for i, v in enumerate(pack_tail)]
    out = mb.tensor("packed", (len(ins),) if axis == 0 else (len(ins),), "int32")
    mb.op("PACK", ins, [out], {"values_count": len(ins), "axis": axis})
    return mb.finish([x], [out])


@pytest.mark.parametrize("shape,tail,axis", [((1, 6, 8), [-1, 48], 0), ((3, 4), [4], -1)])
def test_shape_slice_pack_references_vs_tflm(shape, tail, axis):
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.tflite"
        p.write_bytes(keras_shape_chain(shape, tail, axis))
        check_reference(p, seed=0)


def test_pack_of_activations_gets_a_kernel(tmp_path):
    """PACK of activations is lowered (tests/ops/test_pack.py checks its bytes against TFLM)."""
    from edgecc.compiler import compile_model
    from edgecc.targets import get_target
    mb = ModelBuilder()
    x = mb.tensor("x", (2, 3), "int8", scale=0.1, zero_point=0)
    z = mb.tensor("z", (2, 3), "int8", scale=0.1, zero_point=0)
    y = mb.tensor("y", (2, 2, 3), "int8", scale=0.1, zero_point=0)
    mb.op("PACK", [x, z], [y], {"values_count": 2, "axis": 0})
    (tmp_path / "m.tflite").write_bytes(mb.finish([x, z], [y]))
    c = compile_model(tmp_path / "m.tflite", get_target("host"), "m")
    assert [lw.node.op for lw in c.lowered] == ["PACK"]


@pytest.mark.parametrize("shape,masks,msg", [((2, 2, 1, 2, 3), {}, "rank must be at most 4"),
                                             ((6,), {"offset": True}, "offset must be false"),
                                             ((6,), {"ellipsis_mask": 1}, "ellipsis_mask")])
def test_strided_slice_refusals(tmp_path, shape, masks, msg):
    from edgecc.errors import UnsupportedModel
    from edgecc.frontends.tflite import load_tflite
    rank = len(shape)
    data = slice_model(shape, [0] * rank, [1] * rank, [1] * rank, **masks)
    (tmp_path / "m.tflite").write_bytes(data)
    with pytest.raises(UnsupportedModel, match=msg):
        load_tflite(tmp_path / "m.tflite")
