"""The Python API as a notebook uses it: load, formula, eval, compare, diagram, and the rich reprs
Jupyter calls (`_repr_svg_`, `_repr_latex_`, `_repr_markdown_`), checked to be well formed."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from helpers import ROOT, compiled

import archcost

QWEN = ROOT / "specs" / "qwen3-8b.arch"


@pytest.fixture(scope="module")
def qwen():
    return archcost.load(QWEN)


def test_eval_numbers_are_the_compilers(qwen):
    """Seed 002 §2.1.2: 8,190,735,360 parameters and 133.59 TFLOPs to prefill 8K."""
    result = qwen.evaluate("prefill", P=8192)
    assert result["params"] == 8_190_735_360
    assert round(result["flops_matrix"] / 1e12, 2) == 133.59
    assert result.to_dict() == archcost.load(QWEN.read_text()).evaluate("prefill", P=8192).to_dict()
    assert qwen.evaluate("decode", S=8191, ops=True)["by_op"][0]["op"] == "embedding.table"


def test_markdown_reprs_are_tables(qwen):
    for markdown in (qwen._repr_markdown_(), qwen.evaluate("decode")._repr_markdown_(),
                     qwen.compare(ROOT / "specs" / "llama-3.1-8b.arch")._repr_markdown_()):
        lines = markdown.splitlines()
        header = next(i for i, line in enumerate(lines) if line.startswith("| "))
        assert re.fullmatch(r"\|(---:?\|)+", lines[header + 1])
        widths = {line.count("|") for line in lines[header:] if line.startswith("|")}
        assert len(widths) == 1  # every row has the header's columns


def test_compare_chapter_table(qwen):
    table = qwen.compare(ROOT / "specs" / "qwen3.6-35b-a3b.arch", table="prefill")
    assert [row["model"] for row in table.rows()] == ["Qwen3-8B", "Qwen3.6-35B-A3B"]
    assert table.csv().startswith("model,")


def test_latex_repr_is_well_formed(qwen):
    latex = qwen.formula("F", phase="decode")._repr_latex_()
    assert latex.startswith("$$\\begin{align*}") and latex.endswith("\\end{align*}$$")
    depth = 0
    for char in latex:
        depth += {"{": 1, "}": -1}.get(char, 0)
        assert depth >= 0
    assert depth == 0
    assert "\\mathrm{flops\\_matrix} &= 65536 \\cdot B" in latex
    assert "$$" in qwen.formula()._repr_markdown_()


def test_formula_expressions_keep_symbols():
    kept = archcost.load(QWEN).formula("M", keep=["d"]).expressions()
    assert "d" in {str(s) for s in kept["params"].free_symbols}


def test_svg_repr_is_well_formed_svg(qwen):
    svg = qwen.diagram()._repr_svg_()
    root = ET.fromstring(svg.encode())
    assert root.tag.endswith("svg")
    texts = [t.text for t in root.iter() if t.tag.endswith("text")]
    assert "Qwen3-8B" in texts and "layers ×36" in texts and "attn: gqa" in texts  # the graph, drawn


def test_diagram_saves_like_the_cli(qwen, tmp_path):
    assert qwen.diagram().save(tmp_path / "g.dot").read_text() == qwen.diagram().dot
    assert (qwen.diagram().save(tmp_path / "g.svg")).read_text().lstrip().startswith("<?xml")
    with pytest.raises(archcost.ArchError):
        qwen.diagram().save(tmp_path / "g.pdf")


def test_load_a_config_json():
    model = archcost.load(ROOT / "tests" / "configs" / "qwen3-8b.json", name="Qwen3-8B")
    assert model.name == "Qwen3-8B" and model.evaluate("decode")["params"] == 8_190_735_360


def test_options_and_ledgers():
    expanded = archcost.load(ROOT / "specs" / "deepseek-v3.arch", options={"mla_cache": "expanded"})
    latent = archcost.load(ROOT / "specs" / "deepseek-v3.arch")
    assert expanded.evaluate("decode")["kv_bytes_per_token"] > latent.evaluate("decode")["kv_bytes_per_token"]
    assert archcost.load(QWEN, ledger="kipply").conventions.attention == "half_rectangle"


@pytest.mark.parametrize("source,code", [("no/such/spec.arch", "E101"), ('model "M" { d = }', "E100")])
def test_bad_input_is_an_arch_error(source, code):
    with pytest.raises(archcost.ArchError) as caught:
        archcost.load(source)
    assert caught.value.codes == [code]


def test_readme_example_runs(monkeypatch):
    """The README's Python example, executed as written (from the repository root)."""
    monkeypatch.chdir(ROOT)
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


def test_same_numbers_as_the_pipeline(qwen):
    from archcost.compiler.numbers.evaluate import evaluate
    from archcost.compiler.terms.scenario import Scenario

    assert qwen.evaluate("request", P=512, G=64).to_dict() == \
        evaluate(compiled("qwen3-8b"), "request", Scenario(P=512, G=64)).model_dump(exclude_none=True)


