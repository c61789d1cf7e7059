"""Boards: the data files in boards/ and the QEMU machines they run on.

Owns: reading a board file (TOML; `--board NAME` looks in boards/, `--board path/to/file.toml`
reads that file), checking it, and answering the questions the build and the budget ask: which
target and compiler flags, which memory regions (device sizes, and where each region sits on the
QEMU machine that emulates the board's core), which region holds code, data and the arena, and
how many bytes the arena may have (`arena_room`; `board_options` puts it into a CompileOptions as
the RAM budget the compiler plans against), and which build variant a firmware gets: `device`
(the real part's addresses, no semihosting) or `qemu` (QEMU's addresses, semihosting), and whether
the device build itself boots on the board's QEMU machine (`device_runs_on_qemu`).

A board file (see boards/README.md):

    name = "nrf52840-dk"                 # optional, defaults to the file name
    target = "cortex-m4"                 # an edgecc.targets name
    cflags = ["-mcpu=cortex-m4", ...]    # optional, defaults to the target's core flags
    stack_size = 8192                    # optional: stack the test program reserves
    heap_size = 4096                     # optional: heap for newlib's stdio buffers
    [device]                             # optional: the real part (absent: a QEMU reference board)
    part = "nRF52840"; core = "Cortex-M4F"; fpu = "fpv4-sp-d16"; clock_hz = 64000000
    [qemu]
    machine = "mps2-an386"               # or "user" for qemu-aarch64 user mode
    [[memory]]                           # one per region, in address order
    name = "FLASH"; kind = "flash"; origin = 0x0; size = "1 MiB"
    qemu_origin = 0x0                    # optional: where the region sits under QEMU
    [placement]                          # optional
    code = "FLASH"; data = "RAM"; arena = ["DTCM", "AXI_SRAM"]

Python 3.11+ reads TOML with the standard tomllib; 3.10 uses the `tomli` package (the same
parser, a dependency only there). Any problem with a board file is one EdgeccError line naming the
file and the field. Which keys exist, their kinds, ranges and character sets: one declarative
table, board_schema.BOARD (checked first); the file is a regular file under a size cap, read
through edgecc.fileio; what relates keys to each other (regions, placement, machine) is here.
"""
from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from edgecc.build import board_schema as schema
from edgecc.build.board_schema import MAX_BOARD_FILE_BYTES, check_board, parse_size
from edgecc.errors import EdgeccError
from edgecc.fileio import read_regular
from edgecc.options import CompileOptions
from edgecc.resources import data_dir
from edgecc.targets import TARGETS

if sys.version_info >= (3, 11):
    import tomllib as _toml
else:  # pragma: no cover - exercised on 3.10 only
    try:
        import tomli as _toml
    except ImportError:  # a broken install; say so rather than fail at import time
        _toml = None


@dataclass(frozen=True)
class QemuMachine:
    """What edgecc relies on about one QEMU machine (measured, docs/toolchains.md)."""
    name: str
    target: str
    boot: int                                  # vector table address the core boots from
    memory: tuple[tuple[int, int], ...]        # (start, size) of RAM-backed ranges it may load
    part: str = ""     # the chip it emulates, peripherals and map (MPS2/MPS3 FPGA images: none)
    also_runs: tuple[str, ...] = ()            # other targets whose code runs on its core


MiB = 1 << 20
KiB = 1 << 10

VARIANTS = ("device", "qemu")   # the firmware builds `--emit` writes (docs/firmware.md)

