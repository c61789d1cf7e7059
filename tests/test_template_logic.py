"""Kernel templates hold no logic: Python chooses every variant and computes every number.

Scans the kernel templates (templates/c/ and every ISA folder) for `{% if %}` / `{% elif %}` /
`{% set %}` tags, for arithmetic (+ - * / // %) inside `{{ }}` or `{% %}` and for inline
conditionals (`a if c else b`, a loop's `if` filter); every template folder, the model and build
files' too, for inline conditionals. Allowed: loops over lists Python prepared (`{% for %}`),
filters (`| join`), macros and imports, and a macro or template picked by a name Python computed
(`{{ K[p.kind](p) }}`). A template's variants are its macros (templates/c/_<op>.j2); what it
prints beyond the op's params is Kernel.derived (edgecc/ops/__init__.py).
"""
from __future__ import annotations

import re

from edgecc.resources import data_dir

# Folders of the model and build files (NAME.c/.h, CMake, linker scripts, the bare-metal app):
# they follow the compile options with `{% if %}`; only inline conditionals are banned there.
NON_KERNEL = ("model", "firmware", "baremetal")

_TAG = re.compile(r"\{%-?\s*(if|elif|set)\b")
_EXPR = re.compile(r"\{\{-?(.*?)-?\}\}|\{%-?(.*?)-?%\}", re.S)
_STRING = re.compile(r"\"[^\"]*\"|'[^']*'")
_ARITH = re.compile(r"[\w)\]]\s*(\+|-|\*|//|/|%)\s*[\w(\[]")
_IF_TAG = re.compile(r"\s*(if|elif)\b")
_IF = re.compile(r"\bif\b")


def _expressions(text: str):
    """Each `{{ }}` / `{% %}` of a template: (its source, its code with string literals blanked)."""
    for m in _EXPR.finditer(text):
        yield m.group(0), _STRING.sub("''", m.group(1) or m.group(2) or "")


def inline_conditionals(text: str) -> list[str]:
    """Each expression holding `if` that is not an `{% if %}`/`{% elif %}` tag."""
    return [src for src, code in _expressions(text)
            if _IF.search(code) and not (src.startswith("{%") and _IF_TAG.match(code))]


def findings(text: str) -> list[str]:
    """Each logic tag, arithmetic expression and inline conditional in a template's text."""
    out = [m.group(0) for m in _TAG.finditer(text)]
    out += [src for src, code in _expressions(text) if _ARITH.search(code)]
    return out + [src for src in inline_conditionals(text) if src not in out]


def test_findings_detects_logic():
    assert findings("{% if p.a %}x{% endif %}{% set b = 1 %}") == ["{% if", "{% set"]
    assert findings("{{ p.in_h * p.in_w }}") == ["{{ p.in_h * p.in_w }}"]
    assert findings("{{ p.n - 1 }}") == ["{{ p.n - 1 }}"]
    assert findings('{% for v in p.taps %}{{ v | join(", ") }} {{ "a-b" }}{% endfor %}') == []
    assert findings("{%- for v in p.w -%}{{- v -}}{%- endfor %}") == []
    assert findings('{{ K[p.kind](p, c) | trim("\\n") }}{{ "if" }}') == []


def test_inline_conditionals_detected():
    assert inline_conditionals("{{ c.a if p.a else in0 }}") == ["{{ c.a if p.a else in0 }}"]
    assert inline_conditionals('{{ ", " if not loop.last }}') == ['{{ ", " if not loop.last }}']
    assert inline_conditionals("{% for x in xs if x %}{% endfor %}") == ["{% for x in xs if x %}"]
    assert inline_conditionals("{% if a %}{% elif b %}{% endif %}{{ 'a if b' }}") == []
    assert findings("{% set s = a if b else c %}") == ["{% set", "{% set s = a if b else c %}"]


def _folders():
    root = data_dir("templates")
    return root, sorted(p.name for p in root.iterdir() if p.is_dir())


def test_kernel_templates_hold_no_logic():
    root, folders = _folders()
    assert "c" in folders and len(folders) > len(NON_KERNEL) + 1  # the scan sees the kernels
    found = {f"{folder}/{p.name}": findings(p.read_text())
             for folder in folders if folder not in NON_KERNEL
             for p in sorted((root / folder).glob("*.j2"))}
    found = {k: v for k, v in found.items() if v}
    assert not found, f"logic in kernel templates (move it into Python): {found}"


def test_no_template_has_inline_conditionals():
    root, folders = _folders()
    found = {f"{folder}/{p.name}": inline_conditionals(p.read_text())
             for folder in folders for p in sorted((root / folder).glob("*.j2"))}
    found = {k: v for k, v in found.items() if v}
    assert not found, f"inline conditionals in templates (Python chooses): {found}"
