"""The `edgecc` command line as a user meets it, run as a real subprocess.

Bad input (malformed files, unsupported ops, bad arguments) gives one line on stderr and exit 2,
never a traceback; model strings cannot reach generated C except as sanitized text; `compile` is
deterministic; the generated C builds warning-free with gcc and clang and keeps the C API contract
of docs/design.md (checked on the parsed C with pycparser).
"""
from __future__ import annotations

import os
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from c_contract import check_c_api_contract

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "kws_int8.tflite"
CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]


def edgecc(*args, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "edgecc", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


def assert_one_line_error(r: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in r.stderr + r.stdout, r.stderr
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("edgecc: error: "), lines[0]
    return lines[0]


# ---- malformed and unsupported models --------------------------------------------------------

def _malformed(kind: str, tmp: Path) -> Path:
    data = EXAMPLE.read_bytes()
    p = tmp / f"{kind}.tflite"
    if kind == "missing":
        return p
    if kind == "directory":
        p.mkdir()
        return p
    p.write_bytes({
        "empty": b"",
        "not_flatbuffer": b"hello, this is a text file and not a model\n" * 4,
        "wrong_magic": data[:4] + b"TFL2" + data[8:],
        "truncated_header": data[:12],
        "truncated_half": data[:len(data) // 2],
        "truncated_tail": data[:len(data) - 16],
        "garbage_after_magic": data[:8] + bytes(range(256)) * 4,
    }[kind])
    return p


@pytest.mark.parametrize("kind", ["empty", "not_flatbuffer", "wrong_magic", "truncated_header",
                                  "truncated_half", "truncated_tail", "garbage_after_magic",
                                  "missing", "directory"])
@pytest.mark.parametrize("verb", ["compile", "verify"])
def test_malformed_model_is_one_line_exit_2(kind, verb, tmp_path):
    model = _malformed(kind, tmp_path)
    extra = ["-o", tmp_path / "out"] if verb == "compile" else []
    line = assert_one_line_error(edgecc(verb, model, *extra, cwd=tmp_path))
    assert model.name in line  # says which file
    assert not (tmp_path / "out").exists()


def _fc(mb: ModelBuilder, x: int, depth: int, units: int, name: str) -> int:
    rng = np.random.default_rng(units * 1000 + depth)
    w = mb.const(f"{name}/w", rng.integers(-127, 128, (units, depth)).astype(np.int8), scale=0.01)
    b = mb.const(f"{name}/b", rng.integers(-500, 500, (units,)).astype(np.int32), scale=0.0005)
    y = mb.tensor(name, (1, units), "int8", scale=0.2, zero_point=-3)
    mb.op("FULLY_CONNECTED", [x, w, b], [y], {"fused_activation_function": 0}, version=4)
    return y


def test_unsupported_ops_are_all_listed(tmp_path):
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 8), "int8", scale=0.1, zero_point=0)
    y = _fc(mb, x, 8, 6, "fc")  # supported op 0
    z = mb.tensor("z", (1, 6), "int8", scale=0.1, zero_point=0)
    mb.op("SKIP_GRAM", [y], [z], version=1)  # op 1
    w = mb.tensor("w", (1, 6), "int8", scale=0.1, zero_point=0)
    mb.op("LSH_PROJECTION", [z], [w], version=2)  # op 2
    model = tmp_path / "two_unsupported.tflite"
    model.write_bytes(mb.finish([x], [w]))
    line = assert_one_line_error(edgecc("compile", model, "-o", tmp_path / "out", cwd=tmp_path))
    for name, version, index in (("SKIP_GRAM", 1, 1), ("LSH_PROJECTION", 2, 2)):
        entry = re.search(rf"{name}\b[^;]*", line)
        assert entry, (name, line)
        assert re.search(rf"\bv(ersion )?{version}\b", entry.group(0)), (name, line)
        assert re.search(rf"\bop (index )?{index}\b", entry.group(0)), (name, line)
    assert "FULLY_CONNECTED" not in line
    assert_one_line_error(edgecc("verify", model, cwd=tmp_path))


def test_structurally_broken_model_is_one_line_exit_2(tmp_path):
    mb = ModelBuilder()  # ops listed out of execution order: op 0 reads what op 1 writes
    x = mb.tensor("x", (1, 4), "int8", scale=0.1, zero_point=0)
    y = _fc(mb, x, 4, 4, "y")
    _fc(mb, y, 4, 4, "z")
    mb.ops.reverse()
    model = tmp_path / "out_of_order.tflite"
    model.write_bytes(mb.finish([x], [len(mb.tensors) - 1]))
    line = assert_one_line_error(edgecc("compile", model, "-o", tmp_path / "out", cwd=tmp_path))
    assert "op 0" in line


# ---- arguments -------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    [],
    ["frobnicate"],
    ["compile"],
    ["compile", "MODEL"],  # no -o
    ["compile", "MODEL", "-o", "OUT", "--target", "pdp11"],
    ["compile", "MODEL", "-o", "OUT", "--no-such-flag"],
    ["compile", "MODEL", "-o", "OUT", "--board", "no-such-board"],
    ["compile", "MODEL", "-o", "/dev/null/out"],  # output folder cannot be created
    ["verify", "MODEL", "--seed", "zero"],
    ["verify", "MODEL", "--cc", "tcc"],
])
def test_bad_arguments_are_one_line_exit_2(args, tmp_path):
    args = [str(EXAMPLE) if a == "MODEL" else str(tmp_path / "out") if a == "OUT" else a
            for a in args]
    assert_one_line_error(edgecc(*args, cwd=tmp_path))


