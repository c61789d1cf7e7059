import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model
from opmodels import cases, random_data


def _q(dtype):
    return dict(scale=0.05, zero_point=-7) if dtype == "int8" else {}


@pytest.mark.parametrize("case", cases(8, 4))
def test_gather_random(case):
    rng = np.random.default_rng(1200 + case)
    rank = int(rng.integers(1, 5))
    shape = [int(d) for d in rng.integers(1, 6, rank)]
    axis = int(rng.integers(0, rank))
    bd = int(rng.integers(0, axis + 1)) if case % 3 == 2 else 0
    ishape = shape[:bd] + [int(d) for d in rng.integers(1, 4, int(rng.integers(0, 3)))]
    idx = rng.integers(0, shape[axis], ishape).astype(np.int32)
    dtype = "float32" if case == 5 else "int8"
    const_params = case in (1, 4)
    mb = ModelBuilder()
    x = (mb.const("table", random_data(rng, dtype, shape), **_q(dtype)) if const_params
         else mb.tensor("x", shape, dtype, **_q(dtype)))
    out = shape[:axis] + ishape[bd:] + shape[axis + 1:]
    y = mb.tensor("y", out, dtype, **_q(dtype))
    neg = case == 3
    mb.op("GATHER", [x, mb.const("i", idx)], [y],
          {"axis": axis - rank if neg else axis, "batch_dims": bd}, version=2)
    if const_params:  # the only run-time input feeds a second op; the table GATHER runs first
        a = mb.tensor("a", out, dtype, **_q(dtype))
        z = mb.tensor("z", [2 * out[0], *out[1:]], dtype, **_q(dtype))
        mb.op("CONCATENATION", [y, a], [z], {"axis": 0, "fused_activation_function": 0},
              version=3)
        check_model(mb.finish([a], [z]))
        return
    check_model(mb.finish([x], [y]))

