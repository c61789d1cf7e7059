"""The benchmark report: markdown tables of one run, and the summaries the docs carry.

Owns: formatting (thousands separators, ratios, missing values as a dash, errors as footnotes),
the header (date, machine, toolchain, commit), that every row is of that one run (`one_run`:
no merged runs), one table per target, the two summary blocks
(README.md's short one: the anchor models' headline ratios; docs/benchmarks.md's: every model's
ratios), and replacing the text between a file's `BEGIN/END GENERATED: benchmarks` markers.
"""
from __future__ import annotations

import re
import textwrap
from pathlib import Path

from benchmarks.profile import ANCHOR_MODELS

HOST_TARGETS = ("host", "x86-avx2", "x86-avx512")
README_BEGIN = "<!-- BEGIN GENERATED: benchmarks -->"
README_END = "<!-- END GENERATED: benchmarks -->"


def fmt_int(v) -> str:
    return "-" if v is None else f"{int(v):,}"


def fmt_ratio(a, b, digits: int = 2) -> str:
    if a is None or not b:
        return "-"
    return f"{a / b:.{digits}f}"


def fmt_us(v) -> str:
    if v is None:
        return "-"
    return f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def _note(notes: list[str], r: dict, limit: int = 240) -> int:
    """Footnote number of a row's error (one note per model and message, shortened)."""
    text = f"{r['model']}: {r['error']}"
    if len(text) > limit:
        text = text[:limit - 3].rstrip() + "..."
    if text not in notes:
        notes.append(text)
    return notes.index(text) + 1


def fmt_frames(r: dict) -> str:
    n = r.get("frames")
    if n is None:  # a row of a run before --frames: one frame
        return "yes" if r["bit_exact"] else "**NO**"
    k = r.get("frames_exact", 0)
    return f"{k}/{n}" if k == n else f"**{k}/{n}**"


def fmt_s(v) -> str:
    return "-" if v is None else f"{v:.1f}"


def _common(r: dict) -> list[str]:
    """Speed and RAM beside each other, the same in every target's table: instructions against
    TFLite Micro + CMSIS-NN, arena against the lower bound and against TFLite Micro's arena."""
    a = r.get("anchor") or {}
    return [fmt_int(r["instructions"]), fmt_ratio(r["instructions"], r["macs"]),
            fmt_int(a.get("instructions")), fmt_ratio(r["instructions"], a.get("instructions")),
            fmt_int(r["arena_bytes"]), fmt_int(r["lower_bound_bytes"]),
            fmt_ratio(r["arena_bytes"], r["lower_bound_bytes"]),
            fmt_int(r.get("tflm_arena_bytes")),
            fmt_ratio(r["arena_bytes"], r.get("tflm_arena_bytes")), fmt_int(r["flash_bytes"])]


COMMON_HEAD = ("instructions | instr/MAC | TFLM+CMSIS-NN instr | instr / TFLM | arena B | "
               "lower bound B | arena / LB | TFLM arena B | arena / TFLM arena | "
               "flash B (code + weights)")
COMMON_ALIGN = "|---:" * 10


def _table(rows: list[dict], notes: list[str], head: str, align: str, tail) -> list[str]:
    """model, MACs, the common columns, the target kind's own (`tail(row)`), exact frames and
    compile seconds; an error row keeps its footnote."""
    out = [f"| model | MACs | {COMMON_HEAD} | {head} | exact frames | compile s |",
           f"|---|---:{COMMON_ALIGN}{align}|:-:|---:|"]
    width = 14 + head.count("|")
    for r in rows:
        if r.get("error"):
            out.append(f"| {r['model']} | {fmt_int(r.get('macs'))} | error "
                       f"[{_note(notes, r)}] |" + " |" * (width - 2))
            continue
        out.append("| " + " | ".join([r["model"], fmt_int(r["macs"]), *_common(r), *tail(r),
                                      fmt_frames(r), fmt_s(r.get("compile_s"))]) + " |")
    return out


def _arm_table(target: str, rows: list[dict], notes: list[str]) -> list[str]:
    def tail(r):
        a = r.get("anchor") or {}
        return [fmt_int(a.get("arena_bytes")), fmt_int(a.get("flash_bytes"))]
    return _table(rows, notes, "TFLM arena_used B (32-bit) | TFLM flash B", "|---:" * 2, tail)


