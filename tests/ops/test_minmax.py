"""MAXIMUM / MINIMUM vs TFLite Micro: raw-value min/max with broadcasting, activation or const."""
import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model


def minmax_model(op, a_shape, b_shape, b_const=None, dtype="int8"):
    mb = ModelBuilder()
    q = dict(scale=0.05, zero_point=0)
    a = mb.tensor("a", a_shape, dtype, **q)
    if b_const is not None:
        b = mb.const("b", np.asarray(b_const, dtype=dtype).reshape(b_shape), **q)
        inputs = [a]
    else:
        b = mb.tensor("b", b_shape, dtype, **q)
        inputs = [a, b]
    y = mb.tensor("y", np.broadcast_shapes(a_shape, b_shape), dtype, **q)
    mb.op(op, [a, b], [y])
    return mb.finish(inputs, [y])


@pytest.mark.parametrize("op", ["MAXIMUM", "MINIMUM"])
@pytest.mark.parametrize("a_shape,b_shape", [((2, 3, 4), (2, 3, 4)), ((1, 5, 1, 3), (4, 1)),
                                             ((3, 1, 2), (1, 4, 1))])
def test_minmax_broadcast_vs_tflm(op, a_shape, b_shape):
    check_model(minmax_model(op, a_shape, b_shape), seeds=(0,), compilers=("gcc",))


@pytest.mark.parametrize("op", ["MAXIMUM", "MINIMUM"])
def test_minmax_with_constant_clamp(op):
    check_model(minmax_model(op, (1, 4, 4, 3), (), b_const=[17]), seeds=(0,),
                compilers=("gcc", "clang"))


def test_minimum_int16_per_channel_constant():
    check_model(minmax_model("MINIMUM", (2, 3, 5), (5,), b_const=[-300, 0, 5, 900, 32767],
                             dtype="int16"), seeds=(0,), compilers=("gcc",))
