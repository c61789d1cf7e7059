"""Kernel templates hold no logic: Python chooses every variant and computes every number.

Scans templates/c/ and the ISA folders (templates/<isa>/) for `{% if %}` / `{% elif %}` /
`{% set %}` tags and for arithmetic (+ - * / // %) inside `{{ }}` or `{% %}`; loops over lists
Python prepared (`{% for %}`), filters (`| join`), macros and imports are allowed. Templates that
still hold logic are listed in LEGACY with their count at the time this test was written: a
count may only go down (delete the entry at zero), and every other template must have none.
"""
from __future__ import annotations

import re

from edgecc.resources import data_dir

FOLDERS = ("c", "x86", "dsp", "mve", "neon")

# template -> findings left to move into Python (portable kernels of ops/<op>.py)
LEGACY = {
    "c/_copy.j2": 4, "c/_loops.j2": 9, "c/_reduce.j2": 10, "c/_rq16.j2": 1, "c/abs.c.j2": 1,
    "c/batch_matmul.c.j2": 1, "c/comparison.c.j2": 1, "c/conv_2d.c.j2": 16,
    "c/conv_2d_s16.c.j2": 6, "c/depthwise_conv_2d.c.j2": 9, "c/depthwise_conv_2d_s16.c.j2": 11,
    "c/edgecc_patch_write.c.j2": 1, "c/gather.c.j2": 2, "c/leaky_relu.c.j2": 1,
    "c/log_softmax.c.j2": 2, "c/maximum.c.j2": 2, "c/minimum.c.j2": 2, "c/mul.c.j2": 4,
    "c/neg.c.j2": 2, "c/prelu.c.j2": 1, "c/squared_difference.c.j2": 2, "c/sub.c.j2": 3,
    "c/unidirectional_sequence_lstm.c.j2": 3,
    # portable templates main gained while the ratchet was written (ops12, onnx14, state12):
    # their logic is still to move into Python
    "c/add_n.c.j2": 2, "c/add_onnx.c.j2": 1, "c/binary_expr.c.j2": 1, "c/cumsum.c.j2": 8,
    "c/pool_2d_float.c.j2": 4, "c/softmax_float.c.j2": 1, "c/svdf.c.j2": 1,
}

_TAG = re.compile(r"\{%-?\s*(if|elif|set)\b")
_EXPR = re.compile(r"\{\{-?(.*?)-?\}\}|\{%-?(.*?)-?%\}", re.S)
_STRING = re.compile(r"\"[^\"]*\"|'[^']*'")
_ARITH = re.compile(r"[\w)\]]\s*(\+|-|\*|//|/|%)\s*[\w(\[]")


def findings(text: str) -> list[str]:
    """Each logic tag and each arithmetic expression in a template's text."""
    out = [m.group(0) for m in _TAG.finditer(text)]
    for m in _EXPR.finditer(text):
        expr = _STRING.sub("''", m.group(1) or m.group(2) or "")
        if _ARITH.search(expr):
            out.append(m.group(0))
    return out


def test_findings_detects_logic():
    assert findings("{% if p.a %}x{% endif %}{% set b = 1 %}") == ["{% if", "{% set"]
    assert findings("{{ p.in_h * p.in_w }}") == ["{{ p.in_h * p.in_w }}"]
    assert findings("{{ p.n - 1 }}") == ["{{ p.n - 1 }}"]
    assert findings('{% for v in p.taps %}{{ v | join(", ") }} {{ "a-b" }}{% endfor %}') == []
    assert findings("{%- for v in p.w -%}{{- v -}}{%- endfor %}") == []


def test_templates_hold_no_new_logic():
    root = data_dir("templates")
    counts = {}
    for folder in FOLDERS:
        for p in sorted((root / folder).glob("*.j2")):
            n = len(findings(p.read_text()))
            if n:
                counts[f"{folder}/{p.name}"] = n
    grown = {k: (n, LEGACY.get(k, 0)) for k, n in counts.items() if n > LEGACY.get(k, 0)}
    assert not grown, f"logic in templates (found, allowed): {grown}"
    stale = {k: (counts.get(k, 0), n) for k, n in LEGACY.items() if counts.get(k, 0) < n}
    assert not stale, f"LEGACY counts to lower (found, listed): {stale}"
