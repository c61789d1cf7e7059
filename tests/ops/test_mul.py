import numpy as np
import pytest

from opcheck import check_model
from opmodels import cases, binary_model, broadcast_shapes


@pytest.mark.parametrize("case", cases(8, 3))
def test_mul_int8_broadcast(case):
    rng = np.random.default_rng(300 + case)
    out, ins = broadcast_shapes(rng, max_rank=4 if case % 2 else 5)
    check_model(binary_model(rng, "MUL", "int8", ins, out,
                             {"fused_activation_function": case % 4}, version=2))


@pytest.mark.parametrize("case", cases(2, 1))
def test_mul_int8_many_pairs(case):
    rng = np.random.default_rng(320 + case)
    check_model(binary_model(rng, "MUL", "int8", [(256, 1), (1, 256)], (256, 256),
                             {"fused_activation_function": 0}, version=2))


def test_mul_int8_const_per_channel():
    rng = np.random.default_rng(330)
    check_model(binary_model(rng, "MUL", "int8", [(1, 6, 6, 8), (8,)], (1, 6, 6, 8),
                             {"fused_activation_function": 3}, version=2, const_second=True))


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_mul_other_types(dtype):
    rng = np.random.default_rng(340)
    out, ins = broadcast_shapes(rng, max_rank=4)
    check_model(binary_model(rng, "MUL", dtype, ins, out, {"fused_activation_function": 0},
                             version=3 if dtype == "int32" else 1))
