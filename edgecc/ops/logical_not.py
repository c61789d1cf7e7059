"""LOGICAL_NOT: y = NOT x over a bool tensor; edgecc/ops/_logical.py."""
from __future__ import annotations

from edgecc.ops import register
from edgecc.ops._logical import logical_not

OP = register(logical_not())
