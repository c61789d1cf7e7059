"""EXP, float32 (TFLite Micro's elementwise kernel): y = std::exp(x): the host libm in the reference,
runtime_c/edgecc_math.h in C (within 1e-5 relative).
"""
from __future__ import annotations

from edgecc.ops import register
from edgecc.ops._float import libm_f, unary_float_op

OP = register(unary_float_op("EXP", lambda x: libm_f("expf")(x), "ec_expf(v)"))
