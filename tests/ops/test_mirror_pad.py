import numpy as np
import pytest

from opmodels import cases
from opcheck import check_model
from test_slice_tile import one_op, rand_shape


@pytest.mark.parametrize("case", cases(8, 3))
def test_mirror_pad_random(case):
    rng = np.random.default_rng(1000 + case)
    shape = rand_shape(rng, hi=6)
    mode = case % 2  # 0 REFLECT, 1 SYMMETRIC
    pads = [[int(rng.integers(0, d - (1 - mode) + 1)) for _ in range(2)] for d in shape]
    out = [d + a + b for d, (a, b) in zip(shape, pads)]
    dtype = "float32" if case == 3 else "int8"
    idx = np.int64 if case == 5 else np.int32
    check_model(one_op("MIRROR_PAD", shape, out, dtype, [np.array(pads, idx)], {"mode": mode},
                       version=2))