def _host_table(target: str, rows: list[dict], notes: list[str]) -> list[str]:
    def tail(r):
        lite = r.get("litert_us") is not None
        return [fmt_us(r.get("latency_us")),
                fmt_us(r.get("litert_us")) if lite else "n/a",
                fmt_ratio(r.get("latency_us"), r.get("litert_us")),
                fmt_us(r.get("latency_p99_us")),
                fmt_us(r.get("litert_p99_us")) if lite else "n/a",
                fmt_ratio(r.get("latency_p99_us"), r.get("litert_p99_us")),
                fmt_us(r.get("latency_plain_us")),
                fmt_ratio(r.get("latency_plain_us"), r.get("litert_us"))]
    return _table(rows, notes, "edgecc us | LiteRT+XNNPACK us | edgecc/LiteRT | edgecc p99 us | "
                  "LiteRT p99 us | p99 ratio | edgecc us, -O2 + target flags (x86-avx2: -mavx2 "
                  "-mfma, run-time dispatch) | its ratio", "|---:" * 8, tail)


def one_run(meta: dict, results: dict[str, list[dict]], clean: bool = False) -> None:
    """results.md and its summaries show one run of one commit: every row must carry the run's
    date and commit (benchmarks/run.py stamps them); rows of another run are refused (ValueError
    naming them), never merged. `clean` (the repository's own results.md and summaries): the run
    must also be of a commit without uncommitted changes."""
    commit = str(meta.get("commit"))
    if not re.fullmatch(r"[0-9a-f]{7,40}" + ("" if clean else r"( \(with uncommitted changes\))?"),
                        commit):
        raise ValueError(f"a run of {commit!r}: the repository's results.md is one run of one "
                         f"commit without uncommitted changes")
    other = [f"{r['model']} on {t}" for t, rows in results.items() for r in rows
             if (r.get("measured"), r.get("commit")) != (meta["date"], meta["commit"])]
    if other:
        raise ValueError(f"{len(other)} rows are not of the run of {meta['date']} at "
                         f"{meta['commit']} (results.md is one run of one commit): "
                         + ", ".join(other[:5]) + (" ..." if len(other) > 5 else ""))


