"""int8 ADD on AArch64 NEON (runtime_c/neon/add.h, edgecc/lower/neon/eltwise.py): random shapes and
quantization parameters (the x86 ADD tests' scales, every fused activation) bit-exact with
TFLite Micro under qemu-aarch64, on the dot-product and the plain Armv8-A builds; broadcast,
constant and int16 ADDs keep the portable kernel and say why."""
from __future__ import annotations

import numpy as np
import pytest

from test_x86_add import SCALES, SHAPES, _add_model
from test_neon import TARGET, check_neon

pytestmark = pytest.mark.qemu


@pytest.mark.parametrize("case", range(len(SHAPES)))
def test_neon_add(case):
    rng = np.random.default_rng(7300 + case)
    params = SCALES[case % len(SCALES)]
    if case == 5:
        params = tuple(float(rng.uniform(0.01, 0.3)) if i % 2 == 0 else int(rng.integers(-128, 128))
                       for i in range(6))
    check_neon(_add_model(SHAPES[case], *params, act=case % 4))


def test_neon_add_many_pairs():
    """65536 random pairs of one layer (most of the 256 x 256 input pairs) on the NO_MARGIN
    scales, whose sums sit closest to TFLite's rounding ties."""
    check_neon(_add_model((1, 64, 64, 16), *SCALES[-1], act=0))


@pytest.mark.parametrize("kw,why", [
    (dict(shape_b=(1, 1, 1, 7)), "broadcast"),
    (dict(const_b=True), "constant"),
    (dict(dtype="int16", z1=0, z2=0, zo=0), "int16"),
])
def test_neon_add_falls_back_with_reason(tmp_path, kw, why):
    from edgecc.compiler import compile_model
    args = dict(shape=(1, 3, 4, 7), s1=0.05, z1=3, s2=0.08, z2=-9, so=0.1, zo=2, act=0)
    args.update(kw)
    p = tmp_path / "m.tflite"
    p.write_bytes(_add_model(**args))
    c = compile_model(p, TARGET, "m")
    [lw] = c.lowered
    assert lw.kernel.variant == "portable" and why in lw.kernel.reason
    assert ("neon-add-exact", lw.kernel.reason) in lw.refused
    assert not any(f.startswith("neon/") for f in c.files)  # no NEON header in this output
