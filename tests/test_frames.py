"""`edgecc verify --frames N`: N consecutive seeded frames on one arena after one name_reset.

The stateful shared models (two LSTMs, the SVDF keyword model) are exact over 5 frames on the host
and under QEMU (cortex-m4), each frame against TFLite Micro invoked on one interpreter; a build
whose name_run resets the state itself is caught, with the frame and the layer named.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest

import edgecc.verify as verify_mod
from conftest import shared_model
from edgecc.cli import main
from edgecc.targets import get_target
from edgecc.verify import verify_model
from edgecc.build.harness import harness_frames_c, parse_frames
from edgecc.verify.reference import run_tflm_frames, seeded_frames

STATEFUL = ["trained_lstm_int8", "micro_speech_lstm", "keyword_scrambled_8bit"]


def layers_exact_over_frames(model: str, target: str, frames: int = 5) -> None:
    """Every traced layer of every frame equals TFLite Micro's tensor (the models' outputs alone
    saturate on random inputs and would hide a state error)."""
    path = shared_model(model)
    c = verify_mod.compile_model(path, get_target(target), "model")
    ins = seeded_frames(c.graph, 7, frames)
    ref = run_tflm_frames(path, ins, len(c.graph.outputs), preserve=True,
                          n_tensors=len(c.imported.values))
    with tempfile.TemporaryDirectory() as tmp:
        text = verify_mod._build_and_run(c, Path(tmp), None, get_target(target), None,
                                         trace=True, frames=ins)
    got, done = parse_frames(text)
    assert done and len(got) == frames
    for k, ((_, traces), (_, tensors)) in enumerate(zip(got, ref)):
        assert traces, "no layer traces"
        assert verify_mod.first_mismatch(c, traces, tensors) is None, f"frame {k}"


@pytest.mark.parametrize("model", STATEFUL)
def test_stateful_models_exact_over_frames_on_host(model):
    r = verify_model(shared_model(model), get_target("host"), cc="clang", seed=4, frames=5)
    assert r.bit_exact, (r.first_bad_frame, r.first_bad_layer)
    assert [f["frame"] for f in r.frames] == list(range(5))
    assert all(f["bit_exact"] for f in r.frames)
    layers_exact_over_frames(model, "host")


@pytest.mark.qemu
@pytest.mark.parametrize("model", STATEFUL)
def test_stateful_models_exact_over_frames_on_cortex_m4(model):
    r = verify_model(shared_model(model), get_target("cortex-m4"), frames=5)
    assert r.bit_exact, (r.first_bad_frame, r.first_bad_layer)
    assert len(r.frames) == 5 and r.extra["instructions"] > 0
    layers_exact_over_frames(model, "cortex-m4")


def test_reset_inside_run_is_caught(monkeypatch):
    """A name_run that resets the state (as edgecc did before) differs from TFLM from frame 1 on;
    verify names that frame and the stateful layer."""
    real = verify_mod.compile_model

    def resetting(*a, **k):
        c = real(*a, **k)
        src = c.files["model.c"]
        head = "int model_run(uint8_t *arena) {\n    if (arena == 0) return -1;\n"
        assert head in src
        c.files["model.c"] = src.replace(head, head + "    model_reset(arena);\n")
        return c

    monkeypatch.setattr(verify_mod, "compile_model", resetting)
    r = verify_model(shared_model("trained_lstm_int8"), get_target("host"), frames=3)
    assert not r.bit_exact
    assert r.first_bad_frame == 1 and r.frames[0]["bit_exact"]
    assert "frame 1: op" in r.first_bad_layer and "UNIDIRECTIONAL_SEQUENCE_LSTM" in r.first_bad_layer


def test_cli_frames_json(capsys):
    rc = main(["verify", str(shared_model("trained_lstm_int8")), "--target", "host",
               "--frames", "3", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["bit_exact"] and out["first_mismatch_frame"] is None
    assert [f["frame"] for f in out["frames"]] == [0, 1, 2]


def test_cli_rejects_zero_frames(capsys):
    rc = main(["verify", str(shared_model("hello_world_int8")), "--target", "host",
               "--frames", "0"])
    assert rc == 2 and "--frames must be at least 1" in capsys.readouterr().err


def test_cli_rejects_profile_with_frames(capsys):
    rc = main(["verify", str(shared_model("hello_world_int8")), "--target", "cortex-m4",
               "--frames", "2", "--profile"])
    assert rc == 2 and "without --frames" in capsys.readouterr().err


def test_parse_frames_splits_at_markers():
    text = "F 0\nO 0 2 0102\nF 1\nT 5 1 ff\nO 0 2 0304\nD done\n"
    frames, done = parse_frames(text)
    assert done and [o for o, _ in frames] == [{0: b"\x01\x02"}, {0: b"\x03\x04"}]
    assert frames[1][1] == {5: b"\xff"}
    single, _ = parse_frames("O 0 1 07\nD done\n")
    assert single == [({0: b"\x07"}, {})]
    src = harness_frames_c("m", [[np.zeros(2, np.int8)]] * 3, 1)
    assert src.count("m_reset(arena)") == 1 and "#define FRAMES 3" in src


def test_frames_over_the_limits_are_refused_before_they_are_generated(tmp_path, monkeypatch):
    """issue 26: `verify --frames 100000000` generated every frame (memory without limit);
    the frame count and the frames' bytes are checked first."""
    from edgecc import verify
    from edgecc.errors import EdgeccError
    from edgecc.targets import get_target
    from fuzz import scale

    def boom(*a, **k):
        raise AssertionError("frames were generated")
    monkeypatch.setattr(verify, "seeded_frames", boom)
    p = tmp_path / "r.tflite"
    p.write_bytes(scale.relu_chain(2))
    with pytest.raises(EdgeccError, match="over verify's limit of 100,000"):
        verify.verify_model(p, get_target("host"), frames=100_000_000)
    with pytest.raises(EdgeccError, match="16 bytes of inputs and outputs per frame"):
        monkeypatch.setattr(verify, "MAX_FRAME_BYTES", 1000)
        verify.verify_model(p, get_target("host"), frames=100)