def render_results(meta: dict, results: dict[str, list[dict]], clean: bool = False) -> str:
    one_run(meta, results, clean)
    lines = ["# edgecc benchmark results", "",
             f"Generated by `{meta['command']}` on {meta['date']}.", "",
             f"- Machine: {meta['cpu']} ({meta['cores']} cores), {meta['os']}",
             f"- edgecc commit: {meta['commit']}",
             f"- Compilers: {meta['gcc']}; {meta['arm_gcc']}; {meta['aarch64_gcc']}; "
             f"QEMU {meta['qemu']}",
             f"- LiteRT {meta['litert']}, TFLite Micro (tflite-micro) {meta['tflm']}", "",
             "Columns. *instructions*: exact guest instructions per inference, counted by a QEMU "
             "TCG plugin (count of two runs minus one run, divided by the frames each run "
             "verified; Cortex-M under qemu-system-arm, "
             "AArch64 under qemu-aarch64, x86-64 under qemu-x86_64 -cpu max), generated C built "
             "with -O2 and the target's core flags. *MACs*: output elements x kernel volume "
             "summed over CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED. *TFLM+CMSIS-NN instr*, "
             "*TFLM arena_used (32-bit)*, *TFLM flash*: the anchor figures of "
             "../shared/bench/anchors.md (same QEMU machines; its current-converter section for "
             "the cv_* models), '-' where it has none; *instr / TFLM* = instructions / TFLM+CMSIS-"
             "NN instr. *TFLM arena*: the smallest "
             "arena_size with which the tflite-micro interpreter (64-bit host build) allocates "
             "and runs the model, bisected in this run. *arena* / *lower bound*: edgecc's plan "
             "(all activation RAM, kernel scratch included) and the live-bytes lower bound (the "
             "peak of the tensors alive at once in the model's own order, each in its own bytes, "
             "no scratch: `edgecc plan`'s lower bound; below 1 when streaming kernels overlap "
             "input and output); *arena / LB* and *arena / "
             "TFLM arena* their ratios (below 1: smaller than TFLite Micro's). *flash*: the model's "
             "code + weights + constants, from the linked ELF's map (Arm) or the generated C's "
             "objects (x86). *exact frames*: of N consecutive seeded frames on one arena after "
             "one name_reset, those whose every output byte equals the reference's (TFLite "
             "Micro, which keeps its state over the same frames; LiteRT's reference kernels "
             "where TFLite Micro lacks an op) (edgecc verify --frames N). *compile s*: "
             "seconds of edgecc's compile of the model for that target (import to C source), "
             "on this loaded machine. *edgecc us*: median latency of NAME_run built "
             f"`{' '.join(meta['latency_cflags'])}`, one thread, after warm-up; *p99*: the 99th "
             "percentile of the same timed runs (the tail; LiteRT's likewise over its own "
             "runs); *LiteRT+XNNPACK "
             "us*: median Python `invoke()` latency of ai-edge-litert with num_threads=1 and its "
             "default XNNPACK delegate, measured in the same run (its Python call floor, the "
             f"median invoke() of hello_world_int8, was {fmt_us(meta.get('litert_floor_us'))} us). "
             "*edgecc us, -O2 + target flags*: the same C built `-O2` + the target's flags only "
             "(x86-avx2: `-mavx2 -mfma`; its kernels pick AVX-512 VNNI, AVX-VNNI or AVX2 at run "
             "time from the CPU; x86-avx512: "
             "`-mavx2 -mfma -mavx512f -mavx512bw -mavx512vl -mavx512vnni`, its 512-bit paths; "
             "QEMU's TCG has no AVX-512, so that target has no instruction count).",
             ""]
    notes: list[str] = []
    from benchmarks.onnx_set import ONNX, render_comparison, render_onnx_table
    for target, all_rows in results.items():
        board = next((r.get("board") for r in all_rows if r.get("board")), None)
        rows = [r for r in all_rows if r.get("format") != ONNX]
        onnx_rows = [r for r in all_rows if r.get("format") == ONNX]
        if rows:
            lines += [f"## {target}" + (f" ({board})" if board else ""), ""]
            lines += (_host_table if target in HOST_TARGETS else _arm_table)(target, rows, notes)
            lines.append("")
        if onnx_rows:  # benchmarks/onnx_set.py: onnxruntime is their oracle, no TFLM columns
            lines += [f"## {target}, ONNX models" + (f" ({board})" if board else ""), ""]
            lines += render_onnx_table(onnx_rows, lambda r: _note(notes, r)) + [""]
    lines += render_comparison(meta.get("onnx_vs_tflite") or [])
    from benchmarks.profile import render_profiles
    lines += render_profiles(results)
    if notes:
        lines += ["Errors:", ""] + [f"{i + 1}. {n}" for i, n in enumerate(notes)] + [""]
    return "\n".join(lines)


SHORT_ARM = ("cortex-m4", "cortex-m55")  # the README's Cortex-M columns
SHORT_X86 = ("x86-avx2",)                # ... and its x86 column (-march=native)


