import numpy as np
import pytest

from opcheck import check_model
from opmodels import cases, binary_model, broadcast_shapes


@pytest.mark.parametrize("case", cases(8, 3))
def test_sub_int8_broadcast(case):
    rng = np.random.default_rng(200 + case)
    out, ins = broadcast_shapes(rng)
    check_model(binary_model(rng, "SUB", "int8", ins, out,
                             {"fused_activation_function": case % 4}, version=2))


@pytest.mark.parametrize("case", range(2))
def test_sub_int8_same_shape_and_const(case):
    rng = np.random.default_rng(220 + case)
    shape = (1, 7, 5, 3)
    check_model(binary_model(rng, "SUB", "int8", [shape, shape if case else (3,)], shape,
                             {"fused_activation_function": 0}, version=2, const_second=True))


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_sub_other_types(dtype):
    rng = np.random.default_rng(230)
    out, ins = broadcast_shapes(rng)
    check_model(binary_model(rng, "SUB", dtype, ins, out, {"fused_activation_function": 1},
                             version=3 if dtype == "int32" else 1))


@pytest.mark.parametrize("case", cases(3, 1))
def test_sub_int8_many_pairs(case):
    """(256, 1) - (1, 256): 65536 value pairs per run, so rounding differences cannot hide."""
    rng = np.random.default_rng(240 + case)
    check_model(binary_model(rng, "SUB", "int8", [(256, 1), (1, 256)], (256, 256),
                             {"fused_activation_function": 0}, version=2))
