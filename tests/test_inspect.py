"""`edgecc inspect`: the JSON contract, --verbose, --dump-ir, errors; and every shared model through
the passes (inspect works; the optimized graph verifies bit-exact against TFLite Micro)."""
import json

import pytest

from conftest import shared_model
from edgecc.cli import main
from edgecc.errors import UnsupportedModel
from edgecc.frontends.tflite import load_tflite
from edgecc.targets import get_target
from edgecc.verify import verify_model
from test_fusion import conv_model
from test_passes import folded_weights_model, keras_reshape_model

SHARED = ["ad01_int8", "hello_world_int8", "keyword_scrambled_8bit", "kws_ref_model",
          "micro_speech_lstm", "micro_speech_quantized", "mlzoo_ds_cnn_s_quantized_int16",
          "person_detect", "pretrainedResnet_quant", "str_ww_ref_model", "trained_lstm_int8",
          "vww_96_int8"]


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_inspect_json_contract(tmp_path, capsys):
    p = tmp_path / "keras.tflite"
    p.write_bytes(keras_reshape_model())
    code, out, err = run_cli(capsys, "inspect", str(p), "--json")
    assert code == 0 and err == ""
    d = json.loads(out)  # exactly one JSON object
    # SHAPE -> STRIDED_SLICE -> PACK is folded at import; import_notes says so
    assert d["ops_before"] == {"FULLY_CONNECTED": 1, "RESHAPE": 1}
    assert d["ops_after"] == {"FULLY_CONNECTED": 1}  # the RESHAPE left is an alias: no code
    assert [s.split(" folded at import")[0] for s in d["import_notes"]] == [
        "op 0 (SHAPE)", "op 1 (STRIDED_SLICE)", "op 2 (PACK)"]
    names = [x["name"] for x in d["passes"]]
    assert names == ["dead_code", "fold", "eliminate", "fuse", "channels", "cleanup", "outputs"]
    for x in d["passes"]:
        assert {"name", "changed", "removed", "added"} <= set(x)
    p.write_bytes(folded_weights_model())  # weights TRANSPOSE(const), bias RESHAPE(const)
    code, out, err = run_cli(capsys, "inspect", str(p), "--json")
    fold = json.loads(out)["passes"][1]
    assert fold["changed"] and sorted(fold["removed"]) == ["0_transpose", "1_reshape"]
    assert all("evaluated at compile time" in a for a in fold["applied"])


def test_inspect_counts_fused_activation_as_one_op(tmp_path, capsys):
    p = tmp_path / "conv_relu6.tflite"
    p.write_bytes(conv_model(pad=[[0, 0], [1, 1], [1, 1], [0, 0]], act="RELU6"))
    code, out, _ = run_cli(capsys, "inspect", str(p), "--json")
    d = json.loads(out)
    assert d["ops_before"] == {"CONV_2D": 1, "PAD": 1, "RELU6": 1}
    assert d["ops_after"] == {"CONV_2D": 1}
    fuse = next(x for x in d["passes"] if x["name"] == "fuse")
    assert len(fuse["applied"]) == 2 and fuse["added"] == ["0_pad+1_conv_2d+2_relu6"]


def test_inspect_human_verbose_and_dump(tmp_path, capsys):
    p = tmp_path / "keras.tflite"
    p.write_bytes(keras_reshape_model())
    dump = tmp_path / "ir"
    code, out, _ = run_cli(capsys, "inspect", str(p), "--verbose", "--dump-ir", str(dump))
    assert code == 0
    assert "2 nodes imported, 2 after passes (1 executed)" in out
    assert "op 1 (STRIDED_SLICE) folded at import: t5 = 1" in out
    assert "(alias, no code)" in out and "scale=0.05 zp=-3" in out
    files = sorted(f.name for f in dump.iterdir())
    assert files == ["00_imported.txt", "01_dead_code.txt", "02_fold.txt", "03_eliminate.txt",
                     "04_fuse.txt", "05_channels.txt", "06_cleanup.txt", "07_outputs.txt"]
    assert "RESHAPE" in (dump / "00_imported.txt").read_text()


@pytest.mark.parametrize("argv", [["inspect", "/no/such/model.tflite"],
                                  ["inspect", "README.md", "--json"]])
def test_inspect_errors_are_one_line_exit_2(argv, capsys):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    # --json: the error also as one JSON object on stdout (docs/design.md), else stdout stays empty
    assert (json.loads(out) == {"error": err[len("edgecc: error: "):].strip()}) if "--json" in argv \
        else out == ""


def test_inspect_dump_ir_into_a_file_is_an_error(tmp_path, capsys):
    p = tmp_path / "keras.tflite"
    p.write_bytes(keras_reshape_model())
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = run_cli(capsys, "inspect", str(p), "--dump-ir", str(blocker / "sub"))
    assert code == 2 and err.startswith("edgecc: error: --dump-ir")