def render_summary(meta: dict, results: dict[str, list[dict]], short: bool = False) -> str:
    """Per model, edgecc/TFLM instruction ratios per Cortex-M target, arena ratios and the x86
    latency ratio against LiteRT. `short` (the README's): the anchor models only, instructions on
    SHORT_ARM, the first of them's arena against TFLite Micro's, latency on SHORT_X86."""
    arm = [t for t in results if t not in HOST_TARGETS and any(
        (r.get("anchor") or {}).get("instructions") for r in results[t])]
    x86 = [t for t in results if t in HOST_TARGETS]
    models: list[str] = []
    for rows in results.values():
        for r in rows:
            if r["model"] not in models:
                models.append(r["model"])
    native = [t for t in x86 if t != "x86-avx512"]  # x86-avx512 -march=native = x86-avx2's
    plain = {"x86-avx2": "-O2 `-mavx2 -mfma`, run-time dispatch",
             "x86-avx512": "-O2, its AVX-512 flags"}
    bound = [t for t in arm if t in ("cortex-m4", "cortex-m55")]  # issue 16's RAM targets
    if short:
        models = [m for m in models if m in ANCHOR_MODELS]
        arm = [t for t in arm if t in SHORT_ARM]
        native = [t for t in native if t in SHORT_X86]
        bound, x86 = [], []
    head = ["model"] + [f"{t} instr / TFLM" for t in arm] + \
        [f"{t} arena / LB" for t in bound] + \
        [f"{t} arena / TFLM arena" for t in arm[:1]] + \
        [f"{t} (-march=native) us / LiteRT" if t != "host" else f"{t} us / LiteRT"
         for t in native] + [f"{t} ({plain[t]}) us / LiteRT" for t in x86 if t in plain]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for m in models:
        cells = [m]
        for t in arm:
            r = next((r for r in results[t] if r["model"] == m), None)
            a = (r or {}).get("anchor") or {}
            cells.append("-" if r is None or r.get("error") else
                         fmt_ratio(r["instructions"], a.get("instructions")))
        for t, key in [(t, "lower_bound_bytes") for t in bound] + \
                [(t, "tflm_arena_bytes") for t in arm[:1]]:
            r = next((r for r in results[t] if r["model"] == m), None)
            cells.append("-" if r is None or r.get("error") else
                         fmt_ratio(r["arena_bytes"], r.get(key)))
        for t in native:
            r = next((r for r in results[t] if r["model"] == m), None)
            cells.append("-" if r is None or r.get("error") else
                         fmt_ratio(r.get("latency_us"), r.get("litert_us")))
        for t in x86:
            if t in plain:
                r = next((r for r in results[t] if r["model"] == m), None)
                cells.append("-" if r is None or r.get("error") else
                             fmt_ratio(r.get("latency_plain_us"), r.get("litert_us")))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def docs_block(meta: dict, results: dict[str, list[dict]], results_md: str) -> str:
    """docs/benchmarks.md's block: every model's ratios; `results_md` is the full results' link
    relative to that file."""
    one_run(meta, results)
    text = (f"Measured {meta['date']} on {meta['cpu']} by `{meta['command']}`; all columns "
            f"(instructions, instructions/MAC, arena, lower bound, flash, TFLite Micro's arena "
            f"and flash, latencies) in [{results_md}]({results_md}). Ratios below 1 mean edgecc "
            f"is smaller / faster: Cortex-M instruction counts against TFLite Micro + CMSIS-NN on "
            f"the same QEMU machine (../shared/bench/anchors.md), arena against TFLite Micro's "
            f"smallest working arena, x86 median latency against LiteRT (XNNPACK, one thread).")
    return textwrap.fill(text, 100) + "\n\n" + render_summary(meta, results)


def readme_block(meta: dict, results: dict[str, list[dict]], full: str) -> str:
    """README.md's block: the anchor models' headline ratios; `full` is the link to
    docs/benchmarks.md relative to the README."""
    one_run(meta, results)
    text = (f"Measured {meta['date']} (the machines, the command and every model: "
            f"[{full}]({full})). Ratios below 1 mean edgecc is smaller / faster: instructions per "
            f"inference against TFLite Micro + CMSIS-NN on the same QEMU machine, arena against "
            f"TFLite Micro's smallest working arena, x86 latency (`-march=native`, one thread) "
            f"against LiteRT with XNNPACK.")
    return textwrap.fill(text, 100) + "\n\n" + render_summary(meta, results, short=True)


def update_readme(readme: Path, block: str) -> None:
    """Replace the text between `readme`'s benchmark markers (README.md or docs/benchmarks.md)."""
    text = readme.read_text()
    pat = re.compile(re.escape(README_BEGIN) + r".*?" + re.escape(README_END), re.S)
    if not pat.search(text):
        raise ValueError(f"{readme}: no '{README_BEGIN}' ... '{README_END}' block")
    readme.write_text(pat.sub(lambda _: f"{README_BEGIN}\n{block.strip()}\n{README_END}", text))


def generated_block(path: Path) -> str | None:
    """The text between `path`'s benchmark markers, or None without them."""
    m = re.search(re.escape(README_BEGIN) + r"\n(.*?)\n" + re.escape(README_END),
                  path.read_text(), re.S)
    return m.group(1) if m else None
