"""Building generated C with the host compilers (gcc, clang) and running it on the host.

Owns: the host compile command (strict warnings, C99), running with a timeout, and turning a
compiler or runtime failure into a one-line EdgeccError.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from edgecc.errors import EdgeccError
from edgecc.targets import DEFAULT_OPT, FP_FLAGS, Target

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", *FP_FLAGS]


def host_compiler(cc: str | None) -> str:
    cc = cc or "gcc"
    if shutil.which(cc) is None:
        raise EdgeccError(f"compiler {cc!r} not found on PATH")
    return cc


def cpu_flags() -> set[str]:
    """This machine's CPU feature flags (/proc/cpuinfo; empty where it cannot be read)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def check_host_can_run(target: Target) -> None:
    """A one-line error, instead of SIGILL, when this CPU lacks what the target's code needs."""
    missing = sorted(target.host_cpu - cpu_flags()) if target.host_cpu else []
    if missing:
        raise EdgeccError(f"this CPU cannot run {target.name} code (no {', '.join(missing)} in "
                          f"/proc/cpuinfo): build it here with `edgecc compile`, run it elsewhere")


def host_build_flags(target: Target, cc: str | None) -> list[str]:
    """The compiler and flags build_host uses for the generated C (besides -I): what verify on
    the host measures with, and says it did."""
    return [cc or "gcc", *STRICT, DEFAULT_OPT, *target.cflags]


def build_host(src_dir: Path, harness: Path, exe: Path, target: Target, cc: str | None,
               defines: list[str] = (), opt: str = DEFAULT_OPT) -> Path:
    """Build the generated C and a harness to run here (so the CPU must be able to run it)."""
    check_host_can_run(target)
    cc = host_compiler(cc)
    sources = sorted(str(p) for p in src_dir.glob("*.c"))
    cmd = [cc, *STRICT, opt, *target.cflags, f"-I{src_dir}", *defines, *sources, str(harness),
           "-o", str(exe)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        first = (r.stderr.strip().splitlines() or ["(no output)"])[0]
        raise EdgeccError(f"{cc} failed to build the generated C: {first}")
    return exe


def run_host(exe: Path, timeout: float = 120.0) -> str:
    try:
        r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise EdgeccError(f"{exe.name}: timed out after {timeout:.0f} s") from None
    if r.returncode != 0:
        raise EdgeccError(f"{exe.name}: exited with status {r.returncode}: "
                          f"{(r.stdout + r.stderr).strip()[-200:]}")
    return r.stdout
