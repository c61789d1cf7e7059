"""`edgecc budget`: the RAM and flash a compiled model needs on a board, from the linked program.

Owns: building a minimal application around the generated C for a board (the arena and one call
of NAME_run: templates/baremetal/app_main.c.j2), measuring the model's part of it
(edgecc/build/measure.py says what is counted, and how), and comparing it with the board (or with
--ram-limit / --flash-limit): the verdict, its table and its JSON object; and `fit_check`, the same
verdict for `edgecc compile --board` (first from what compiling knows, the arena and the weights,
which alone can already be over; then measured as here).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from edgecc.build.boards import Board, board_options
from edgecc.build.cross import app_main_c, build_flags, build_program, link
from edgecc.build.measure import Footprint, measure
from edgecc.build.regions import region_use
from edgecc.codegen import write_files
from edgecc.compiler import compile_model
from edgecc.errors import EdgeccError
from edgecc.fileio import work_folder
from edgecc.options import CompileOptions
from edgecc.names import c_ident
from edgecc.targets import get_target

@dataclass
class Over:
    what: str
    needed: int
    limit: int
    at_least: bool = False  # `needed` counts only what compiling knows (fit_check's estimate)

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
    tiling: dict | None = None  # compile's tiling record when the board's RAM made it tile
    method: str = "measured from the linked program"
    build_flags: str = ""      # the compiler command the model's C was measured with

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
                    over=[dict(what=o.what, needed=o.needed, limit=o.limit, by=o.by,
                               at_least=o.at_least) for o in self.over], regions=fp.regions,
                    tiling=self.tiling, method=self.method, build_flags=self.build_flags)

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
        regions = [f"region {r['name']} ({r['kind']}): {r['used']:,} of {r['size']:,} B used by "
                   f"the test program ({100.0 * r['used'] / r['size']:.1f}%)" for r in fp.regions]
        built = [f"built with: {self.build_flags}"] if self.build_flags else []
        return "\n".join([head, *body, *lim, *regions, *built, *self.tiling_lines(),
                          *self.verdict()])

    def verdict(self) -> list[str]:
        """The over-budget lines (`OVER: ...`), or ["fits"]."""
        return [f"OVER: {o.what} needs {'at least ' if o.at_least else ''}{o.needed:,} B, "
                f"limit {o.limit:,} B: over by {'at least ' if o.at_least else ''}{o.by:,} bytes"
                for o in self.over] or ["fits"]

    def fits_line(self) -> str:
        """One line for a model that fits: what it needs of the board's RAM and flash."""
        def of(n: int, limit: int | None) -> str:
            return f"{n:,} of {limit:,} B" if limit else f"{n:,} B"
        fp = self.footprint
        return (f"fits {self.board.name} ({self.method}): RAM {of(fp.ram, self.ram_limit)}, "
                f"flash {of(fp.flash, self.flash_limit)}")

    def tiling_lines(self) -> list[str]:
        """Says so when the model was tiled to fit the board's RAM (it costs MACs)."""
        t = self.tiling
        if not t:
            return []
        return [f"tiled to fit: layers {t['first']}-{t['last']} run in {t['patches']} patches "
                f"({t['rows']}x{t['cols']}), arena {t['arena']:,} B instead of "
                f"{t['untiled_arena']:,} B, +{t['extra_macs']:,} MACs "
                f"(--tiling off: never tile)"]


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


def budget_model(model: str | Path, board: Board, ram_limit: int | None = None,
                 flash_limit: int | None = None, name: str = "model",
                 keep: Path | None = None, options: CompileOptions | None = None) -> BudgetReport:
    if ram_limit is not None and ram_limit <= 0 or flash_limit is not None and flash_limit <= 0:
        raise EdgeccError("--ram-limit and --flash-limit must be positive byte counts")
    c = compile_model(model, get_target(board.target), name,
                      board_options(options, board, ram_limit))
    return budget_compiled(c, str(model), board, ram_limit, flash_limit, keep)


def fit_check(c, model: str, board: Board) -> BudgetReport:
    """Whether compiled model `c` fits `board`, for `edgecc compile --board`: first from what
    compiling knows (the arena is RAM and the weights are flash the model needs at least: over
    already, the verdict says "at least", without building anything), then, when those fit,
    measured from the linked program exactly as `budget` does. Without the board's compiler
    the first verdict stands."""
    fp = Footprint(arena=c.plan.arena, weights=c.weights_bytes, stack=0,
                   stack_method="not measured (the arena and the weights alone)")
    over = check(fp, board, board.flash_bytes, board.ram_bytes)
    for o in over:
        o.at_least = True
    estimate = BudgetReport(model, board, fp, board.flash_bytes, board.ram_bytes, over,
                            c.stats.get("tiling"), "the arena and the weights alone")
    if over:
        return estimate
    if board.flash_bytes is None and board.ram_bytes is None:  # a Linux board states no limits
        estimate.method = "the board states no RAM or flash size"
        return estimate
    try:
        return budget_compiled(c, model, board)
    except EdgeccError as e:  # no cross compiler: what compiling knows is all there is
        estimate.method += f" (not measured: {' '.join(str(e).split())[:200]})"
        return estimate


def budget_compiled(c, model: str, board: Board, ram_limit: int | None = None,
                    flash_limit: int | None = None, keep: Path | None = None) -> BudgetReport:
    """The budget of compiled model `c` (edgecc.compiler.Compiled) on `board`, measured from a
    program linked around it."""
    weights_section = c.options.weights_section
    ident = c_ident(c.name)
    with work_folder(keep, "edgecc-budget-") as work:
        gen = work / "gen"
        write_files(c.files, gen)
        app = work / "app_main.c"
        app.write_text(app_main_c(ident))
        # Measure on an unbounded copy of the memory map so an oversize model still links ...
        prog = build_program(gen, [app], work / "measure.elf", board, "gcc", c.plan.arena,
                             unbounded=board.bare_metal, weights_section=weights_section)
        fp = measure(prog, c.plan.arena, f"{ident.lower()}_run")
        if board.bare_metal:
            fp.regions = region_use(prog.elf, board, unbounded=True)
        over = check(fp, board, flash_limit or board.flash_bytes, ram_limit or board.ram_bytes)
        # ... and, when it fits, link for the board itself: the device's link must succeed too.
        if not over and board.bare_metal:
            link(prog.objects, work / "board.elf", board, c.plan.arena,
                 weights_section=weights_section)
    return BudgetReport(str(model), board, fp, flash_limit or board.flash_bytes,
                        ram_limit or board.ram_bytes, over, c.stats.get("tiling"),
                        build_flags=" ".join(build_flags(board, "gcc")))
