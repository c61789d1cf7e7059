"""Checking generated C against docs/design.md's C API contract on the parsed code (pycparser).

Used by tests: `check_c_api_contract(out_dir, name, tmp)` asserts that NAME.h defines the size and
count macros as plain integer literals, the typed I/O macros of every input and output (NAME,
DTYPE, RANK, DIMS, ELEMENTS, and SCALE / ZERO_POINT with the quantize / dequantize helpers for a
quantized one: `typed_io` reads them back), that NAME.h and NAME.c declare/define name_input,
name_output, name_reset and name_run with exactly the contract's signatures (external linkage), and that no
generated .c file holds a mutable file-scope object (everything mutable lives in the arena). The C
is preprocessed by gcc against a tiny fake libc (typedefs only), so pycparser never sees the GNU
extensions of the real system headers.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from pycparser import c_ast, c_parser

_FAKE_COMMON = """#ifndef FAKE_LIBC_COMMON_H
#define FAKE_LIBC_COMMON_H
typedef signed char int8_t; typedef unsigned char uint8_t;
typedef short int16_t; typedef unsigned short uint16_t;
typedef int int32_t; typedef unsigned int uint32_t;
typedef long long int64_t; typedef unsigned long long uint64_t;
typedef long intptr_t; typedef unsigned long uintptr_t;
typedef unsigned long size_t; typedef long ptrdiff_t;
typedef int bool;
#define true 1
#define false 0
#define NULL ((void *)0)
#define INT8_MIN (-128)
#define INT8_MAX 127
#define UINT8_MAX 255
#define INT16_MIN (-32768)
#define INT16_MAX 32767
#define UINT16_MAX 65535
#define INT32_MIN (-2147483647 - 1)
#define INT32_MAX 2147483647
#define UINT32_MAX 4294967295U
#define INT64_MIN (-9223372036854775807LL - 1)
#define INT64_MAX 9223372036854775807LL
#define UINT64_MAX 18446744073709551615ULL
#define SIZE_MAX 18446744073709551615UL
#define INT_MIN (-2147483647 - 1)
#define INT_MAX 2147483647
#define CHAR_BIT 8
#define INT64_C(x) x##LL
#define UINT64_C(x) x##ULL
#define INT32_C(x) x
void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
void *memmove(void *dst, const void *src, size_t n);
#endif
"""
_FAKE_HEADERS = ("stdint.h", "stddef.h", "string.h", "stdbool.h", "limits.h", "inttypes.h")

# docs/design.md: void *name_input(uint8_t *arena, int index);
#            const void *name_output(const uint8_t *arena, int index);
#            void name_reset(uint8_t *arena);
#            int name_run(uint8_t *arena);
API = {
    "input": ("void *", ["uint8_t *", "int"]),
    "output": ("const void *", ["const uint8_t *", "int"]),
    "reset": ("void", ["uint8_t *"]),
    "run": ("int", ["uint8_t *"]),
}


def _fake_libc(tmp: Path) -> Path:
    d = tmp / "fake_libc"
    d.mkdir(exist_ok=True)
    (d / "_fake_common.h").write_text(_FAKE_COMMON)
    for h in _FAKE_HEADERS:
        (d / h).write_text('#include "_fake_common.h"\n')
    return d


def parse_c(path: Path, include: Path, tmp: Path) -> c_ast.FileAST:
    r = subprocess.run(["gcc", "-E", "-P", "-std=c99", "-nostdinc", "-undef", "-I", str(_fake_libc(tmp)),
                        "-I", str(include), str(path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return c_parser.CParser().parse(r.stdout, str(path))


def _type(t) -> str:
    if isinstance(t, c_ast.PtrDecl):
        return _type(t.type) + " *" + "".join(f" {q}" for q in t.quals)
    if isinstance(t, c_ast.TypeDecl):
        assert isinstance(t.type, c_ast.IdentifierType), t
        return " ".join([*t.quals, *t.type.names])
    if isinstance(t, c_ast.ArrayDecl):
        return _type(t.type) + "[]"
    raise AssertionError(f"unexpected type node {type(t).__name__}")


def signature(func: c_ast.FuncDecl) -> tuple[str, list[str]]:
    params = [_type(p.type) for p in (func.args.params if func.args else [])]
    return _type(func.type), [] if params == ["void"] else params


def _is_const_object(t) -> bool:
    while isinstance(t, c_ast.ArrayDecl):
        t = t.type
    return "const" in t.quals


# the macros that are plain decimal integer literals (docs/design.md: "the size macros are plain
# integer literals"); the typed I/O's NAME, DTYPE, DIMS, SCALE, ZERO_POINT are read by typed_io
_INTEGER = re.compile(r"_(ARENA_SIZE|INPUT_COUNT|OUTPUT_COUNT|IO_EXTERNAL|"
                      r"(INPUT|OUTPUT)\d+_(SIZE|RANK|ELEMENTS))$")
DTYPES = {"EDGECC_INT8": 1, "EDGECC_UINT8": 1, "EDGECC_INT16": 2, "EDGECC_INT32": 4,
          "EDGECC_FLOAT32": 4, "EDGECC_INT64": 8, "EDGECC_BOOL": 1, "EDGECC_UINT16": 2,
          "EDGECC_UINT32": 4, "EDGECC_UINT64": 8, "EDGECC_FLOAT64": 8}


def _defines(h: Path, name: str) -> dict[str, str]:
    out = {}
    for m in re.finditer(rf"^\s*#\s*define\s+({name.upper()}_\w+)[ \t]+(.*)$", h.read_text(), re.M):
        out[m.group(1)] = re.sub(r"/\*.*?\*/", "", m.group(2)).strip()
    return out


def header_macros(h: Path, name: str) -> dict[str, int]:
    """NAME_* size, count, rank and element-count macros of the header; each must be a plain
    decimal integer literal."""
    macros = {}
    for key, value in _defines(h, name).items():
        if _INTEGER.search(key):
            assert re.fullmatch(r"\d+", value), f"{key} is {value!r}, not an integer literal"
            macros[key] = int(value)
    return macros


def typed_io(h: Path, name: str) -> dict[str, dict]:
    """{"INPUT0": {name, dtype, rank, dims, elements, size, scale, zero_point}, ...} as NAME.h
    defines them (scale and zero_point None for a tensor that is not quantized)."""
    d, NAME = _defines(h, name), name.upper()
    out = {}
    for kind in ("INPUT", "OUTPUT"):
        for i in range(int(d[f"{NAME}_{kind}_COUNT"])):
            p = f"{NAME}_{kind}{i}_"
            text = d[p + "NAME"]
            assert re.fullmatch(r'"[A-Za-z0-9_.:/-]*"', text), (p + "NAME", text)
            dims = d[p + "DIMS"]
            assert re.fullmatch(r"\{\d+(, \d+)*\}", dims), (p + "DIMS", dims)
            scale, zp = d.get(p + "SCALE"), d.get(p + "ZERO_POINT")
            assert (scale is None) == (zp is None), p
            if scale is not None:
                assert re.fullmatch(r"\d+(\.\d*)?(e[-+]?\d+)?f", scale), (p + "SCALE", scale)
                assert re.fullmatch(r"\d+|\(-\d+\)", zp), (p + "ZERO_POINT", zp)
            out[f"{kind}{i}"] = dict(
                name=text[1:-1], dtype=d[p + "DTYPE"], rank=int(d[p + "RANK"]),
                dims=[int(x) for x in dims[1:-1].split(",")], elements=int(d[p + "ELEMENTS"]),
                size=int(d[p + "SIZE"]),
                scale=None if scale is None else float(scale[:-1]),
                zero_point=None if zp is None else int(zp.strip("()")))
    return out


def _check_typed_io(h: Path, name: str, declared: dict) -> None:
    """Every input's and output's typed macros agree with each other and with its SIZE; a
    quantized one has its helpers, with the contract's signatures."""
    for key, t in typed_io(h, name).items():
        assert t["dtype"] in DTYPES, (key, t["dtype"])
        assert t["rank"] == len(t["dims"]) or (t["rank"] == 0 and t["dims"] == [1]), (key, t)
        n = 1
        for x in t["dims"]:
            n *= x
        assert n == t["elements"] and t["size"] == n * DTYPES[t["dtype"]], (key, t)
        if t["scale"] is not None:
            ctype = {"EDGECC_INT8": "int8_t", "EDGECC_UINT8": "uint8_t",
                     "EDGECC_INT16": "int16_t", "EDGECC_INT32": "int32_t"}[t["dtype"]]
            fn = f"{name.lower()}_{key.lower()}"
            assert declared.get(f"{fn}_dequantize") == ("float", [ctype]), (key, declared)
            if ctype != "int32_t":
                assert declared.get(f"{fn}_quantize") == (ctype, ["float"]), (key, declared)


