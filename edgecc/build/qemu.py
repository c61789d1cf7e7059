"""Runs under QEMU for a board, with exact instruction counts; `edgecc verify` on boards.

Owns: running qemu-system-arm / qemu-aarch64 under a timeout, turning a fault (the startup code's
report: CFSR, BFAR, pc), a crash (signal) or a hang (timeout) into one EdgeccError line, the
instruction-counting TCG plugin (templates/qemu/insn_count.c, built once into a cache folder),
and verify's board flow (run_on_qemu). Building is cross.py's.

Instructions per inference = count(harness with EDGECC_RUNS=2) - count(EDGECC_RUNS=1): the
difference removes boot, input copies and printing, and both counts are exact. Per-layer counts
(`profile`) come from a third build where the generated code's EDGECC_TRACE hook is an empty
function (templates/baremetal/profile_hook.c): the plugin records the running count each time
`NAME_run` or the hook is entered, so layer i costs mark[i+1] - mark[i] instructions, including
the few instructions of the hook call itself.
"""
from __future__ import annotations

import hashlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from elftools.elf.elffile import ELFFile

from edgecc.build.boards import Board, default_board
from edgecc.build.cross import Program, app_main_c, build_program, run_tool
from edgecc.build.harness import TRACE_DEFINE
from edgecc.build.measure import measure
from edgecc.codegen import write_files
from edgecc.compiler import compile_model
from edgecc.errors import EdgeccError
from edgecc.metrics import node_macs
from edgecc.names import c_ident
from edgecc.resources import data_dir
from edgecc.targets import get_target

FAULT_EXIT = 250          # templates/baremetal/startup.c: EDGECC_FAULT_EXIT
DEFAULT_TIMEOUT = 120.0


class ProgramFault(EdgeccError):
    """The program faulted (Cortex-M fault handler) or died of a signal (user mode)."""


class ProgramTimeout(EdgeccError):
    """The program did not exit within the timeout: it hangs (or is far too slow)."""


@dataclass
class RunResult:
    stdout: str
    returncode: int
    seconds: float
    instructions: int | None = None
    marks: list[tuple[int, int]] = field(default_factory=list)  # (address, running count)


# ------------------------------------------------------------------------------------ running

