"""Exit status 3 for bugs in edgecc, 2 for bad input, and never a traceback or a library warning.

Every model of the shared folders goes through `compile` in-process: exit 0, or exit 2 with one
line (models other engineers are still making compile), never exit 3. A bug forced into an op's
lowering is one `edgecc: internal error: ... (op N, OPNAME)` line and exit 3, never "malformed".
"""
from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from conftest import SHARED
from edgecc import cli

FOLDERS = ("tflite", "converter", "onnx_models")
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "kws_int8.tflite"


def run_cli(argv, capsys) -> tuple[int, str, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning escaping main() would fail here
        try:
            code = cli.main([str(a) for a in argv])
        except SystemExit as e:  # argparse errors leave through exit(2), as from the shell
            code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def _shared_models() -> list[Path]:
    found = [p for f in FOLDERS for p in sorted((SHARED / "models" / f).glob("*.*"))
             if p.suffix in (".tflite", ".onnx")]
    return found


def test_shared_models_present():
    for f in FOLDERS:
        if not (SHARED / "models" / f).is_dir():
            pytest.fail(f"{SHARED / 'models' / f} is missing: the shared models must sit beside "
                        f"the checkout")
    assert len(_shared_models()) >= 30


@pytest.mark.parametrize("model", _shared_models(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_shared_model_compiles_or_one_line_refusal(model, tmp_path, capsys):
    code, out, err = run_cli(["compile", model, "-o", tmp_path, "--name", "m"], capsys)
    assert "Traceback" not in err
    assert code in (0, 2), err
    if code == 2:
        assert len(err.splitlines()) == 1 and err.startswith("edgecc: error: "), err
    else:
        assert err == ""


def test_bug_in_lowering_is_exit_3_naming_the_op(tmp_path, capsys, monkeypatch):
    from edgecc.ops import get_op
    op = get_op("SOFTMAX")

    def broken(g, n, target):
        raise ZeroDivisionError("boom")
    monkeypatch.setattr(op, "lower", broken)
    code, out, err = run_cli(["compile", EXAMPLE, "-o", tmp_path], capsys)
    assert code == 3
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("edgecc: internal error: ")
    assert "ZeroDivisionError: boom" in lines[0] and lines[0].endswith("(op 6, SOFTMAX)"), lines[0]
    assert "malformed" not in err and "invalid model" not in err


def test_bug_in_op_inference_is_not_blamed_on_the_model(tmp_path, capsys, monkeypatch):
    """issue 12 item 7: an exception in an op's `infer` at import was 'malformed TFLite model'."""
    from edgecc.ops import get_op
    op = get_op("FULLY_CONNECTED")

    def broken(g, n):
        raise TypeError("unsupported operand")
    monkeypatch.setattr(op, "infer", broken)
    code, out, err = run_cli(["compile", EXAMPLE, "-o", tmp_path, "--json"], capsys)
    assert code == 3, err
    assert err.startswith("edgecc: internal error: TypeError: unsupported operand")
    assert "FULLY_CONNECTED)" in err and "malformed" not in err
    assert '"internal": true' in out


def test_bug_outside_any_op_is_exit_3(tmp_path, capsys, monkeypatch):
    import edgecc.cli.compile as compile_verb

    def broken(*a, **k):
        raise RuntimeError("disk on fire")
    monkeypatch.setattr(compile_verb, "write_files", broken)  # the verb's own reference
    code, out, err = run_cli(["compile", EXAMPLE, "-o", tmp_path], capsys)
    assert code == 3 and err == "edgecc: internal error: RuntimeError: disk on fire\n"
