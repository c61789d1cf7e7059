"""SUPPORTED_OPS.md and `edgecc ops` come from the op registry and stay current."""
import json
import subprocess
import sys

from conftest import REPO
from edgecc.cli import main
from edgecc.opsdoc import TFLM_BUILTIN_OPS, as_markdown, op_rows


def test_supported_ops_md_is_current():
    text = (REPO / "SUPPORTED_OPS.md").read_text()
    assert text == as_markdown(), "SUPPORTED_OPS.md is stale: run python3 scripts/gen_supported_ops.py"


def test_check_script_agrees():
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "gen_supported_ops.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_op_documents_its_constraints():
    for row in op_rows():
        assert row.dtypes, row.op
        assert all(c.strip() for c in row.constraints), row.op


def test_ops_cli_json(capsys):
    assert main(["ops", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    names = [o["op"] for o in data["ops"]]
    assert data["count"] == len(names) and names == sorted(names)
    assert "SUB" in names and "SUB" not in data["missing_tflm_ops"]
    assert set(data["missing_tflm_ops"]) <= set(TFLM_BUILTIN_OPS)


def test_ops_cli_text(capsys):
    assert main(["ops"]) == 0
    out = capsys.readouterr().out
    assert "SUB" in out and "ops;" in out
