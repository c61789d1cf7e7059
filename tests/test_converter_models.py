"""Every model TensorFlow 2.21's converter wrote in ../shared/models/converter/ compiles and is
bit-exact with its oracle on the host (`edgecc verify`): TFLite Micro, or LiteRT BUILTIN_REF where
TFLite Micro lacks an op (TILE) or computes on the file's placeholder shapes (cv_conv1d).

A model that still needs a piece another branch adds is marked xfail(strict=True) naming that
piece, and raising UnsupportedModel only: an internal error (any other exception) fails the test,
and the model working (XPASS) fails it too, so the mark is removed when the piece lands.
"""
from __future__ import annotations

import struct
from pathlib import Path

import pytest
import tflite

from conftest import SHARED
from edgecc.errors import UnsupportedModel
from edgecc.targets import get_target
from edgecc.verify import verify_model

CONVERTER = SHARED / "models" / "converter"

PER_CHANNEL_FC = "per-channel FULLY_CONNECTED (branch state12)"
UINT8_EDGES = "uint8 QUANTIZE at the model's edges (branch state12)"
FLOAT_ELU = "float32 ELU between DEQUANTIZE and QUANTIZE (branch ops12)"

# model -> the pieces it still needs from other branches ([] = works now)
MODELS: dict[str, list[str]] = {
    "cv_autoenc": [],
    "cv_conv1d": [PER_CHANNEL_FC],
    "cv_dscnn": [PER_CHANNEL_FC],
    "cv_dscnn_int16": [PER_CHANNEL_FC],
    "cv_gru_unrolled": [PER_CHANNEL_FC],
    "cv_mlp_u8in": [UINT8_EDGES, PER_CHANNEL_FC, FLOAT_ELU],
    "cv_resnet8_float_io": [PER_CHANNEL_FC],
    "cv_resnet8_u8io": [UINT8_EDGES, PER_CHANNEL_FC],
    "cv_se_mbv2": [PER_CHANNEL_FC],
}


def converter_model(name: str) -> Path:
    p = CONVERTER / f"{name}.tflite"
    if not p.is_file():
        pytest.fail(f"shared model missing: {p} (tests need ../shared/models beside the checkout)")
    return p


def test_every_converter_model_is_listed():
    if not CONVERTER.is_dir():
        pytest.fail(f"{CONVERTER} is missing: the shared models must sit beside the checkout")
    assert sorted(p.stem for p in CONVERTER.glob("*.tflite")) == sorted(MODELS)


def _param(name: str):
    needs = MODELS[name]
    if not needs:
        return name
    return pytest.param(name, marks=pytest.mark.xfail(
        strict=True, raises=UnsupportedModel, reason="needs " + "; ".join(needs)))


@pytest.mark.parametrize("name", [_param(n) for n in MODELS])
def test_converter_model_bit_exact_on_host(name):
    r = verify_model(converter_model(name), get_target("host"), cc="gcc", seed=0)
    assert r.bit_exact, (r.oracle, r.mismatched_bytes, r.first_bad_layer)


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.parametrize("target", ["x86-avx2", "aarch64", "cortex-m4", "cortex-m55"])
@pytest.mark.parametrize("name", [n for n, needs in MODELS.items() if not needs])
def test_converter_model_bit_exact_on_targets(name, target):
    r = verify_model(converter_model(name), get_target(target), seed=1)
    assert r.bit_exact, (r.oracle, r.mismatched_bytes, r.first_bad_layer)


def truncated(path: Path, n_ops: int, output: int) -> bytes:
    """The model's first n_ops operators with tensor `output` as its one output: the flatbuffer's
    operator vector shortened in place (its length prefix) and its output index replaced."""
    raw = bytearray(path.read_bytes())
    sg = tflite.Model.GetRootAsModel(raw, 0).Subgraphs(0)
    ops, outs = sg._tab.Vector(sg._tab.Offset(10)), sg._tab.Vector(sg._tab.Offset(8))
    assert struct.unpack_from("<I", raw, outs - 4)[0] == 1 and sg.OperatorsLength() >= n_ops
    struct.pack_into("<I", raw, ops - 4, n_ops)
    struct.pack_into("<i", raw, outs, output)
    return bytes(raw)


def test_cv_conv1d_up_to_its_dense_layer(tmp_path):
    """cv_conv1d without its per-channel Dense layer (ops 0-14, output REDUCE_MAX t30): the 3-D
    SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND of the dilated Conv1D on the placeholder batch the
    converter wrote (really 2), swish, global max pool: bit-exact with LiteRT BUILTIN_REF."""
    p = tmp_path / "cv_conv1d_body.tflite"
    p.write_bytes(truncated(converter_model("cv_conv1d"), 15, 30))
    for seed, cc in ((0, "gcc"), (1, "clang")):
        r = verify_model(p, get_target("host"), cc=cc, seed=seed)
        assert r.bit_exact and r.oracle == "litert-builtin-ref", (r.oracle, r.mismatched_bytes)
