"""The size limits edgecc accepts, stated once, and the guard that applies them before allocating.

Every tensor and the arena stay under 2^31 bytes, so every element offset, byte offset, stride
product and loop bound of the generated C fits `int32_t` (and a 32-bit `size_t`) without overflow;
a model over that cannot fit a microcontroller anyway. A model file is at most MAX_MODEL_BYTES.
"""
from __future__ import annotations

from pathlib import Path

from edgecc.errors import ModelFormatError, UnsupportedModel
from edgecc.fileio import check_regular, read_regular

MAX_TENSOR_BYTES = 2**31 - 1     # one tensor (activation or constant)
MAX_ARENA_BYTES = 2**31 - 1      # every activation together, and the planned arena
MAX_MODEL_BYTES = 1 << 30        # a MODEL file (checked before it is read)
MAX_RANK = 8                     # dims of one tensor (TFLite kernels take at most 6)


def numel(shape) -> int:
    out = 1
    for d in shape:
        out *= max(int(d), 0)
    return out


def check_alloc(what: str, shape, itemsize: int) -> None:
    """Refuse (before anything is allocated) a buffer of `shape` over MAX_TENSOR_BYTES."""
    size = numel(shape) * itemsize
    if len(tuple(shape)) > MAX_RANK or size > MAX_TENSOR_BYTES:
        raise UnsupportedModel(f"{what}: shape {list(shape)} is {size:,} bytes, over edgecc's "
                               f"limit of {MAX_TENSOR_BYTES:,} bytes per tensor (rank <= {MAX_RANK})")


def check_model_file(path: str | Path) -> None:
    """Refuse, before opening it, a MODEL that is missing, not a regular file (a FIFO would block
    the read forever, /dev/zero never ends) or larger than MAX_MODEL_BYTES."""
    check_regular(path, "MODEL", MAX_MODEL_BYTES, error=ModelFormatError)


def read_model_file(path: str | Path) -> bytes:
    """The bytes of MODEL, checked as check_model_file checks it on the descriptor it reads (a
    file swapped for a FIFO after the check cannot block the read)."""
    return read_regular(path, "MODEL", MAX_MODEL_BYTES, error=ModelFormatError)
