"""PAD and PADV2 vs TFLite Micro (numpy reference and generated C)."""
import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model


def pad_model(shape, pads, dtype="int8", v2_value=None, zp=7):
    mb = ModelBuilder()
    q = dict(scale=0.05, zero_point=zp if dtype == "int8" else 0) if dtype != "int32" else {}
    x = mb.tensor("x", shape, dtype, **q)
    p = mb.const("pads", np.array(pads, dtype=np.int32))
    out_shape = tuple(d + a + b for d, (a, b) in zip(shape, pads))
    y = mb.tensor("y", out_shape, dtype, **q)
    ins = [x, p]
    if v2_value is not None:
        ins.append(mb.const("cv", np.array([v2_value], dtype=dtype).reshape(()), **q))
    mb.op("PADV2" if v2_value is not None else "PAD", ins, [y])
    return mb.finish([x], [y])


@pytest.mark.parametrize("shape,pads,dtype", [
    ((1, 5, 6, 3), [[0, 0], [1, 2], [2, 1], [0, 0]], "int8"),   # image-style
    ((2, 3, 4), [[1, 0], [0, 2], [3, 1]], "int8"),
    ((1, 4, 4, 2), [[0, 0], [1, 1], [1, 1], [0, 1]], "int16"),
    ((3, 5), [[2, 2], [0, 3]], "int32"),
    ((2, 1, 3, 2, 2), [[0, 1], [1, 0], [0, 2], [1, 1], [0, 0]], "int8"),  # 5-D
])
def test_pad_vs_tflm(shape, pads, dtype):
    check_model(pad_model(shape, pads, dtype), seeds=(0,), compilers=("gcc",))


@pytest.mark.parametrize("value", [-128, 7, 100])
def test_padv2_vs_tflm(value):
    check_model(pad_model((1, 4, 5, 2), [[0, 0], [2, 0], [0, 3], [0, 0]], v2_value=value),
                seeds=(0,), compilers=("gcc", "clang") if value == 7 else ("gcc",))


@pytest.mark.parametrize("v2_value", [None, -1.5])
def test_pad_float32(v2_value):
    check_model(pad_model((2, 3, 4), [[1, 0], [0, 2], [3, 1]], "float32", v2_value=v2_value),
                seeds=(0,))
