"""Block limits the C kernels size their stack buffers by, read from the C itself.

Owns: `c_define`, the integer value of a `#define NAME <integer>` in a runtime_c/ header. A
kernel's stack buffer needs its bound at C compile time, so the number is written once, in the
header; the lowering reads it here (when a layer exceeds it, the kernel refuses the layer)
instead of keeping a second copy in Python.
"""
from __future__ import annotations

import re
from functools import lru_cache

from edgecc.resources import data_dir


@lru_cache(maxsize=None)
def c_define(header: str, name: str) -> int:
    """The integer `#define name` of runtime_c/<header>; an edgecc bug (KeyError) when absent."""
    text = (data_dir("runtime_c") / header).read_text()
    m = re.search(rf"^[ \t]*#[ \t]*define[ \t]+{name}[ \t]+\(?(\d+)\)?", text, re.M)
    if m is None:
        raise KeyError(f"runtime_c/{header} defines no integer {name}")
    return int(m.group(1))
