"""examples/ and the README stay true.

examples/make_example.py reproduces the committed examples/kws_int8.tflite byte for byte; that model
is bit-exact with TFLite Micro through the numpy reference and the generated C (gcc and clang); the
README's quick-start `edgecc compile` / `edgecc verify` commands work as written; its C snippet
builds against the generated header.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from opcheck import check_model

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "kws_int8.tflite"
README = REPO / "README.md"


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))


def test_make_example_reproduces_the_committed_model(tmp_path):
    out = tmp_path / "kws.tflite"
    r = subprocess.run([sys.executable, str(REPO / "examples" / "make_example.py"), "-o", str(out)],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300, env=_env())
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == EXAMPLE.read_bytes(), \
        "examples/kws_int8.tflite is stale: run python3 examples/make_example.py and commit it"


def test_example_is_a_small_cnn():
    from edgecc.frontends.tflite import load_tflite
    g = load_tflite(EXAMPLE)
    ops = [n.op for n in g.nodes]
    for op in ("CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "FULLY_CONNECTED", "SOFTMAX"):
        assert op in ops, ops
    assert EXAMPLE.stat().st_size < 64 * 1024


def test_example_is_bit_exact_with_tflm():
    check_model(EXAMPLE.read_bytes(), seeds=(0, 1), compilers=("gcc", "clang"))


def _readme_commands() -> list[list[str]]:
    """The `edgecc compile|verify ...` steps of the README's quick-start command (a)."""
    text = README.read_text()
    steps = re.findall(r"&& \.venv/bin/edgecc ((?:compile|verify) [^&\n`]*)", text)
    return [shlex.split(s) for s in steps]


def test_readme_quickstart_commands_work(tmp_path):
    cmds = _readme_commands()
    assert [c[0] for c in cmds] == ["compile", "verify"], cmds
    shutil.copytree(REPO / "examples", tmp_path / "examples")  # the README runs from the repo root
    for cmd in cmds:
        r = subprocess.run([sys.executable, "-m", "edgecc", *cmd], cwd=tmp_path, env=_env(),
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, (cmd, r.stdout, r.stderr)
    assert "bit-exact" in r.stdout
    out = tmp_path / cmds[0][cmds[0].index("-o") + 1]
    assert {"kws.h", "kws.c"} <= {p.name for p in out.iterdir()}


def test_readme_c_snippet_builds_and_runs(tmp_path):
    blocks = re.findall(r"```c\n(.*?)```", README.read_text(), re.S)
    snippet = next(b for b in blocks if '#include "kws.h"' in b)
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "edgecc", "compile", str(EXAMPLE), "--target", "host",
                        "--name", "kws", "-o", str(out)], env=_env(), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    prog = tmp_path / "app.c"
    prog.write_text(snippet + """
int main(void) {
    int8_t features[KWS_INPUT0_SIZE] = {0};
    int8_t scores[KWS_OUTPUT0_SIZE];
    int i, total = 0;
    if (classify(features, scores) != 0) return 1;
    for (i = 0; i < KWS_OUTPUT0_SIZE; i++) total += scores[i] + 128;
    return total > 0 ? 0 : 2; /* softmax scores are not all zero */
}
""")
    exe = tmp_path / "app"
    r = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", str(out), str(prog),
                        *map(str, sorted(out.glob("*.c"))), "-o", str(exe)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert subprocess.run([str(exe)], timeout=60).returncode == 0
