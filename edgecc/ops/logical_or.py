"""LOGICAL_OR: y = a OR b over bool tensors with numpy broadcasting (rank <= 5); edgecc/ops/_logical.py."""
from __future__ import annotations

import numpy as np

from edgecc.ops import register
from edgecc.ops._logical import binary

OP = register(binary("LOGICAL_OR", np.logical_or, "||"))
