"""The validation stage (edgecc/validate): each hostile model the issue-13 session measured as
"accepted without a word" (or crashing later) is refused in one line naming the tensor or op,
exit 2; every real model of the shared folders passes the validator unchanged."""
from __future__ import annotations

import pytest

from conftest import SHARED
from fuzz import hostile
from test_internal_errors import run_cli

from edgecc.frontends.tflite import read_tflite
from edgecc.validate import validate_graph

# (base, mutation, words the one error line must contain)
REFUSED = [
    ("relu", "zp_128", "zero point 128 outside [-128, 127]"),
    ("relu", "zp_-129", "zero point -129"),
    ("relu", "zp_1099511627776", "zero point 1099511627776"),
    ("fc", "out_zp_-9223372036854775808", "zero point -9223372036854775808"),
    ("conv", "perchannel_short", "3 scales for dimension 0 of size 4"),
    ("conv", "perchannel_zp_len", "4 scales, 2 zero points"),
    ("conv", "perchannel_axis_9", "quantized dimension 9"),
    ("relu", "scale_0", "scale 0.0"),
    ("relu", "scale_neg", "scales must be finite and positive"),
    ("fc", "bias_scale_nan", "scale nan"),
    ("logistic", "scale_inf", "scale inf"),
    ("relu", "dim_-5", "dimensions must be non-negative"),
    ("relu", "dim_-1", "dimensions must be non-negative"),
    ("fc", "in0_index_-2", "input 0 is -2"),
    ("fc", "in0_index_-2147483648", "input 0 is -2147483648"),
    ("relu", "in0_index_-1", "input 0 is -1"),
    ("split", "opt_num_splits_3", "num_splits 3, 2 outputs"),
    ("squeeze", "opt_squeeze_dims_[5]", "squeeze_dims"),
    ("squeeze", "opt_squeeze_dims_[-9]", "squeeze_dims"),
    ("softmax", "wrong_options", "options table must be the op's own type"),
    ("softmax", "wrong_options", "the table is SubOptions, expected SoftmaxOptions"),
    ("fc", "two_subgraphs", "one subgraph"),
    ("relu", "dim_2147483647", "2^31 bytes"),
    ("fc", "huge_both", "2^31 bytes"),
    ("resize", "outdim_2147483647", "2^31 bytes"),
    ("conv", "opt_dilation_h_factor_2147483647", "filter span 4294967294"),
    ("svdf", "w_scale_0", "scale 0.0"),
]


@pytest.mark.parametrize("base,mutation,words", REFUSED, ids=lambda x: str(x)[:40])
def test_hostile_model_refused_in_one_line(base, mutation, words, tmp_path, capsys):
    fn = next(b for b in hostile.BASES if b.__name__ == base)
    data = hostile.build(fn, hostile.MUTATIONS[mutation])
    assert data is not None
    model = tmp_path / "m.tflite"
    model.write_bytes(data)
    code, out, err = run_cli(["compile", model, "-o", tmp_path / "out"], capsys)
    assert code == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("edgecc: error: "), err
    assert words in err, err
    assert not (tmp_path / "out").exists()


def test_resize_to_2_31_is_refused_before_allocating(tmp_path, capsys):
    """The 568-byte RESIZE_BILINEAR model with size [2^31-1, 2^31-1] ran 30 s and took 3.8 GB."""
    import numpy as np
    from edgecc.tflite_writer import ModelBuilder
    import resource
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 2, 2, 3), "int8", scale=0.05, zero_point=0)
    size = mb.const("size", np.array([2**31 - 1, 2**31 - 1], dtype=np.int32))
    y = mb.tensor("y", (1, 4, 4, 3), "int8", scale=0.05, zero_point=0)
    mb.op("RESIZE_BILINEAR", [x, size], [y], {})
    model = tmp_path / "r.tflite"
    model.write_bytes(mb.finish([x], [y]))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code, out, err = run_cli(["compile", model, "-o", tmp_path / "out"], capsys)
    assert code == 2 and "RESIZE_BILINEAR at op 0" in err and "2^31 bytes" in err, err
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KiB


@pytest.mark.parametrize("folder", ["tflite", "converter"])
def test_real_models_pass_the_validator(folder):
    models = sorted((SHARED / "models" / folder).glob("*.tflite"))
    if not models:
        pytest.fail(f"no models in {SHARED / 'models' / folder}")
    for m in models:
        g = read_tflite(m)
        assert validate_graph(g) is g


@pytest.mark.parametrize("axis", [3, -4, 100])
def test_expand_dims_axis_out_of_range_is_refused(axis, tmp_path, capsys):
    import numpy as np
    from edgecc.tflite_writer import ModelBuilder
    mb = ModelBuilder()
    x = mb.tensor("x", (2, 4), "int8", scale=0.05, zero_point=0)
    a = mb.const("axis", np.array([axis], dtype=np.int32))
    e = mb.tensor("e", (2, 4, 1), "int8", scale=0.05, zero_point=0)
    mb.op("EXPAND_DIMS", [x, a], [e])
    y = mb.tensor("y", (2, 4, 1), "int8", scale=0.05, zero_point=0)
    mb.op("RELU", [e], [y])
    model = tmp_path / "e.tflite"
    model.write_bytes(mb.finish([x], [y]))
    code, out, err = run_cli(["compile", model, "-o", tmp_path / "out"], capsys)
    assert code == 2 and f"EXPAND_DIMS at op 0: the axis must be a constant inside" in err, err


def test_unsupported_tensor_type_is_named_in_words(tmp_path, capsys):
    """A tensor of a type edgecc lacks: its index, name, type name and the op using it, not a
    TensorType number (a user trial saw `tensor 24 has unsupported type 15`)."""
    from edgecc.tflite_writer import ModelBuilder
    mb = ModelBuilder()
    x = mb.tensor("x", (4,), "int32")
    y = mb.tensor("idx", (4,), "float64")
    z = mb.tensor("z", (4,), "float16")
    mb.op("CAST", [x], [y])
    mb.op("CAST", [y], [z])
    model = tmp_path / "t.tflite"
    model.write_bytes(mb.finish([x], [z]))
    code, out, err = run_cli(["compile", model, "-o", tmp_path / "out"], capsys)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "tensor 1 ('idx') has type FLOAT64, used by op 0 (CAST), which edgecc does not " \
           "support (it supports FLOAT32, INT32, UINT8, INT64, BOOL, INT16, INT8, UINT64, " \
           "UINT32, UINT16); 1 more" in err, err
