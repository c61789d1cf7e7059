import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model
from opmodels import cases, qparams, random_data


def bmm_model(rng, lb, rb, a, k, c, adj_x, adj_y, dtype, const_rhs=False):
    mb = ModelBuilder()
    lshape = list(lb) + ([k, a] if adj_x else [a, k])
    rshape = list(rb) + ([c, k] if adj_y else [k, c])
    ql, qr, qo = qparams(rng, dtype), qparams(rng, dtype), qparams(rng, dtype)
    if dtype == "int8":  # output scale near the accumulator's spread, so few outputs saturate
        qo["scale"] = ql["scale"] * qr["scale"] * 16384 * np.sqrt(k) / 40
    lhs = mb.tensor("lhs", lshape, dtype, **ql)
    rhs = (mb.const("rhs", random_data(rng, dtype, rshape), **qr) if const_rhs
           else mb.tensor("rhs", rshape, dtype, **qr))
    ob = list(np.broadcast_shapes(tuple(lb), tuple(rb)))
    y = mb.tensor("y", ob + [a, c], dtype, **qo)
    mb.op("BATCH_MATMUL", [lhs, rhs], [y], {"adj_x": adj_x, "adj_y": adj_y}, version=1)
    return mb.finish([lhs] if const_rhs else [lhs, rhs], [y])


@pytest.mark.parametrize("case", cases(8, 4))
def test_batch_matmul(case):
    rng = np.random.default_rng(2100 + case)
    nb = int(rng.integers(0, 3))
    batch = [int(d) for d in rng.integers(1, 4, nb)]
    lb = [1 if rng.random() < 0.3 else d for d in batch]
    rb = [1 if rng.random() < 0.3 else d for d in batch][int(rng.integers(0, nb + 1)):]
    a, k, c = (int(x) for x in rng.integers(1, 9, 3))
    dtype = "float32" if case in (3, 6) else "int8"
    check_model(bmm_model(rng, lb, rb, a, k, c, case % 2 == 1, case % 4 >= 2, dtype,
                          const_rhs=case == 5))
