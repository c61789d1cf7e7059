"""x86-64 host measurements: exact instruction counts, latency of the generated C, LiteRT latency.

Owns: (1) the instruction count per inference of a host build, taken like the Arm counts
(edgecc/build/qemu.py): the verify harness built static with EDGECC_RUNS=1 and =2, both run under
qemu-x86_64 (-cpu max, which implements AVX2) with edgecc's counting TCG plugin, difference of the
two totals; (2) a timing harness for the generated C: one thread, the model run `warmup` times,
then `runs` times each timed alone with CLOCK_MONOTONIC, the median (p50) and the 99th
percentile (p99, the tail) of those same runs printed; (3) LiteRT's `invoke()` timed the same way
(p50 and p99 of one set of runs) from Python (ai-edge-litert, num_threads=1, default delegate, which
is XNNPACK). The generated C is timed twice: `-O3 -march=native` and `-O2` with the target's flags
only (PLAIN_CFLAGS; x86-avx2's run-time dispatch). Inputs of the timed runs are byte i = (i*7+3) mod 256, as in the anchors.
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from edgecc.errors import EdgeccError
from edgecc.names import c_ident

LATENCY_CFLAGS = ["-O3", "-march=native"]
# The second latency column: the target's own flags at -O2 (x86-avx2: -mavx2 -mfma), the build a
# user makes; its kernels pick the CPU's best level at run time (runtime_c/x86/levels.h).
PLAIN_CFLAGS = ["-O2"]


def _cc(cmd: list[str], what: str) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        first = (r.stderr.strip().splitlines() or ["(no output)"])[0]
        raise EdgeccError(f"{cmd[0]} failed to {what}: {first}")


def count_instructions(gen_dir: Path, harness: Path, work: Path, cflags: list[str],
                       cc: str = "gcc", timeout: float = 300.0) -> int:
    """Exact x86-64 instructions per inference of the generated C (see the module docstring)."""
    from edgecc.build.qemu import count_plugin
    totals = []
    for runs in (1, 2):
        exe = work / f"count{runs}"
        _cc([cc, "-std=c99", "-O2", *cflags, "-static", f"-DEDGECC_RUNS={runs}", f"-I{gen_dir}",
             *map(str, sorted(gen_dir.glob("*.c"))), str(harness), "-o", str(exe)],
            "build the x86 counting harness")
        out = work / f"count{runs}.txt"
        cmd = ["qemu-x86_64", "-cpu", "max", "-plugin", f"{count_plugin()},out={out}", str(exe)]
        r = subprocess.run(cmd, capture_output=True, timeout=timeout)
        if r.returncode != 0:
            raise EdgeccError(f"qemu-x86_64 run of {exe.name} exited with {r.returncode}")
        line = out.read_text().split("\n")[0]
        if not line.startswith("total "):
            raise EdgeccError("the QEMU counting plugin wrote no result")
        totals.append(int(line.split()[1]))
    return totals[1] - totals[0]


def pattern_bytes(n: int) -> bytes:
    return bytes((i * 7 + 3) % 256 for i in range(n))


TIMING_C = r"""/* edgecc benchmark timing harness: p50 and p99 latency of {low}_run, one thread. */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "{low}.h"

