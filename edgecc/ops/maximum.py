"""MAXIMUM: element-wise max of the raw values with broadcasting (see _minmax)."""
import numpy as np

from edgecc.ops._minmax import make

OP = make("MAXIMUM", lambda a, b: np.where(a > b, a, b))  # TFLite's MaximumOp