# ---- what compile writes ---------------------------------------------------------------------

# Model strings that would break C if pasted raw: close a comment, inject a directive, continue a
# line (backslash, the ??/ trigraph), non-ASCII, very long, empty.
HOSTILE = ['*/ #include <x> "\n', "/* open", "// line ??/", "back\\", "#define A 1",
           "\u00e9t\u00e9 \u2603", "x" * 500, ""]
# fragments of them that must not appear in the code once comments are removed
FRAGMENTS = ["<x>", "open", "// line", "back", "A 1", "xxxxxxxx", "evil"]


def _hostile_model(path: Path) -> None:
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 16), "int8", scale=0.1, zero_point=2)
    y = _fc(mb, _fc(mb, x, 16, 8, "h"), 8, 4, "y")
    names = [HOSTILE[0], HOSTILE[1] + HOSTILE[6], HOSTILE[2], HOSTILE[3], HOSTILE[4], HOSTILE[5],
             HOSTILE[7]]
    for t, name in zip(mb.tensors, names, strict=True):
        t.name = name
    path.write_bytes(mb.finish([x], [y]))


def _code_only(text: str) -> str:
    """The C without its comments and string literals (its only ones, the NAME_INPUTi_NAME
    macros, hold the tensor names as sanitized text: [A-Za-z0-9_.:/-], checked here too)."""
    strings = re.findall(r'^\s*#\s*define\s+\w+\s+("[^\n]*)$', text, re.M)
    assert all(re.fullmatch(r'"[A-Za-z0-9_.:/-]*"', s) for s in strings), strings
    text = re.sub(r'^(\s*#\s*define\s+\w+\s+)"[A-Za-z0-9_.:/-]*"', r'\1""', text, flags=re.M)
    return re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", " ", text, flags=re.S))


def _compile_c(cc: str, out: Path, tmp: Path, name: str) -> None:
    """Build every OUT/*.c with a main that runs the model once; run it."""
    main = tmp / f"main_{name}.c"
    main.write_text(f"""#include <string.h>
#include "{name}.h"
static uint8_t arena[{name.upper()}_ARENA_SIZE + 16];
int main(void) {{
    uint8_t *a = arena + ((16 - ((uintptr_t)arena & 15)) & 15);
    memset({name}_input(a, 0), 3, {name.upper()}_INPUT0_SIZE);
    if ({name}_input(a, {name.upper()}_INPUT_COUNT) != 0) return 3;
    if ({name}_output(a, 0) == 0) return 4;
    {name}_reset(a);
    return {name}_run(a) == 0 ? 0 : 5;
}}
""")
    exe = tmp / f"prog_{cc}_{name}"
    r = subprocess.run([cc, *CFLAGS, "-O1", "-I", str(out), str(main),
                        *map(str, sorted(out.glob("*.c"))), "-o", str(exe)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(exe)], capture_output=True, timeout=60)
    assert r.returncode == 0, r.returncode