MACHINES: dict[str, QemuMachine] = {m.name: m for m in (
    # AN385: a Cortex-M3 (no FPU) with AN386's memory map; Armv6-M code runs on it unchanged.
    QemuMachine("mps2-an385", "cortex-m3", 0x0,
                ((0x00000000, 4 * MiB), (0x20000000, 4 * MiB), (0x21000000, 16 * MiB)),
                also_runs=("cortex-m0plus",)),
    QemuMachine("mps2-an386", "cortex-m4", 0x0,
                ((0x00000000, 4 * MiB), (0x20000000, 4 * MiB), (0x21000000, 16 * MiB))),
    QemuMachine("mps2-an500", "cortex-m7", 0x0,
                ((0x00000000, 4 * MiB), (0x20000000, 4 * MiB), (0x60000000, 16 * MiB))),
    # AN505 boots Secure: only the Secure aliases work (an image at 0x0 locks the core up).
    QemuMachine("mps2-an505", "cortex-m33", 0x10000000,
                ((0x10000000, 4 * MiB), (0x38000000, 4 * MiB))),
    QemuMachine("mps3-an547", "cortex-m55", 0x10000000,
                ((0x10000000, 512 * KiB), (0x11000000, 2 * MiB), (0x30000000, 512 * KiB),
                 (0x31000000, 4 * MiB))),
    # STM32F405 with its vendor map: flash at 0x08000000 (aliased at 0x0, where the core boots),
    # SRAM at 0x20000000 (QEMU 7.2 gives 192 KiB), no CCM; USART1 at 0x40011000 is -serial 0.
    QemuMachine("netduinoplus2", "cortex-m4", 0x08000000,
                ((0x08000000, 1 * MiB), (0x20000000, 192 * KiB)), part="STM32F405"),
    # STM32F100 (value line) with its vendor map: flash 128 KiB at 0x08000000 (aliased at 0x0),
    # SRAM 8 KiB at 0x20000000; USART1 at 0x40013800 is -serial 0.
    QemuMachine("stm32vldiscovery", "cortex-m3", 0x08000000,
                ((0x08000000, 128 * KiB), (0x20000000, 8 * KiB)), part="STM32F100",
                also_runs=("cortex-m0plus",)),
    # nRF51822 (BBC micro:bit) with its vendor map: a Cortex-M0 (Armv6-M: the cortex-m0plus
    # target's code), flash 256 KiB at 0x0 where the core boots, RAM 16 KiB at 0x20000000;
    # the nRF51 UART at 0x40002000 is -serial 0.
    QemuMachine("microbit", "cortex-m0plus", 0x0,
                ((0x00000000, 256 * KiB), (0x20000000, 16 * KiB)), part="nRF51"),
)}
# Reference boards not named after their QEMU machine (a machine running another core's code).
REFERENCE_BOARDS = {"cortex-m0plus": "mps2-an385-m0plus"}
USER_MODE = {"aarch64": "qemu-aarch64"}


@dataclass(frozen=True)
class Region:
    name: str
    kind: str          # "flash" or "ram"
    origin: int        # address on the device
    size: int
    qemu_origin: int   # address of the same region on the QEMU machine

    @property
    def attrs(self) -> str:
        return "rx" if self.kind == "flash" else "rwx"


@dataclass(frozen=True)
class Device:
    """The real part a board describes ([device]): descriptive facts a firmware engineer checks
    the board file against; the compiler flags stay in `cflags`."""
    part: str
    core: str          # e.g. "Cortex-M4F"
    fpu: str           # e.g. "fpv4-sp-d16", or "none"
    clock_hz: int


@dataclass(frozen=True)
class Board:
    name: str
    target: str
    cflags: tuple[str, ...]
    qemu_machine: str                      # "" for user mode (qemu-aarch64)
    regions: tuple[Region, ...] = ()
    code_region: str = ""
    data_region: str = ""
    arena_regions: tuple[str, ...] = ()
    stack_size: int = 8192
    heap_size: int = 4096
    description: str = ""
    path: Path | None = field(default=None, compare=False)
    weights_region: str = ""               # flash region of `--weights-section` (default: code)
    device: Device | None = None           # the real part; None for a QEMU reference board

    @property
    def default_variant(self) -> str:
        """`device` for a real part, `qemu` for a QEMU reference board (it has no other map)."""
        return "device" if self.device else "qemu"

    def device_runs_on_qemu(self, arena_bytes: int, weights_section: str | None = None) -> bool:
        """Whether the device build (device addresses, no semihosting) boots on the QEMU machine:
        the machine emulates the board's part (its UART prints) and every region the build puts
        something in sits at the same address there."""
        machine = MACHINES.get(self.qemu_machine)
        if not self.bare_metal or self.device is None or machine is None or not machine.part \
                or not self.device.part.startswith(machine.part):
            return False
        arena = self.arena_region(arena_bytes) or max(
            (self.region(n) for n in self.arena_regions), key=lambda r: r.size)
        used = {self.code_region, self.data_region, arena.name}
        if weights_section:
            used.add(self.weights_region or self.code_region)
        return all(self.region(n).origin == self.region(n).qemu_origin for n in used)

    @property
    def bare_metal(self) -> bool:
        return bool(self.regions)

    @property
    def flash_bytes(self) -> int | None:
        return sum(r.size for r in self.regions if r.kind == "flash") if self.regions else None

    @property
    def ram_bytes(self) -> int | None:
        return sum(r.size for r in self.regions if r.kind == "ram") if self.regions else None

    def region(self, name: str) -> Region:
        for r in self.regions:
            if r.name == name:
                return r
        raise KeyError(name)

    def arena_region(self, arena_bytes: int) -> Region | None:
        """The first arena candidate the arena fits in (None: it fits none of them).

        In the data region the stack and heap are reserved first; .data/.bss of the program are
        small and the link checks the exact total."""
        for name in self.arena_regions:
            r = self.region(name)
            room = r.size - (self.stack_size + self.heap_size if name == self.data_region else 0)
            if arena_bytes <= room:
                return r
        return None


