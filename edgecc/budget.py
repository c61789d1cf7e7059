"""`edgecc budget`: the RAM and flash a compiled model needs on a board, from the linked program.

Owns: building a minimal application around the generated C for a board (the arena and one call
of NAME_run: templates/baremetal/app_main.c.j2), measuring the model's part of it, and comparing it
with the board (or with --ram-limit / --flash-limit).

What is counted, and how:
- flash = the model's code + its weights + its other constant data (+ any initialised data image),
  summed from the linker map per input section of the objects built from the generated C (so
  inlined helpers and literal pools count, and sections the linker dropped do not). The ELF
  (pyelftools) gives the program totals and which sections are allocated.
- RAM = arena (NAME_ARENA_SIZE) + the model's static data (.data/.bss of its objects; edgecc
  generates none) + the stack NAME_run needs. The stack is a static bound from the call graph
  gcc writes with -fcallgraph-info=su: the deepest path of frame sizes from NAME_run, each call
  that leaves the model's sources (memcpy, memset) counted as EXTERNAL_CALL_BYTES. Tests check the
  bound against a painted-stack measurement under QEMU (edgecc/verify/qemu.py `painted_stack`).
The test application's own startup and C library are reported (program_*) but not counted: a
firmware brings its own.
"""
from __future__ import annotations

import re
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from edgecc.boards import Board
from edgecc.errors import EdgeccError
from edgecc.options import CompileOptions

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
    regions: list = field(default_factory=list)  # edgecc.regions.region_use of the program

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
    from elftools.elf.elffile import ELFFile
    out = {}
    with open(elf, "rb") as f:
        for s in ELFFile(f).iter_sections():
            fl = s["sh_flags"]
            out[s.name] = (bool(fl & 2), bool(fl & 1), s["sh_type"] != "SHT_NOBITS")
    return out


def _elf_totals(elf: Path) -> tuple[int, int]:
    """(flash, RAM) of the whole program: allocated sections with contents / writable ones."""
    from elftools.elf.elffile import ELFFile
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
    from edgecc.verify.cross import STRICT, compile_sources
    objs = compile_sources(sorted(gen_dir.glob("*.c")), work, board, "gcc",
                           [*STRICT, f"-I{gen_dir}"], callgraph=True)
    return [o.with_suffix(".ci") for o in objs if o.with_suffix(".ci").is_file()]


# ------------------------------------------------------------------------------ measurement

def measure(prog, arena_bytes: int, run_symbol: str, gen_dir: Path | None = None) -> Footprint:
    """The model's footprint in a linked program (edgecc.verify.qemu.Program)."""
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


@dataclass
class Over:
    what: str
    needed: int
    limit: int

    @property
    def by(self) -> int:
        return self.needed - self.limit


@dataclass
class BudgetReport:
    model: str
    board: Board
    footprint: Footprint
    flash_limit: int | None
    ram_limit: int | None
    over: list[Over] = field(default_factory=list)

    def as_json(self) -> dict:
        fp = self.footprint
        return dict(model=self.model, board=self.board.name, target=self.board.target,
                    flash=dict(code=fp.code, weights=fp.weights, constants=fp.constants,
                               data=fp.data, total=fp.flash, limit=self.flash_limit),
                    ram=dict(arena=fp.arena, static_data=fp.data + fp.bss, stack=fp.stack,
                             total=fp.ram, limit=self.ram_limit),
                    flash_bytes=fp.flash, ram_bytes=fp.ram, arena_region=fp.arena_region,
                    stack_method=fp.stack_method, program_flash_bytes=fp.program_flash,
                    program_ram_bytes=fp.program_ram, fits=not self.over,
                    over=[dict(what=o.what, needed=o.needed, limit=o.limit, by=o.by)
                          for o in self.over], regions=fp.regions)

    def table(self) -> str:
        fp = self.footprint

        def pct(n: int, lim: int | None) -> str:
            return f"{100.0 * n / lim:6.1f}%" if lim else "      -"

        fl, rl = self.flash_limit, self.ram_limit
        rows = [("flash: model code", fp.code, fl), ("flash: weights", fp.weights, fl),
                ("flash: other constants", fp.constants + fp.data, fl),
                ("flash total", fp.flash, fl),
                (f"RAM: arena{f' (in {fp.arena_region})' if fp.arena_region else ''}",
                 fp.arena, rl),
                ("RAM: static data", fp.data + fp.bss, rl),
                ("RAM: stack of the model (call graph)", fp.stack, rl),
                ("RAM total", fp.ram, rl)]
        w = max(len(r[0]) for r in rows)
        of = "% of board" if (fl, rl) == (self.board.flash_bytes, self.board.ram_bytes) \
            else "% of limit"
        head = (f"{Path(self.model).name} on {self.board.name} ({self.board.target})\n"
                f"{'what':<{w}}  {'bytes':>10}  {of:>10}")
        body = [f"{what:<{w}}  {n:>10,}  {pct(n, lim):>10}" for what, n, lim in rows]
        lim = [f"limits: flash {fl:,} B, RAM {rl:,} B" if fl and rl else
               f"limits: flash {fl or '-'}, RAM {rl or '-'}"]
        verdict = [f"OVER: {o.what} needs {o.needed:,} B, limit {o.limit:,} B: over by "
                   f"{o.by:,} bytes" for o in self.over] or ["fits"]
        regions = [f"region {r['name']} ({r['kind']}): {r['used']:,} of {r['size']:,} B used by "
                   f"the test program ({100.0 * r['used'] / r['size']:.1f}%)" for r in fp.regions]
        return "\n".join([head, *body, *lim, *regions, *verdict])


