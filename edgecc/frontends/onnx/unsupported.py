"""What a user whose ONNX model edgecc cannot compile is told: every offending node at once.

Owns: the one line listing the unsupported nodes grouped by op type (op types edgecc has no
handler for, and nodes a handler refused, with the reason), each group with its count and its
node indices (names too for a short group), and, where edgecc supports the op in another form,
which (`HINTS`). Every part is bounded (a name is at most NAME_CHARS characters, a long group
shows index ranges), so the line is never cut (errors.UnsupportedNodes).
"""
from __future__ import annotations

from collections import defaultdict

from edgecc.errors import UnsupportedNodes

NAME_CHARS = 40
NAMES_UP_TO = 6  # a group of at most this many nodes shows their names

# op type -> the form in which edgecc supports it
_SHAPES = "supported on static shapes (a shape subgraph folded at import)"
HINTS = {
    "Pad": "Pad is supported outside QDQ groups with constant pads (constant mode)",
    "Shape": f"Shape is {_SHAPES}", "Size": f"Size is {_SHAPES}",
    "ConstantOfShape": f"ConstantOfShape is {_SHAPES}", "Range": f"Range is {_SHAPES}",
    "Equal": f"Equal is {_SHAPES}", "Where": f"Where is {_SHAPES}",
    "ReduceProd": f"ReduceProd is {_SHAPES}", "Not": f"Not is {_SHAPES}",
    "Less": f"Less is {_SHAPES}", "Greater": f"Greater is {_SHAPES}",
    "Cast": "Cast is supported between float32 values and on static shapes",
    "Slice": "Slice is supported on float32 values with constant starts, ends, axes and steps 1",
    "Gather": "Gather is supported on float32 values with constant indices",
    "Pow": "Pow is supported in float32 with a constant exponent 2 or 0.5",
    "Split": "Split: use Slice (supported on float32 values with constant bounds)",
    "BatchNormalization": "BatchNormalization: fold it into the Conv before quantizing "
                          "(onnxruntime.quantization does so)",
    "HardSigmoid": "HardSigmoid: as Clip / Mul / Add (supported in float32)",
    "Upsample": "Upsample: Resize (linear) is supported",
}


def _short(name: str, limit: int = NAME_CHARS) -> str:
    """At most `limit` characters; a longer text ends in '~'."""
    name = " ".join(name.split())
    return name if len(name) <= limit else name[:limit - 1] + "~"


def _ranges(idx: list[int]) -> str:
    out, start, prev = [], idx[0], idx[0]
    for i in [*idx[1:], None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if i is not None:
            start = prev = i
    return ", ".join(out)


def _nodes(items: list[tuple[int, str]]) -> str:
    if len(items) <= NAMES_UP_TO:
        return ", ".join(f"{i} '{_short(nm)}'" if nm else str(i) for i, nm in items)
    return _ranges(sorted(i for i, _ in items))


def listing(path, offenders: list[tuple[int, str, str, str]]) -> UnsupportedNodes:
    """The error for `offenders`: (node index, op type (with its domain when not ONNX's), node
    name, why: '' when edgecc has no handler for the op)."""
    groups: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for i, op, name, why in offenders:
        groups[op][_short(why, 160)].append((i, name))
    parts = []
    for op in sorted(groups, key=lambda o: (-sum(map(len, groups[o].values())), o)):
        count = sum(map(len, groups[op].values()))
        text = []
        for why, items in groups[op].items():
            nodes = ("node " if len(items) == 1 else "nodes ") + _nodes(items)
            text.append(f"{nodes}: {why}" if why else nodes)
        hint = HINTS.get(op.split(".")[-1])
        parts.append(f"{op} x{count} ({'; '.join(text)})" + (f" [{hint}]" if hint else ""))
    n = len(offenders)
    kinds = len(groups)
    return UnsupportedNodes(f"{path}: {n} unsupported ONNX node{'s' if n > 1 else ''} "
                            f"({kinds} op type{'s' if kinds > 1 else ''}): " + "; ".join(parts))