def unbounded_slot(board: Board) -> int:
    """Bytes each region gets in budget's measuring link, one slot per region from address 0:
    1 GiB for up to 4 regions, else 4 GiB split by the next power of two."""
    n = 4
    while n < len(board.regions):
        n *= 2
    return (1 << 32) // n


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


def _str(d: dict, key: str, where: str, default: str | None = None) -> str:
    v = d.get(key, default)
    if not isinstance(v, str) or not v:
        raise EdgeccError(f"{where}: '{key}' must be a non-empty string")
    return v


def _parse(path: Path) -> dict:
    """The parsed board file: a regular file under MAX_BOARD_FILE_BYTES (checked before it is
    read), its nesting bounded (a deeper file than the parser's recursion is refused)."""
    raw = read_regular(path, "board file", MAX_BOARD_FILE_BYTES)
    if path.suffix.lower() == ".json":
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise EdgeccError(f"board file {path}: not valid JSON: {e}") from None
        except RecursionError:
            raise EdgeccError(f"board file {path}: nested too deeply") from None
    if _toml is None:
        raise EdgeccError("reading board files on Python 3.10 needs the 'tomli' package")
    try:
        return _toml.loads(raw.decode("utf-8"))
    except (_toml.TOMLDecodeError, UnicodeDecodeError) as e:
        raise EdgeccError(f"board file {path}: not valid TOML: {e}") from None
    except RecursionError:
        raise EdgeccError(f"board file {path}: nested too deeply") from None


def _regions(d: dict, machine: QemuMachine | None, where: str) -> tuple[Region, ...]:
    mem = d.get("memory", [])
    if not isinstance(mem, list) or not all(isinstance(m, dict) for m in mem):
        raise EdgeccError(f"{where}: 'memory' must be a list of [[memory]] tables")
    out: list[Region] = []
    for i, m in enumerate(mem):
        w = f"{where}: memory[{i}]"
        name = _str(m, "name", w)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise EdgeccError(f"{w}: region name {name!r} must be a C-style identifier")
        if any(r.name == name for r in out):
            raise EdgeccError(f"{w}: region {name} declared twice")
        kind = _str(m, "kind", w)
        if kind not in ("flash", "ram"):
            raise EdgeccError(f"{w}: kind must be \"flash\" or \"ram\", not {kind!r}")
        if "origin" not in m or "size" not in m:
            raise EdgeccError(f"{w}: needs 'origin' and 'size'")
        origin = parse_size(m["origin"], f"{w}.origin")
        size = parse_size(m["size"], f"{w}.size")
        if size == 0:
            raise EdgeccError(f"{w}: size must be positive")
        qo = parse_size(m.get("qemu_origin", origin), f"{w}.qemu_origin")
        if machine and not any(s <= qo and qo + size <= s + n for s, n in machine.memory):
            raise EdgeccError(f"{w}: region {name} ({size} bytes at {qo:#x}) is not memory on "
                              f"QEMU {machine.name}; set qemu_origin")
        out.append(Region(name, kind, origin, size, qo))
    for a in out:
        for b in out:
            for at in ("qemu_origin", "origin"):
                lo_a, lo_b = getattr(a, at), getattr(b, at)
                if a is not b and lo_a < lo_b + b.size and lo_b < lo_a + a.size:
                    on = "under QEMU" if at == "qemu_origin" else "on the device"
                    raise EdgeccError(f"{where}: regions {a.name} and {b.name} overlap {on}")
    return tuple(out)


def _device(d: dict) -> Device | None:
    """The [device] table, its keys already checked by board_schema (BOARD["device"])."""
    t = d.get("device")
    if t is None:
        return None
    return Device(part=t["part"], core=t["core"], fpu=t.get("fpu", "none"),
                  clock_hz=t.get("clock_hz", 0))


