"""LOGICAL_AND / OR / NOT (bool) and float32 FLOOR_DIV, FLOOR_MOD against TFLite Micro."""
import numpy as np
import pytest

from opcheck import check_model
from opmodels import binary_model, broadcast_shapes, unary_model


@pytest.mark.parametrize("op", ["LOGICAL_AND", "LOGICAL_OR"])
def test_logical_binary_broadcast(op):
    rng = np.random.default_rng(1400)
    out, ins = broadcast_shapes(rng, max_rank=4)
    check_model(binary_model(rng, op, "bool", ins, out))


def test_logical_not():
    rng = np.random.default_rng(1410)
    check_model(unary_model(rng, "LOGICAL_NOT", "bool", (3, 11)))


def test_floor_div_float_broadcast():
    rng = np.random.default_rng(1420)
    out, ins = broadcast_shapes(rng, max_rank=4)
    check_model(binary_model(rng, "FLOOR_DIV", "float32", ins, out))


def test_floor_mod_float_broadcast():
    rng = np.random.default_rng(1430)
    out, ins = broadcast_shapes(rng, max_rank=4)
    check_model(binary_model(rng, "FLOOR_MOD", "float32", ins, out))
