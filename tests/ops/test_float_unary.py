"""float32 FLOOR, CEIL, ROUND, SQUARE, SQRT, EXP, LOG (edgecc/ops/<op>.py) against TFLite Micro.

Random normal inputs (negative ones give NaN for SQRT and LOG, compared as NaN), scaled by 3 so
that ROUND meets halves and EXP large values."""
import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model


def unary_float(op: str, shape) -> bytes:
    mb = ModelBuilder()
    x = mb.tensor("x", shape, "float32")
    y = mb.tensor("y", shape, "float32")
    mb.op(op, [x], [y])
    return mb.finish([x], [y])


@pytest.mark.parametrize("op", ["FLOOR", "CEIL", "ROUND", "SQUARE", "SQRT", "EXP", "LOG"])
def test_float_unary(op):
    check_model(unary_float(op, (2, 7, 19)), seeds=(0, 3))


def test_round_halves_to_even():
    """x = a * 0.5 with a an integer-valued constant: exact halves, both parities and signs."""
    mb = ModelBuilder()
    x = mb.tensor("x", (16,), "float32")
    h = mb.const("h", np.arange(-8, 8).astype(np.float32))
    t = mb.tensor("t", (16,), "float32")
    y = mb.tensor("y", (16,), "float32")
    mb.op("ADD", [x, h], [t])
    mb.op("ROUND", [t], [y])
    check_model(mb.finish([x], [y]))
