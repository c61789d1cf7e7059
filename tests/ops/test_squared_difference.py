import numpy as np
import pytest

from opcheck import check_model
from opmodels import cases, binary_model, broadcast_shapes


@pytest.mark.parametrize("case", cases(6, 2))
def test_squared_difference_int8_broadcast(case):
    rng = np.random.default_rng(400 + case)
    out, ins = broadcast_shapes(rng, max_rank=4)
    check_model(binary_model(rng, "SQUARED_DIFFERENCE", "int8", ins, out, version=2))


def test_squared_difference_int8_many_pairs():
    rng = np.random.default_rng(410)
    check_model(binary_model(rng, "SQUARED_DIFFERENCE", "int8", [(256, 1), (1, 256)], (256, 256),
                             version=2))


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_squared_difference_other_types(dtype):
    rng = np.random.default_rng(420)
    out, ins = broadcast_shapes(rng, max_rank=4)
    check_model(binary_model(rng, "SQUARED_DIFFERENCE", dtype, ins, out))