static uint8_t arena[{up}_ARENA_SIZE] __attribute__((aligned(64)));
static int cmp(const void *a, const void *b) {{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}}
static int64_t now_ns(void) {{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}}
static void fill(void) {{
    int i;
    unsigned k;
    for (i = 0; i < {up}_INPUT_COUNT; ++i) {{
        uint8_t *p = (uint8_t *){low}_input(arena, i);
        unsigned n = {sizes}[i];
        for (k = 0; k < n; ++k) p[k] = (uint8_t)((k * 7 + 3) & 255);
    }}
}}
int main(int argc, char **argv) {{
    int warm = argc > 1 ? atoi(argv[1]) : 20, runs = argc > 2 ? atoi(argv[2]) : 200, i;
    int64_t *t = (int64_t *)malloc(sizeof(int64_t) * (size_t)runs);
    if (!t) return 1;
    fill();
    {low}_reset(arena);
    for (i = 0; i < warm; ++i) if ({low}_run(arena) != 0) return 2;
    for (i = 0; i < runs; ++i) {{
        int64_t t0;
        fill();
        t0 = now_ns();
        if ({low}_run(arena) != 0) return 2;
        t[i] = now_ns() - t0;
    }}
    qsort(t, (size_t)runs, sizeof t[0], cmp);
    printf("median_ns %lld min_ns %lld runs %d p99_ns %lld\n", (long long)t[runs / 2],
           (long long)t[0], runs, (long long)t[(runs * 99) / 100]);
    free(t);
    return 0;
}}
"""


def build_timer(gen_dir: Path, work: Path, name: str, n_inputs: int, cflags: list[str],
                cc: str = "gcc") -> Path:
    low, up = c_ident(name).lower(), c_ident(name).upper()
    work.mkdir(parents=True, exist_ok=True)
    sizes = "(const unsigned[]){" + ", ".join(f"{up}_INPUT{i}_SIZE" for i in range(n_inputs)) + "}"
    src = work / "timing.c"
    src.write_text(TIMING_C.format(low=low, up=up, sizes=sizes))
    exe = work / "timing"
    _cc([cc, "-std=c99", *cflags, f"-I{gen_dir}", *map(str, sorted(gen_dir.glob("*.c"))),
         str(src), "-o", str(exe)], "build the timing harness")
    return exe


def _runs_for(first_ns: float, budget_s: float, lo: int = 200, hi: int = 20000) -> int:
    return int(min(hi, max(lo, budget_s * 1e9 / max(first_ns, 1.0))))


def time_c_tail(exe: Path, budget_s: float = 0.5) -> tuple[float, float]:
    """(p50, p99) latency in microseconds of the generated C, over one set of timed runs: a
    short probe sizes the real run so it takes about `budget_s` seconds (200 to 20000 timed runs
    after 20 warm-ups)."""
    def run(warm: int, runs: int) -> tuple[float, float]:
        r = subprocess.run([str(exe), str(warm), str(runs)], capture_output=True, text=True,
                           timeout=600)
        if r.returncode != 0:
            raise EdgeccError(f"{exe.name} exited with {r.returncode}")
        f = r.stdout.split()
        return float(f[1]), float(f[7])
    probe = run(5, 20)[0]
    p50, p99 = run(20, _runs_for(probe, budget_s))
    return p50 / 1e3, p99 / 1e3


def time_c(exe: Path, budget_s: float = 0.5) -> float:
    """Median latency (microseconds) of the generated C (time_c_tail's p50)."""
    return time_c_tail(exe, budget_s)[0]


def litert_interpreter(model: Path):
    """LiteRT interpreter, one thread, default delegate (XNNPACK), inputs set; None if LiteRT
    cannot load the model."""
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        raise EdgeccError("LiteRT latency needs 'ai-edge-litert' (pip install ai-edge-litert)") \
            from None
    try:
        it = Interpreter(model_path=str(model), num_threads=1)
        it.allocate_tensors()
    except (RuntimeError, ValueError):
        return None
    for d in it.get_input_details():
        n = int(np.prod(d["shape"])) * np.dtype(d["dtype"]).itemsize
        it.set_tensor(d["index"], np.frombuffer(pattern_bytes(n), dtype=d["dtype"])
                      .reshape(d["shape"]))
    return it


def time_litert(model: Path, budget_s: float = 0.5) -> float | None:
    """Median `invoke()` latency (microseconds) of LiteRT (time_litert_tail's p50)."""
    tail = time_litert_tail(model, budget_s)
    return None if tail is None else tail[0]


def time_litert_tail(model: Path, budget_s: float = 0.5) -> tuple[float, float] | None:
    """(p50, p99) `invoke()` latency (microseconds) of LiteRT over one set of timed runs,
    measured in a child process (LiteRT
    corrupts its heap on some models, e.g. keyword_scrambled_8bit's SVDF: that must not take the
    benchmark down); None when LiteRT refuses or crashes on the model."""
    try:
        r = subprocess.run([sys.executable, "-m", "benchmarks.x86", str(model), str(budget_s)],
                           capture_output=True, text=True, timeout=600,
                           cwd=Path(__file__).resolve().parent.parent)
    except subprocess.TimeoutExpired:
        return None
    if r.returncode != 0 or not r.stdout.strip() or r.stdout.split()[-1] == "None":
        if "No module named 'ai_edge_litert'" in r.stderr:
            raise EdgeccError("LiteRT latency needs 'ai-edge-litert' (pip install ai-edge-litert)")
        return None
    p50, p99 = r.stdout.split()[-2:]
    return float(p50), float(p99)


def _time_litert_here(model: Path, budget_s: float) -> tuple[float, float] | None:
    it = litert_interpreter(model)
    if it is None:
        return None
    try:
        for _ in range(5):
            it.invoke()
    except RuntimeError:
        return None
    t0 = time.perf_counter_ns()
    for _ in range(20):
        it.invoke()
    runs = _runs_for((time.perf_counter_ns() - t0) / 20, budget_s)
    for _ in range(20):
        it.invoke()
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        it.invoke()
        ts.append(time.perf_counter_ns() - t0)
    ts.sort()
    return statistics.median(ts) / 1e3, ts[len(ts) * 99 // 100] / 1e3


if __name__ == "__main__":  # the child process of time_litert: MODEL BUDGET_S -> p50 p99 (us)
    tail = _time_litert_here(Path(sys.argv[1]), float(sys.argv[2]))
    print("None" if tail is None else f"{tail[0]} {tail[1]}")
