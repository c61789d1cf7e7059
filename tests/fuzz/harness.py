"""Running one fuzz case: compile in-process under a time limit, classify the outcome, and for a
compiled case build its C strictly with ASan/UBSan and run three random inputs with guard bytes
after the arena.

Outcomes: "ok" (compiled, built, ran clean), "compiled" (exit 0, C not run), "refused" (exit 2,
one line), and the bad ones: "internal" (exit 3), "traceback", "multiline", "timeout",
"c-build" (strict build failed), "c-run" (sanitizer report, crash, or guard bytes touched).
"""
from __future__ import annotations

import io
import re
import signal
import subprocess
import warnings
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from edgecc import cli

BAD = ("internal", "traceback", "multiline", "timeout", "c-build", "c-run")
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
SANITIZE = ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
GUARD = 64

_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "{name}.h"
static const long sizes[] = {{ {sizes} }};
int main(void) {{
    unsigned char *raw = malloc({arena} + {guard} + 16);
    uint8_t *arena = (uint8_t *)(((uintptr_t)raw + 15) & ~(uintptr_t)15);
    unsigned seed = 12345u;
    int run, i;
    long k;
    memset(arena + {arena}, 0xA5, {guard});
    for (run = 0; run < 3; ++run) {{
        for (i = 0; i < {n_in}; ++i) {{
            uint8_t *p = (uint8_t *){name}_input(arena, i);
            for (k = 0; k < sizes[i]; ++k) {{ seed = seed * 1103515245u + 12345u; p[k] = (uint8_t)(seed >> 16); }}
        }}
        if ({name}_run(arena) != 0) return 3;
        for (i = 0; i < {guard}; ++i) if (arena[{arena} + i] != 0xA5) {{ puts("guard"); return 4; }}
    }}
    free(raw);
    return 0;
}}
"""


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def compile_case(model: Path, out: Path, timeout: int = 30) -> tuple[str, int, str]:
    """(outcome, exit code, stderr) of `edgecc compile model -o out --name m`, in-process."""
    so, se = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        with redirect_stdout(so), redirect_stderr(se), warnings.catch_warnings():
            warnings.simplefilter("error")
            code = cli.main(["compile", str(model), "-o", str(out), "--name", "m"])
    except _Timeout:
        return "timeout", -1, ""
    except BaseException as e:  # noqa: BLE001 - anything escaping main() is a traceback
        return "traceback", -1, f"{type(e).__name__}: {e}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    err = se.getvalue()
    if "Traceback" in err:
        return "traceback", code, err
    if code == 3:
        return "internal", code, err
    if code == 2:
        return ("refused" if len(err.splitlines()) == 1 else "multiline"), code, err
    return ("compiled" if code == 0 and err == "" else "multiline"), code, err


def run_c(out: Path, name: str = "m", timeout: int = 60) -> tuple[str, str]:
    """Build OUT's C strictly with the sanitizers, run three random inputs: ("ok"|"c-build"|"c-run", log)."""
    h = (out / f"{name}.h").read_text()
    macro = lambda m: int(re.search(rf"#define {name.upper()}_{m}\s+(\d+)", h).group(1))  # noqa
    n_in = macro("INPUT_COUNT")
    sizes = ", ".join(str(macro(f"INPUT{i}_SIZE")) for i in range(n_in)) or "0"
    main = out / "fuzz_main.c"
    main.write_text(_MAIN.format(name=name, sizes=sizes, arena=macro("ARENA_SIZE"), guard=GUARD,
                                 n_in=n_in))
    srcs = [str(p) for p in sorted(out.glob("*.c"))]  # the generated C and fuzz_main.c
    exe = out / "fuzz.exe"
    try:
        b = subprocess.run(["gcc", *STRICT, *SANITIZE, "-I", str(out), *srcs, "-o", str(exe)],
                           capture_output=True, text=True, timeout=timeout)
        if b.returncode != 0:
            return "c-build", b.stderr[-2000:]
        r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "c-run", "timeout"
    if r.returncode != 0 or r.stderr:
        return "c-run", (r.stdout + r.stderr)[-2000:]
    return "ok", ""
