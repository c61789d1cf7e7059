import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opmodels import cases
from opcheck import check_model, check_model_litert


def _q(dtype, zp=-7):
    return dict(scale=0.05, zero_point=zp) if dtype in ("int8", "int16") else {}


@pytest.mark.parametrize("case", cases(6, 3))
def test_space_depth_roundtrip_random(case):
    rng = np.random.default_rng(1100 + case)
    b = int(rng.integers(1, 4))
    nb, h, w, c = int(rng.integers(1, 3)), b * int(rng.integers(1, 4)), b * int(rng.integers(1, 4)), int(rng.integers(1, 5))
    dtype = ["int8", "float32", "int8", "float32", "int8", "int8"][case]  # TFLM: int8, float32
    mb = ModelBuilder()
    if case % 2 == 0:
        x = mb.tensor("x", (nb, h, w, c), dtype, **_q(dtype))
        y = mb.tensor("y", (nb, h // b, w // b, c * b * b), dtype, **_q(dtype))
        mb.op("SPACE_TO_DEPTH", [x], [y], {"block_size": b}, version=2)
    else:
        x = mb.tensor("x", (nb, h // b, w // b, c * b * b), dtype, **_q(dtype))
        y = mb.tensor("y", (nb, h, w, c), dtype, **_q(dtype))
        mb.op("DEPTH_TO_SPACE", [x], [y], {"block_size": b}, version=2)
    check_model(mb.finish([x], [y]))


@pytest.mark.parametrize("case", cases(6, 3))
def test_space_to_batch_nd_random(case):
    rng = np.random.default_rng(1120 + case)
    rank3 = case == 4
    bh, bw = int(rng.integers(1, 4)), 1 if rank3 else int(rng.integers(1, 4))
    nb, h, w, c = int(rng.integers(1, 3)), int(rng.integers(1, 7)), 1 if rank3 else int(rng.integers(1, 7)), int(rng.integers(1, 4))
    t = int(rng.integers(0, 3))
    bo = (-(h + t)) % bh + bh * int(rng.integers(0, 2))
    lf = 0 if rank3 else int(rng.integers(0, 3))
    r = (-(w + lf)) % bw
    dtype = "float32" if case == 3 else "int8"
    oh, ow = (h + t + bo) // bh, (w + lf + r) // bw
    mb = ModelBuilder()
    if rank3:
        x = mb.tensor("x", (nb, h, c), dtype, **_q(dtype))
        y = mb.tensor("y", (nb * bh, oh, c), dtype, **_q(dtype))
        blk, pads = [bh], [[t, bo]]
    else:
        x = mb.tensor("x", (nb, h, w, c), dtype, **_q(dtype))
        y = mb.tensor("y", (nb * bh * bw, oh, ow, c), dtype, **_q(dtype))
        blk, pads = [bh, bw], [[t, bo], [lf, r]]
    mb.op("SPACE_TO_BATCH_ND", [x, mb.const("b", np.array(blk, np.int32)),
                                mb.const("p", np.array(pads, np.int32))], [y], version=2)
    if t or bo or lf or r:
        # TFLM memsets the padding with SpaceToBatchParams.output_offset, which it never
        # initializes; TFLite (LiteRT) sets it to the output zero point.
        check_model_litert(mb.finish([x], [y]))
    else:
        check_model(mb.finish([x], [y]))


def test_space_to_batch_nd_unpadded_vs_tflm():
    mb = ModelBuilder()
    x = mb.tensor("x", (2, 4, 6, 3), "int8", **_q("int8"))
    y = mb.tensor("y", (12, 2, 2, 3), "int8", **_q("int8"))
    mb.op("SPACE_TO_BATCH_ND", [x, mb.const("b", np.array([2, 3], np.int32)),
                                mb.const("p", np.zeros((2, 2), np.int32))], [y], version=2)
    check_model(mb.finish([x], [y]))


@pytest.mark.parametrize("case", cases(6, 3))
def test_batch_to_space_nd_random(case):
    rng = np.random.default_rng(1140 + case)
    rank3 = case == 4
    bh, bw = int(rng.integers(1, 4)), 1 if rank3 else int(rng.integers(1, 4))
    on, h, w, c = int(rng.integers(1, 3)), int(rng.integers(1, 5)), 1 if rank3 else int(rng.integers(1, 5)), int(rng.integers(1, 4))
    t, bo = int(rng.integers(0, bh)), int(rng.integers(0, bh))
    lf, r = (0, 0) if rank3 else (int(rng.integers(0, bw)), int(rng.integers(0, bw)))
    if h * bh - t - bo <= 0:
        t = bo = 0
    if w * bw - lf - r <= 0:
        lf = r = 0
    dtype = "float32" if case == 3 else "int8"
    mb = ModelBuilder()
    if rank3:
        x = mb.tensor("x", (on * bh, h, c), dtype, **_q(dtype))
        y = mb.tensor("y", (on, h * bh - t - bo, c), dtype, **_q(dtype))
        blk, crops = [bh], [[t, bo]]
    else:
        x = mb.tensor("x", (on * bh * bw, h, w, c), dtype, **_q(dtype))
        y = mb.tensor("y", (on, h * bh - t - bo, w * bw - lf - r, c), dtype, **_q(dtype))
        blk, crops = [bh, bw], [[t, bo], [lf, r]]
    mb.op("BATCH_TO_SPACE_ND", [x, mb.const("b", np.array(blk, np.int32)),
                                mb.const("p", np.array(crops, np.int32))], [y], version=2)
    check_model(mb.finish([x], [y]))
