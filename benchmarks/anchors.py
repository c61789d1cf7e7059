"""The anchor figures: TensorFlow Lite Micro + CMSIS-NN under QEMU (../shared/bench/anchors.md).

Owns: parsing that page's markdown tables into numbers per (target, model): instructions per
inference, TFLM's arena_used_bytes and its flash, plus LiteRT's latencies from the x86 section
(those are another machine's; the benchmark measures LiteRT again in the same run). A section is
matched to a target by the QEMU machine its heading names; a table that puts several cores side
by side (the current-converter models) by the core its column names ("M4 ...", "M55 ...").
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

# QEMU machine named in a section heading -> edgecc target
MACHINE_TARGET = {"mps2-an386": "cortex-m4", "mps2-an500": "cortex-m7",
                  "mps2-an505": "cortex-m33", "mps3-an547": "cortex-m55"}
# a core named at the start of a column ("M4 instructions", "M55 arena_used_bytes") -> target,
# for tables that give several machines side by side (the current-converter models' section)
CORE_TARGET = {"m4": "cortex-m4", "m7": "cortex-m7", "m33": "cortex-m33", "m55": "cortex-m55"}


@dataclass
class Anchor:
    instructions: int | None = None
    macs: int | None = None
    arena_bytes: int | None = None
    flash_bytes: int | None = None


@dataclass
class Anchors:
    by_target: dict[str, dict[str, Anchor]] = field(default_factory=dict)
    litert_us: dict[str, float] = field(default_factory=dict)   # the page's own machine
    weights_bytes: dict[str, int] = field(default_factory=dict)

    def get(self, target: str, model: str) -> Anchor | None:
        return self.by_target.get(target, {}).get(model)

    def macs(self, model: str) -> int | None:
        for rows in self.by_target.values():
            a = rows.get(model)
            if a is not None and a.macs is not None:
                return a.macs
        return None


def _num(cell: str) -> float | None:
    m = re.search(r"-?[\d,]+(?:\.\d+)?", cell)
    if not m:
        return None
    return float(m.group(0).replace(",", ""))


def _tables(lines: list[str]) -> list[tuple[list[str], list[list[str]]]]:
    """Markdown tables in these lines as (header cells, rows of cells)."""
    out, i = [], 0
    while i < len(lines):
        if lines[i].lstrip().startswith("|") and i + 1 < len(lines) and \
                re.match(r"^\s*\|[\s:|-]+\|\s*$", lines[i + 1]):
            head = [c.strip() for c in lines[i].strip().strip("|").split("|")]
            rows, i = [], i + 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
                i += 1
            out.append((head, rows))
        else:
            i += 1
    return out


def _col(head: list[str], *words: str) -> int | None:
    for j, h in enumerate(head):
        hl = h.lower()
        if all(w in hl for w in words):
            return j
    return None


def _sum(cell: str) -> int | None:
    """A flash cell written as parts ("10,264 + 64,834 + 42,832") is their sum."""
    parts = [_num(p) for p in cell.split("+")]
    return None if any(v is None for v in parts) else int(sum(parts))


def _per_core_table(res: Anchors, head: list[str], rows: list[list[str]]) -> bool:
    """A table whose columns name the core ("M4 instructions (instr/MAC)", "M55 arena_used_bytes",
    "M4 flash: ..."): one anchor per core and model. False when the table is not of that kind."""
    cores = {}
    for j, h in enumerate(head):
        core = h.split(" ", 1)[0].lower()
        if core in CORE_TARGET:
            cores.setdefault(core, {})
            kind = ("instructions" if "instructions" in h.lower() else
                    "arena" if "arena" in h.lower() else "flash" if "flash" in h.lower() else None)
            if kind:
                cores[core][kind] = j
    if not any("instructions" in cols for cols in cores.values()):
        return False
    cm = _col(head, "macs")
    for core, cols in cores.items():
        table = res.by_target.setdefault(CORE_TARGET[core], {})
        for r in rows:
            def val(kind):
                j = cols.get(kind)
                v = _num(r[j]) if j is not None and j < len(r) else None
                return None if v is None else int(v)
            flash = cols.get("flash")
            # "keyword_scrambled_8bit (SVDF, int16 in)": the model is the first word
            table[r[0].split(" (", 1)[0]] = Anchor(val("instructions"),
                                 int(_num(r[cm])) if cm is not None and _num(r[cm]) else None,
                                 val("arena"),
                                 _sum(r[flash]) if flash is not None and flash < len(r) else None)
    return True


def parse_anchors(text: str) -> Anchors:
    res = Anchors()
    sections = re.split(r"^## ", text, flags=re.M)
    for sec in sections[1:]:
        title, _, body = sec.partition("\n")
        machine = next((m for m in MACHINE_TARGET if m in title), None)
        for head, rows in _tables(body.splitlines()):
            if machine is not None:
                ci = _col(head, "instructions", "inference")
                if ci is None:
                    continue
                cm, ca, cf = _col(head, "macs"), _col(head, "arena"), _col(head, "flash")
                if cm is not None and "/" in head[cm]:
                    cm = None  # "instructions / MAC" is not the MAC count
                table = res.by_target.setdefault(MACHINE_TARGET[machine], {})
                for r in rows:
                    def val(c):
                        v = _num(r[c]) if c is not None and c < len(r) else None
                        return None if v is None else int(v)
                    table[r[0]] = Anchor(val(ci), val(cm), val(ca), val(cf))
            elif "litert" in title.lower() or "x86" in title.lower():
                cx = _col(head, "xnnpack")
                if cx is None:
                    continue
                for r in rows:
                    v = _num(r[cx])
                    if v is not None:
                        res.litert_us[r[0]] = v
            elif _per_core_table(res, head, rows):
                continue
            else:
                cw = _col(head, "weights")
                if cw is None:
                    continue
                for r in rows:
                    v = _num(r[cw])
                    if v is not None:
                        res.weights_bytes[r[0]] = int(v)
    return res


def load_anchors(path: Path) -> Anchors:
    if not path.is_file():
        return Anchors()
    return parse_anchors(path.read_text())
