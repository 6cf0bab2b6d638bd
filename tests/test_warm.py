"""The compiled-formula cache (issue 16): a cached `eval`, `compare`, `sweep`, `capacity` or `request` prints
exactly what the compiler prints, imports no sympy, and an entry that is stale, corrupt or forged is never used."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from archcost.compiler.cli import main
from archcost.compiler.cli.cached import served
from archcost.dsl.cachedir import sealed, unsealed

ROOT = Path(__file__).resolve().parents[1]
SPECS = sorted((ROOT / "specs").glob("*.arch"))
SHAPE = ["--B", "3", "--S", "2040", "--P", "9", "--G", "13"]
CHAPTER = [str(ROOT / "specs" / f"{n}.arch") for n in ("deepseek-v4.1-flash", "qwen3-8b", "qwen3.6-35b-a3b",
                                                       "deepseek-v4-flash", "kimi-k3")]


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("ARCHCOST_NO_CACHE", raising=False)
    return tmp_path / "cache" / "archcost" / "forms"


def cold_then_warm(argv: list[str], capsys) -> tuple[str, str]:
    assert main(argv) == 0
    cold = capsys.readouterr().out
    assert served(argv) == 0, "the second run was not served from the cache"
    return cold, capsys.readouterr().out


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
def test_a_cached_eval_prints_the_same_bytes(spec, capsys):
    for phase in ("prefill", "decode", "request"):
        cold, warm = cold_then_warm(["eval", str(spec), "--phase", phase, *SHAPE, "--json"], capsys)
        assert warm == cold, f"{spec.stem} {phase}"


@pytest.mark.parametrize("style", [["--json"], [], ["--format", "markdown"], ["--format", "csv"]])
def test_every_format_of_a_cached_eval_is_the_same(style, capsys):
    for name in ("qwen3-8b", "deepseek-v4.1-flash", "gpt-oss-20b"):
        cold, warm = cold_then_warm(["eval", str(ROOT / "specs" / f"{name}.arch"), "--phase", "request", *SHAPE,
                                     *style], capsys)
        assert warm == cold


@pytest.mark.parametrize("table", ["chapter", "summary"])
def test_a_cached_compare_prints_the_same_bytes(table, capsys):
    cold, warm = cold_then_warm(["compare", "--table", table, *CHAPTER], capsys)
    assert warm == cold and "Table 2-A" in cold if table == "chapter" else warm == cold


def test_the_chapter_tables_read_only_their_quantities_and_print_what_full_reports_print(capsys):
    """Views told what the chapter's tables read build those leaves alone, and print the same bytes as views of
    every quantity; what they cache never answers a command that prints every quantity."""
    from archcost.compiler.cli.common import compile_spec
    from archcost.compiler.cli.evaluate import CHAPTER as TABLES
    from archcost.compiler.numbers.leaves import leaves
    from archcost.compiler.render.chapter import chapter_table, reads_of
    from archcost.compiler.serving.views import CompiledView

    reads = reads_of(TABLES)
    assert {"params_by_component", "selected_expert_bytes", "experts"} <= set(reads)
    assert "flops_by_component" not in reads and "read_bytes" not in reads
    for path in CHAPTER[:2]:
        full, told = CompiledView(compile_spec(path)), CompiledView(compile_spec(path), reads)
        for name in TABLES:
            assert chapter_table(name, [told]).text() == chapter_table(name, [full]).text(), (path, name)
        built = leaves(told.compiled, "decode", reads).leaves
        assert "total:flops_nonmatrix" not in built and len(built) < len(leaves(full.compiled, "decode").leaves)
    assert main(["compare", "--table", "chapter", CHAPTER[1]]) == 0
    capsys.readouterr()
    assert served(["eval", CHAPTER[1], "--phase", "decode"]) is None  # only the tables' quantities are kept
    assert served(["compare", "--table", "prefill", CHAPTER[1]]) == 0  # from the chapter's larger selection
    warm = capsys.readouterr().out
    assert main(["compare", "--table", "prefill", CHAPTER[1], "--no-cache"]) == 0
    assert capsys.readouterr().out == warm


@pytest.mark.parametrize("name,phase", [("qwen3-8b", "decode"), ("deepseek-v4.1-flash", "prefill"),
                                        ("gemma-2-9b", "request")])
def test_a_cached_sweep_writes_the_same_bytes(name, phase, tmp_path, capsys):
    axes = {"decode": [], "prefill": ["--P", "1,7"], "request": ["--P", "1,7", "--G", "1,9"]}[phase]
    argv = ["sweep", str(ROOT / "specs" / f"{name}.arch"), "--phase", phase, "--B", "1,3", "--S", "0:5000:999", *axes]
    cold, warm = cold_then_warm(argv, capsys)
    assert warm == cold and cold.count("\n") == 1 + 2 * 6 * 2 ** (len(axes) // 2)
    for suffix in ("csv", "json"):
        out = tmp_path / f"grid.{suffix}"
        assert main([*argv, "-o", str(out)]) == 0
        first = out.read_bytes()
        out.unlink()
        assert served([*argv, "-o", str(out)]) == 0 and out.read_bytes() == first


@pytest.mark.parametrize("argv", [
    ["capacity", "qwen3-8b", "--device", "rtx-4090", "--context", "8192"],
    ["capacity", "deepseek-v4-flash", "--device", "h100-sxm", "--context", "1048576", "--batch", "4", "--json"],
    ["request", "qwen3-8b", "--S", "1392", "--P", "51", "--G", "128"],
    ["request", "deepseek-v4.1-flash", "--turns", "512:128,64:256", "--json"],
    ["request", "gemma-3-27b", "--S", "9000", "--P", "100", "--G", "5000", "--json"],
], ids=lambda argv: "-".join(argv[:2]))
def test_cached_capacity_and_requests_print_the_same_bytes(argv, capsys):
    argv = [argv[0], str(ROOT / "specs" / f"{argv[1]}.arch"), *argv[2:]]
    cold, warm = cold_then_warm(argv, capsys)
    assert warm == cold


def test_two_imports_of_one_model_stay_told_apart_from_the_cache(tmp_path, capsys):
    for name in ("a.arch", "b.arch"):
        shutil.copy(ROOT / "specs" / "qwen3-8b.arch", tmp_path / name)
    cold, warm = cold_then_warm(["compare", str(tmp_path / "a.arch"), str(tmp_path / "b.arch")], capsys)
    assert warm == cold and f"Qwen3-8B ({tmp_path / 'a.arch'})" in warm


def test_a_warm_eval_imports_neither_sympy_nor_the_compiler(capsys):
    argv = ["eval", str(ROOT / "specs" / "deepseek-v4-flash.arch"), "--phase", "request", "--G", "1000000"]
    assert main(argv) == 0
    cold = capsys.readouterr().out
    script = (
        "import sys\nfrom archcost.compiler.cli.cached import served\nassert served(sys.argv[1:]) == 0\n"
        "print(sorted(m for m in ('sympy', 'networkx', 'lark', 'pydantic') if m in sys.modules), file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, check=True)
    assert done.stdout == cold and done.stderr.strip() == "[]"


def test_a_changed_source_is_compiled_again(tmp_path, capsys):
    spec = tmp_path / "m.arch"
    spec.write_text((ROOT / "specs" / "qwen3-8b.arch").read_text())
    argv = ["eval", str(spec), "--phase", "decode", "--json"]
    cold_then_warm(argv, capsys)
    spec.write_text(spec.read_text().replace("f = 12_288", "f = 12_289"))
    assert served(argv) is None


@pytest.mark.parametrize("damage", ["garbage", "truncated", "code", "foreign"])
def test_a_corrupt_or_forged_entry_is_ignored(damage, cache, capsys):
    """Damage under the entry's own checksum is caught by the checksum; a forgery sealed anew (its checksum
    recomputed, as someone who knows the format would) is caught by the check of every form."""
    argv = ["eval", str(ROOT / "specs" / "qwen3-8b.arch"), "--phase", "prefill", "--P", "8192", "--json"]
    cold, _ = cold_then_warm(argv, capsys)
    (entry,) = cache.glob("*.json")
    text = entry.read_text()
    data = unsealed(text)
    leaves = data["phases"]["prefill"]["leaves"]
    forged = {"garbage": "\x00not json", "truncated": text[: len(text) // 2],
              "code": sealed(json.loads(json.dumps(data).replace(
                  '"leaves": {', '"leaves": {"x": "__import__(\'os\').system(\'false\')", ', 1))),
              "foreign": sealed({**data, "phases": {"prefill": {**data["phases"]["prefill"], "leaves": {
                  **leaves, "total:params": ["exec", 1]}}}})}[damage]
    entry.write_text(forged)
    assert served(argv) is None
    assert main(argv) == 0 and capsys.readouterr().out == cold   # compiled again, and the entry rebuilt
    assert served(argv) == 0 and capsys.readouterr().out == cold


def test_an_entry_with_one_coefficient_changed_is_not_served(cache, capsys):
    """Issue 45: one coefficient of a cached form changed moved context_flops from 1,376,649,216 to 1,376,651,550
    with no notice. The entry's checksum no longer holds: it is compiled again and prints the true figure."""
    argv = ["eval", str(ROOT / "specs" / "qwen3-8b.arch"), "--phase", "decode", "--S", "4096", "--json"]
    cold, _ = cold_then_warm(argv, capsys)
    (entry,) = cache.glob("*.json")
    text = entry.read_text()
    head, _, body = text.partition("\n")
    digits = re.search(r"(?<=[\[,])(\d{3,})(?=[,\]])", body)
    assert digits, "a coefficient to change"
    changed = body[:digits.start()] + str(int(digits.group()) + 1) + body[digits.end():]
    entry.write_text(f"{head}\n{changed}")
    assert served(argv) is None
    assert main(argv) == 0 and capsys.readouterr().out == cold
    assert unsealed(entry.read_text()) is not None   # rebuilt, sealed again


