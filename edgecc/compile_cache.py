"""The compile cache: a second `edgecc compile` or `verify` of the same inputs reuses the compiled
result (`Compiled`: IR, kernels, plan and C files) instead of lowering the model again.

Owns: the key, the entry format, where entries live, and when one is used.
- Key: sha256 over the model file's bytes, the target (its whole definition), the C name, the
  CompileOptions, edgecc's version, the Python and numpy versions the entry was pickled with, and
  a hash of edgecc's own code (every .py of the package) and data (templates/, runtime_c/), so
  editing any of them, or changing an option, gives another key.
- Entry: `cache_dir()/compiled/<key[:2]>/<key>`: a header line (magic, format, the key, sha256 of
  the payload), then the pickled `Compiled`. An entry is used only when the header names this key
  and the payload's hash matches; anything else (corrupt, truncated, another version's or another
  key's file copied there, a payload that does not unpickle to a `Compiled` of this name) is
  ignored and rewritten, never trusted. Written to a temporary file and renamed, so a reader never
  sees half an entry, whichever of two processes writes last.
- Where: build's cache root (`edgecc.build.qemu.cache_dir`: $EDGECC_CACHE, else the platform's
  cache folder: $XDG_CACHE_HOME/edgecc or ~/.cache/edgecc on Linux). The split: build/ caches what
  comes after the C (the cached runner programs, keyed by the generated C, board and compiler, and
  the QEMU plugin); this caches what comes before it (keyed by the compiler's inputs).
The payload is a pickle: the cache folder is the user's own, as ~/.cache is; the hash protects
against corruption, not against someone who can write there.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from edgecc.build.qemu import cache_dir
from edgecc.compiler import Compiled, compile_model
from edgecc.errors import EdgeccError
from edgecc.options import CompileOptions
from edgecc.resources import data_dir
from edgecc.targets import Target
from edgecc.validate.limits import check_model_file
from edgecc.version import __version__ as VERSION

MAGIC = b"edgecc-compiled 1"
PACKAGE = Path(__file__).resolve().parent
_SOURCES: dict[tuple, str] = {}  # (folders, their files' stat) -> hash, per process


def _files(root: Path, suffixes: tuple[str, ...] | None) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                  and (suffixes is None or p.suffix in suffixes))


def sources_hash() -> str:
    """sha256 of edgecc's own code and data: the package's .py files, templates/ and runtime_c/
    (as data_dir finds them now). Recomputed when a file's size or mtime changes."""
    roots = [(PACKAGE, (".py",)), (data_dir("templates"), None), (data_dir("runtime_c"), None)]
    files = [(i, p) for i, (r, s) in enumerate(roots) for p in _files(r, s)]
    stat = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for _, p in files)
    if stat not in _SOURCES:
        h = hashlib.sha256()
        for i, p in files:
            h.update(f"{i}:{p.relative_to(roots[i][0]).as_posix()}\0".encode())
            h.update(p.read_bytes() + b"\0")
        _SOURCES.clear()
        _SOURCES[stat] = h.hexdigest()
    return _SOURCES[stat]


def cache_key(model: str | Path, target: Target, name: str, options: CompileOptions) -> str:
    h = hashlib.sha256()
    h.update(Path(model).read_bytes())
    for part in (repr(target), name, repr(options), VERSION, sources_hash(),
                 f"python {sys.version_info[:2]} numpy {np.__version__}"):
        h.update(b"\0" + part.encode())
    return h.hexdigest()


def entry_path(key: str) -> Path:
    return cache_dir() / "compiled" / key[:2] / key


def read_entry(path: Path, key: str, name: str) -> Compiled | None:
    """The entry at `path` when it is whole and this key's, else None."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head, sep, payload = data.partition(b"\n")
    parts = head.split(b" ")
    if not sep or len(parts) != 4 or b" ".join(parts[:2]) != MAGIC:
        return None
    if parts[2].decode("ascii", "replace") != key or \
            parts[3].decode("ascii", "replace") != hashlib.sha256(payload).hexdigest():
        return None
    try:
        c = pickle.loads(payload)
    except Exception:  # noqa: BLE001 - a payload from elsewhere: ignored, never trusted
        return None
    return c if isinstance(c, Compiled) and c.name == name else None


def write_entry(path: Path, key: str, c: Compiled) -> None:
    """Atomically: a temporary file in the same folder, renamed over the entry."""
    payload = pickle.dumps(c, protocol=pickle.HIGHEST_PROTOCOL)
    head = b" ".join([MAGIC, key.encode(), hashlib.sha256(payload).hexdigest().encode()])
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(head + b"\n" + payload)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def compile_cached(model: str | Path, target: Target, name: str,
                   options: CompileOptions | None, use_cache: bool = True) -> Compiled:
    """compile_model(model, target, name, options), from the cache when an entry of the same
    inputs is there (`stats["compile_cache"]`: "hit", "miss"; not set without the cache)."""
    options = (options or CompileOptions()).check()
    try:
        check_model_file(Path(model))  # a regular file under the size limit before hashing it
    except EdgeccError:
        use_cache = False  # compile_model says what is wrong with it, in its words
    if not use_cache:
        return compile_model(model, target, name, options)
    t0 = time.perf_counter()
    key = cache_key(model, target, name, options)
    path = entry_path(key)
    c = read_entry(path, key, name)
    if c is not None:
        c.seconds = time.perf_counter() - t0
        c.stats["compile_cache"] = "hit"
        return c
    c = compile_model(model, target, name, options)
    try:
        write_entry(path, key, c)
    except OSError:  # a read-only or full cache folder: compiling still works
        pass
    c.stats["compile_cache"] = "miss"
    return c
