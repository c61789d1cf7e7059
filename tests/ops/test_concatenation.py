import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model
from opmodels import cases, random_data


def concat_model(rng, shapes, axis, dtype="int8", const_index=None):
    mb = ModelBuilder()
    q = dict(scale=0.1, zero_point=3 if dtype == "int8" else 0) if dtype in ("int8", "int16") else {}
    ins = []
    for k, s in enumerate(shapes):
        if k == const_index:
            ins.append(mb.const(f"c{k}", random_data(rng, dtype, s), **q))
        else:
            ins.append(mb.tensor(f"x{k}", s, dtype, **q))
    out = list(shapes[0])
    out[axis] = sum(s[axis] for s in shapes)
    y = mb.tensor("y", out, dtype, **q)
    mb.op("CONCATENATION", ins, [y], {"axis": axis, "fused_activation_function": 0}, version=3)
    return mb.finish([t for k, t in enumerate(ins) if k != const_index], [y])


@pytest.mark.parametrize("case", cases(8, 4))
def test_concatenation_random(case):
    rng = np.random.default_rng(700 + case)
    rank = int(rng.integers(1, 5))
    base = [int(d) for d in rng.integers(1, 6, rank)]
    axis = int(rng.integers(0, rank))
    shapes = []
    for _ in range(int(rng.integers(1, 5))):
        s = list(base)
        s[axis] = int(rng.integers(1, 5))
        shapes.append(tuple(s))
    dtype = ["int8", "int8", "float32", "int32", "int16", "int64", "int8", "int8"][case]
    neg = case == 6  # negative axis
    check_model(concat_model(rng, shapes, axis - rank if neg else axis, dtype,
                             const_index=1 if case == 7 and len(shapes) > 1 else None))
