"""Every geometry record of the lowering (edgecc/lower/layout.py `record`, declared beside its
kernel in edgecc/lower/<isa>/) has exactly the fields of its C struct in runtime_c/, in the same
order: the Python side hands the struct's initializer positionally, so this is what keeps the
two in step."""
from __future__ import annotations

import importlib
import pkgutil
import re

import edgecc.lower
from edgecc.lower.layout import record
from edgecc.resources import data_dir

_STRUCT = re.compile(r"typedef\s+struct\s*\{(.*?)\}\s*(\w+)\s*;", re.S)


def c_structs() -> dict[str, list[str]]:
    """typedef struct name -> its field names, from every header under runtime_c/."""
    out: dict[str, list[str]] = {}
    for h in data_dir("runtime_c").rglob("*.h"):
        for body, name in _STRUCT.findall(h.read_text()):
            body = re.sub(r"/\*.*?\*/|//[^\n]*", "", body, flags=re.S)
            fields = []
            for decl in filter(None, (d.strip() for d in body.split(";"))):
                names = re.sub(r"^(const\s+|unsigned\s+)*\w+\s+", "", decl)
                fields += [re.sub(r"[\s*]|\[.*?\]", "", f) for f in names.split(",")]
            out[name] = fields
    return out


def records() -> list[type]:
    found = []
    for m in pkgutil.walk_packages(edgecc.lower.__path__, "edgecc.lower."):
        mod = importlib.import_module(m.name)
        found += [v for v in vars(mod).values()
                  if isinstance(v, type) and hasattr(v, "c_struct") and hasattr(v, "_fields")]
    return list({r.c_struct: r for r in found}.values())


def test_struct_parser():
    assert record("ec_x_geom", "a b").c_struct == "ec_x_geom"
    assert record("ec_x_geom", "a b").__name__ == "XGeom"


def test_records_match_their_c_structs():
    structs = c_structs()
    recs = records()
    assert len(recs) >= 18
    for r in recs:
        assert r.c_struct in structs, f"{r.__name__}: no struct {r.c_struct} in runtime_c/"
        assert list(r._fields) == structs[r.c_struct], r.__name__


def test_block_limits_come_from_the_c():
    """The stack-buffer bounds the lowering checks layers against are the headers' #defines
    (edgecc/lower/climits.py), not second copies."""
    import pytest

    from edgecc.lower.climits import c_define
    from edgecc.lower.vec import conv as vec
    from edgecc.lower.x86 import fc as x86_fc
    assert x86_fc.MAX_KP == c_define("x86/fully_connected_stream_passes.h", "EC_X86_FC_MAX_KP")
    assert vec.MAX_KP == c_define("vec/common.h", "EC_VEC_MAX_KP") > 0
    with pytest.raises(KeyError):
        c_define("vec/common.h", "EC_NO_SUCH_LIMIT")
