"""Every model TensorFlow 2.21's converter wrote in ../shared/models/converter/ compiles and is
bit-exact with its oracle over 5 consecutive frames after one name_reset (`edgecc verify
--frames 5`), with an arena no larger than TFLite Micro's (the folder's README figures).

The oracle is TFLite Micro, except for the two models whose file holds placeholder shapes
(frontends/shapes.py): cv_autoenc (also has TILE, which TFLite Micro lacks) and cv_conv1d (TFLite
Micro computes its dilated Conv1D on the placeholder batch, and leaves the padding of its
SPACE_TO_BATCH_ND uninitialized): LiteRT BUILTIN_REF there.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import SHARED
from edgecc.targets import get_target
from edgecc.verify import verify_model
from edgecc.verify.reference import LITERT_REF, TFLM

CONVERTER = SHARED / "models" / "converter"
FRAMES = 5

# model -> TFLite Micro's arena in bytes (../shared/models/README.md; None: TFLM cannot run it)
TFLM_ARENA: dict[str, int | None] = {
    "cv_autoenc": None,
    "cv_conv1d": 10016,
    "cv_dscnn": 12944,
    "cv_dscnn_int16": 23024,
    "cv_gru_unrolled": 60704,
    "cv_mlp_u8in": 4032,
    "cv_resnet8_float_io": 56704,
    "cv_resnet8_u8io": 56768,
    "cv_se_mbv2": 126992,
}
PLACEHOLDER_SHAPES = {"cv_autoenc", "cv_conv1d"}


def converter_model(name: str) -> Path:
    p = CONVERTER / f"{name}.tflite"
    if not p.is_file():
        pytest.fail(f"shared model missing: {p} (tests need ../shared/models beside the checkout)")
    return p


def test_every_converter_model_is_listed():
    if not CONVERTER.is_dir():
        pytest.fail(f"{CONVERTER} is missing: the shared models must sit beside the checkout")
    assert sorted(p.stem for p in CONVERTER.glob("*.tflite")) == sorted(TFLM_ARENA)


def _check(name: str, target: str, cc: str | None = None, seed: int = 0) -> None:
    r = verify_model(converter_model(name), get_target(target), cc=cc, seed=seed, frames=FRAMES)
    assert r.bit_exact, (r.oracle, r.mismatched_bytes, r.first_bad_layer, r.extra)
    assert r.oracle == (LITERT_REF if name in PLACEHOLDER_SHAPES else TFLM)
    if TFLM_ARENA[name] is not None:
        assert r.arena_bytes <= TFLM_ARENA[name], (r.arena_bytes, TFLM_ARENA[name])


@pytest.mark.parametrize("name", sorted(TFLM_ARENA))
def test_converter_model_exact_on_host(name):
    _check(name, "host", cc="gcc")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TFLM_ARENA))
def test_converter_model_exact_on_host_clang(name):
    _check(name, "host", cc="clang", seed=1)


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.parametrize("target", ["x86-avx2", "aarch64", "cortex-m4", "cortex-m55"])
@pytest.mark.parametrize("name", sorted(TFLM_ARENA))
def test_converter_model_exact_on_targets(name, target):
    _check(name, target, seed=2)
