"""Turning model strings into safe C: identifiers and comment text.

Owns: the only path from a user- or model-supplied string to generated C. Identifiers keep
[A-Za-z0-9_] and never start with a digit; comment text keeps printable ASCII minus '*' and '/', so
no model string can close a comment, start a directive, or inject code; string-literal text keeps
[A-Za-z0-9_.:/-] (no quote, backslash, trigraph or control character can reach a C string).
"""
from __future__ import annotations

import re
import unicodedata
from html import escape

_C_KEYWORDS = {"auto", "break", "case", "char", "const", "continue", "default", "do", "double",
               "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long",
               "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct",
               "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "main"}


def c_ident(s: str, fallback: str = "model") -> str:
    out = re.sub(r"[^A-Za-z0-9_]", "_", s).strip("_")
    out = re.sub(r"_+", "_", out)
    if not out:
        out = fallback
    if out[0].isdigit():
        out = "m_" + out
    if out.lower() in _C_KEYWORDS:
        out += "_"
    return out[:48]


_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)?")


def visible_text(s: str) -> str:
    """`s` with nothing that can paint a terminal or reorder text: ANSI escape sequences removed
    whole, control characters (C0, DEL, C1) and line or paragraph separators as spaces, format
    characters (the bidirectional overrides U+202A-U+202E and isolates U+2066-U+2069, zero-width
    characters) and lone surrogates removed."""
    s = _ANSI.sub("", s)
    out = []
    for ch in s:
        cat = unicodedata.category(ch)
        if cat == "Cc" or cat in ("Zl", "Zp"):
            out.append(" ")
        elif cat not in ("Cf", "Cs", "Co", "Cn"):
            out.append(ch)
    return "".join(out)


def xml_text(s: object) -> str:
    """`s` as text of an HTML or SVG (XML 1.0) document: visible_text, then escaped (quotes too,
    so it may sit in an attribute)."""
    return escape(visible_text(str(s)), quote=True)


def c_comment(s: str, limit: int = 80) -> str:
    out = "".join(ch if 32 <= ord(ch) < 127 and ch not in "*/\\" else "_" for ch in s)
    return out[:limit]


def c_string_text(s: str, limit: int = 96) -> str:
    """`s` as the text of a C string literal: [A-Za-z0-9_.:/-] kept, any other character '_'."""
    out = re.sub(r"[^A-Za-z0-9_.:/-]", "_", s)
    return out[:limit]


# File names NAME.h must not take in OUT (built with -I OUT, which the emitted CMake target makes
# PUBLIC): a header of that name there shadows the system's for every file of the build, and the
# C library's own headers include flat names (glibc's <stdint.h> includes <features.h>, GCC's
# <emmintrin.h> includes <xmmintrin.h>). edgecc refuses such a --name instead of prefixing the
# file names, because `OUT/NAME.h` is the generated API's contract (docs/design.md). Refused: the
# C standard headers (C89-C23), the flat headers C libraries include (glibc, musl, newlib,
# picolibc), the compilers' own (GCC, clang), and by pattern the intrinsics headers (*intrin:
# xmmintrin, immintrin, ...; arm_*: arm_neon, arm_mve, arm_acle, CMSIS's arm_math; riscv_*:
# riscv_vector), CMSIS (cmsis_*, core_*), and edgecc's runtime headers (edgecc*).
# tests/test_names.py checks the list against the include closure of every installed toolchain.
_SYSTEM_HEADERS = frozenset("""
    assert complex ctype errno fenv float inttypes iso646 limits locale math setjmp signal
    stdalign stdarg stdatomic stdbit stdbool stdckdint stddef stdint stdio stdlib stdnoreturn
    string tgmath threads time uchar wchar wctype
    features alloca endian unistd malloc memory strings sched pthread syslimits stdfix varargs
    unwind omp openacc cpuid builtins vadefs msa altivec gcov quadmath quadmath_weak mm_malloc
    mm3dnow newlib ieeefp picolibc reent tar wordexp cet backtrace acc_prof
    wasm_simd128 hexagon_types hexagon_protos hvx_hexagon_protos opencl_c ptrauth
    fcntl errno dirent stdint_gcc
""".split())
_SYSTEM_PATTERN = re.compile(r"edgecc.*|.*intrin.*|arm_.*|arm(64)?intr|riscv_.*|cmsis_.*|"
                             r"core_.*")


def shadows_header(ident: str) -> bool:
    """True when `ident.h` would shadow a C library, compiler or CMSIS header."""
    base = ident.lower()
    return base in _SYSTEM_HEADERS or bool(_SYSTEM_PATTERN.fullmatch(base))


def model_name_problem(name: str) -> str | None:
    """Why `name` cannot be a generated model's C prefix and file name, or None when it can."""
    ident = c_ident(name)
    base = ident.rstrip("_").lower()
    if not name.strip():
        return "is empty"
    if base.startswith("edgecc"):
        return f"becomes '{ident}', which collides with edgecc's runtime headers (edgecc_*.h)"
    if base in _C_KEYWORDS:
        return f"is a C keyword ('{base}')"
    if shadows_header(ident):
        return (f"would make '{ident.lower()}.h', which shadows the system header "
                f"<{ident.lower()}.h> (a C library, compiler intrinsics or CMSIS header)")
    return None