def platform_cache_home() -> Path:
    """The platform's folder for per-user caches: $XDG_CACHE_HOME or ~/.cache (Linux and other
    Unix), ~/Library/Caches (macOS), %LOCALAPPDATA% (Windows)."""
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"])
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    return Path(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"))


def cache_dir() -> Path:
    """edgecc's cache root: $EDGECC_CACHE, else edgecc/ in the platform's cache folder. Holds the
    counting plugin, the runner programs (runner.py) and the compile cache (compile_cache.py)."""
    p = Path(os.environ.get("EDGECC_CACHE") or platform_cache_home() / "edgecc")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError:  # read-only home (some CI runners): a per-user folder in the temp dir
        p = Path(tempfile.gettempdir()) / f"edgecc-cache-{os.getuid()}"
        p.mkdir(parents=True, exist_ok=True)
    return p


def count_plugin() -> Path:
    """The instruction-counting plugin, built on first use (gcc -shared -fPIC) and cached under a
    name derived from its source, so an edited plugin is rebuilt."""
    src = data_dir("templates") / "qemu" / "insn_count.c"
    text = src.read_bytes()
    so = cache_dir() / f"insn_count-{hashlib.sha256(text).hexdigest()[:12]}.so"
    if so.is_file():
        return so
    with tempfile.NamedTemporaryFile(dir=so.parent, suffix=".so", delete=False) as tmp:
        tmp_path = Path(tmp.name)
    try:
        run_tool(["gcc", "-O2", "-shared", "-fPIC", "-Wall", "-Wextra", "-o", str(tmp_path),
                   str(src)], "build the QEMU instruction-counting plugin")
        os.replace(tmp_path, so)  # atomic: parallel test runs may build it at the same time
    finally:
        tmp_path.unlink(missing_ok=True)
    return so


def qemu_command(board: Board, elf: Path, plugin: list[str] | None = None) -> list[str]:
    pl = []
    if plugin is not None:
        # QEMU option values double a literal comma.
        pl = ["-plugin", ",".join(a.replace(",", ",,") for a in plugin)]
    if board.bare_metal:
        return ["qemu-system-arm", "-M", board.qemu_machine, "-nographic", "-monitor", "none",
                "-serial", "none", "-semihosting-config", "enable=on,target=native", *pl,
                "-kernel", str(elf)]
    return ["qemu-aarch64", *pl, str(elf)]


_CFSR_BITS = {0: "IACCVIOL", 1: "DACCVIOL", 3: "MUNSTKERR", 4: "MSTKERR", 5: "MLSPERR",
              8: "IBUSERR", 9: "PRECISERR", 10: "IMPRECISERR", 11: "UNSTKERR", 12: "STKERR",
              13: "LSPERR", 16: "UNDEFINSTR", 17: "INVSTATE", 18: "INVPC", 19: "NOCP",
              20: "STKOF", 24: "UNALIGNED", 25: "DIVBYZERO"}
_EXC = {3: "HardFault", 4: "MemManage", 5: "BusFault", 6: "UsageFault", 7: "SecureFault"}
_FAULT_LINE = re.compile(r"F fault exc=0x([0-9a-f]+) cfsr=0x([0-9a-f]+) hfsr=0x([0-9a-f]+) "
                         r"bfar=0x([0-9a-f]+) mmfar=0x([0-9a-f]+) pc=0x([0-9a-f]+) lr=0x([0-9a-f]+)")


def symbol_at(elf: Path, addr: int) -> str | None:
    """The function containing addr, from the ELF symbol table."""
    with open(elf, "rb") as f:
        st = ELFFile(f).get_section_by_name(".symtab")
        if st is None:
            return None
        for s in st.iter_symbols():
            if s["st_info"]["type"] == "STT_FUNC" and s["st_size"]:
                lo = s["st_value"] & ~1
                if lo <= addr < lo + s["st_size"]:
                    return s.name
    return None


def describe_fault(text: str, elf: Path, machine: str) -> str:
    m = _FAULT_LINE.search(text)
    if not m:
        return f"{elf.name} faulted on QEMU {machine} (no fault report)"
    exc, cfsr, hfsr, bfar, mmfar, pc, _ = (int(g, 16) for g in m.groups())
    bits = [n for b, n in _CFSR_BITS.items() if cfsr >> b & 1]
    where = symbol_at(elf, pc & ~1) if pc else None
    msg = (f"{elf.name} faulted on QEMU {machine}: {_EXC.get(exc, f'exception {exc}')} "
           f"CFSR=0x{cfsr:08x} ({', '.join(bits) or 'no CFSR bits'}) HFSR=0x{hfsr:08x}")
    if cfsr & (1 << 15):  # BFARVALID
        msg += f" BFAR=0x{bfar:08x}"
    if cfsr & (1 << 7):   # MMARVALID
        msg += f" MMFAR=0x{mmfar:08x}"
    return msg + f" at pc=0x{pc:08x}" + (f" in {where}" if where else "")


def run_program(prog: Program | Path, board: Board, timeout: float = DEFAULT_TIMEOUT,
                count: bool = False, marks: list[int] = (), cwd: Path | None = None) -> RunResult:
    """Run under QEMU; the program must exit 0. Faults, crashes and hangs raise one line.
    cwd: QEMU's working folder (where the program's semihosting or user-mode files are)."""
    elf = prog.elf if isinstance(prog, Program) else Path(prog)
    plugin = None
    out_file = None
    if count or marks:
        fd, name = tempfile.mkstemp(prefix="edgecc-count-", suffix=".txt")
        os.close(fd)
        out_file = Path(name)
        plugin = [f"{count_plugin()}", f"out={out_file}", *(f"mark=0x{a:x}" for a in marks)]
    cmd = qemu_command(board, elf, plugin)
    machine = board.qemu_machine or "user mode (qemu-aarch64)"
    t0 = time.perf_counter()
    try:
        try:
            r = subprocess.run(cmd, capture_output=True, timeout=timeout, cwd=cwd)
        except FileNotFoundError:
            raise EdgeccError(f"{cmd[0]} not found on PATH (needed to run board "
                              f"{board.name})") from None
        except subprocess.TimeoutExpired:
            raise ProgramTimeout(f"{elf.name} on QEMU {machine}: no exit after {timeout:g} s "
                                 f"(the program hangs; timeout)") from None
        secs = time.perf_counter() - t0
        text = r.stdout.decode("utf-8", "replace")
        err = r.stderr.decode("utf-8", "replace")
        if board.bare_metal and r.returncode == FAULT_EXIT and _FAULT_LINE.search(text + err):
            raise ProgramFault(describe_fault(text + err, elf, machine))
        if r.returncode < 0:
            try:
                sig = signal.Signals(-r.returncode).name
            except ValueError:
                sig = f"signal {-r.returncode}"
            raise ProgramFault(f"{elf.name} crashed on QEMU {machine} with {sig}")
        if r.returncode != 0:
            tail = (text + err).strip().replace("\n", " | ")[-200:]
            raise EdgeccError(f"{elf.name} on QEMU {machine} exited with status "
                              f"{r.returncode}: {tail or '(no output)'}")
        res = RunResult(text, r.returncode, secs)
        if out_file is not None:
            lines = out_file.read_text().split("\n")
            if not lines or not lines[0].startswith("total "):
                raise EdgeccError("the QEMU counting plugin wrote no result")
            res.instructions = int(lines[0].split()[1])
            res.marks = [(int(a, 16), int(n)) for _, a, n in
                         (ln.split() for ln in lines[1:] if ln.startswith("mark "))]
        return res
    finally:
        if out_file is not None:
            out_file.unlink(missing_ok=True)


def symbol_address(elf: Path, name: str) -> int:
    with open(elf, "rb") as f:
        st = ELFFile(f).get_section_by_name(".symtab")
        for s in st.get_symbol_by_name(name) or []:
            if s["st_info"]["type"] == "STT_FUNC":
                return s["st_value"] & ~1  # Thumb functions have bit 0 set
    raise EdgeccError(f"{elf.name}: no function {name}")


# ------------------------------------------------------------------------------------- verify

def run_on_qemu(c, gen_dir: Path, harness: Path, work: Path, board: Board | None,
                target_name: str, cc: str | None, trace: bool, info: dict | None,
                profile: bool = False, timeout: float = DEFAULT_TIMEOUT) -> str:
    """edgecc verify on a board: build the harness around the generated C, run it under QEMU and
    return its output. Outside trace builds, fill `info` with the board, the exact instruction
    count per inference, the model's flash and RAM, and (profile) instructions per layer."""
    board = board or default_board(target_name)
    arena = c.plan.arena
    if trace:
        prog = build_program(gen_dir, [harness], work / "trace.elf", board, cc, arena,
                             gen_flags=[TRACE_DEFINE], callgraph=False,
                             weights_section=c.weights_section)
        return run_program(prog, board, timeout).stdout
    one = build_program(gen_dir, [harness], work / "runs1.elf", board, cc, arena,
                        extra_flags=["-DEDGECC_RUNS=1"], weights_section=c.weights_section)
    r1 = run_program(one, board, timeout, count=True)
    if info is None:
        return r1.stdout
    two = build_program(gen_dir, [harness], work / "runs2.elf", board, cc, arena,
                        reuse=one, extra_flags=["-DEDGECC_RUNS=2"],
                        weights_section=c.weights_section)
    r2 = run_program(two, board, timeout, count=True)
    run_fn = f"{c_ident(c.name).lower()}_run" + ("_io" if c.plan.external else "")
    fp = measure(one, arena, run_fn, gen_dir=gen_dir)
    info.update(board=board.name, qemu_machine=board.qemu_machine or "qemu-aarch64",
                instructions=r2.instructions - r1.instructions,
                flash_bytes=fp.flash, ram_bytes=fp.ram, weights_flash_bytes=fp.weights,
                code_bytes=fp.code, stack_bytes=fp.stack, stack_method=fp.stack_method,
                arena_region=fp.arena_region,
                qemu_seconds=round(r1.seconds, 3))
    if profile:
        info["profile"] = profile_layers(c, gen_dir, harness, work, board, cc, timeout)
    return r1.stdout


def profile_layers(c, gen_dir: Path, harness: Path, work: Path, board: Board, cc: str | None,
                   timeout: float = DEFAULT_TIMEOUT) -> list[dict]:
    """Instructions per layer: marks at NAME_run's entry and at the empty trace hook's entry.
    A harness of several frames calls NAME_run once per frame: the rows are the first frame's.
    Each row names the layer's kernel (its variant: a table entry's name, or "portable") and
    its MACs (edgecc.metrics; None for layers without)."""
    hook = data_dir("templates") / "baremetal" / "profile_hook.c"
    prog = build_program(gen_dir, [harness, hook], work / "profile.elf", board, cc,
                         c.plan.arena, gen_flags=["-DEDGECC_TRACE=edgecc_profile_hook"],
                         callgraph=False, weights_section=c.weights_section)
    run_fn = f"{c_ident(c.name).lower()}_run" + ("_io" if c.plan.external else "")
    a_run = symbol_address(prog.elf, run_fn)
    a_hook = symbol_address(prog.elf, "edgecc_profile_hook")
    r = run_program(prog, board, timeout, marks=[a_run, a_hook])
    counts = [n for a, n in r.marks]
    starts = [i for i, (a, _) in enumerate(r.marks) if a == a_run]
    if not starts:
        raise EdgeccError(f"profile: no call of {run_fn}")
    hooks = counts[starts[0] + 1:starts[1] if len(starts) > 1 else None]
    # The generated code calls the hook once per traced output of each layer (codegen's traces).
    per_layer = [sum(1 for v in lw.node.outputs if v[1:].isdigit()) for lw in c.lowered]
    if sum(per_layer) != len(hooks):
        raise EdgeccError(f"profile: {len(hooks)} hook calls for {sum(per_layer)} traced outputs")
    rows, prev, k = [], counts[starts[0]], 0
    for lw, n in zip(c.lowered, per_layer):
        row = dict(layer=len(rows), op=lw.node.op, index=lw.node.index, instructions=0,
                   kernel=lw.kernel.variant, macs=node_macs(c.graph, lw.node))
        if n:
            k += n
            row["instructions"], prev = hooks[k - 1] - prev, hooks[k - 1]
        rows.append(row)
    return rows


def painted_stack(model: str | Path, board: Board, name: str = "model",
                  cc: str | None = None, options=None) -> int:
    """The stack NAME_run really uses under QEMU (bytes): the application paints the free stack,
    runs the model once and reports the lowest address written. A measurement for one input, not
    a bound; generated code has no data-dependent calls, so it is the same for every input."""
    c = compile_model(model, get_target(board.target), name, options)
    ident = c_ident(name)
    with tempfile.TemporaryDirectory(prefix="edgecc-stack-") as tmp:
        work = Path(tmp)
        write_files(c.files, work / "gen")
        app = work / "app_main.c"
        app.write_text(app_main_c(ident))
        prog = build_program(work / "gen", [app], work / "paint.elf", board, cc, c.plan.arena,
                             extra_flags=["-DEDGECC_PAINT_STACK"], callgraph=False)
        out = run_program(prog, board).stdout
    m = re.search(r"^S (\d+)$", out, re.M)
    if not m:
        raise EdgeccError(f"painted-stack run printed no result: {out.strip()[:100]!r}")
    return int(m.group(1))