def test_no_cache_keeps_nothing_and_the_variable_turns_it_off(cache, monkeypatch, capsys):
    argv = ["eval", str(ROOT / "specs" / "qwen3-8b.arch"), "--phase", "decode"]
    assert main([*argv, "--no-cache"]) == 0
    assert not list(cache.glob("*.json")) and served(argv) is None
    assert main(argv) == 0 and served(argv) == 0
    monkeypatch.setenv("ARCHCOST_NO_CACHE", "1")
    assert served(argv) is None


def test_a_cold_eval_imports_no_drawing_library():
    """graphviz, matplotlib and numpy belong to the commands that draw or sweep (issue 16's cold path)."""
    script = ("import sys\nfrom archcost.compiler.cli import main\nassert main(sys.argv[1:]) == 0\n"
              "print(sorted(m for m in ('graphviz', 'matplotlib', 'numpy') if m in sys.modules), file=sys.stderr)")
    argv = ["eval", str(ROOT / "specs" / "qwen3-8b.arch"), "--phase", "decode", "--no-cache"]
    done = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, check=True)
    assert done.stderr.strip() == "[]"


def test_a_relative_cache_home_is_ignored(tmp_path, monkeypatch):
    """The XDG Base Directory rule: a relative XDG_CACHE_HOME is not a cache folder (no folder where you stand)."""
    from archcost.dsl.cachedir import cache_folder

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_folder("forms") == tmp_path / "home" / ".cache" / "archcost" / "forms"
    assert not (tmp_path / "relative").exists()