def test_eval_is_the_same_method(qwen):
    """`Model.eval` (the CLI's word) is `Model.evaluate`; the package never calls a builtin eval."""
    assert archcost.Model.eval is archcost.Model.evaluate
    assert qwen.eval("decode").to_dict() == qwen.evaluate("decode").to_dict()


def test_layout_from_the_api():
    """`Model.layout`: one card of a layout, as `archcost layout` prints it; bad input is an ArchError."""
    from archcost.dsl.errors import ArchError

    model = archcost.load(str(ROOT / "specs" / "qwen3-8b.arch"))
    report = model.layout("tp=2", S=1023, device="h100-sxm", link="nvlink4")
    assert report.cards[0].params * 2 == report.whole_params + report.replicated_params
    assert report.times.no_overlap > report.times.full_overlap > 0
    # a fuzzer find (long run, seed 2026): a device or link given as a number was an AttributeError
    # a device alone takes its own link, as the CLI does (issue 47); a link alone is refused
    assert model.layout("tp=2", S=1023, device="h100-sxm").times.full_overlap == report.times.full_overlap
    for bad in (dict(), dict(layout=8), dict(layout="tp=2", link="nvlink4"), dict(layout="tp=3"),
                dict(layout="tp=2", device=20, link="nvlink4"), dict(layout="tp=2", device="h100-sxm", link=3),
                dict(layout="tp=2", device="h100-sxm", link="nvlink4", memory="max")):
        with pytest.raises(ArchError):
            model.layout(**bad)


def test_text_is_spec_text_even_when_it_names_a_file(tmp_path):
    """Issue 45: `load` took text with no newline and no brace as a path; `text=` is always spec text."""
    secret = tmp_path / "secret.arch"
    secret.write_text('model "secret" {\n  d = 8\n  linear a: d -> d\n}\n')
    assert archcost.load(str(secret)).name == "secret"   # a path, as before
    with pytest.raises(archcost.ArchError) as caught:
        archcost.load(text=str(secret))
    assert caught.value.diagnostics[0].code == "E100"
    assert "linear a" not in caught.value.render()   # the file's lines are never shown: it was never read
    for wrong in ({}, {"source": "x", "text": "y"}, {"text": b"model"}):
        with pytest.raises(archcost.ArchError) as caught:
            archcost.load(**wrong)
        assert caught.value.diagnostics[0].code == "E401"  # a bad value, as `checks` says it


def test_the_notebook_example_runs(monkeypatch, capsys):
    """docs/notebook.md's cells, executed in order in one namespace (as a notebook runs them)."""
    pytest.importorskip("pandas")
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    for block in re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "notebook.md").read_text(), re.S):
        exec(compile(block, "docs/notebook.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert "requests of 32K fit on one H100" in out and "TTFT ≤ 500.0 ms" in out


def test_tab_completion_offers_the_api():
    assert {"load", "Model", "Table", "Report", "Sweep"} <= set(dir(archcost))


def test_table_rows_are_numbers_with_units_in_the_header(qwen):
    """`pandas.DataFrame(table.rows())` was a frame of text ('19,793.63'): now of numbers."""
    row = qwen.compare(P=8192).rows()[0]
    assert row["model"] == "Qwen3-8B" and isinstance(row["context (GFLOPs)"], float)
    assert row["context (GFLOPs)"] == pytest.approx(19793.63)


def test_a_sweep_is_the_cli_sweeps_columns(qwen):
    from archcost.compiler.numbers.evaluate import evaluate
    from archcost.compiler.terms.scenario import Scenario

    grid = qwen.sweep("prefill", B=[1, 4], P=range(1024, 4097, 1024))
    assert len(grid) == 8 and list(grid.names[:4]) == ["B", "S", "P", "G"]
    exact = evaluate(compiled("qwen3-8b"), "prefill", Scenario(B=4, P=4096))
    assert grid["flops_matrix"][-1] == pytest.approx(exact.flops_matrix, rel=1e-12)
    with pytest.raises(archcost.ArchError):
        qwen.sweep("decode", P=[2])


def test_the_questions_answer_as_the_commands_do(qwen, capsys):
    from archcost.compiler.cli import main

    answer = qwen.capacity("h100-sxm", context=32768)
    assert main(["capacity", str(ROOT / "specs" / "qwen3-8b.arch"), "--device", "h100-sxm", "--context",
                 "32768"]) == 0
    assert str(answer) == capsys.readouterr().out
    assert answer["max_batch"] == answer.max_batch > 0
    step = qwen.train("tp=8", seq=4096, global_batch=8, device="h100-sxm")
    assert repr(step).startswith("<archcost.Report: Qwen3-8B training") and "expected step" in str(step)
    with pytest.raises(archcost.ArchError):
        qwen.layouts("8xh100-sxm", isl=1024, ttft=0.5)
