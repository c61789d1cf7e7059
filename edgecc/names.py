"""Turning model strings into safe C: identifiers and comment text.

Owns: the only path from a user- or model-supplied string to generated C. Identifiers keep
[A-Za-z0-9_] and never start with a digit; comment text keeps printable ASCII minus '*' and '/', so
no model string can close a comment, start a directive, or inject code.
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
