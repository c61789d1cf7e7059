import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model


def fc_model(rng, batches, depth, units, act, bias=True, in_zp=None):
    mb = ModelBuilder()
    in_zp = int(rng.integers(-128, 127)) if in_zp is None else in_zp
    x = mb.tensor("x", (batches, depth), "int8", scale=float(rng.uniform(0.01, 0.5)), zero_point=in_zp)
    w = mb.const("w", rng.integers(-127, 128, (units, depth)).astype(np.int8),
                 scale=float(rng.uniform(0.001, 0.02)))
    ins = [x, w]
    if bias:
        ins.append(mb.const("b", rng.integers(-3000, 3000, (units,)).astype(np.int32), scale=1e-4))
    else:
        ins.append(-1)
    y = mb.tensor("y", (batches, units), "int8", scale=float(rng.uniform(0.05, 0.5)),
                  zero_point=int(rng.integers(-128, 127)))
    mb.op("FULLY_CONNECTED", ins, [y], {"fused_activation_function": act}, version=4)
    return mb.finish([x], [y])


@pytest.mark.parametrize("case", range(6))
def test_fully_connected_random(case):
    rng = np.random.default_rng(100 + case)
    check_model(fc_model(rng, int(rng.integers(1, 3)), int(rng.integers(1, 70)),
                         int(rng.integers(1, 20)), act=case % 4, bias=case != 3))
