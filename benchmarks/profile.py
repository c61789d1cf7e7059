"""The benchmark's per-layer profile on the Cortex-M targets: where the instructions go, layer by
layer, against the instruction floor of the core's MAC instruction.

Owns: the floors (Cortex-M4 / M7 / M33: 0.5 instructions per MAC, one SMLAD does two MACs;
Cortex-M55: 1/16, one VMLADAVA does sixteen), the rule for a layer "far from the floor", turning
the per-layer counts of `edgecc verify`'s profile build (edgecc/build/qemu.py profile_layers:
op, kernel, MACs, instructions of the first frame) into the rows results.json keeps, and the
results.md section that shows them. Which cells are profiled: the six anchor models of issue 16
by default (`--profile anchors`), every model (`all`) or none.
"""
from __future__ import annotations

# target -> (instructions per MAC at best, the instruction that sets it)
FLOORS = {"cortex-m4": (0.5, "SMLAD"), "cortex-m7": (0.5, "SMLAD"),
          "cortex-m33": (0.5, "SMLAD"), "cortex-m55": (1 / 16, "VMLADAVA")}
ANCHOR_MODELS = ("kws_ref_model", "vww_96_int8", "pretrainedResnet_quant", "ad01_int8",
                 "person_detect", "micro_speech_quantized")
FAR_TIMES = 3.0    # a MAC layer is far from the floor above FAR_TIMES x the floor ...
FAR_SHARE = 0.02   # ... and when it takes more than this share of the model's instructions
HEAVY_SHARE = 0.05  # a layer without MACs (pool, add, softmax, ...) is flagged above this share
PROFILE_CHOICES = ("anchors", "all", "none")
FAR_RULE = (f"far: instr/MAC > {FAR_TIMES:g}x the floor and > {FAR_SHARE:.0%} of the model's "
            f"instructions; heavy: a layer without MACs taking > {HEAVY_SHARE:.0%}")


def wants_profile(mode: str, model: str, target: str) -> bool:
    """Whether the benchmark profiles this cell (`--profile` mode)."""
    if mode == "none" or target not in FLOORS:
        return False
    return mode == "all" or model in ANCHOR_MODELS


def annotate(layers: list[dict], target: str) -> dict:
    """The JSON of one cell's profile: the floor, the rule, the total (the layers' sum, first
    frame) and per layer its share, instructions per MAC, times the floor and flag."""
    floor, instr = FLOORS[target]
    total = sum(r["instructions"] for r in layers)
    out = []
    for r in layers:
        share = r["instructions"] / total if total else 0.0
        macs = r.get("macs")
        ipm = r["instructions"] / macs if macs else None
        times = ipm / floor if ipm is not None else None
        flag = None
        if times is not None and times > FAR_TIMES and share > FAR_SHARE:
            flag = "far"
        elif macs is None and share > HEAVY_SHARE:
            flag = "heavy"
        out.append(dict(r, share=round(share, 4),
                        instr_per_mac=None if ipm is None else round(ipm, 4),
                        x_floor=None if times is None else round(times, 2), flag=flag))
    return dict(floor_instr_per_mac=floor, floor_instruction=instr, rule=FAR_RULE,
                total_instructions=total, layers=out)


def _cell(v, fmt: str) -> str:
    return "-" if v is None else format(v, fmt)


def _overview(cells: list[tuple[str, dict]]) -> list[str]:
    """One line per profiled cell: the flagged layers' count and share, and the worst of them
    (the largest share) with its distance from the floor."""
    out = ["| model | target | instructions | layers | flagged | flagged share | largest flagged "
           "layer |", "|---|---|---:|---:|---:|---:|---|"]
    for t, r in cells:
        p = r["profile"]
        flagged = [x for x in p["layers"] if x["flag"]]
        worst = max(flagged, key=lambda x: x["share"], default=None)
        out.append(f"| {r['model']} | {t} | {p['total_instructions']:,} | {len(p['layers'])} | "
                   f"{len(flagged)} | {sum(x['share'] for x in flagged):.1%} | " +
                   ("-" if worst is None else
                    f"{worst['layer']} {worst['op']} ({worst['kernel']}), {worst['share']:.1%}"
                    + (f", {worst['x_floor']:.1f}x" if worst["x_floor"] is not None else ""))
                   + " |")
    return out


def render_profiles(results: dict[str, list[dict]]) -> list[str]:
    """The results.md section: an overview of the flagged layers per profiled cell, then one
    table per model and target, layers in execution order."""
    cells = [(t, r) for t, rows in results.items() for r in rows if r.get("profile")]
    if not cells:
        return []
    lines = ["## Per-layer profile (Cortex-M)", "",
             "Instructions per layer of the first frame, counted under QEMU by the profile build "
             "of `edgecc verify --profile` (one build per model and target; the layers' sum is "
             "the model's *total* here, within 1% of the table's count). "
             "*kernel*: the kernel table entry lowering chose (`portable`: the op's plain C "
             "kernel). *x floor*: instr/MAC over the core's floor (Cortex-M4/M7/M33 0.5 with "
             f"SMLAD, Cortex-M55 1/16 with VMLADAVA). *flag*: {FAR_RULE}.", ""]
    lines += _overview(cells) + [""]
    for t, r in cells:
        p = r["profile"]
        lines += [f"### {r['model']} on {t} ({p['total_instructions']:,} instructions, floor "
                  f"{p['floor_instr_per_mac']:g} instr/MAC with {p['floor_instruction']})", "",
                  "| layer | op | kernel | MACs | instructions | instr/MAC | x floor | share | "
                  "flag |", "|---:|---|---|---:|---:|---:|---:|---:|---|"]
        for x in p["layers"]:
            lines.append(f"| {x['layer']} | {x['op']} | {x['kernel']} | "
                         f"{_cell(x['macs'], ',')} | {x['instructions']:,} | "
                         f"{_cell(x['instr_per_mac'], '.3f')} | {_cell(x['x_floor'], '.1f')} | "
                         f"{x['share']:.1%} | {'**' + x['flag'] + '**' if x['flag'] else ''} |")
        lines.append("")
    return lines
