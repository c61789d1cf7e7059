"""Writes examples/firmware/input.h (the sample the firmware runs: seeded random float "MFCC
features" for examples/kws_int8.tflite, which main.c quantizes with kws_input0_quantize) and
expected.txt (the line the firmware must print, from TensorFlow Lite Micro on that sample
quantized as TFLite's QUANTIZE does). tests/test_firmware.py checks both are reproduced.

    python3 examples/firmware/make_input.py [OUT_FOLDER]
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
MODEL = HERE.parent / "kws_int8.tflite"


def expected_line(scores: np.ndarray, scale: float, zero_point: int) -> str:
    """What main.c prints: the winning class, its score in per mille (the dequantized score
    times 1000 in float32, truncated, as the C does), and the raw int8 scores."""
    s = [int(x) for x in np.asarray(scores).ravel()]
    best = int(np.argmax(s))
    real = np.float32(np.float32(scale) * np.float32(s[best] - zero_point))
    permille = int(np.float32(real * np.float32(1000.0)))
    return f"kws: class {best} at {permille} per mille, scores " + " ".join(map(str, s))


def write(out: Path) -> None:
    from edgecc.codegen import c_literal_list
    from edgecc.compiler import load_model
    from edgecc.numerics.io import HALF_AWAY, quantize
    from edgecc.verify.reference import run_tflm
    g = load_model(MODEL)
    t_in, t_out = g.type(g.inputs[0]), g.type(g.outputs[0])
    lo = t_in.q.scale[0] * (-128 - t_in.q.zero_point[0])
    hi = t_in.q.scale[0] * (127 - t_in.q.zero_point[0])
    x = np.random.default_rng(0).uniform(lo, hi, t_in.shape).astype(np.float32)
    (ref,), _ = run_tflm(MODEL, [quantize(x, t_in, HALF_AWAY)], 1)
    (out / "input.h").write_text(
        "/* The sample the example firmware runs (seeded random float features, quantized by\n"
        " * main.c), written by make_input.py. const: it stays in flash. */\n"
        f"static const float kws_features[{x.size}] = {{\n    {c_literal_list(x, 8)}\n}};\n")
    (out / "expected.txt").write_text(
        expected_line(ref, t_out.q.scale[0], t_out.q.zero_point[0]) + "\n")


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
