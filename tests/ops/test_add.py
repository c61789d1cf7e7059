"""ADD (int8, rescaled inputs, broadcast): numpy reference and generated C vs TFLite Micro."""
import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model


def _q(rng):
    return dict(scale=float(rng.uniform(0.01, 0.3)), zero_point=int(rng.integers(-128, 128)))


def add_model(rng, shape_a, shape_b, act, const_b=False):
    mb = ModelBuilder()
    a = mb.tensor("a", shape_a, "int8", **_q(rng))
    if const_b:
        b = mb.const("b", rng.integers(-128, 128, shape_b).astype(np.int8), **_q(rng))
    else:
        b = mb.tensor("b", shape_b, "int8", **_q(rng))
    out_shape = np.broadcast_shapes(shape_a, shape_b)
    y = mb.tensor("y", out_shape, "int8", **_q(rng))
    mb.op("ADD", [a, b], [y], {"fused_activation_function": act}, version=2)
    return mb.finish([a] if const_b else [a, b], [y])


@pytest.mark.parametrize("case", range(6))
def test_add_same_shape(case):
    rng = np.random.default_rng(300 + case)
    shape = (1, int(rng.integers(1, 9)), int(rng.integers(1, 9)), int(rng.integers(1, 20)))
    check_model(add_model(rng, shape, shape, act=case % 4))


@pytest.mark.parametrize("shapes", [
    ((1, 5, 6, 7), (1, 1, 1, 7)),   # per-channel bias-like
    ((1, 1, 1, 9), (1, 4, 3, 9)),   # first input broadcast
    ((1, 4, 1, 5), (1, 1, 3, 5)),   # both broadcast
    ((2, 3, 4), (3, 1)),            # unequal ranks
    ((1, 6, 6, 8), (1, 6, 6, 1)),   # per-pixel scalar
])
def test_add_broadcast(shapes):
    rng = np.random.default_rng(sum(map(sum, shapes)))
    check_model(add_model(rng, *shapes, act=int(rng.integers(0, 4))))


def test_add_constant_operand():
    rng = np.random.default_rng(11)
    check_model(add_model(rng, (1, 3, 3, 4), (1, 1, 1, 4), act=1, const_b=True))
