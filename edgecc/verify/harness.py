"""The test harness around generated C: a `main` that knows only NAME.h.

Owns: writing harness.c with the seeded inputs embedded as const arrays, running the model
EDGECC_RUNS times (default 1; instruction counters difference two builds), and printing outputs
(and, in trace builds, every layer's output through the EDGECC_TRACE hook) as hex lines that
`parse_output` reads back. The same harness runs on the host, under qemu-user and bare-metal QEMU.
"""
from __future__ import annotations

import re

import numpy as np

from edgecc.codegen import c_literal_list
from edgecc.names import c_ident

TRACE_DEFINE = "-DEDGECC_TRACE=edgecc_trace_hook"


def harness_c(name: str, inputs: list[np.ndarray], n_outputs: int,
              run_io: bool = False, samples: list[list[np.ndarray]] | None = None) -> str:
    """run_io: call NAME_run_io with the embedded inputs and output buffers of the harness (the
    only way to run a model compiled with --io external) instead of NAME_run on the arena.
    samples: several input sets (each a list like `inputs`), run one after the other in the
    same program (`verify --inputs`); sample s prints output i with id s * n_outputs + i."""
    ident = c_ident(name)
    low, up = ident.lower(), ident.upper()
    sets = samples if samples is not None else [inputs]
    n_in = len(sets[0]) if sets else 0
    decls, copies, dumps = [], [], []
    for i in range(n_in):
        rows = [np.frombuffer(np.ascontiguousarray(x[i]).tobytes(), dtype=np.uint8) for x in sets]
        body = ",\n".join(f"    {{ {c_literal_list(b) or '0'} }}" for b in rows)
        decls.append(f"static const uint8_t in{i}[{len(sets)}][{max(rows[0].size, 1)}] "
                     f"__attribute__((aligned(16))) = {{\n{body}\n}};")
        if not run_io:
            copies.append(f"            memcpy({low}_input(arena, {i}), in{i}[s], {up}_INPUT{i}_SIZE);")
    for i in range(n_outputs):
        where = f"out{i}" if run_io else f"(const uint8_t *){low}_output(arena, {i})"
        dumps.append(f"        dump('O', s * {n_outputs} + {i}, {where}, {up}_OUTPUT{i}_SIZE);")
    run = f"{low}_run(arena)"
    if run_io:
        decls += [f"static uint8_t out{i}[{up}_OUTPUT{i}_SIZE] __attribute__((aligned(16)));"
                  for i in range(n_outputs)]
        decls.append(f"static void *const outs[] = {{ {', '.join(f'out{i}' for i in range(n_outputs)) or '0'} }};")
        copies.append(f"            const void *const ins[] = {{ {', '.join(f'in{i}[s]' for i in range(n_in)) or '0'} }};")
        run = f"{low}_run_io(arena, ins, outs)"
    nl = "\n"
    return f"""/* edgecc test harness for {low}: embedded inputs, hex dump of outputs. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "{low}.h"

#ifndef EDGECC_RUNS
#define EDGECC_RUNS 1
#endif

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
    int r, s;
    for (s = 0; s < {len(sets)}; ++s) {{
        for (r = 0; r < EDGECC_RUNS; ++r) {{
{nl.join(copies)}
            if ({run} != 0) {{ printf("E run failed\\n"); return 3; }}
        }}
{nl.join(dumps)}
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
