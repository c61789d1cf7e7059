"""The `onnx` benchmark set: the quantized ONNX models of ../shared/models/onnx_models/.

Owns: which rows are ONNX rows (`format: "onnx"`: no TFLite Micro figures, onnxruntime is the
oracle), their per-target table (instructions, arena, lower bound, flash, values differing from
onnxruntime's outputs, exact frames), and the comparison of each `tfl_X_qdq.onnx` (an MLPerf Tiny
TFLite model converted by tf2onnx: the same int8 weights) with its TFLite original
../shared/models/tflite/X.tflite on Cortex-M4: arena ratio and instruction ratio (issue 24's goal
for the default numerics: both at most 1.03).
"""
from __future__ import annotations

from pathlib import Path

from benchmarks.table import fmt_frames, fmt_int, fmt_ratio, fmt_s
from edgecc.options import DEFAULT_ONNX_NUMERICS

ONNX = "onnx"
GOAL = 1.03  # the ONNX conversion of a TFLite model within 3% of its arena and instructions
COMPARE_TARGET = "cortex-m4"
PREFIX, SUFFIX = "tfl_", "_qdq"


def is_onnx(model: Path) -> bool:
    return model.suffix.lower() == ".onnx"


def row_base(model: Path) -> dict:
    """The model-side figures of an ONNX row: its format (TFLite Micro cannot run it)."""
    return dict(format=ONNX, tflm_arena_bytes=None)


def row_suffix(numerics: str) -> str:
    """An ONNX row's name after the model's: '' for the default numerics (`fused`:
    docs/design.md's integer semantics, measured against its own oracle, onnxruntime with int8
    QDQ fusion allowed), '@NUMERICS' for another (`@x86`: onnxruntime's x86 default)."""
    return "" if numerics == DEFAULT_ONNX_NUMERICS else f"@{numerics}"


def tflite_original(onnx_name: str, tflite_dir: Path) -> Path | None:
    """X.tflite for tfl_X_qdq (or tfl_X_qdq@MODE), when it exists."""
    onnx_name = onnx_name.split("@")[0]
    if not (onnx_name.startswith(PREFIX) and onnx_name.endswith(SUFFIX)):
        return None
    p = tflite_dir / f"{onnx_name[len(PREFIX):-len(SUFFIX)]}.tflite"
    return p if p.is_file() else None


def compare_with_tflite(results: dict[str, list[dict]], tflite_dir: Path, measure,
                        log=print) -> list[dict]:
    """For each tfl_X_qdq row of COMPARE_TARGET: its arena and instructions against X.tflite's
    on the same target (a row of this run when the tflite set ran too, else `measure(path)`,
    which returns a bench_qemu row)."""
    rows = results.get(COMPARE_TARGET, [])
    out = []
    for r in rows:
        orig = tflite_original(r["model"], tflite_dir) if r.get("format") == ONNX else None
        if orig is None:
            continue
        t = next((x for x in rows if x["model"] == orig.stem and x.get("format") != ONNX), None)
        if t is None:
            try:
                t = dict(model=orig.stem, **measure(orig))
            except Exception as e:  # noqa: BLE001 - the comparison row says what failed
                t = dict(model=orig.stem, error=str(e).splitlines()[0] if str(e) else repr(e))
        c = dict(onnx=r["model"], tflite=orig.stem, target=COMPARE_TARGET,
                 onnx_arena=r.get("arena_bytes"), tflite_arena=t.get("arena_bytes"),
                 onnx_instructions=r.get("instructions"),
                 tflite_instructions=t.get("instructions"),
                 error=r.get("error") or t.get("error"))
        for k in ("arena", "instructions"):
            a, b = c[f"onnx_{k}"], c[f"tflite_{k}"]
            c[f"{k}_ratio"] = round(a / b, 4) if a and b else None
        out.append(c)
        log(f"{c['onnx']:32s} vs {c['tflite']}: arena {fmt_ratio(c['onnx_arena'], c['tflite_arena'], 3)}"
            f"  {COMPARE_TARGET} instructions "
            f"{fmt_ratio(c['onnx_instructions'], c['tflite_instructions'], 3)}")
    return out


def render_onnx_table(rows: list[dict], notes_of) -> list[str]:
    """One target's ONNX rows: no TFLite Micro columns; values differing from onnxruntime."""
    out = ["| model | MACs | instructions | instr/MAC | arena B | lower bound B | arena / LB | "
           "flash B (code + weights) | values differing vs onnxruntime | exact frames | "
           "compile s |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|:-:|---:|"]
    for r in rows:
        if r.get("error"):
            out.append(f"| {r['model']} | {fmt_int(r.get('macs'))} | error [{notes_of(r)}] |"
                       + " |" * 8)
            continue
        out.append("| " + " | ".join([
            r["model"], fmt_int(r["macs"]), fmt_int(r["instructions"]),
            fmt_ratio(r["instructions"], r["macs"]), fmt_int(r["arena_bytes"]),
            fmt_int(r["lower_bound_bytes"]), fmt_ratio(r["arena_bytes"], r["lower_bound_bytes"]),
            fmt_int(r["flash_bytes"]), fmt_int(r.get("values_differing")), fmt_frames(r),
            fmt_s(r.get("compile_s"))]) + " |")
    return out


def render_comparison(comp: list[dict]) -> list[str]:
    """The tfl_*_qdq.onnx against their TFLite originals (issue 24's 3% goal)."""
    if not comp:
        return []
    out = [f"## ONNX conversions against their TFLite originals ({COMPARE_TARGET})", "",
           "Each `tfl_X_qdq.onnx` (tf2onnx's conversion of X.tflite: the same int8 weights) "
           f"against X.tflite on {COMPARE_TARGET}; the goal is both ratios at most {GOAL}.", "",
           "| ONNX model | TFLite model | ONNX arena B | TFLite arena B | arena ratio | "
           f"ONNX instructions | TFLite instructions | instruction ratio | within {round((GOAL - 1) * 100)}% |",
           "|---|---|---:|---:|---:|---:|---:|---:|:-:|"]
    for c in comp:
        ok = (c.get("arena_ratio") is not None and c.get("instructions_ratio") is not None
              and c["arena_ratio"] <= GOAL and c["instructions_ratio"] <= GOAL)
        out.append("| " + " | ".join([
            c["onnx"], c["tflite"], fmt_int(c["onnx_arena"]), fmt_int(c["tflite_arena"]),
            fmt_ratio(c["onnx_arena"], c["tflite_arena"], 3), fmt_int(c["onnx_instructions"]),
            fmt_int(c["tflite_instructions"]),
            fmt_ratio(c["onnx_instructions"], c["tflite_instructions"], 3),
            "yes" if ok else ("error: " + c["error"] if c.get("error") else "**no**")]) + " |")
    return out + [""]
