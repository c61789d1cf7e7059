import numpy as np
import pytest

from opcheck import check_model
from opmodels import cases, binary_model


@pytest.mark.parametrize("case", cases(6, 3))
def test_prelu(case):
    rng = np.random.default_rng(2000 + case)
    rank = int(rng.integers(1, 5))
    shape = tuple(int(d) for d in rng.integers(1, 7, rank))
    # alpha: per-channel (last dim), full, or broadcast over some dims
    k = int(rng.integers(0, rank + 1))
    alpha = tuple(1 if rng.random() < 0.4 else d for d in shape[rank - k:]) if k else (1,)
    dtype = "float32" if case == 3 else "int8"
    check_model(binary_model(rng, "PRELU", dtype, [shape, alpha], shape,
                             const_second=case % 2 == 0))
