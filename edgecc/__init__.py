"""edgecc: an ahead-of-time compiler from quantized neural networks to plain C.

`edgecc.compile(model, ...)` and `edgecc.run(model, ...)` are the Python API (edgecc/api.py).
"""
from edgecc.api import compile, run  # noqa: F401, A004 (edgecc.compile, as the API is spelled)
from edgecc.version import __version__  # noqa: F401
