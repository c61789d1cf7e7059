"""Each memory region's use in a linked bare-metal program (`edgecc budget`'s per-region rows).

Owns: reading the ELF's loadable segments (pyelftools) and charging them to the board's regions:
a segment's run-time bytes (memsz, .bss and the arena included) to the region holding its
address, and its load image (filesz) also to the region holding its load address when that is
another region (the .data image in flash). Addresses are the ones the program was linked at: the
board's QEMU addresses, or, for budget's unbounded measuring link, region i at slot i (boards.unbounded_slot).
"""
from __future__ import annotations

from pathlib import Path

from elftools.elf.elffile import ELFFile

from edgecc.build.boards import Board, unbounded_slot


def _spans(board: Board, unbounded: bool) -> list[tuple[int, int, str]]:
    if unbounded:  # edgecc.build.cross.linker_script(unbounded=True)
        slot = unbounded_slot(board)
        return [(i * slot, slot, r.name) for i, r in enumerate(board.regions)]
    return [(r.qemu_origin, r.size, r.name) for r in board.regions]


def region_use(elf: Path, board: Board, unbounded: bool = False) -> list[dict]:
    """[{name, kind, size, used}] per board region, in the board file's order."""
    spans = _spans(board, unbounded)

    def where(addr: int) -> str | None:
        for lo, n, name in spans:
            if lo <= addr < lo + n:
                return name
        return None

    used = {r.name: 0 for r in board.regions}
    with open(elf, "rb") as f:
        for seg in ELFFile(f).iter_segments():
            if seg["p_type"] != "PT_LOAD" or seg["p_memsz"] == 0:
                continue
            run_at, load_at = where(seg["p_vaddr"]), where(seg["p_paddr"])
            if run_at is not None:
                used[run_at] += seg["p_memsz"]
            if load_at is not None and load_at != run_at and seg["p_filesz"]:
                used[load_at] += seg["p_filesz"]
    return [dict(name=r.name, kind=r.kind, size=r.size, used=used[r.name])
            for r in board.regions]
