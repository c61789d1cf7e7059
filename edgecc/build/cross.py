"""Cross builds for a board: compile, generate the linker script, link.

Owns: the cross compile and link commands (arm-none-eabi-gcc, or clang with the newlib sysroot
and gcc as the linker; aarch64-linux-gnu-gcc -static), the linker script generated from the
board's memory regions (templates/baremetal/link.ld.j2: an oversize program fails the link as on
the device, with one line naming the region and the overshoot), where the arena goes, and the
startup code a bare-metal program links (templates/baremetal/startup.c). Running is qemu.py's.
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from edgecc.build.board_schema import check_board_strings
from edgecc.build.boards import Board, Region
from edgecc.codegen import template_env
from edgecc.errors import EdgeccError
from edgecc.resources import data_dir
from edgecc.targets import FP_FLAGS

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
          "-ffp-contract=off"]  # ONNX numerics: float products rounded one by one (no FMA)
NEWLIB_SYSROOT = "/usr/lib/arm-none-eabi"


@dataclass
class Program:
    elf: Path
    map: Path
    board: Board
    objects: list[Path]
    model_objects: list[Path]   # objects built from the generated C
    callgraphs: list[Path]      # gcc -fcallgraph-info=su output of the generated C (may be empty)
    arena_region: Region | None = None


def compile_command(board: Board, cc: str | None) -> list[str]:
    """Compiler driver + core flags for one translation unit of this board."""
    cc = cc or "gcc"
    if cc not in ("gcc", "clang"):
        raise EdgeccError(f"unknown compiler {cc!r} (gcc or clang)")
    return [*_driver(board, cc), *FP_FLAGS]


def _driver(board: Board, cc: str) -> list[str]:
    if board.bare_metal:
        if cc == "clang":
            # newlib is built with short enums; clang's arm-none-eabi default is int-sized.
            return ["clang", "--target=arm-none-eabi", *board.cflags, "-fshort-enums",
                    f"--sysroot={NEWLIB_SYSROOT}"]
        return ["arm-none-eabi-gcc", *board.cflags]
    if cc == "clang":
        return ["clang", "--target=aarch64-linux-gnu", *board.cflags]
    return ["aarch64-linux-gnu-gcc", *board.cflags]


def _first_error(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if "error" in ln or "undefined reference" in ln:
            return ln
    return lines[0] if lines else "(no output)"


def run_tool(cmd: list[str], what: str) -> None:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except FileNotFoundError:
        raise EdgeccError(f"{cmd[0]} not found on PATH (needed to {what})") from None
    except subprocess.TimeoutExpired:
        raise EdgeccError(f"{cmd[0]} timed out while trying to {what}") from None
    if r.returncode != 0:
        raise EdgeccError(f"{cmd[0]} failed to {what}: {_first_error(r.stderr + r.stdout)}")


def compile_sources(sources: list[Path], objdir: Path, board: Board, cc: str | None,
                    flags: list[str], callgraph: bool = False, opt: str = "-O2") -> list[Path]:
    """Compile each source to objdir/<stem>.o, two at a time (the machines have 2 cores)."""
    objdir.mkdir(parents=True, exist_ok=True)
    base = compile_command(board, cc)
    if callgraph and base[0] == "clang":
        callgraph = False  # clang has no -fcallgraph-info; budget.py compiles those with gcc
    jobs = []
    for src in sources:
        obj = objdir / (src.stem + ".o")
        obj.with_suffix(".ci").unlink(missing_ok=True)  # never read a stale call graph (--keep)
        cmd = [*base, opt, "-ffunction-sections", "-fdata-sections", *flags,
               *(["-fcallgraph-info=su"] if callgraph else []), "-c", str(src), "-o", str(obj)]
        jobs.append((src, obj, cmd))
    objs: list[Path] = []
    running: list[tuple[Path, Path, subprocess.Popen]] = []

    def reap(item):
        src, obj, p = item
        out, err = p.communicate()
        if p.returncode != 0:
            raise EdgeccError(f"{base[0]} failed to build {src.name} for board {board.name}: "
                              f"{_first_error(err + out)}")
        objs.append(obj)

    try:
        for src, obj, cmd in jobs:
            if len(running) >= 2:
                reap(running.pop(0))
            try:
                running.append((src, obj, subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                                           stderr=subprocess.PIPE, text=True)))
            except FileNotFoundError:
                raise EdgeccError(f"{cmd[0]} not found on PATH (needed for board "
                                  f"{board.name})") from None
        while running:
            reap(running.pop(0))
    finally:
        for _, _, p in running:
            p.kill()
            p.wait()
    return [objdir / (s.stem + ".o") for s in sources]


def arena_placement(board: Board, arena_bytes: int) -> Region:
    """The region for the arena: the first candidate it fits in; if none, the largest candidate
    (the link then fails naming the overflowing region, as it would on the device)."""
    r = board.arena_region(arena_bytes)
    if r is None:
        r = max((board.region(n) for n in board.arena_regions), key=lambda x: x.size)
    return r


def linker_script(board: Board, arena_bytes: int, unbounded: bool = False,
                  weights_section: str | None = None) -> str:
    """The board's linker script. `unbounded` gives every region 1 GiB at its own address, for
    measuring a program that may not fit (edgecc budget); such an image is never run.
    `weights_section`: the model's constants' section, placed in the board's weights region."""
    check_board_strings(board)  # the names reach the script's comments and region names
    arena = arena_placement(board, arena_bytes)
    regions = []
    for i, r in enumerate(board.regions):
        origin, size = (i << 30, (1 << 30) - 4096) if unbounded else (r.qemu_origin, r.size)
        regions.append(dict(name=r.name, attrs=r.attrs, origin_hex=f"0x{origin:08x}", size=size))
    where = "separate 1 GiB ranges (measurement only)" if unbounded else \
        f"QEMU {board.qemu_machine}"
    return template_env().get_template("baremetal/link.ld.j2").render(
        board=board.name, core=board.target, where=where, regions=regions,
        code=board.code_region, data=board.data_region, arena=arena.name,
        stack_size=board.stack_size, heap_size=board.heap_size, weights_section=weights_section,
        weights_region=board.weights_region or board.code_region)


