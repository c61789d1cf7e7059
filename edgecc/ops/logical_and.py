"""LOGICAL_AND: y = a AND b over bool tensors with numpy broadcasting (rank <= 5); edgecc/ops/_logical.py."""
from __future__ import annotations

import numpy as np

from edgecc.ops import register
from edgecc.ops._logical import binary

OP = register(binary("LOGICAL_AND", np.logical_and, "&&"))
