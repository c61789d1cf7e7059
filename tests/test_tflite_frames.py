"""Every model in ../shared/models/tflite/ is bit-exact with its oracle over 5 consecutive frames
after one name_reset (`edgecc verify --frames 5`) on the host (gcc and clang), x86-avx2, aarch64,
cortex-m4 and cortex-m55: the stateful ones carry their state from frame to frame as TFLite Micro
does, and the stateless ones must not depend on what an earlier frame left in the arena.
"""
from __future__ import annotations

import pytest

from conftest import MODELS, shared_model
from edgecc.targets import get_target
from edgecc.verify import verify_model

FRAMES = 5
NAMES = ["ad01_int8", "hello_world_int8", "keyword_scrambled_8bit", "kws_ref_model",
         "micro_speech_lstm", "micro_speech_quantized", "mlzoo_ds_cnn_s_quantized_int16",
         "person_detect", "pretrainedResnet_quant", "str_ww_ref_model", "trained_lstm_int8",
         "vww_96_int8"]


def test_every_tflite_model_is_listed():
    assert sorted(p.stem for p in MODELS.glob("*.tflite")) == NAMES


def _check(name: str, target: str, cc: str | None = None, seed: int = 0) -> None:
    r = verify_model(shared_model(name), get_target(target), cc=cc, seed=seed, frames=FRAMES)
    assert r.bit_exact, (r.oracle, r.mismatched_bytes, r.first_bad_layer)
    assert len(r.frames) == FRAMES and all(f["bit_exact"] for f in r.frames)


@pytest.mark.parametrize("name", NAMES)
def test_tflite_model_exact_over_frames_on_host(name):
    _check(name, "host", cc="gcc")


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_tflite_model_exact_over_frames_on_host_clang(name):
    _check(name, "host", cc="clang", seed=1)


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.parametrize("target", ["x86-avx2", "aarch64", "cortex-m4", "cortex-m55"])
@pytest.mark.parametrize("name", NAMES)
def test_tflite_model_exact_over_frames_on_targets(name, target):
    _check(name, target, seed=2)
