"""The test harness around generated C: a `main` that knows only NAME.h.

Owns: writing harness.c with the inputs of one or more frames embedded as const arrays,
calling name_reset at the start of each pass (or before every frame, for independent samples),
then running the model on every frame in turn on the same arena (the state carries) EDGECC_RUNS
times over (default 1; instruction counters difference two builds), and
printing the last pass's outputs (and, in trace builds, every layer's output through the
EDGECC_TRACE hook) as hex lines that `parse_output` / `parse_frames` read back; with several frames
an "F k" line opens frame k. The same harness runs on the host, under qemu-user and bare-metal QEMU.
"""
from __future__ import annotations

import re

import numpy as np

from edgecc.codegen import c_literal_list
from edgecc.names import c_ident

TRACE_DEFINE = "-DEDGECC_TRACE=edgecc_trace_hook"


def harness_c(name: str, inputs: list[np.ndarray], n_outputs: int,
              run_io: bool = False) -> str:
    """The harness for one frame."""
    return harness_frames_c(name, [inputs], n_outputs, run_io=run_io)


def harness_frames_c(name: str, frames: list[list[np.ndarray]], n_outputs: int,
                     run_io: bool = False, reset_each: bool = False) -> str:
    """run_io: call NAME_run_io with the embedded inputs and the harness's output buffers (the
    only way to run a model compiled with --io external) instead of NAME_run on the arena.
    reset_each: name_reset before every frame (independent samples, `verify --inputs`) instead of
    once per pass (a stream whose state carries, `verify --frames`)."""
    ident = c_ident(name)
    low, up = ident.lower(), ident.upper()
    decls, copies, dumps = [], [], []
    n_in = len(frames[0])
    for f, inputs in enumerate(frames):
        for i, x in enumerate(inputs):
            b = np.frombuffer(np.ascontiguousarray(x).tobytes(), dtype=np.uint8)
            decls.append(f"static const uint8_t in{f}_{i}[{max(b.size, 1)}] "
                         f"__attribute__((aligned(16))) = {{\n    {c_literal_list(b) or '0'}\n}};")
    for i in range(n_in):
        table = ", ".join(f"in{f}_{i}" for f in range(len(frames)))
        decls.append(f"static const uint8_t *const frame_in{i}[{len(frames)}] = {{ {table} }};")
        if not run_io:
            copies.append(f"            memcpy({low}_input(arena, {i}), frame_in{i}[f], {up}_INPUT{i}_SIZE);")
    for i in range(n_outputs):
        where = f"out{i}" if run_io else f"(const uint8_t *){low}_output(arena, {i})"
        dumps.append(f"            if (last) dump('O', {i}, {where}, {up}_OUTPUT{i}_SIZE);")
    run = f"{low}_run(arena)"
    if run_io:
        decls += [f"static uint8_t out{i}[{up}_OUTPUT{i}_SIZE] __attribute__((aligned(16)));"
                  for i in range(n_outputs)]
        decls.append(f"static void *const outs[] = {{ {', '.join(f'out{i}' for i in range(n_outputs)) or '0'} }};")
        copies.append(f"            const void *const ins[] = {{ {', '.join(f'frame_in{i}[f]' for i in range(n_in)) or '0'} }};")
        run = f"{low}_run_io(arena, ins, outs)"
    if reset_each:
        copies.insert(0, f"            {low}_reset(arena);")
    if len(frames) > 1:  # frame markers for parse_frames
        copies.insert(0, '            if (last) printf("F %d\\n", f);')
    reset_pass = "" if reset_each else f"        {low}_reset(arena); /* the state carries across frames, as in TFLite Micro */"
    nl = "\n"
    return f"""/* edgecc test harness for {low}: embedded inputs, hex dump of outputs. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "{low}.h"

#ifndef EDGECC_RUNS
#define EDGECC_RUNS 1
#endif
#define FRAMES {len(frames)}

static void dump(char tag, int id, const uint8_t *p, unsigned n) {{
    static const char hx[] = "0123456789abcdef";
    char line[64];
    unsigned i, k = 0;
    printf("%c %d %u ", tag, id, n);
    for (i = 0; i < n; ++i) {{
        line[k++] = hx[p[i] >> 4];
        line[k++] = hx[p[i] & 15];
        if (k == sizeof line) {{ fwrite(line, 1, k, stdout); k = 0; }}
    }}
    if (k) fwrite(line, 1, k, stdout);
    printf("\\n");
}}

void edgecc_trace_hook(int id, const void *ptr, unsigned n);
void edgecc_trace_hook(int id, const void *ptr, unsigned n) {{ dump('T', id, (const uint8_t *)ptr, n); }}

{nl.join(decls)}

static uint8_t arena[{up}_ARENA_SIZE] __attribute__((aligned(16)));

int main(void) {{
    int r, f;
    for (r = 0; r < EDGECC_RUNS; ++r) {{
        const int last = r == EDGECC_RUNS - 1;
{reset_pass}
        for (f = 0; f < FRAMES; ++f) {{
{nl.join(copies)}
            if ({run} != 0) {{ printf("E run failed\\n"); return 3; }}
{nl.join(dumps)}
        }}
    }}
    printf("D done\\n");
    return 0;
}}
"""


_LINE = re.compile(r"^([OT]) (-?\d+) (\d+) ?([0-9a-f]*)$")


def parse_output(text: str) -> tuple[dict[int, bytes], dict[int, bytes], bool]:
    """(outputs by index, traced tensors by TFLite index, saw the end marker)."""
    outs: dict[int, bytes] = {}
    traces: dict[int, bytes] = {}
    done = False
    for line in text.splitlines():
        line = line.strip()
        if line == "D done":
            done = True
            continue
        m = _LINE.match(line)
        if m:
            (outs if m.group(1) == "O" else traces)[int(m.group(2))] = bytes.fromhex(m.group(4))
    return outs, traces, done


def parse_frames(text: str) -> tuple[list[tuple[dict[int, bytes], dict[int, bytes]]], bool]:
    """Per frame (split at the "F k" lines; one frame when there are none): (outputs, traces),
    and whether the end marker was seen."""
    chunks = re.split(r"^F \d+\s*$", text, flags=re.M)
    if len(chunks) > 1:
        chunks = chunks[1:]  # before the first marker: nothing of a frame
    frames = [parse_output(c)[:2] for c in chunks]
    return frames, parse_output(text)[2]
