"""Graph outputs are always written (passes/outputs.py, ops/edgecc_copy.py): a constant-only path
to an output, an output that is also an input, and an op whose data input is a constant feeding an
output (the `'in0' is undefined` traceback) compile, and the C matches TFLite Micro byte for byte."""
from __future__ import annotations

import pytest

from edgecc.targets import get_target
from edgecc.verify import verify_model
from fuzz import hostile

CONST_DATA_OPS = ["fc", "conv", "dwconv", "softmax", "logistic", "tanh", "relu", "relu6",
                  "leaky_relu", "hard_swish", "max_pool", "pool", "transpose", "pad", "mean",
                  "requantize", "strided_slice"]


def _model(tmp_path, base: str, mutation: str):
    fn = next(b for b in hostile.BASES if b.__name__ == base)
    data = hostile.build(fn, hostile.MUTATIONS[mutation])
    assert data is not None
    p = tmp_path / f"{base}-{mutation}.tflite"
    p.write_bytes(data)
    return p


def _bit_exact(path) -> None:
    r = verify_model(path, get_target("host"))
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)


def test_reshape_of_a_constant_to_an_output_is_written(tmp_path):
    """Was a silent miscompile: exit 0, 'weights 0 B', nothing ever wrote output 1."""
    from edgecc.compiler import compile_model
    p = _model(tmp_path, "reshape_const", "valid")
    c = compile_model(p, get_target("host"), "m")
    assert any(lw.node.op == "EDGECC_COPY" for lw in c.lowered) and c.weights_bytes >= 12
    _bit_exact(p)


@pytest.mark.parametrize("base", ["relu", "fc", "add"])
def test_output_that_is_an_input(base, tmp_path):
    _bit_exact(_model(tmp_path, base, "output_is_input"))


@pytest.mark.parametrize("base", CONST_DATA_OPS)
def test_constant_data_input_feeding_an_output(base, tmp_path):
    _bit_exact(_model(tmp_path, base, "const_data_input"))
