"""The compile cache (edgecc/compile_cache.py): a second compile of the same inputs is taken from
the cache and is byte-identical to an uncached compile; an entry of another edgecc version, other
options or other sources is not used; a corrupt, truncated or foreign entry is ignored (and
replaced); `edgecc compile` / `verify` use it unless --no-cache."""
from __future__ import annotations

import json
import shutil

import pytest

from conftest import shared_model
from edgecc import compile_cache as cc
from edgecc.cli import main
from edgecc.compiler import compile_model
from edgecc.options import CompileOptions
from edgecc.targets import get_target
from edgecc.verify import verify_model

M4 = get_target("cortex-m4")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("EDGECC_CACHE", str(root))
    monkeypatch.delenv("EDGECC_NO_CACHE", raising=False)
    return root / "compiled"


def _entries(root) -> list:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_second_compile_is_a_hit_and_byte_identical(cache):
    model = shared_model("micro_speech_quantized")
    first = cc.compile_cached(model, M4, "kws", None)
    again = cc.compile_cached(model, M4, "kws", None)
    plain = compile_model(model, M4, "kws")
    assert (first.stats["compile_cache"], again.stats["compile_cache"]) == ("miss", "hit")
    assert again.files == plain.files == first.files
    assert again.plan.arena == plain.plan.arena and again.weights_bytes == plain.weights_bytes
    assert [lw.kernel.variant for lw in again.lowered] == [lw.kernel.variant for lw in plain.lowered]
    assert len(_entries(cache)) == 1
    assert "compile_cache" not in cc.compile_cached(model, M4, "kws", None, use_cache=False).stats


def test_other_version_options_or_sources_are_not_used(cache, monkeypatch, tmp_path):
    model = shared_model("hello_world_int8")
    with monkeypatch.context() as mp:
        mp.setattr(cc, "VERSION", "0.0.0-elsewhere")
        assert cc.compile_cached(model, M4, "m", None).stats["compile_cache"] == "miss"
    assert cc.compile_cached(model, M4, "m", None).stats["compile_cache"] == "miss"
    fit = CompileOptions(scratch="fit")
    assert cc.compile_cached(model, M4, "m", fit).stats["compile_cache"] == "miss"
    assert cc.compile_cached(model, M4, "m2", None).stats["compile_cache"] == "miss"  # C name
    # edgecc's runtime_c/ edited (a copy with one more byte in a header): another key
    rt = tmp_path / "runtime_c"
    shutil.copytree(cc.data_dir("runtime_c"), rt)
    (rt / "edgecc_rt.h").write_text((rt / "edgecc_rt.h").read_text() + "\n")
    real = cc.data_dir
    key = cc.cache_key(model, M4, "m", CompileOptions())
    with monkeypatch.context() as mp:
        mp.setattr(cc, "data_dir", lambda n: rt if n == "runtime_c" else real(n))
        assert cc.cache_key(model, M4, "m", CompileOptions()) != key
    assert len(_entries(cache)) == 4
    assert cc.compile_cached(model, M4, "m", None).stats["compile_cache"] == "hit"


def _one_entry(cache, model):
    cc.compile_cached(model, M4, "m", None)
    path, = _entries(cache)
    return path


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage", "header"])
def test_corrupt_entry_is_ignored_and_replaced(cache, damage):
    model = shared_model("hello_world_int8")
    path = _one_entry(cache, model)
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[-10] ^= 0xFF
    elif damage == "truncate":
        data = data[:len(data) // 2]
    elif damage == "garbage":
        data = bytearray(b"\x80\x04not a pickle at all")
    else:
        data = data.replace(b"edgecc-compiled 1", b"edgecc-compiled 9", 1)
    path.write_bytes(bytes(data))
    c = cc.compile_cached(model, M4, "m", None)
    assert c.stats["compile_cache"] == "miss"
    assert c.files == compile_model(model, M4, "m").files
    assert cc.compile_cached(model, M4, "m", None).stats["compile_cache"] == "hit"  # rewritten


def test_foreign_entry_is_not_trusted(cache):
    """Another key's (whole, valid) entry copied to this key's file is not used: the header
    names its own key."""
    a, b = shared_model("hello_world_int8"), shared_model("micro_speech_quantized")
    pa = _one_entry(cache, a)
    kb = cc.cache_key(b, M4, "m", CompileOptions())
    cc.entry_path(kb).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(pa, cc.entry_path(kb))
    c = cc.compile_cached(b, M4, "m", None)
    assert c.stats["compile_cache"] == "miss"
    assert c.files == compile_model(b, M4, "m").files


def test_cli_compile_and_verify_use_the_cache(cache, tmp_path, capsys):
    model = str(shared_model("hello_world_int8"))
    outs = []
    for k, extra in enumerate([[], [], ["--no-cache"]]):
        out = tmp_path / f"out{k}"
        assert main(["compile", model, "--target", "cortex-m4", "-o", str(out), "--json",
                     *extra]) == 0
        outs.append((json.loads(capsys.readouterr().out)["compile_cache"],
                     {p.name: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}))
    assert [o[0] for o in outs] == ["miss", "hit", None]
    assert outs[0][1] == outs[1][1] == outs[2][1]
    r = verify_model(model, get_target("host"), cache=True)
    again = verify_model(model, get_target("host"), cache=True)
    assert r.bit_exact and again.bit_exact and len(_entries(cache)) == 2