def check(fp: Footprint, board: Board, flash_limit: int | None,
          ram_limit: int | None) -> list[Over]:
    over = []
    if flash_limit is not None and fp.flash > flash_limit:
        over.append(Over("flash", fp.flash, flash_limit))
    if ram_limit is not None and fp.ram > ram_limit:
        over.append(Over("RAM", fp.ram, ram_limit))
    if board.bare_metal and board.arena_region(fp.arena) is None:
        big = max((board.region(n) for n in board.arena_regions), key=lambda r: r.size)
        room = big.size - (board.stack_size + board.heap_size
                           if big.name == board.data_region else 0)
        over.append(Over(f"arena (no RAM region holds it; largest is {big.name})", fp.arena, room))
    return over


def arena_room(board: Board, ram_limit: int | None = None) -> int | None:
    """Bytes the board (or --ram-limit) has for the arena: the largest arena region, less the
    stack and heap reserved where they share it (None: no limit known, e.g. a Linux target)."""
    room = None
    if board.bare_metal:
        room = max(board.region(n).size - (board.stack_size + board.heap_size
                                           if n == board.data_region else 0)
                   for n in board.arena_regions)
    if ram_limit is not None:
        room = ram_limit if room is None else min(room, ram_limit)
    return room


def board_options(options: CompileOptions | None, board: Board | None,
                  ram_limit: int | None = None) -> CompileOptions:
    """options with the RAM budget of `board` (and --ram-limit) unless they state one: with a
    board, compile tiles only when the arena would not fit otherwise."""
    options = options or CompileOptions()
    if board is None or options.ram_budget is not None:
        return options
    return options.but(ram_budget=arena_room(board, ram_limit))


def budget_model(model: str | Path, board: Board, ram_limit: int | None = None,
                 flash_limit: int | None = None, name: str = "model",
                 keep: Path | None = None, options: CompileOptions | None = None) -> BudgetReport:
    from edgecc.codegen import write_files
    from edgecc.compiler import compile_model
    from edgecc.names import c_ident
    from edgecc.targets import get_target
    from edgecc.verify.cross import _env, build_program, link
    if ram_limit is not None and ram_limit <= 0 or flash_limit is not None and flash_limit <= 0:
        raise EdgeccError("--ram-limit and --flash-limit must be positive byte counts")
    c = compile_model(model, get_target(board.target), name,
                      board_options(options, board, ram_limit))
    weights_section = c.options.weights_section
    ident = c_ident(name)
    with tempfile.TemporaryDirectory(prefix="edgecc-budget-") as tmp:
        work = Path(keep) if keep else Path(tmp)
        gen = work / "gen"
        write_files(c.files, gen)
        app = work / "app_main.c"
        app.write_text(_env().get_template("baremetal/app_main.c.j2").render(
            name=ident.lower(), NAME=ident.upper()))
        # Measure on an unbounded copy of the memory map so an oversize model still links ...
        prog = build_program(gen, [app], work / "measure.elf", board, "gcc", c.plan.arena,
                             unbounded=board.bare_metal, weights_section=weights_section)
        fp = measure(prog, c.plan.arena, f"{ident.lower()}_run")
        if board.bare_metal:
            from edgecc.regions import region_use
            fp.regions = region_use(prog.elf, board, unbounded=True)
        over = check(fp, board, flash_limit or board.flash_bytes, ram_limit or board.ram_bytes)
        # ... and, when it fits, link for the board itself: the device's link must succeed too.
        if not over and board.bare_metal:
            link(prog.objects, work / "board.elf", board, c.plan.arena,
                 weights_section=weights_section)
    return BudgetReport(str(model), board, fp, flash_limit or board.flash_bytes,
                        ram_limit or board.ram_bytes, over)


def footprint_json(fp: Footprint) -> dict:
    d = asdict(fp)
    d.update(flash=fp.flash, ram=fp.ram)
    return d
