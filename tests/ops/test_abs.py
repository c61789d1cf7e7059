import numpy as np
import pytest

from opcheck import check_model
from opmodels import cases, unary_model


@pytest.mark.parametrize("case", cases(5, 2))
def test_abs_int8(case):
    rng = np.random.default_rng(500 + case)
    shape = tuple(int(d) for d in rng.integers(1, 9, int(rng.integers(1, 5))))
    same = case == 0  # equal scales: no rescale, only the zero points move
    q = dict(scale=0.05, zero_point=int(rng.integers(-128, 128))) if same else None
    out_q = dict(scale=0.05, zero_point=int(rng.integers(-128, 128))) if same else None
    check_model(unary_model(rng, "ABS", "int8", shape, version=4, in_q=q, out_q=out_q))


def test_abs_int8_all_values():
    rng = np.random.default_rng(510)
    check_model(unary_model(rng, "ABS", "int8", (4, 256), version=4))


def test_abs_float():
    rng = np.random.default_rng(520)
    check_model(unary_model(rng, "ABS", "float32", (3, 7, 5)))
