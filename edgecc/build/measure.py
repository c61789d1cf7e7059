"""Measuring a linked program: the model's flash and RAM from the ELF, the linker map and gcc's
call graph.

Owns: what `edgecc budget` and verify on a board count, and how:
- flash = the model's code + its weights + its other constant data (+ any initialised data image),
  summed from the linker map per input section of the objects built from the generated C (so
  inlined helpers and literal pools count, and sections the linker dropped do not). The ELF
  (pyelftools) gives the program totals and which sections are allocated.
- RAM = arena (NAME_ARENA_SIZE) + the model's static data (.data/.bss of its objects; edgecc
  generates none) + the stack NAME_run needs. The stack is a static bound from the call graph
  gcc writes with -fcallgraph-info=su: the deepest path of frame sizes from NAME_run, each call
  that leaves the model's sources (memcpy, memset) counted as EXTERNAL_CALL_BYTES. Tests check the
  bound against a painted-stack measurement under QEMU (edgecc/build/qemu.py `painted_stack`).
The test application's own startup and C library are reported (program_*) but not counted: a
firmware brings its own.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from elftools.elf.elffile import ELFFile

from edgecc.build.boards import Board
from edgecc.build.cross import STRICT, compile_sources
from edgecc.errors import EdgeccError

EXTERNAL_CALL_BYTES = 64
# bytes an inline asm statement of runtime_c/ pushes and pops inside itself, which gcc's frame
# sizes cannot see (dsp/fully_connected_8u.h: push {r7, r9, wa}, 12 B), rounded to 8; a leaf's
# asm never calls, so the deepest path takes it once (tests/test_budget.py checks the headers)
ASM_PUSH_BYTES = 16


@dataclass
class Footprint:
    code: int = 0
    weights: int = 0
    constants: int = 0
    data: int = 0
    bss: int = 0
    arena: int = 0
    stack: int = 0
    stack_method: str = "gcc -fcallgraph-info=su call graph (static bound)"
    arena_region: str | None = None
    program_flash: int | None = None
    program_ram: int | None = None
    regions: list = field(default_factory=list)  # edgecc.build.regions.region_use of the program

    @property
    def flash(self) -> int:
        return self.code + self.weights + self.constants + self.data

    @property
    def ram(self) -> int:
        return self.arena + self.data + self.bss + self.stack


# ------------------------------------------------------------------------------ the map file

_IN_SECT = re.compile(r"^ (\.\S+|COMMON)(?:\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+)\s+(\S.*))?$")
_ADDR_SIZE = re.compile(r"^\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+)\s+(\S.*)$")
_OUT_SECT = re.compile(r"^(\.\S+|\S+)(?:\s+0x[0-9a-fA-F]+\s+0x[0-9a-fA-F]+.*)?$")


def map_contributions(mapf: Path) -> list[tuple[str, str, int, str]]:
    """(output section, input section, size, object file) for every input section the GNU ld
    map file lists as placed."""
    lines = mapf.read_text(errors="replace").splitlines()
    try:
        start = lines.index("Linker script and memory map")
    except ValueError:
        raise EdgeccError(f"{mapf.name}: not a GNU ld map file") from None
    out: list[tuple[str, str, int, str]] = []
    osect = ""
    pending: str | None = None
    for ln in lines[start + 1:]:
        if pending is not None:
            m = _ADDR_SIZE.match(ln)
            if m:
                out.append((osect, pending, int(m.group(2), 16), m.group(3).strip()))
            pending = None
            continue
        if ln and not ln[0].isspace():
            m = _OUT_SECT.match(ln)
            if m and m.group(1).startswith("."):
                osect = m.group(1)
            continue
        m = _IN_SECT.match(ln)
        if m:
            if m.group(2) is None:
                pending = m.group(1)
            else:
                out.append((osect, m.group(1), int(m.group(3), 16), m.group(4).strip()))
    return out


def _alloc_sections(elf: Path) -> dict[str, tuple[bool, bool, bool]]:
    """name -> (allocated, writable, has file contents) of the ELF's sections."""
    out = {}
    with open(elf, "rb") as f:
        for s in ELFFile(f).iter_sections():
            fl = s["sh_flags"]
            out[s.name] = (bool(fl & 2), bool(fl & 1), s["sh_type"] != "SHT_NOBITS")
    return out


