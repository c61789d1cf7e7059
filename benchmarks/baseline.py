"""The performance baseline: benchmarks/baseline.json, what the gate compares each measured row
with, and the comparison itself.

Owns: the file's format (human-diffable JSON: one line per model x target row with its exact
instructions per inference, flash and arena bytes and the commit that measured it, then one line
per layer of its per-layer profile; the reasons of every update, one line each; the targets the
rows cover, so a new target is one more name there and `--update --targets T` fills its rows),
reading and writing it, and `compare`: a row more than TOLERANCE worse in instructions, flash or
arena is a failure naming the model, target and figure, and, from the per-layer counts, the layers
that grew; a row better by more than TOLERANCE is a hint to update the baseline. Measuring is
benchmarks/gate.py's.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

BASELINE = Path(__file__).resolve().parent / "baseline.json"
TOLERANCE = 0.01          # a figure more than 1% worse fails the gate
FIGURES = ("instructions", "flash_bytes", "arena_bytes")
LAYER_FLOOR = 0.001       # a layer is named when it grew by more than this share of the row ...
MAX_LAYERS = 8            # ... the largest growths first, at most this many
UPDATE = "python3 -m benchmarks.gate --update --reason \"...\""


@dataclass
class Baseline:
    """The file's contents: rows keyed by (model, target)."""

    targets: list[str]
    rows: dict[tuple[str, str], dict] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    toolchain: dict = field(default_factory=dict)
    tolerance: float = TOLERANCE


def load(path: Path = BASELINE) -> Baseline:
    d = json.loads(Path(path).read_text())
    rows = {(r["model"], r["target"]): r for r in d["rows"]}
    return Baseline(list(d["targets"]), rows, list(d["reasons"]), dict(d.get("toolchain", {})),
                    float(d.get("tolerance", TOLERANCE)))


def _j(v) -> str:
    return json.dumps(v, ensure_ascii=False)


def dumps(b: Baseline) -> str:
    """The file's text: headline fields one per line, each row's figures on one line and each
    of its layers on its own, so a diff shows which rows and layers changed."""
    order = {t: i for i, t in enumerate(b.targets)}
    keys = sorted(b.rows, key=lambda k: (order.get(k[1], len(order)), k[1], k[0]))
    out = ["{",
           f' "about": {_j("edgecc performance baseline (issue 30): per model and target the exact instructions per inference under QEMU (seed 0, one frame), flash and arena bytes, and each layer [layer, op, kernel, instructions]; the gate fails a row more than tolerance worse. Update: " + UPDATE)},',
           f' "tolerance": {_j(b.tolerance)},',
           f' "targets": {_j(b.targets)},',
           f' "toolchain": {_j(b.toolchain)},',
           ' "reasons": [']
    out += [f"  {_j(r)}," for r in b.reasons]
    if b.reasons:
        out[-1] = out[-1].rstrip(",")
    out += [" ],", ' "rows": [']
    for i, k in enumerate(keys):
        r = b.rows[k]
        head = {f: r[f] for f in ("model", "target", *FIGURES, "commit")}
        text = "  " + _j(head)[:-1] + ', "layers": ['
        layers = r.get("layers") or []
        lines = [f"   {_j(x)}," for x in layers]
        if lines:
            lines[-1] = lines[-1].rstrip(",")
        end = "]}" + ("," if i < len(keys) - 1 else "")
        out += [text, *lines, "  " + end] if lines else [text + end]
    out += [" ]", "}"]
    return "\n".join(out) + "\n"


def save(b: Baseline, path: Path = BASELINE) -> None:
    tmp = Path(path).with_suffix(".json.tmp")
    tmp.write_text(dumps(b))
    tmp.replace(path)


def layer_rows(profile: list[dict]) -> list[list]:
    """edgecc.build.qemu.profile_layers' rows as the file keeps them."""
    return [[r["layer"], r["op"], r["kernel"], r["instructions"]] for r in profile]


def _pct(new: int, old: int) -> str:
    return f"{(new - old) / old:+.1%}" if old else "new"


def grown_layers(old: list[list], new: list[list], total: int) -> list[str]:
    """The layers whose instructions grew by more than LAYER_FLOOR of the row's total, largest
    growth first; a layer whose op or kernel changed says so."""
    lines = []
    olds = {x[0]: x for x in old}
    for layer, op, kernel, n in new:
        o = olds.get(layer)
        before = o[3] if o and o[1] == op else 0
        grew = n - before
        if grew <= LAYER_FLOOR * max(total, 1):
            continue
        what = f"layer {layer} {op} ({kernel}): {before:,} -> {n:,} instructions ({_pct(n, before)})"
        if o and o[1] == op and o[2] != kernel:
            what += f", kernel was {o[2]}"
        elif not o or o[1] != op:
            what += ", a layer the baseline does not have"
        lines.append((grew, what))
    lines.sort(key=lambda x: -x[0])
    return [w for _, w in lines[:MAX_LAYERS]]


def compare(base: dict, got: dict, tolerance: float = TOLERANCE) -> tuple[list[str], list[str]]:
    """(failures, improvements) of a measured row against its baseline row, each a line naming
    the model, target and figure. `got["layers"]`, when measured, names the layers that grew."""
    where = f"{got['model']} on {got['target']}"
    worse, better = [], []
    for f in FIGURES:
        old, new = base[f], got[f]
        if new > old * (1 + tolerance):
            worse.append(f"{where}: {f} {old:,} -> {new:,} ({_pct(new, old)}, over the "
                         f"{tolerance:.0%} tolerance; baseline measured at {base['commit']})")
        elif new < old * (1 - tolerance):
            better.append(f"{where}: {f} {old:,} -> {new:,} ({_pct(new, old)})")
    if worse and got.get("layers") is not None:
        grown = grown_layers(base.get("layers") or [], got["layers"], got["instructions"])
        if grown:
            worse.append(f"{where}: layers that grew: " + "; ".join(grown))
    return worse, better
