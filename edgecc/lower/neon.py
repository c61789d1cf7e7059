"""The AArch64 NEON kernel table (dot product instructions where the target has them).

Owns: which NEON kernels exist, for which op, in which order they are tried. The convolution,
depthwise and fully connected lowerings are shared with x86 (vec.py, vec_dw.py). The C is
runtime_c/edgecc_neon.h, the calls templates/neon/.
"""
from __future__ import annotations

from edgecc.lower import vec, vec_dw
from edgecc.lower.table import Candidate

ISA = "neon"

CONV = [vec.conv_entry(ISA)]

TABLE: list[Candidate] = CONV + vec_dw.dw_entries(ISA, CONV) + [
    vec.fc_entry(ISA),
]