def _elf_totals(elf: Path) -> tuple[int, int]:
    """(flash, RAM) of the whole program: allocated sections with contents / writable ones."""
    flash = ram = 0
    with open(elf, "rb") as f:
        for s in ELFFile(f).iter_sections():
            fl = s["sh_flags"]
            if not fl & 2:
                continue
            if s["sh_type"] != "SHT_NOBITS":
                flash += s["sh_size"]
            if fl & 1:
                ram += s["sh_size"]
    return flash, ram


# ---------------------------------------------------------------------------- the call graph

_NODE = re.compile(r'^node: \{ title: "([^"]+)" label: "([^"]*)"')
_EDGE = re.compile(r'^edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')
_FRAME = re.compile(r"\\n(\d+) bytes \(([a-z,]+)\)")


def stack_bound(callgraphs: list[Path], entry: str) -> int:
    """Deepest stack from `entry` over gcc's -fcallgraph-info=su graphs (bytes)."""
    frames: dict[str, int] = {}
    dynamic: set[str] = set()
    edges: dict[str, set[str]] = {}
    for ci in callgraphs:
        for ln in ci.read_text(errors="replace").splitlines():
            m = _NODE.match(ln)
            if m:
                f = _FRAME.search(m.group(2))
                if f:
                    frames[m.group(1)] = int(f.group(1))
                    if f.group(2) == "dynamic":
                        dynamic.add(m.group(1))
                continue
            m = _EDGE.match(ln)
            if m:
                edges.setdefault(m.group(1), set()).add(m.group(2))
    if entry not in frames:
        raise EdgeccError(f"stack estimate: {entry} not found in the call graph")
    memo: dict[str, int] = {}

    def depth(fn: str, path: tuple[str, ...]) -> int:
        if fn in path:
            raise EdgeccError(f"stack estimate: recursion through {fn}; the stack is unbounded")
        if fn not in frames:
            return EXTERNAL_CALL_BYTES
        if fn in dynamic:
            raise EdgeccError(f"stack estimate: {fn} allocates a dynamic stack object")
        if fn not in memo:
            memo[fn] = frames[fn] + max((depth(c, path + (fn,)) for c in edges.get(fn, ())),
                                        default=0)
        return memo[fn]

    return depth(entry, ()) + ASM_PUSH_BYTES


def gcc_callgraphs(gen_dir: Path, board: Board, work: Path) -> list[Path]:
    """-fcallgraph-info files for the generated C compiled with gcc (for clang builds, whose
    compiler cannot write them)."""
    objs = compile_sources(sorted(gen_dir.glob("*.c")), work, board, "gcc",
                           [*STRICT, f"-I{gen_dir}"], callgraph=True)
    return [o.with_suffix(".ci") for o in objs if o.with_suffix(".ci").is_file()]


# ------------------------------------------------------------------------------ measurement

def measure(prog, arena_bytes: int, run_symbol: str, gen_dir: Path | None = None) -> Footprint:
    """The model's footprint in a linked program (edgecc.build.cross.Program)."""
    alloc = _alloc_sections(prog.elf)
    model = {str(p) for p in prog.model_objects}
    fp = Footprint(arena=arena_bytes)
    for osect, isect, size, obj in map_contributions(prog.map):
        if obj not in model or not alloc.get(osect, (False,))[0]:
            continue
        writable, contents = alloc[osect][1], alloc[osect][2]
        if Path(obj).stem.endswith("_weights") and not writable:  # any section (--weights-section)
            fp.weights += size
        elif isect.startswith(".rodata") or (not writable and isect.startswith(".srodata")):
            if Path(obj).stem.endswith("_weights"):
                fp.weights += size
            else:
                fp.constants += size
        elif writable and contents:
            fp.data += size
        elif writable:
            fp.bss += size
        else:  # .text, unwind tables
            fp.code += size
    cgs = prog.callgraphs
    if not cgs and gen_dir is not None:
        cgs = gcc_callgraphs(gen_dir, prog.board, prog.elf.parent / "callgraph-gcc")
        fp.stack_method += " of a gcc build"
    fp.stack = stack_bound(cgs, run_symbol)
    fp.arena_region = prog.arena_region.name if prog.arena_region else None
    fp.program_flash, fp.program_ram = _elf_totals(prog.elf)
    return fp


def footprint_json(fp: Footprint) -> dict:
    d = asdict(fp)
    d.update(flash=fp.flash, ram=fp.ram)
    return d
