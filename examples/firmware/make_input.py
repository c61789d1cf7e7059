"""Writes examples/firmware/input.h (the sample the firmware runs, seeded random int8 "MFCC
features" for examples/kws_int8.tflite) and expected.txt (the line the firmware must print, from
TensorFlow Lite Micro on that sample). tests/test_firmware.py checks both are reproduced.

    python3 examples/firmware/make_input.py [OUT_FOLDER]
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
MODEL = HERE.parent / "kws_int8.tflite"


def expected_line(scores: np.ndarray) -> str:
    s = [int(x) for x in np.asarray(scores).ravel()]
    return f"kws: class {int(np.argmax(s))} scores " + " ".join(map(str, s))


def write(out: Path) -> None:
    from edgecc.codegen import c_literal_list
    from edgecc.compiler import load_model
    from edgecc.verify.reference import run_tflm, seeded_inputs
    g = load_model(MODEL)
    (x,) = seeded_inputs(g, 0)
    (ref,), _ = run_tflm(MODEL, [x], 1)
    (out / "input.h").write_text(
        "/* The sample the example firmware runs (seeded random int8 features), written by\n"
        " * make_input.py. const: it stays in flash. */\n#include <stdint.h>\n"
        f"static const int8_t kws_sample[{x.size}] = {{\n    {c_literal_list(x)}\n}};\n")
    (out / "expected.txt").write_text(expected_line(ref) + "\n")


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
