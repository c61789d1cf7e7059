"""Elementwise and pooling SIMD kernels (Cortex-M DSP; Helium MVE) on their own cores under QEMU,
bit-exact with TFLite Micro: ADD (same shapes, odd lengths, clamped activations), AVERAGE_POOL_2D
and MAX_POOL_2D (clipped windows at SAME borders, channel counts off the vector widths, global
averages, batches)."""
import numpy as np
import pytest

from simdcheck import check_on_target, variants
from test_add import add_model
from test_pool_2d import pool_model

pytestmark = pytest.mark.qemu

ADD_SHAPES = [(1, 8, 8, 16), (1, 3, 5, 7), (2, 1, 1, 1)]


@pytest.mark.parametrize("case", range(len(ADD_SHAPES) + 1))
def test_dsp_add_on_cortex_m4(case):
    rng = np.random.default_rng(7100 + case)
    shape = ADD_SHAPES[case % len(ADD_SHAPES)]
    check_on_target(add_model(rng, shape, shape, act=case % 4), "cortex-m4", "dsp-")


@pytest.mark.parametrize("case", range(len(ADD_SHAPES) + 1))
def test_mve_add_on_cortex_m55(case):
    rng = np.random.default_rng(7150 + case)
    shape = ADD_SHAPES[case % len(ADD_SHAPES)]
    check_on_target(add_model(rng, shape, shape, act=case % 4), "cortex-m55", "mve-")


def test_broadcast_add_keeps_the_portable_kernel():
    rng = np.random.default_rng(7199)
    assert variants(add_model(rng, (1, 4, 4, 8), (1, 1, 1, 8), act=0), "cortex-m4") == \
        ["portable"]


POOLS = [  # (n, h, w, c, fh, fw, sh, sw, padding, act)
    (1, 7, 6, 19, 3, 3, 2, 2, 0, 1),
    (2, 5, 5, 8, 2, 3, 1, 2, 0, 3),
    (1, 25, 5, 64, 25, 5, 25, 5, 1, 0),   # kws global average
    (1, 6, 7, 35, 3, 2, 3, 1, 1, 2),
]


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("case", range(len(POOLS)))
def test_simd_pool(target, op, case):
    rng = np.random.default_rng(7300 + case)
    prefix = "mve-" if target == "cortex-m55" else "dsp-"
    check_on_target(pool_model(rng, op, *POOLS[case]), target, prefix)
