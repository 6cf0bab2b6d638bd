"""Hostile use, class by class (issue 17): each test enumerates the inputs of one class; every one ends in a
located error or the right number, never a traceback, a hang or a file changed that should not change."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from helpers import ROOT, load_tool

import archcost
from archcost.compiler.cli import main
from archcost.dsl.errors import ArchError

SPEC = load_tool("fuzz").TINY  # a small model with a comment: the fuzzer's own seed
STATELESS = """use std.embedding
model "Stateless" {
  d = 64
  vocab = 100
  embedding(vocab, d)
  lm_head(d, vocab)
}
"""


def run(folder: Path, *argv: str, capsys) -> tuple[int, str]:
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        code = main(list(argv))
    except SystemExit as stop:  # argparse's usage error: clean, status 2
        code = stop.code
    finally:
        os.chdir(cwd)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "bug in archcost" not in err, err
    return code, err


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "s.arch").write_text(SPEC)
    (tmp_path / "c.json").write_text((ROOT / "tests" / "configs" / "qwen3-8b.json").read_text())
    return tmp_path


# 1. Data loss in writes ------------------------------------------------------------------------------------

SEPARATORS = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\r"]


@pytest.mark.parametrize("separator", SEPARATORS, ids=[f"U+{ord(c):04X}" for c in SEPARATORS])
def test_fmt_keeps_every_comment_word(folder, separator, capsys):
    text = SPEC.replace("# a comment", f"# keep{separator}TAILWORD").replace('"Tiny"', f'"Ti{separator}ny"')
    (folder / "s.arch").write_text(text, newline="")
    for _ in range(2):  # twice: a comment must not drift a statement further each run
        assert run(folder, "fmt", "--write", "s.arch", capsys=capsys)[0] == 0
    after = (folder / "s.arch").read_bytes().decode()
    assert "TAILWORD" in after and after.index("TAILWORD") < after.index("embedding(")


def _targets(folder: Path) -> dict[str, str]:
    os.mkfifo(folder / "fifo")
    (folder / "target.csv").write_text("old")
    os.symlink("target.csv", folder / "link.csv")
    (folder / "ro.csv").write_text("old")
    os.chmod(folder / "ro.csv", 0o444)
    (folder / "dir").mkdir()
    targets = {"fifo": "fifo", "readonly": "ro.csv", "folder": "dir", "missing": "nowhere/x.csv", "input": "s.arch"}
    try:
        os.mknod(folder / "dev", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        targets["device"] = "dev"
    except OSError:
        pass  # not root: no device node to aim at
    return targets


WRITERS = [("sweep", "s.arch", "-o"), ("diagram", "s.arch", "-o"), ("plot", "state", "s.arch", "-o"),
           ("import", "c.json", "-o")]


@pytest.mark.parametrize("writer", WRITERS, ids=[w[0] for w in WRITERS])
def test_outputs_are_refused_or_written_as_files(folder, writer, capsys):
    targets = _targets(folder)
    kinds = {p.name: stat.S_IFMT(os.lstat(p).st_mode) for p in folder.iterdir()}
    for name, target in targets.items():
        if writer[0] == "plot" and name in ("readonly", "input"):
            continue  # plot refuses a suffix other than .png and .svg first
        aimed = writer[1] if name == "input" else target  # the command's own input: s.arch or c.json
        code, err = run(folder, *writer, aimed, capsys=capsys)
        assert code == 2 and ("E108" in err or "E109" in err), (name, err)
    assert {p.name: stat.S_IFMT(os.lstat(p).st_mode) for p in folder.iterdir()} == kinds
    assert (folder / "ro.csv").read_text() == "old" and (folder / "s.arch").read_text() == SPEC
    assert run(folder, "sweep", "s.arch", "-o", "link.csv", capsys=capsys)[0] == 0
    assert (folder / "link.csv").is_symlink() and (folder / "target.csv").read_text().startswith("B,S,P,G")


def test_rewrites_keep_mode_and_hard_links(folder, capsys):
    messy = SPEC.replace("  d = 64", "  d   =   64")
    (folder / "s.arch").write_text(messy)
    os.chmod(folder / "s.arch", 0o640)
    os.link(folder / "s.arch", folder / "twin.arch")
    assert run(folder, "fmt", "--write", "s.arch", capsys=capsys)[0] == 0
    assert stat.S_IMODE(os.stat(folder / "s.arch").st_mode) == 0o640
    assert (folder / "twin.arch").read_text() == (folder / "s.arch").read_text() == SPEC


# 2. Silently wrong numbers ----------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["sweep", "s.arch", "--B", "0"], ["sweep", "s.arch", "--S", "-100"], ["sweep", "s.arch", "--P", "0:4"],
    ["sweep", "s.arch", "--B", "5:1"], ["sweep", "s.arch", "--S", "0:10:-1"], ["sweep", "s.arch", "--S", "1:2:3:4"],
    ["capacity", "s.arch", "--device", "rtx-4090", "--context", "64", "--reserve", "-1"],
    ["capacity", "s.arch", "--device", "rtx-4090", "--context", "64", "--reserve", "1.5"],
    ["capacity", "s.arch", "--device", "rtx-4090", "--context", "64", "--batch", "-5"],
    ["speculate", "--k", "4", "--alpha", "1.5"], ["speculate", "--k", "-3", "--alpha", "0.5"],
    ["speculate", "--k", "4", "--alpha", "0.5", "--round-ms", "-30", "--decode-ms", "20"],
    ["state", "s.arch", "--H", "-5"], ["eval", "s.arch", "--phase", "prefill", "--B", "0"],
], ids=lambda argv: " ".join(argv[:1] + argv[2:]))
def test_out_of_range_flags_are_refused(folder, argv, capsys):
    assert run(folder, *argv, capsys=capsys)[0] == 2


@pytest.mark.parametrize("line", [
    "  experts routed: d -> 32, count = 4, top = 8",              # more experts per token than experts
    "  elementwise bad: width = d, flops = -1000",                # negative FLOPs
    "  elementwise bad: width = d, params = -100",                 # negative parameters
    "  linear bad: d -> d, rows = -m",                             # negative rows
    "  attend: heads = 5, qk = 16, v = 16, kv_heads = 2",          # heads in unequal groups
], ids=["top>count", "flops<0", "params<0", "rows<0", "groups"])
def test_impossible_values_are_refused_where_written(folder, line, capsys):
    (folder / "s.arch").write_text(SPEC.replace("  rmsnorm(d) as final_norm", line + "\n  rmsnorm(d) as final_norm"))
    code, err = run(folder, "check", "s.arch", capsys=capsys)
    assert code == 2 and "s.arch:" in err, err


@pytest.mark.parametrize("definition", ["bits = -8", "bits = B", "bits = 0", "bits = 4, block = 0"])
def test_impossible_formats_are_refused(folder, definition, capsys):
    (folder / "s.arch").write_text(f"format odd {{ {definition} }}\n" + SPEC)
    assert run(folder, "check", "s.arch", capsys=capsys)[0] == 2
    (folder / "s.arch").write_text("format bf16 { bits = 3 }\n" + SPEC)  # the stdlib's own, redefined
    assert "E212" in run(folder, "check", "s.arch", capsys=capsys)[1]


def test_numbers_agree_between_file_and_text_and_stay_in_bounds(folder, capsys):
    cr = SPEC.replace("# a comment", "# a comment\r  d = 4096")  # a lone CR is not a line end
    (folder / "s.arch").write_text(cr, newline="")
    from_file = archcost.load(str(folder / "s.arch")).evaluate("prefill", P=16)["params"]
    assert from_file == archcost.load(cr).evaluate("prefill", P=16)["params"]
    stateless = folder / "n.arch"
    stateless.write_text(STATELESS)
    assert run(folder, "capacity", "n.arch", "--device", "rtx-4090", "--context", "64", capsys=capsys)[0] == 0
    top = SPEC.replace("  rmsnorm(d) as final_norm", "  cache c: per_token, width = 64\n"
                       "  attend: heads = 4, qk = 16, v = 16, over = top(10^12)\n  rmsnorm(d) as final_norm")
    decode = archcost.load(top).evaluate("decode", S=100)["context_flops"]
    # top(10^12) of 101 positions reads the 101 there are: 2·heads·(qk + v) per pair
    assert decode - archcost.load(SPEC).evaluate("decode", S=100)["context_flops"] == 2 * 4 * 32 * 101


# 3. Internal errors from ordinary inputs ----------------------------------------------------------------------

@pytest.mark.parametrize(
    "argv",
    [
        ["capacity", "s.arch", "--device", "rtx-4090", "--context", "64", "--workspace", "inf"],
        ["capacity", "s.arch", "--device", "rtx-4090", "--context", "64", "--reserve", "nan"],
        ["request", "s.arch", "--turns", "512"],
        ["request", "s.arch", "--turns", "a:b"],
        ["request", "s.arch", "--turns", "1:2:3"],
        ["request", "s.arch", "--turns", "512:128,"],
        ["eval", "s.arch", "--phase", "decode", "--S", "9" * 400],
        ["plot", "state", "s.arch", "-o", "p.svg", "--from", "0"],
        ["sweep", "s.arch", "-o", "dir"],
        ["sweep", "s.arch", "-o", "missing/x.csv"],
        ["check", "/dev/zero"],
        ["import", "big.json"],
        ["import", "surrogate.json", "-o", "x.arch"],
    ],
    ids=lambda argv: " ".join(argv[:1] + argv[2:])[:40],
)
def test_ordinary_mistakes_are_user_errors(folder, argv, capsys):
    (folder / "dir").mkdir()
    (folder / "big.json").write_text('{"model_type": "llama", "hidden_size": ' + "9" * 5000 + "}")
    config = json.loads((folder / "c.json").read_text())
    (folder / "surrogate.json").write_text(json.dumps(config).replace('"model_type"', '"_name_or_path": "a\\ud800b", '
                                                                      '"model_type"'))
    code, _ = run(folder, *argv, capsys=capsys)
    assert code in (0, 2)


@pytest.mark.parametrize("command", [["eval", "n.arch", "--phase", "request", "--G", "4"],
                                     ["roofline", "n.arch", "--device", "h100-sxm"],
                                     ["compare", "--table", "chapter", "n.arch"],
                                     ["capacity", "n.arch", "--device", "rtx-4090", "--context", "64"]])
def test_models_without_state_or_parameters_evaluate(folder, command, capsys):
    (folder / "n.arch").write_text(STATELESS)
    assert run(folder, *command, capsys=capsys)[0] == 0


# 4. Hangs: every refusal comes before the work ---------------------------------------------------------------

def _nested(levels: int) -> str:
    blocks = [f"block b{i}(d) {{\n  b{i + 1}(d)\n  b{i + 1}(d)\n}}\n" for i in range(levels)]
    leaf = f"block b{levels}(d) {{\n  elementwise e: width = d\n}}\n"
    return "".join(blocks) + leaf + 'model "N" {\n  lookup t: 10 -> 8\n  b0(8)\n}\n'


@pytest.mark.parametrize("case", ["nested", "one_line", "grid", "fifo", "formula"])
def test_large_work_is_refused_before_it_starts(folder, case, capsys):
    os.mkfifo(folder / "fifo.arch")
    (folder / "n.arch").write_text(_nested(20))
    (folder / "line.arch").write_text('model "L" { ' + "a = 1 " * 600_000 + "}")
    argv = {"nested": ["check", "n.arch"], "one_line": ["check", "line.arch"], "fifo": ["check", "fifo.arch"],
            "grid": ["sweep", "s.arch", "--B", "1:10000", "--S", "0:10000"],
            "formula": ["formula", str(ROOT / "specs" / "deepseek-v4-flash.arch"), "--phase", "request"]}[case]
    assert run(folder, *argv, capsys=capsys)[0] == 2


def test_a_long_request_is_summed_in_closed_form_not_refused(folder, capsys):
    """10^8 decodes of DeepSeek V4-Flash (floors and windows in every step) are summed per run and residue
    class (compiler/numbers/sums.py), no longer refused as 10^8 steps of work."""
    code = main(["eval", str(ROOT / "specs" / "deepseek-v4-flash.arch"), "--phase", "request", "--G", "100000000",
                 "--json", "--no-cache"])
    assert code == 0 and json.loads(capsys.readouterr().out)["decode_steps"] == 99_999_999


# 5. Name resolution ----------------------------------------------------------------------------------------

def test_a_local_std_folder_never_replaces_the_stdlib(folder, capsys):
    local = folder / "std" / "attention"
    local.mkdir(parents=True)
    (local / "gqa.arch").write_text("block other(d) {\n  elementwise e: width = d\n}\n")
    (folder / "uses.arch").write_text('use "std/attention/gqa.arch"\n' + SPEC)
    expected = archcost.load(SPEC).evaluate("prefill", P=16)["params"]
    for cwd in (folder, folder.parent):
        os.chdir(cwd)
        assert archcost.load(str(folder / "uses.arch")).evaluate("prefill", P=16)["params"] == expected


def test_a_block_two_used_files_define_is_refused(folder, capsys):
    for name in ("a", "b"):
        (folder / f"{name}.arch").write_text("block twin(d) {\n  elementwise e: width = d\n}\n")
    (folder / "t.arch").write_text('use "a.arch"\nuse "b.arch"\nmodel "T" {\n  lookup t: 10 -> 8\n  twin(8)\n}\n')
    assert "E212" in run(folder, "check", "t.arch", capsys=capsys)[1]


# 6. Messages -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "case,needle",
    [
        ("separator", "m.arch:10:3: error[E100]: unexpected `embedding`\n 10 |   embedding(vocab, d)"),
        ("brackets", "ok"),
        ("bom", "ok"),
        ("nul", "\\x00"),
        ("escape", "\\x1b"),
        ("zoo", "E214"),
        ("True", "booleans are written `true`"),
        ("unclosed", "add `}`"),
    ],
)
def test_messages_quote_the_right_text(folder, case, needle, capsys):
    texts = {
        "separator": SPEC.replace("# a comment", "# a\u2028comment").replace(
            "  embedding(vocab, d)", "  bogus here\n  embedding(vocab, d)"
        ),
        "brackets": SPEC.replace("# a comment", "# " + "(" * 300 + ")" * 50),
        "bom": "\ufeff" + SPEC,
        "nul": SPEC.replace("d = 64", "d = 6\x004"),
        "escape": SPEC.replace("d = 64", "d\x1b= 64"),
        "zoo": "format odd { bits = 4, block = 0 }\n" + SPEC,
        "True": SPEC.replace("head_dim = 16)", "head_dim = 16, qk_norm = True)"),
        "unclosed": SPEC.rstrip().removesuffix("}"),
    }
    (folder / "m.arch").write_text(texts[case], newline="")
    code, err = run(folder, "check", "m.arch", capsys=capsys)
    assert (code == 0) if needle == "ok" else (code == 2 and needle in err and "zoo" not in err), err


def test_config_messages_point_at_the_value_used_and_stay_short(folder, capsys):
    text = (folder / "c.json").read_text().replace('"hidden_size": 4096,', '"hidden_size": 4096,\n  "hidden_size": -5,')
    (folder / "d.json").write_text(text)
    code, err = run(folder, "import", "d.json", capsys=capsys)
    assert code == 2 and '"hidden_size": -5' in err
    (folder / "e.json").write_text(
        text.replace('"hidden_size": -5,', f'"hidden_size": {json.dumps(list(range(20000)))},')
    )
    assert max(len(line) for line in run(folder, "import", "e.json", capsys=capsys)[1].splitlines()) < 600


@pytest.mark.parametrize("flags", [["--phase", "decode"], ["--B", "64"], ["--P", "1"], ["--across", "execution"]])
def test_flags_a_table_ignores_are_refused(folder, flags, capsys):
    assert run(folder, "compare", "--table", "chapter", *flags, "s.arch", capsys=capsys)[0] == 2


# 7. The Python API -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda m: m.evaluate("Decode"), lambda m: m.evaluate("dcode"), lambda m: m.evaluate(B="8"),
    lambda m: m.evaluate(B=True), lambda m: m.evaluate(B=1.5), lambda m: m.evaluate(S=None),
    lambda m: m.evaluate(phase=None), lambda m: m.formula("F", phase="Decode"), lambda m: m.formula(keep="d"),
    lambda m: m.formula(keep=[1]), lambda m: m.formula(quantity=5), lambda m: m.compare(5),
    lambda m: m.compare(B="x"), lambda m: m.compare(phase="Decode"), lambda m: m.diagram().save(5),
    lambda m: m.diagram().save("nodir/x.dot"), lambda m: archcost.load(b"spec"), lambda m: archcost.load(None),
    lambda m: archcost.load(SPEC, options=[1]), lambda m: archcost.load(SPEC, logits="every"),
    lambda m: archcost.load(SPEC, routing=None), lambda m: archcost.load(SPEC, name=5),
    lambda m: archcost.load("missing.arch"), lambda m: archcost.load(SPEC.replace("Tiny", "T\ud800")),
])
def test_api_raises_only_arch_error(call):
    with pytest.raises(ArchError):
        call(archcost.load(SPEC))


def test_api_reads_a_file_whose_name_holds_a_brace(tmp_path):
    path = tmp_path / "a{b}.arch"
    path.write_text(SPEC)
    assert archcost.load(str(path)).name == "Tiny"
