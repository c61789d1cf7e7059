"""Turning model strings into safe C: identifiers and comment text.

Owns: the only path from a user- or model-supplied string to generated C. Identifiers keep
[A-Za-z0-9_] and never start with a digit; comment text keeps printable ASCII minus '*' and '/', so
no model string can close a comment, start a directive, or inject code; string-literal text keeps
[A-Za-z0-9_.:/-] (no quote, backslash, trigraph or control character can reach a C string).
"""
from __future__ import annotations

import re

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


def c_comment(s: str, limit: int = 80) -> str:
    out = "".join(ch if 32 <= ord(ch) < 127 and ch not in "*/\\" else "_" for ch in s)
    return out[:limit]


def c_string_text(s: str, limit: int = 96) -> str:
    """`s` as the text of a C string literal: [A-Za-z0-9_.:/-] kept, any other character '_'."""
    out = re.sub(r"[^A-Za-z0-9_.:/-]", "_", s)
    return out[:limit]


# File names NAME.h must not take in OUT (built with -I OUT): the runtime headers (edgecc_*, also
# any future runtime_c/<isa>/ layout) and the C/compiler headers the generated code includes.
_SYSTEM_HEADERS = {"stdint", "stddef", "string", "stdio", "stdlib", "stdbool", "limits", "math",
                   "float", "inttypes", "assert", "arm_acle", "arm_mve", "arm_neon",
                   "immintrin", "cmsis_compiler"}


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
    if base in _SYSTEM_HEADERS:
        return f"would make '{base}.h', which shadows the C header <{base}.h>"
    return None