def test_the_api_evaluates_a_cached_spec_without_sympy(tmp_path):
    """`archcost.load(spec).evaluate(...)` in a fresh process reads the formula cache (the same entry the CLI
    writes: its key is data, not flag names) and imports none of sympy, networkx or lark."""
    script = ("import sys, json, archcost\n"
              "m = archcost.load(sys.argv[1]); r = m.evaluate('decode', S=8192)\n"
              "print(json.dumps([r.to_dict(), sorted(k for k in ('sympy', 'networkx', 'lark') if k in sys.modules)]))")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    spec = str(ROOT / "specs" / "qwen3-8b.arch")
    runs = [json.loads(subprocess.run([sys.executable, "-c", script, spec], env=env, capture_output=True, text=True,
                                      check=True).stdout) for _ in range(2)]
    (cold, cold_modules), (warm_data, warm_modules) = runs
    assert "sympy" in cold_modules and warm_modules == []
    assert warm_data == cold == json.loads(subprocess.run(
        [sys.executable, "-m", "archcost.compiler.cli", "eval", spec, "--phase", "decode", "--S", "8192", "--json"],
        env=env, capture_output=True, text=True, check=True).stdout)


def test_the_cache_folder_is_made_private(cache, capsys):
    assert main(["eval", str(ROOT / "specs" / "qwen3-8b.arch"), "--phase", "decode"]) == 0
    for folder in (cache, cache.parent):
        assert folder.stat().st_mode & 0o777 == 0o700, folder
    assert all(entry.stat().st_mode & 0o777 == 0o600 for entry in cache.glob("*.json"))


@pytest.mark.parametrize("how", ["others_write", "another_owner", "link"])
def test_a_cache_folder_others_could_plant_in_is_not_used(how, cache, tmp_path, capsys):
    """A folder another user owns, one that a group or anyone may write, or a symbolic link to elsewhere, is not
    read from or written to: the run compiles, says why once on stderr, and prints the same figures."""
    argv = ["eval", str(ROOT / "specs" / "qwen3-8b.arch"), "--phase", "decode", "--json"]
    cold, _ = cold_then_warm(argv, capsys)
    if how == "others_write":
        cache.chmod(0o777)
    elif how == "another_owner":
        if os.getuid() != 0:
            pytest.skip("only root can give a folder to another user")
        os.chown(cache, 4242, 4242)
    else:
        elsewhere = tmp_path / "elsewhere"
        shutil.copytree(cache, elsewhere)
        shutil.rmtree(cache)
        cache.symlink_to(elsewhere)
    assert served(argv) is None
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out == cold and f"not using the cache folder {cache}" in err
