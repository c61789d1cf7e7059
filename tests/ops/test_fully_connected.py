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


def test_unquantized_int8_input_is_rejected_with_the_constraint(tmp_path):
    from edgecc.errors import UnsupportedModel
    from edgecc.frontends.tflite import load_tflite
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 16), "int8")  # no scale / zero point
    w = mb.const("w", np.ones((4, 16), np.int8), scale=0.1)
    y = mb.tensor("y", (1, 4), "int8", scale=0.1)
    mb.op("FULLY_CONNECTED", [x, w, -1], [y], {}, version=4)
    p = tmp_path / "m.tflite"
    p.write_bytes(mb.finish([x], [y]))
    with pytest.raises(UnsupportedModel, match="must carry quantization parameters"):
        load_tflite(p)
