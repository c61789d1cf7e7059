"""Build-system files for a firmware that embeds the generated C (`edgecc compile --emit`).

Owns: docs/design.md's "Firmware integration (contract)": `--emit cmake` (OUT/CMakeLists.txt, a
static library target `name` with alias `edgecc::name`, OUT as its PUBLIC include directory, no
flags of its own), `--emit make` (OUT/name.mk with NAME_SRCS and NAME_INCLUDES), `--emit zephyr`
(OUT/zephyr/module.yml and a zephyr_library). For a bare-metal board, `cmake` also writes the
board's support: a toolchain file for arm-none-eabi (OUT/toolchain-arm-none-eabi.cmake) and the
startup code and linker script (OUT/board/), which the library adds to the firmware when it is
configured with that toolchain file, so a firmware needs nothing else. The files are rendered
from templates/firmware/ and are deterministic like the C.
"""
from __future__ import annotations

from edgecc.build.board_schema import check_board_strings
from edgecc.build.boards import Board, default_board
from edgecc.build.cross import linker_script
from edgecc.codegen import template_env
from edgecc.errors import EdgeccError
from edgecc.names import c_comment, c_ident
from edgecc.resources import data_dir

EMIT_KINDS = ("cmake", "make", "zephyr")
TOOLCHAIN_FILE = "toolchain-arm-none-eabi.cmake"


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
    """Toolchain file, startup code and linker script of a bare-metal board."""
    check_board_strings(board)  # its name and flags reach CMake and a file name
    tool = template_env().get_template("firmware/toolchain.cmake.j2").render(
        board=board.name, core=board.target, cflags=" ".join(board.cflags),
        qemu_machine=board.qemu_machine)
    startup = (data_dir("templates") / "baremetal" / "startup.c").read_text()
    return {TOOLCHAIN_FILE: tool, "board/startup.c": startup,
            f"board/{board.name}.ld": linker_script(board, arena_bytes,
                                                    weights_section=weights_section)}


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
               board=board.name if board else "", board_ident=c_ident(board.name).lower()
               if board else "")
    env = template_env()
    out: dict[str, str] = {}
    if "cmake" in kinds:
        out["CMakeLists.txt"] = env.get_template("firmware/CMakeLists.txt.j2").render(**ctx)
        if board is not None:
            out.update(board_files(board, arena_bytes, weights_section))
    if "make" in kinds:
        out[f"{ident}.mk"] = env.get_template("firmware/model.mk.j2").render(**ctx)
    if "zephyr" in kinds:
        out["zephyr/module.yml"] = env.get_template("firmware/module.yml.j2").render(**ctx)
        out["zephyr/CMakeLists.txt"] = env.get_template("firmware/zephyr.cmake.j2").render(**ctx)
    return out
