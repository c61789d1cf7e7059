"""AVERAGE_POOL_2D / MAX_POOL_2D: numpy reference and generated C vs TFLite Micro."""
import numpy as np
import pytest

from edgecc.ops import conv_out_size
from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model


def pool_model(rng, op, n, h, w, c, fh, fw, sh, sw, padding, act, dtype="int8"):
    mb = ModelBuilder()
    scale = float(rng.uniform(0.01, 0.2))
    zp = int(rng.integers(-100, 100)) if dtype == "int8" else 0
    x = mb.tensor("x", (n, h, w, c), dtype, scale=scale, zero_point=zp)
    oh, ow = conv_out_size(padding, h, fh, sh, 1), conv_out_size(padding, w, fw, sw, 1)
    y = mb.tensor("y", (n, oh, ow, c), dtype, scale=scale, zero_point=zp)
    mb.op(op, [x], [y], {"padding": padding, "stride_h": sh, "stride_w": sw, "filter_height": fh,
                         "filter_width": fw, "fused_activation_function": act}, version=2)
    return mb.finish([x], [y])


def random_pool(rng, op, case, dtype="int8"):
    fh, fw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    h, w = int(rng.integers(fh, fh + 9)), int(rng.integers(fw, fw + 9))
    return pool_model(rng, op, int(rng.integers(1, 3)), h, w, int(rng.integers(1, 20)), fh, fw,
                      sh, sw, padding=case % 2, act=case % 4, dtype=dtype)


@pytest.mark.parametrize("case", range(6))
@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
def test_pool_random(op, case):
    rng = np.random.default_rng(200 + case + (50 if op == "MAX_POOL_2D" else 0))
    check_model(random_pool(rng, op, case))


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
def test_pool_int16(op):
    rng = np.random.default_rng(7)
    check_model(random_pool(rng, op, 0, dtype="int16"), compilers=("gcc",))


def test_global_average_like_kws():
    """The kws_ref_model shape: one VALID window over the whole 25x5 map, 64 channels."""
    rng = np.random.default_rng(3)
    check_model(pool_model(rng, "AVERAGE_POOL_2D", 1, 25, 5, 64, 25, 5, 25, 5, 1, 0))


def test_same_padding_edges_use_valid_count():
    """SAME with a 3x3 window at stride 1: border outputs average only the in-bounds taps."""
    rng = np.random.default_rng(4)
    check_model(pool_model(rng, "AVERAGE_POOL_2D", 1, 5, 6, 3, 3, 3, 1, 1, 0, 0),
                compilers=("clang",))