def test_hostile_tensor_names_never_reach_c_raw(tmp_path):
    model = tmp_path / 'evil * #x "y\\.tflite'  # a file name cannot hold '/'
    _hostile_model(model)
    out = tmp_path / "out"
    r = edgecc("compile", model, "--target", "host", "--name", "*/ 9kws", "-o", out, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    # the C (the manifest is JSON: model strings there are escaped data, never code)
    texts = {p.name: p.read_text() for p in out.iterdir() if p.suffix in (".c", ".h")}
    assert json.loads((out / "m_9kws.manifest.json").read_text())["name"] == "m_9kws"
    api = [n[:-2] for n in texts if n.endswith(".h") and not n.startswith("edgecc")]
    assert len(api) == 1 and re.fullmatch(r"[a-z_][a-z0-9_]*", api[0]), sorted(texts)
    for fname, text in texts.items():
        assert text.isascii(), fname
        assert HOSTILE[0] not in text and "*/ #" not in text and "??/" not in text, fname
        code = _code_only(text)
        for frag in FRAGMENTS:
            assert frag not in code, (fname, frag)
        if not fname.startswith("edgecc_"):  # runtime headers are copied verbatim, not rendered
            for ln in text.splitlines():
                assert not ln.rstrip().endswith("\\"), (fname, ln)  # no line continuation
        for ln in code.splitlines():
            if ln.lstrip().startswith("#include"):  # no directive came from a model string
                assert re.fullmatch(r'\s*#include [<"][a-z0-9_]+\.h[>"]\s*', ln), (fname, ln)
    for cc in ("gcc", "clang"):
        _compile_c(cc, out, tmp_path, api[0])
    check_c_api_contract(out, api[0], tmp_path)


def test_compile_is_deterministic(tmp_path):
    outs = []
    for i in range(2):
        out = tmp_path / f"out{i}"
        cwd = tmp_path / f"cwd{i}"
        cwd.mkdir()
        r = edgecc("compile", EXAMPLE, "--target", "host", "--name", "kws", "-o", out, cwd=cwd)
        assert r.returncode == 0, r.stderr
        outs.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert outs[0].keys() == outs[1].keys()
    for k in outs[0]:
        assert outs[0][k] == outs[1][k], k


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_generated_c_is_pedantic_c99_and_keeps_the_api_contract(cc, tmp_path):
    out = tmp_path / "out"
    r = edgecc("compile", EXAMPLE, "--target", "host", "--name", "kws", "-o", out, "--json",
               cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("\n") == 1 and r.stdout.lstrip().startswith("{")  # one JSON object
    assert {p.name for p in out.iterdir()} >= {"kws.h", "kws.c"}
    _compile_c(cc, out, tmp_path, "kws")
    macros = check_c_api_contract(out, "kws", tmp_path)
    assert macros["KWS_INPUT0_SIZE"] == 49 * 10 and macros["KWS_OUTPUT0_SIZE"] == 12


def test_console_script(tmp_path):
    exe = Path(sys.executable).parent / "edgecc"
    exe = exe if exe.exists() else shutil.which("edgecc")
    if exe is None:
        pytest.fail("the `edgecc` console script is not installed (pip install -e .)")
    r = subprocess.run([str(exe), "compile", str(EXAMPLE), "--target", "host", "--name", "kws",
                        "-o", "out"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / "kws.h").is_file()
    r = subprocess.run([str(exe), "compile", str(tmp_path / "nope.tflite"), "-o", "out"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert_one_line_error(r)


# ---- small things: --version, sizes, a closed pipe -------------------------------------------

def test_version_exits_0(tmp_path):
    from edgecc.version import __version__
    r = edgecc("--version", cwd=tmp_path)
    assert (r.returncode, r.stdout.strip(), r.stderr) == (0, f"edgecc {__version__}", "")


@pytest.mark.parametrize("text, n", [("30KiB", 30 * 1024), ("30 KiB", 30 * 1024), ("1MiB", 1 << 20),
                                     ("2M", 2 << 20), ("30720", 30720), ("0x8000", 0x8000)])
def test_size_flags_read_kib_and_mib_as_board_files_do(text, n):
    from edgecc.build.boards import parse_size
    from edgecc.cli import build_parser
    args = build_parser().parse_args(["budget", "m.tflite", "--board", "b", "--ram-limit", text,
                                      "--flash-limit", text])
    assert args.ram_limit == args.flash_limit == n == parse_size(text, "x")


@pytest.mark.parametrize("text", ["30QiB", "-5", "0", "KiB"])
def test_bad_sizes_are_one_line_exit_2(text, tmp_path):
    line = assert_one_line_error(edgecc("budget", EXAMPLE, "--board", "nrf52840-dk",
                                        "--ram-limit", text, cwd=tmp_path))
    assert "--ram-limit" in line


@pytest.mark.parametrize("args", [["ops", "--json"], ["compile", "MODEL", "-o", "OUT", "--json"],
                                  ["plan", "MODEL", "--json"]])
def test_closed_stdout_ends_quietly(args, tmp_path):
    """`edgecc ... --json | head -c1`: the reader is gone before edgecc writes; no 'Broken pipe'
    line, no traceback, exit 141 (128 + SIGPIPE, as git and coreutils report it)."""
    args = [str(EXAMPLE) if a == "MODEL" else str(tmp_path / "out") if a == "OUT" else a
            for a in args]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.Popen([sys.executable, "-m", "edgecc", *args], cwd=tmp_path, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    p.stdout.close()  # as `head -c1` exits after its byte
    err = p.stderr.read().decode()
    assert (p.wait(timeout=300), err) == (141, "")
    # and through a shell pipe, as a user types it
    r = subprocess.run(["sh", "-c", " ".join([shlex.quote(sys.executable), "-m", "edgecc",
                                              *map(shlex.quote, args), "| head -c1"])],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.stdout == "{" and r.stderr == "", r.stderr


def test_one_lower_bound_everywhere(tmp_path):
    """compile, verify, plan, report, the manifest and every --json give one "lower bound": the
    live-bytes lower bound (model order, every tensor its own bytes), which `plan` defines; the
    planned buffers' own peak, where shown, is the "planned peak" (at a931260 compile and verify
    printed the planned peak as the lower bound)."""
    from conftest import shared_model
    model = shared_model("kws_ref_model")  # arena 10,112 B on host; the two figures differ
    plan = json.loads(edgecc("plan", model, "--json", cwd=tmp_path).stdout)
    lb, peak = plan["lower_bound_bytes"], plan["planned_peak_bytes"]
    assert lb != peak
    comp = edgecc("compile", model, "-o", tmp_path / "o", "--name", "kws", "--json", cwd=tmp_path)
    ver = edgecc("verify", model, "--json", cwd=tmp_path)
    for r in (comp, ver):
        info = json.loads(r.stdout)
        assert (info["lower_bound_bytes"], info["planned_peak_bytes"]) == (lb, peak), r.args
        assert "model_lower_bound_bytes" not in info
    man = json.loads((tmp_path / "o" / "kws.manifest.json").read_text())
    assert (man["lower_bound_bytes"], man["planned_peak_bytes"]) == (lb, peak)
    assert f"live-bytes lower bound {lb})" in (tmp_path / "o" / "kws.c").read_text()
    out = edgecc("compile", model, "-o", tmp_path / "p", cwd=tmp_path).stdout
    assert f"lower bound {lb} B" in out, out
    assert f"lower bound {lb} B" in edgecc("plan", model, cwd=tmp_path).stdout
    assert edgecc("report", model, "-o", tmp_path / "r.html", cwd=tmp_path).returncode == 0
    html = (tmp_path / "r.html").read_text()
    assert f"{lb:,} B" in html and f"{peak:,} B" in html
