import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opmodels import cases
from opcheck import check_model, check_model_litert


def resize_model(op, shape, size, dtype, align, half, version):
    mb = ModelBuilder()
    q = dict(scale=0.05, zero_point=-7) if dtype in ("int8", "int16") else {}
    if dtype == "int16":
        q["zero_point"] = 0
    x = mb.tensor("x", shape, dtype, **q)
    y = mb.tensor("y", (shape[0], size[0], size[1], shape[3]), dtype, **q)
    mb.op(op, [x, mb.const("size", np.array(size, np.int32))], [y],
          {"align_corners": align, "half_pixel_centers": half}, version=version)
    return mb.finish([x], [y])


def _case(rng, case):
    shape = (int(rng.integers(1, 3)), int(rng.integers(1, 7)), int(rng.integers(1, 7)),
             int(rng.integers(1, 5)))
    size = [int(rng.integers(1, 13)), int(rng.integers(1, 13))]
    align, half = [(False, False), (True, False), (False, True)][case % 3]
    return shape, size, align, half


@pytest.mark.parametrize("case", cases(9, 3))
def test_resize_nearest_random(case):
    rng = np.random.default_rng(1300 + case)
    shape, size, align, half = _case(rng, case)
    dtype = ["int8", "int8", "int8", "float32", "int16", "int8", "int8", "int8", "float32"][case]
    check_model(resize_model("RESIZE_NEAREST_NEIGHBOR", shape, size, dtype, align, half, 4))


@pytest.mark.parametrize("case", cases(9, 5))
def test_resize_bilinear_random(case):
    rng = np.random.default_rng(1320 + case)
    shape, size, align, half = _case(rng, case)
    if case == 4:  # TFLite Micro has no int16 RESIZE_BILINEAR
        check_model_litert(resize_model("RESIZE_BILINEAR", shape, size, "int16", align, half, 4))
    else:
        check_model(resize_model("RESIZE_BILINEAR", shape, size, "int8", align, half, 4))


@pytest.mark.parametrize("case", cases(6, 3))
def test_resize_bilinear_float32(case):
    """TFLite's float ResizeBilinear (edgecc/ops/_float_resize.py): bit-exact, each mode."""
    rng = np.random.default_rng(1340 + case)
    shape, size, align, half = _case(rng, case)
    check_model(resize_model("RESIZE_BILINEAR", shape, size, "float32", align, half, 4))
