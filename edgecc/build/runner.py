"""Cached programs that run a compiled model on inputs given at run time (edgecc.run, the pytest
plugin).

Owns: the runner's C main (reads edgecc_in.bin from its working directory: on the host and under
qemu-user with stdio, on bare-metal boards through semihosting, so one build serves every input),
building it once per generated C, board and compiler into the cache folder
(edgecc.build.qemu.cache_dir()/runners/<sha256>), and running it in a fresh folder per call.
The file holds the frames back to back, each the model's inputs in order; the program runs the
model once per frame on the same arena (state carries over, as in a firmware) and prints each
frame's outputs as verify's harness does (edgecc.build.harness.parse_output reads them).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from edgecc.build.boards import default_board
from edgecc.build.cross import build_program
from edgecc.build.harness import parse_output
from edgecc.build.host import build_host
from edgecc.build.qemu import cache_dir, run_program
from edgecc.codegen import write_files
from edgecc.errors import EdgeccError
from edgecc.names import c_ident

RUNNER_C = """/* edgecc runner for {low}: frames from edgecc_in.bin, outputs as hex lines. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "{low}.h"

static uint8_t arena[{up}_ARENA_SIZE] __attribute__((aligned(16)));
{buffers}
static void dump(int id, const uint8_t *p, unsigned n) {{
    unsigned i;
    printf("O %d %u ", id, n);
    for (i = 0; i < n; ++i) printf("%02x", p[i]);
    printf("\\n");
}}

static int read_all(FILE *f, uint8_t *p, size_t n) {{
    return n == 0 || fread(p, 1, n, f) == n;
}}

int main(void) {{
    int frame = 0;
    FILE *f = fopen("edgecc_in.bin", "rb");
    if (f == 0) {{ printf("E no edgecc_in.bin\\n"); return 4; }}
    for (;;) {{
{reads}
{run}
{dumps}
        ++frame;
    }}
    fclose(f);
    printf("D done\\n");
    return 0;
}}
"""


def runner_c(name: str, n_inputs: int, n_outputs: int, run_io: bool) -> str:
    ident = c_ident(name)
    low, up = ident.lower(), ident.upper()
    bufs, reads, dumps = [], [], []
    for i in range(n_inputs):
        dst = f"in{i}" if run_io else f"(uint8_t *){low}_input(arena, {i})"
        if run_io:
            bufs.append(f"static uint8_t in{i}[{up}_INPUT{i}_SIZE + 1] __attribute__((aligned(16)));")
        # the first input's read ends the loop at the end of the file
        reads.append(f"        if (!read_all(f, {dst}, {up}_INPUT{i}_SIZE)) "
                     + ("break;" if i == 0 else "{ printf(\"E short file\\n\"); return 4; }"))
    for i in range(n_outputs):
        src = f"out{i}" if run_io else f"(const uint8_t *){low}_output(arena, {i})"
        if run_io:
            bufs.append(f"static uint8_t out{i}[{up}_OUTPUT{i}_SIZE + 1] __attribute__((aligned(16)));")
        dumps.append(f"        dump(frame * {n_outputs} + {i}, {src}, {up}_OUTPUT{i}_SIZE);")
    if run_io:
        bufs.append(f"static const void *const ins[] = {{ {', '.join(f'in{i}' for i in range(n_inputs)) or '0'} }};")
        bufs.append(f"static void *const outs[] = {{ {', '.join(f'out{i}' for i in range(n_outputs)) or '0'} }};")
        call = f"{low}_run_io(arena, ins, outs)"
    else:
        call = f"{low}_run(arena)"
    run = f"        if ({call} != 0) {{ printf(\"E run failed\\n\"); return 3; }}"
    return RUNNER_C.format(low=low, up=up, buffers="\n".join(bufs), reads="\n".join(reads),
                           run=run, dumps="\n".join(dumps))


def _key(files: dict[str, str], runner: str, target: str, board, cc: str | None) -> str:
    h = hashlib.sha256()
    for k in sorted(files):
        h.update(k.encode() + b"\0" + files[k].encode() + b"\0")
    h.update(runner.encode())
    h.update(json.dumps([target, repr(board), cc]).encode())
    return h.hexdigest()[:24]


def build_runner(c, target, board, cc: str | None = None) -> Path:
    """The runner program of Compiled `c` (built on first use, then taken from the cache)."""
    runner = runner_c(c.name, len(c.graph.inputs), len(c.graph.outputs), bool(c.plan.external))
    final = cache_dir() / "runners" / _key(c.files, runner, target.name, board, cc)
    prog = final / "prog"
    if prog.is_file():
        return prog
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix="build-"))
    try:
        write_files(c.files, tmp / "gen")
        src = tmp / "runner.c"
        src.write_text(runner)
        if target.runner == "host":
            build_host(tmp / "gen", src, tmp / "prog", target, cc)
        else:
            b = board or default_board(target.name)
            built = build_program(tmp / "gen", [src], tmp / "prog.elf", b, cc, c.plan.arena,
                                  callgraph=False, weights_section=c.weights_section)
            os.replace(built.elf, tmp / "prog")
        try:
            os.replace(tmp, final)  # atomic; a parallel build may have won: keep theirs
        except OSError:
            pass
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not prog.is_file():
        raise EdgeccError(f"could not build the runner in {final}")
    return prog


def run_frames(c, prog: Path, target, board, frames: list[list[np.ndarray]],
               timeout: float = 120.0) -> list[list[bytes]]:
    """Run the runner on the frames; per frame the output bytes, in order."""
    n_out = len(c.graph.outputs)
    with tempfile.TemporaryDirectory(prefix="edgecc-run-") as tmp:
        work = Path(tmp)
        with open(work / "edgecc_in.bin", "wb") as f:
            for fr in frames:
                for x in fr:
                    f.write(np.ascontiguousarray(x).tobytes())
        if target.runner == "host":
            try:
                r = subprocess.run([str(prog)], cwd=work, capture_output=True, text=True,
                                   timeout=timeout)
            except subprocess.TimeoutExpired:
                raise EdgeccError(f"{prog}: timed out after {timeout:g} s") from None
            if r.returncode != 0:
                raise EdgeccError(f"{prog}: exit status {r.returncode}: {r.stdout[-200:]}")
            text = r.stdout
        else:
            text = run_program(prog, board or default_board(target.name), timeout,
                               cwd=work).stdout
    outs, _, done = parse_output(text)
    if not done or len(outs) != len(frames) * n_out:
        raise EdgeccError(f"the runner did not finish normally: {text.strip()[-200:]}")
    return [[outs[k * n_out + i] for i in range(n_out)] for k in range(len(frames))]