def test_all_shared_models_listed(models_dir):
    assert sorted(p.stem for p in models_dir.glob("*.tflite")) == sorted(SHARED)


def _importable(path) -> bool:
    try:
        load_tflite(path)
        return True
    except UnsupportedModel:  # an op not implemented yet: inspect must say so in one line
        return False


@pytest.mark.parametrize("model", SHARED)
def test_inspect_json_on_shared_models(model, capsys):
    path = shared_model(model)
    code, out, err = run_cli(capsys, "inspect", str(path), "--json")
    if not _importable(path):
        assert code == 2 and err.count("\n") == 1
        return
    assert code == 0
    d = json.loads(out)
    assert d["nodes_after"] <= d["nodes_before"]
    assert sum(d["ops_after"].values()) == d["executed_after"] <= d["executed_before"]
    assert [x["name"] for x in d["passes"]][-1] == "outputs"


@pytest.mark.slow
@pytest.mark.parametrize("model", SHARED)
def test_optimized_shared_models_verify_bit_exact(model):
    path = shared_model(model)
    if not _importable(path):
        pytest.xfail(f"{model}: not importable yet (unsupported op)")
    r = verify_model(path, get_target("host"))
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)


def test_inspect_verbose_names_kernel_and_reason_per_target(tmp_path, capsys):
    p = tmp_path / "conv.tflite"
    p.write_bytes(conv_model(in_shape=(1, 9, 9, 8)))
    code, out, _ = run_cli(capsys, "inspect", str(p), "--verbose", "--target", "cortex-m4")
    assert code == 0
    assert "# kernels for cortex-m4: 1 executed" in out
    line = next(ln for ln in out.splitlines() if "->" in ln and ".c.j2" in ln)
    assert line.strip().startswith("CONV_2D op 0 -> dsp/conv_2d_6px.c.j2 (dsp-")
    assert "Cortex-M DSP" in line  # the lowering's reason, not just the variant
    code, out, _ = run_cli(capsys, "inspect", str(p), "--verbose")  # default: host
    assert "# kernels for host: 1 executed" in out
    assert "CONV_2D op 0 -> c/conv_2d.c.j2 (portable)" in out


def test_inspect_json_kernels_follow_board(tmp_path, capsys):
    p = tmp_path / "conv.tflite"
    p.write_bytes(conv_model(in_shape=(1, 9, 9, 8), act="RELU6"))
    code, out, err = run_cli(capsys, "inspect", str(p), "--json", "--board", "mps3-an547")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert (d["target"], d["board"], d["kernels_error"]) == ("cortex-m55", "mps3-an547", None)
    [k] = d["kernels"]  # CONV_2D with its RELU6 fused: one kernel
    assert set(k) == {"op", "index", "name", "template", "variant", "reason", "scratch",
                      "refused"}
    # the 3x3 ring kernel (16..80 input channels) is tried first and says why not
    assert (k["op"], k["index"]) == ("CONV_2D", 0)
    assert [r["kernel"] for r in k["refused"]] == ["mve-conv-ring"], k["refused"]
    assert k["template"].startswith("mve/") and k["variant"].startswith("mve-") and k["reason"]
    assert isinstance(k["scratch"], int) and k["scratch"] >= 0
    code, out, _ = run_cli(capsys, "inspect", str(p), "--json")
    assert json.loads(out)["kernels"][0]["template"] == "c/conv_2d.c.j2"


def test_inspect_shows_refused_kernels(tmp_path, capsys):
    """Every kernel table entry the chooser tried and refused is listed with its reason
    (edgecc/lower/choose.py): x86's few-input-channel kernel refuses 8 channels, and on the host
    no table is tried."""
    p = tmp_path / "conv.tflite"
    p.write_bytes(conv_model(in_shape=(1, 9, 9, 8), act="RELU6"))
    code, out, _ = run_cli(capsys, "inspect", str(p), "--json", "--target", "x86-avx2")
    [k] = json.loads(out)["kernels"]
    assert k["variant"] == "x86-conv-4px"
    assert k["refused"] == [{"kernel": "x86-conv-first", "why": "8 input channels (above 4)"}]
    code, out, _ = run_cli(capsys, "inspect", str(p), "--verbose", "--target", "x86-avx2")
    assert "      refused x86-conv-first: 8 input channels (above 4)" in out
    code, out, _ = run_cli(capsys, "inspect", str(p), "--json")
    assert json.loads(out)["kernels"][0]["refused"] == []


def test_inspect_target_conflicting_with_board_is_one_line(tmp_path, capsys):
    p = tmp_path / "keras.tflite"
    p.write_bytes(keras_reshape_model())
    code, out, err = run_cli(capsys, "inspect", str(p), "--board", "nrf52840-dk",
                             "--target", "host")
    assert code == 2 and out == "" and err.count("\n") == 1 and "conflicts" in err
