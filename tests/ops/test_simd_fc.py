"""FULLY_CONNECTED SIMD kernels (Cortex-M DSP; Helium MVE) on their own cores under QEMU, bit-exact
with TFLite Micro: both DSP forms (offset weight bytes when accumulators stay below 2^23, plain
SXTB16 otherwise), depths and unit counts off the kernels' multiples, batches, clamped
activations."""
import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from simdcheck import check_on_target, variants

pytestmark = pytest.mark.qemu


def fc_model(rng, *, batches=1, depth=64, units=16, act=0, bias=True, w_max=127):
    mb = ModelBuilder()
    in_zp = int(rng.integers(-128, 128))
    w_scale = float(rng.uniform(0.002, 0.02))
    out_scale = {2: 2.0 / 200, 3: 6.0 / 200}.get(act, float(rng.uniform(0.02, 0.2)))
    # accumulator spread ~ +-60 output steps, as in the conv tests
    in_scale = out_scale * 60 / (w_scale * 74 * max(w_max, 1) * 0.58 * np.sqrt(depth))
    x = mb.tensor("x", (batches, depth), "int8", scale=in_scale, zero_point=in_zp)
    w = mb.const("w", rng.integers(-w_max, w_max + 1, (units, depth)).astype(np.int8),
                 scale=w_scale)
    ins = [x, w]
    if bias:
        ins.append(mb.const("b", rng.integers(-20000, 20000, (units,)).astype(np.int32),
                            scale=in_scale * w_scale))
    else:
        ins.append(-1)
    y = mb.tensor("y", (batches, units), "int8", scale=out_scale,
                  zero_point=int(rng.integers(-20, 20)))
    mb.op("FULLY_CONNECTED", ins, [y], {"fused_activation_function": act}, version=4)
    return mb.finish([x], [y])


FC_CASES = [
    dict(depth=64, units=16, act=1),
    dict(depth=37, units=10, act=0),                 # depth and units off the multiples
    dict(depth=8, units=20, act=3),                  # one 8-input step (odd count), RELU6
    dict(batches=3, depth=130, units=7, act=2, bias=False),
    dict(depth=1500, units=5, act=0),                # wide accumulators: the SXTB16 form
    dict(depth=1030, units=6, act=1),                # 3 chunks, the last one 8-input step
    dict(batches=2, depth=1043, units=9, act=0, w_max=20),  # chunked offset-byte form
]


@pytest.mark.parametrize("case", range(len(FC_CASES)))
def test_dsp_fully_connected_on_cortex_m4(case):
    rng = np.random.default_rng(6300 + case)
    check_on_target(fc_model(rng, **FC_CASES[case]), "cortex-m4", "dsp-")


def test_dsp_fc_form_follows_the_accumulator_bound():
    rng = np.random.default_rng(6399)
    # below 2^23 the offset-byte form reading its input in place (no scratch)
    assert variants(fc_model(rng, depth=64, units=8), "cortex-m4") == ["dsp-fc-4u-rd"]
    assert variants(fc_model(rng, depth=1500, units=8), "cortex-m4") == ["dsp-fc-4u"]


@pytest.mark.parametrize("case", range(len(FC_CASES)))
def test_mve_fully_connected_on_cortex_m55(case):
    rng = np.random.default_rng(6400 + case)
    check_on_target(fc_model(rng, **FC_CASES[case]), "cortex-m55", "mve-")


def test_dsp_fc_scratch_is_bounded_for_deep_rows():
    """micro_speech's FC is 4000 deep: its input goes in chunks, so the scratch is ~1 KiB plus
    the partial sums, not 3 bytes per input; the offset-byte form reads its input in place."""
    from edgecc.lower.dsp.fc import FC_CHUNK
    from simdcheck import scratches
    rng = np.random.default_rng(6398)
    for w_max, variant, scratch in ((127, "dsp-fc-4u", 2 * FC_CHUNK + 8 + 4 * 4),
                                    (3, "dsp-fc-4u-rd", 0)):
        m = fc_model(rng, depth=4000, units=4, w_max=w_max)
        assert variants(m, "cortex-m4") == [variant]
        assert scratches(m, "cortex-m4") == [scratch]
    assert scratches(fc_model(rng, depth=64, units=8), "cortex-m4") == [0]
    assert scratches(fc_model(rng, depth=4000, units=4), "cortex-m55") == [0]
