"""`edgecc report`: one well-formed, self-contained, deterministic HTML page; model strings escaped;
the board budget figures are budget.budget_model's; errors are one line with exit 2."""
from __future__ import annotations

from html.parser import HTMLParser

import numpy as np
import pytest

from benchmarks.metrics import count_macs
from conftest import shared_model
from edgecc.build.boards import load_board
from edgecc.budget import budget_model
from edgecc.cli import main
from edgecc.compiler import load_model
from edgecc.report import LABEL_CHARS
from edgecc.tflite_writer import ModelBuilder

VOID = {"meta", "br", "hr", "img", "input", "link", "wbr"}


class Tree(HTMLParser):
    """Checks that every element closes in order; records tags, ids, attributes and text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: list[str] = []
        self.ids: set[str] = set()
        self.attrs: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs
        self.ids |= {v for k, v in attrs if k == "id" and v}
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):  # <line .../> inside the SVG
        self.tags.append(tag)
        self.attrs += attrs

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(html: str) -> Tree:
    t = Tree()
    t.feed(html)
    t.close()
    assert t.errors == [] and t.stack == [], (t.errors[:5], t.stack)
    return t


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_report_on_shared_model(tmp_path, capsys):
    model = shared_model("kws_ref_model")
    out = tmp_path / "report.html"
    code, so, err = run(capsys, "report", str(model), "--target", "cortex-m4", "-o", str(out))
    assert code == 0 and err == "" and str(out) in so
    html = out.read_text()
    t = parse(html)
    assert html.startswith("<!DOCTYPE html>") and t.tags[0] == "html"
    assert {"summary", "passes", "layers", "memory", "budget"} <= t.ids
    assert "svg" in t.tags and "rect" in t.tags  # the plan picture, inline
    assert "style" in t.tags
    # Self-contained: no script, no external stylesheet, image or link.
    assert not {"script", "link", "img", "iframe", "object"} & set(t.tags)
    for k, v in t.attrs:
        assert k != "src" and not (k == "href" and v and not v.startswith("#")), (k, v)
    text = "".join(t.text)
    assert "kws_ref_model.tflite" in text and "int8[1, 49, 10, 1]" in text  # input shape
    assert "scale 0.584703, zp 83" in text                                    # input quant
    assert "dsp/conv_2d_6px.c.j2" in text and "Cortex-M DSP" in text         # kernel + reason
    assert "c/softmax.c.j2" in text
    assert f"{count_macs(load_model(model)):,}" in text                      # total MACs
    assert "No board given" in text
    # Deterministic: the same bytes from a second run (another file name, same content).
    out2 = tmp_path / "again.html"
    assert run(capsys, "report", str(model), "--target", "cortex-m4", "-o", str(out2))[0] == 0
    assert out2.read_bytes() == out.read_bytes()


def test_report_budget_is_budget_models(tmp_path, capsys):
    model = shared_model("hello_world_int8")
    out = tmp_path / "r.html"
    code, _, err = run(capsys, "report", str(model), "--board", "nrf52840-dk", "-o", str(out))
    assert code == 0 and err == ""
    text = "".join(parse(out.read_text()).text)
    fp = budget_model(model, load_board("nrf52840-dk")).footprint
    assert f"Fits nrf52840-dk: flash {fp.flash:,} B" in text
    assert f"RAM {fp.ram:,} B" in text
    assert f"{100.0 * fp.flash / (1 << 20):.1f}%" in text  # share of the board's 1 MiB
    assert "target cortex-m4, board nrf52840-dk" in text


HOSTILE = '<script>alert("x")</script>&amp;<marquee>'


def hostile_model() -> bytes:
    rng = np.random.default_rng(5)
    mb = ModelBuilder()
    x = mb.tensor(HOSTILE, (1, 8), "int8", scale=0.1, zero_point=3)
    w = mb.const("w" + HOSTILE, rng.integers(-127, 128, (4, 8)).astype(np.int8), scale=0.01)
    b = mb.const("b", rng.integers(-300, 300, (4,)).astype(np.int32), scale=1e-3)
    y = mb.tensor(HOSTILE * 4 + "\n<svg onload=alert(1)>", (1, 4), "int8", scale=0.2,
                  zero_point=-1)
    mb.op("FULLY_CONNECTED", [x, w, b], [y], {"fused_activation_function": 0}, version=4)
    return mb.finish([x], [y])


def test_report_escapes_model_strings(tmp_path, capsys):
    p = tmp_path / "<evil>&.tflite"
    p.write_bytes(hostile_model())
    out = tmp_path / "r.html"
    assert run(capsys, "report", str(p), "-o", str(out))[0] == 0
    html = out.read_text()
    t = parse(html)
    assert not {"script", "marquee"} & set(t.tags)     # no markup from the model got through
    assert t.tags.count("svg") == 1                      # only the plan's own picture
    assert "<script" not in html and "onload" not in [k for k, _ in t.attrs]
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;amp;&lt;marquee&gt;" in html
    text = "".join(t.text)
    assert HOSTILE in text and "<evil>&.tflite" in text  # shown as text, exactly
    # The long label is cut in its cell and whole in the title attribute, escaped there too.
    long = HOSTILE * 4 + "\n<svg onload=alert(1)>"
    # (control characters, the newline too, become spaces: edgecc.names.visible_text)
    assert len(long) > LABEL_CHARS and ("title", long.replace("\n", " ")) in t.attrs


@pytest.mark.parametrize("argv", [
    ["report", "/no/such/model.tflite", "-o", "{tmp}/r.html"],
    ["report", "README.md", "-o", "{tmp}/r.html"],
    ["report", "{model}", "-o", "{tmp}/no/such/dir/r.html"],
    ["report", "{model}", "--board", "no-such-board", "-o", "{tmp}/r.html"],
    ["report", "{model}", "--board", "nrf52840-dk", "--target", "host", "-o", "{tmp}/r.html"],
])
def test_report_errors_are_one_line_exit_2(argv, tmp_path, capsys):
    model = shared_model("hello_world_int8")
    argv = [a.format(tmp=tmp_path, model=model) for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1, (out, err)
    assert err.startswith("edgecc: error: ") and "Traceback" not in err
    assert not (tmp_path / "r.html").exists()


def test_report_without_the_boards_compiler_says_so(tmp_path, capsys, monkeypatch):
    """The page is still written (everything but the budget); the budget section says why."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # a real PATH with no compilers
    out = tmp_path / "r.html"
    code, _, err = run(capsys, "report", str(shared_model("hello_world_int8")), "--board",
                       "nrf52840-dk", "-o", str(out))
    assert code == 0 and err == ""
    text = "".join(parse(out.read_text()).text)
    assert "Not measured: arm-none-eabi-gcc is not installed" in text
    assert "dsp/fully_connected_4u" in text or "c/fully_connected.c.j2" in text  # any DSP FC form