def check_c_api_contract(out: Path, name: str, tmp: Path) -> dict[str, int]:
    NAME = name.upper()
    macros = header_macros(out / f"{name}.h", name)
    for m in ("ARENA_SIZE", "INPUT_COUNT", "OUTPUT_COUNT"):
        assert f"{NAME}_{m}" in macros, (m, sorted(macros))
    assert macros[f"{NAME}_INPUT_COUNT"] >= 1 and macros[f"{NAME}_OUTPUT_COUNT"] >= 1
    for kind in ("INPUT", "OUTPUT"):
        for i in range(macros[f"{NAME}_{kind}_COUNT"]):
            size = macros.get(f"{NAME}_{kind}{i}_SIZE")
            assert size is not None and 0 < size <= macros[f"{NAME}_ARENA_SIZE"], (kind, i, size)

    # the header's prototypes
    probe = tmp / f"probe_{name}.c"
    probe.write_text(f'#include "{name}.h"\n')
    declared = {d.name: signature(d.type) for d in parse_c(probe, out, tmp).ext
                if isinstance(d, c_ast.Decl) and isinstance(d.type, c_ast.FuncDecl)}
    for fn, sig in API.items():
        assert declared.get(f"{name}_{fn}") == sig, (fn, declared.get(f"{name}_{fn}"), sig)
    defined_h = {f.decl.name: signature(f.decl.type) for f in parse_c(probe, out, tmp).ext
                 if isinstance(f, c_ast.FuncDef) and "static" in f.decl.storage}
    _check_typed_io(out / f"{name}.h", name, defined_h)

    # the definitions, and no mutable state at file scope in any generated .c
    for c_file in sorted(out.glob("*.c")):
        ast = parse_c(c_file, out, tmp)
        for ext in ast.ext:
            if isinstance(ext, c_ast.Decl) and ext.name and not isinstance(ext.type, c_ast.FuncDecl):
                assert _is_const_object(ext.type), f"{c_file.name}: mutable file-scope object {ext.name}"
        if c_file.name != f"{name}.c":
            continue
        defined = {f.decl.name: f for f in ast.ext if isinstance(f, c_ast.FuncDef)}
        for fn, sig in API.items():
            f = defined.get(f"{name}_{fn}")
            assert f is not None, f"{name}.c does not define {name}_{fn}"
            assert signature(f.decl.type) == sig, (fn, signature(f.decl.type), sig)
            assert "static" not in f.decl.storage, f"{name}_{fn} must have external linkage"
    return macros