def board_from_dict(d: dict, path: Path) -> Board:
    where = f"board file {path}"
    check_board(d, path)  # every key declared, typed, in range, in its safe character set
    name = schema.name(d.get("name", path.stem), f"{where}: name (default: the file name)")
    target = _str(d, "target", where)
    if target not in TARGETS:
        raise EdgeccError(f"{where}: unknown target {target!r} (known: {', '.join(TARGETS)})")
    cflags = d.get("cflags", list(TARGETS[target].cflags))
    if not isinstance(cflags, list) or not all(isinstance(f, str) for f in cflags):
        raise EdgeccError(f"{where}: 'cflags' must be a list of strings")
    q = d.get("qemu", {})
    if not isinstance(q, dict):
        raise EdgeccError(f"{where}: [qemu] must be a table")
    mname = _str(q, "machine", f"{where}: [qemu]", TARGETS[target].qemu_machine or "user")
    machine = None
    if mname == "user":
        if target not in USER_MODE:
            raise EdgeccError(f"{where}: target {target} cannot run in QEMU user mode")
    else:
        machine = MACHINES.get(mname)
        if machine is None:
            raise EdgeccError(f"{where}: unknown QEMU machine {mname!r} "
                              f"(known: {', '.join(MACHINES)}, user)")
        if target != machine.target and target not in machine.also_runs:
            raise EdgeccError(f"{where}: QEMU {mname} emulates a {machine.target}, "
                              f"the board's target is {target}")
    regions = _regions(d, machine, where)
    if machine and not regions:
        raise EdgeccError(f"{where}: a bare-metal board needs [[memory]] regions")
    if not machine and regions:
        raise EdgeccError(f"{where}: [[memory]] regions need a bare-metal QEMU machine")
    pl = d.get("placement", {})
    if not isinstance(pl, dict):
        raise EdgeccError(f"{where}: [placement] must be a table")
    code = data = weights = ""
    arena: tuple[str, ...] = ()
    if regions:
        flash = [r.name for r in regions if r.kind == "flash"]
        ram = [r.name for r in regions if r.kind == "ram"]
        if not flash or not ram:
            raise EdgeccError(f"{where}: needs at least one flash and one ram region")
        code = _str(pl, "code", f"{where}: [placement]", flash[0])
        data = _str(pl, "data", f"{where}: [placement]", ram[0])
        arena_v = pl.get("arena", ram)
        if isinstance(arena_v, str):
            arena_v = [arena_v]
        if not isinstance(arena_v, list) or not arena_v or \
                not all(isinstance(a, str) for a in arena_v):
            raise EdgeccError(f"{where}: placement.arena must be a region name or a list of them")
        arena = tuple(arena_v)
        names = {r.name: r for r in regions}
        weights = _str(pl, "weights", f"{where}: [placement]", code)
        if weights not in names or names[weights].kind != "flash":
            raise EdgeccError(f"{where}: placement.weights must name a flash region: {weights!r}")
        for what, n in [("code", code), ("data", data)] + [("arena", a) for a in arena]:
            if n not in names:
                raise EdgeccError(f"{where}: placement.{what} names no region: {n!r}")
            if what != "code" and names[n].kind != "ram":
                raise EdgeccError(f"{where}: placement.{what} must be a ram region, {n} is flash")
        if machine and names[code].qemu_origin != machine.boot:
            raise EdgeccError(f"{where}: code region {code} must sit at {machine.boot:#x} under "
                              f"QEMU {machine.name} (the core boots from there); set qemu_origin")
    return Board(name=name, target=target, cflags=tuple(cflags),
                 qemu_machine=machine.name if machine else "", regions=regions,
                 code_region=code, data_region=data, arena_regions=arena,
                 stack_size=parse_size(d.get("stack_size", 8192), f"{where}: stack_size"),
                 heap_size=parse_size(d.get("heap_size", 4096), f"{where}: heap_size"),
                 description=str(d.get("description", "")), path=path,
                 weights_region=weights, device=_device(d))


def default_board(target: str) -> Board:
    """The QEMU reference board of a target (`--target cortex-m4` runs on mps2-an386)."""
    t = TARGETS.get(target)
    if t is None or t.runner == "host":
        raise EdgeccError(f"target {target} runs on the host, not on a board")
    return load_board(REFERENCE_BOARDS.get(target) or t.qemu_machine or "aarch64-linux")


def board_names() -> list[str]:
    return sorted(p.stem for p in data_dir("boards").glob("*.toml"))


def load_board(name_or_path: str | Path) -> Board:
    """A board by name (boards/<name>.toml) or by path to a .toml/.json file."""
    s = str(name_or_path)
    p = Path(s)
    if p.suffix.lower() in (".toml", ".json") or "/" in s or p.exists():
        return board_from_dict(_parse(p), p)
    cand = data_dir("boards") / f"{s}.toml"
    if not cand.is_file():
        raise EdgeccError(f"unknown board {s!r} (known: {', '.join(board_names())}; "
                          f"or give a path to a board file)")
    return board_from_dict(_parse(cand), cand)
