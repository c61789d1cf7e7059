"""Build hook: ship templates/, runtime_c/ and boards/ inside the wheel as edgecc/_data/<name>.

Owns: copying the three top-level data folders into the build tree (build_lib/edgecc/_data/) so a
plain `pip install .` or a wheel is enough for `edgecc compile`. The folders stay at the repository
root for source checkouts; edgecc/resources.py looks in edgecc/_data/ first, then at the root.
Everything else about the package is declared in pyproject.toml.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

DATA_DIRS = ("templates", "runtime_c", "boards")
REQUIRED = ("templates", "runtime_c")  # a wheel without these cannot compile anything
ROOT = Path(__file__).resolve().parent


def _data_files(src: Path) -> list[Path]:
    """Files under src that ship (no caches, objects or dotfiles), relative to src, sorted."""
    out = []
    for p in sorted(src.rglob("*")):
        rel = p.relative_to(src)
        if p.is_file() and not any(part.startswith(".") or part == "__pycache__" for part in rel.parts) \
                and p.suffix not in (".pyc", ".o"):
            out.append(rel)
    return out


class build_py_with_data(build_py):
    """build_py plus a copy of the data folders (an editable install reads them from the root)."""

    def _data_targets(self) -> list[tuple[Path, Path]]:
        dst_root = Path(self.build_lib) / "edgecc" / "_data"
        return [(ROOT / d, dst_root / d) for d in DATA_DIRS if (ROOT / d).is_dir()]

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # editable: edgecc/resources.py falls back to the checkout's folders
        missing = [d for d in REQUIRED if not (ROOT / d).is_dir()]
        if missing:
            raise RuntimeError(f"cannot build edgecc: missing data folders {missing} in {ROOT}")
        for src, dst in self._data_targets():
            if dst.exists():
                shutil.rmtree(dst)  # a stale copy must not keep deleted templates alive
            for rel in _data_files(src):
                (dst / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src / rel, dst / rel)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outs = list(super().get_outputs(include_bytecode))
        if not getattr(self, "editable_mode", False):
            for src, dst in self._data_targets():
                outs += [str(dst / rel) for rel in _data_files(src)]
        return outs


setup(cmdclass={"build_py": build_py_with_data})
