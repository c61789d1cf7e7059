"""The wheel is enough: build it from a clean clone, install it into a fresh venv, compile from
a folder outside the repository. The extras are what they say: `[verify]` brings every third-party
package the installed package imports beyond its dependencies (the references verify calls, pytest
for the plugin), read from the package's own imports and the project's metadata.

templates/, runtime_c/ and boards/ must ship inside the wheel as edgecc/_data/<name> (setup.py's
build hook); the installed package must find them there, not in a source checkout.
"""
from __future__ import annotations

import ast
import importlib.metadata
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "kws_int8.tflite"
DATA_DIRS = ("templates", "runtime_c", "boards")


def _dist(requirement: str) -> str:
    """A requirement's distribution name, normalized (PEP 503)."""
    return re.sub(r"[-_.]+", "-", re.split(r"[\s;<>=!~\[]", requirement, 1)[0]).lower()


def _third_party_imports() -> dict[str, list[str]]:
    """Top-level modules the edgecc package imports that are neither the standard library nor
    edgecc itself -> the files importing them."""
    found: dict[str, list[str]] = {}
    for f in sorted((REPO / "edgecc").rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for n in names:
                top = n.split(".")[0]
                if top != "edgecc" and top not in sys.stdlib_module_names:
                    found.setdefault(top, []).append(f.relative_to(REPO).as_posix())
    return found


def test_verify_extra_brings_everything_beyond_the_dependencies():
    """Each third-party module edgecc imports comes from a dependency or from the [verify]
    extra (onnxruntime for ONNX models, ai-edge-litert for what TFLite Micro cannot run, pytest
    for the plugin), and [test] keeps the developer set."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    deps = {_dist(r) for r in project["dependencies"]}
    extras = project["optional-dependencies"]
    verify = {_dist(r) for r in extras["verify"]}
    dists = importlib.metadata.packages_distributions()  # module -> distributions providing it
    missing = {}
    for module, files in _third_party_imports().items():
        provided = {_dist(d) for d in dists.get(module, [module])}
        if not provided & (deps | verify):
            missing[module] = (sorted(provided), files)
    assert not missing, f"imported, but neither a dependency nor in [verify]: {missing}"
    assert {"tflite-micro", "ai-edge-litert", "onnxruntime", "pytest"} <= verify
    assert {"pytest", "pytest-xdist", "hypothesis", "build"} <= {_dist(r) for r in extras["test"]}


def run(cmd: list, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True,
                       timeout=timeout, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, (cmd, r.stdout[-3000:], r.stderr[-3000:])
    return r


def test_wheel_from_clean_clone_installs_and_compiles(tmp_path):
    clone = tmp_path / "clone"
    run(["git", "clone", "--quiet", REPO, clone], tmp_path)
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp_path / "dist", clone],
        tmp_path)
    wheels = list((tmp_path / "dist").glob("edgecc-*.whl"))
    assert len(wheels) == 1, wheels

    # every tracked data file ships, under edgecc/_data/
    names = set(zipfile.ZipFile(wheels[0]).namelist())
    # the built metadata: [verify] brings the references and pytest
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    requires = zipfile.ZipFile(wheels[0]).read(meta).decode()
    for dist in ("tflite-micro", "ai-edge-litert", "onnxruntime", "pytest"):
        assert f'Requires-Dist: {dist}; extra == "verify"' in requires, (dist, requires)
    tracked = run(["git", "ls-files", *DATA_DIRS], clone).stdout.split()
    assert any(t.startswith("templates/") for t in tracked)
    assert "runtime_c/edgecc_rt.h" in tracked
    assert "runtime_c/dsp/common.h" in tracked  # the ISA sub-folders ship too
    missing = [t for t in tracked if f"edgecc/_data/{t}" not in names]
    assert not missing, missing

    # a fresh venv; dependencies come from the system site-packages (no network needed)
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", venv], tmp_path)
    py, exe = venv / "bin" / "python", venv / "bin" / "edgecc"
    run([py, "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", wheels[0]], tmp_path)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "kws.tflite").write_bytes(EXAMPLE.read_bytes())
    probe = run([py, "-c", "import edgecc, edgecc.resources as r; "
                 "print(edgecc.__file__); print(r.data_dir('templates'))"], elsewhere).stdout.split()
    assert all(Path(p).resolve().is_relative_to(venv.resolve()) for p in probe), probe
    assert Path(probe[1]).parts[-2:] == ("_data", "templates")

    r = run([exe, "compile", "kws.tflite", "--target", "host", "--name", "kws", "-o", "out",
             "--json"], elsewhere)
    info = json.loads(r.stdout)
    assert info["arena_bytes"] > 0
    out = elsewhere / "out"
    assert {"kws.h", "kws.c", "edgecc_rt.h"} <= {p.name for p in out.iterdir()}
    run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-c", "-I", out,
         *sorted(out.glob("*.c"))], elsewhere)
    r = run([exe, "verify", "kws.tflite", "--target", "host"], elsewhere)
    assert "bit-exact" in r.stdout