_OVERFLOW = re.compile(r"region [`'](\w+)' overflowed by (\d+) bytes")


def link(objects: list[Path], elf: Path, board: Board, arena_bytes: int,
         unbounded: bool = False, weights_section: str | None = None) -> Path:
    """Link for the board; returns the map file. A program that does not fit the board's
    memory fails here with one line naming the region and the overshoot."""
    mapf = elf.with_suffix(".map")
    if board.bare_metal:
        ld = elf.with_suffix(".ld")
        ld.write_text(linker_script(board, arena_bytes, unbounded, weights_section))
        cmd = ["arm-none-eabi-gcc", *board.cflags, "-nostartfiles", "--specs=nano.specs",
               "--specs=rdimon.specs", "-T", str(ld)]
    else:
        cmd = ["aarch64-linux-gnu-gcc", *board.cflags, "-static"]
    cmd += ["-Wl,--gc-sections", f"-Wl,-Map={mapf}", *map(str, objects), "-o", str(elf)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except FileNotFoundError:
        raise EdgeccError(f"{cmd[0]} not found on PATH (needed to link for board "
                          f"{board.name})") from None
    if r.returncode != 0:
        over = _OVERFLOW.findall(r.stderr)
        if over:
            parts = []
            for name, n in over:
                reg = board.region(name)
                parts.append(f"{name} ({reg.size} B) overflowed by {int(n)} bytes")
            raise EdgeccError(f"board {board.name}: the program does not fit: " + "; ".join(parts))
        raise EdgeccError(f"linking for board {board.name} failed: {_first_error(r.stderr)}")
    return mapf


def runtime_sources(work: Path, board: Board) -> list[Path]:
    """Startup code a bare-metal program needs (none for Linux user mode)."""
    if not board.bare_metal:
        return []
    return [data_dir("templates") / "baremetal" / "startup.c"]


def app_main_c(ident: str) -> str:
    """The minimal bare-metal application around generated C (the arena and one call of
    NAME_run): what `edgecc budget` measures and `painted_stack` runs. ident: c_ident(name)."""
    return template_env().get_template("baremetal/app_main.c.j2").render(
        name=ident.lower(), NAME=ident.upper())


def build_program(gen_dir: Path, extra: list[Path], out: Path, board: Board, cc: str | None,
                  arena_bytes: int, gen_flags: list[str] = (), extra_flags: list[str] = (),
                  reuse: Program | None = None, callgraph: bool = True,
                  unbounded: bool = False, weights_section: str | None = None) -> Program:
    """Generated C (strict C99 warnings) + extra sources (harness or app main, same flags) +
    startup, linked into `out` (an .elf path). Objects of the generated C are reused when
    `reuse` (a Program built from the same gen_dir and flags) already holds them: verify builds
    two harnesses around the same model."""
    out.parent.mkdir(parents=True, exist_ok=True)
    inc = [f"-I{gen_dir}"]
    gen_sources = sorted(gen_dir.glob("*.c"))
    if reuse is not None:
        gen_objs = list(reuse.model_objects)
    else:
        gen_objs = compile_sources(gen_sources, out.parent / (out.stem + "-gen"), board, cc,
                                   [*STRICT, *inc, *gen_flags], callgraph=callgraph)
    xdir = out.parent / (out.stem + "-obj")
    objs = compile_sources(list(extra), xdir, board, cc, [*STRICT, *inc, *extra_flags])
    rt = runtime_sources(out.parent, board)
    if rt:
        objs += compile_sources(rt, xdir, board, cc, ["-std=gnu99", "-Wall", "-Wextra", "-Werror"])
    objs = gen_objs + objs
    mapf = link(objs, out, board, arena_bytes, unbounded, weights_section)
    cgs = [p for p in (o.with_suffix(".ci") for o in gen_objs) if p.is_file()]
    region = arena_placement(board, arena_bytes) if board.bare_metal else None
    return Program(out, mapf, board, objs, gen_objs, cgs, region)
