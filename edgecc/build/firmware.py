"""Build-system files for a firmware that embeds the generated C (`edgecc compile --emit`).

Owns: docs/design.md's "Firmware integration (contract)": `--emit cmake` (OUT/CMakeLists.txt, a
static library target `name` with alias `edgecc::name`, OUT as its PUBLIC include directory),
`--emit make` (OUT/name.mk: NAME_SRCS, NAME_INCLUDES, NAME_CFLAGS), `--emit zephyr`
(OUT/zephyr/: module.yml, a Kconfig symbol CONFIG_EDGECC_NAME and a zephyr_library). Each
carries, on the library itself, the flags the generated C needs to compute what verify proved
(REQUIRED_FLAGS) and, where the firmware sets no optimization level, DEFAULT_OPT.
For a bare-metal board, `cmake` and `make` also write the board's support (OUT/board/): two
builds, `device` (startup.c: vendor-neutral, no semihosting; NAME.ld: the real part's memory map)
and `qemu` (startup_qemu.c: semihosting; NAME-qemu.ld: QEMU's map, for tests), and `cmake` a
toolchain file for arm-none-eabi (OUT/toolchain-arm-none-eabi.cmake) choosing the board's default
build. The files are rendered from templates/firmware/ and are deterministic like the C.
"""
from __future__ import annotations

from edgecc.build.board_schema import check_board_strings
from edgecc.build.boards import Board, default_board
from edgecc.build.cross import linker_script
from edgecc.codegen import template_env
from edgecc.errors import EdgeccError
from edgecc.names import c_comment, c_ident
from edgecc.resources import data_dir
from edgecc.targets import DEFAULT_OPT, FP_FLAGS

EMIT_KINDS = ("cmake", "make", "zephyr")
TOOLCHAIN_FILE = "toolchain-arm-none-eabi.cmake"
# Every flag the generated C relies on (verify builds with them): float products and sums are
# rounded one by one, no fused multiply-add, as TFLite Micro's and onnxruntime's kernels do.
REQUIRED_FLAGS = FP_FLAGS
REQUIRED_WHY = "no fused multiply-add, so float arithmetic rounds as the reference's does"


def board_for(target_name: str, board: Board | None) -> Board | None:
    """The bare-metal board whose startup and linker script go with the library, if any."""
    if board is None:
        try:
            board = default_board(target_name)
        except EdgeccError:
            return None
    return board if board.bare_metal else None


def board_files(board: Board, arena_bytes: int,
                weights_section: str | None = None) -> dict[str, str]:
    """The startup code and linker script of both builds of a bare-metal board (OUT/board/)."""
    check_board_strings(board)  # its name and flags reach CMake, make and a file name
    base = data_dir("templates") / "baremetal"
    return {
        "board/startup.c": (base / "startup_device.c").read_text(),
        "board/startup_qemu.c": (base / "startup.c").read_text(),
        "board/startup_init.h": (base / "startup_init.h").read_text(),
        f"board/{board.name}.ld": linker_script(board, arena_bytes, device=True,
                                                weights_section=weights_section),
        f"board/{board.name}-qemu.ld": linker_script(board, arena_bytes,
                                                     weights_section=weights_section),
    }


def toolchain_file(board: Board, arena_bytes: int, weights_section: str | None = None) -> str:
    check_board_strings(board)
    return template_env().get_template("firmware/toolchain.cmake.j2").render(
        board=board.name, core=board.target, cflags=" ".join(board.cflags),
        qemu_machine=board.qemu_machine, default_variant=board.default_variant,
        device_on_qemu_cmake="ON" if board.device_runs_on_qemu(arena_bytes, weights_section)
        else "OFF")


def emit_files(files: dict[str, str], name: str, model: str, kinds: list[str],
               board: Board | None, arena_bytes: int,
               weights_section: str | None = None) -> dict[str, str]:
    """The build files for `kinds` (any of EMIT_KINDS) around the generated `files`."""
    unknown = sorted(set(kinds) - set(EMIT_KINDS))
    if unknown:
        raise EdgeccError(f"--emit {unknown[0]}: unknown (known: {', '.join(EMIT_KINDS)})")
    ident = c_ident(name).lower()
    ctx = dict(name=ident, NAME=ident.upper(), model=c_comment(model, 60),
               sources=sorted(f for f in files if f.endswith(".c") and "/" not in f),
               required_flags=list(REQUIRED_FLAGS), required_why=REQUIRED_WHY, opt=DEFAULT_OPT,
               board="", board_ident="", qemu_machine="", default_variant="", cflags="",
               device_on_qemu=False)
    if board is not None:
        ctx.update(board=board.name, board_ident=c_ident(board.name).lower(),
                   qemu_machine=board.qemu_machine, default_variant=board.default_variant,
                   cflags=" ".join(board.cflags),
                   device_on_qemu=board.device_runs_on_qemu(arena_bytes, weights_section))
    env = template_env()
    out: dict[str, str] = {}
    if "cmake" in kinds:
        out["CMakeLists.txt"] = env.get_template("firmware/CMakeLists.txt.j2").render(**ctx)
        if board is not None:
            out[TOOLCHAIN_FILE] = toolchain_file(board, arena_bytes, weights_section)
    if "make" in kinds:
        out[f"{ident}.mk"] = env.get_template("firmware/model.mk.j2").render(**ctx)
    if board is not None and ("cmake" in kinds or "make" in kinds):
        out.update(board_files(board, arena_bytes, weights_section))
    if "zephyr" in kinds:
        out["zephyr/module.yml"] = env.get_template("firmware/module.yml.j2").render(**ctx)
        out["zephyr/Kconfig"] = env.get_template("firmware/Kconfig.j2").render(**ctx)
        out["zephyr/CMakeLists.txt"] = env.get_template("firmware/zephyr.cmake.j2").render(**ctx)
    return out
