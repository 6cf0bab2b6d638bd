"""Mutation fuzzing: specs and stdlib blocks with tokens deleted, doubled, swapped or replaced, or
(`--target configs`) Hugging Face config.json files with fields replaced, dropped or invented.

The only exception allowed out of the public API is the DSL error (ArchError); an imported config is
refused at a line of the config, or gives a spec that compiles and evaluates. Run it for as long as
you like; inputs that escaped, and a sample of those that reached evaluation, land in tests/fuzz_corpus/:

    .venv/bin/python tools/fuzz.py --minutes 10 [--target specs|configs|flags|api|files|all] [--seed 1] [--workers 2]

`flags` runs the CLI with odd flag values, `api` calls the Python API with odd argument types, `files` aims
every writer at a symlink, a read-only file, a FIFO, a device node (mknod, in a temporary folder), a folder,
a missing folder and the command's own input. `server` sends the playground's API odd requests (wrong types,
paths as text, deep bodies), `cache` damages the formula and device caches between a cold and a warm run (and
plants pickles), `signals` stops writers with SIGINT or SIGTERM at random moments.
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing
import random
import re
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fuzz_corpus"
TOKEN = re.compile(r'"[^"\n]*"|#[^\n]*|[A-Za-z_][A-Za-z0-9_]*|\d[\d_]*(?:\.\d+)?|->|//|==|!=|\S')
WEIRD = ["0", "-1", "-0", "1.5", "0.5", "10^40", "10^12", "9" * 45, "2^300", "x", "m", "B", "H", "N_pair",
         "true", "false", "(", ")", "{", "}", ",", ":", "=", "->", "repeat", "loop", "select", "replay", "option",
         "floor(0)", "min()", "window(0)", "top(512, 0)", "1 / 0", "use", "model", "block", "from", "on"]


@functools.cache  # a few seconds of probe compiles; a campaign's forked workers inherit them, read only
def seeds() -> tuple[tuple[str, str], ...]:
    """(name, text) of every spec, and of every stdlib block wrapped in a model that calls it."""
    from archcost.compiler.compilation import compile_text, probe_that_compiles
    from archcost.dsl.parser import parse

    found = [(p.name, p.read_text()) for p in sorted((ROOT / "specs").glob("*.arch"))]
    for path in sorted((ROOT / "stdlib").rglob("*.arch")):
        text = path.read_text()
        for block in parse(text).blocks:
            probe = probe_that_compiles(block, lambda probe, name, text=text: compile_text(
                text + "\n" + probe, name=name, base=ROOT / "specs"))
            found.append((f"{path.name}:{block.name}", text + "\n" + probe))
    return tuple(found)


NUMBER = re.compile(r"\d[\d_]*(?:\.\d+)?")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
STRUCTURE = {"model", "block", "use", "repeat", "loop", "select", "replay", "option", "if", "else", "as", "component",
             "precision", "format", "device", "from", "on"}  # renaming these only ever breaks the syntax
ODD_NUMBERS = ["0", "-1", "-0", "1.5", "0.5", "1", "7", "10^40", "10^12", "9" * 45, "2^300", "(1 / 3)",
               "x", "B", "S", "H", "true"]


def mutate(text: str, rng: random.Random) -> str:
    """One to three edits at token boundaries. Most mutants get only edits that tend to keep the
    syntax (a number or a name replaced by another), so the compiler's later stages see hostile
    values; the rest get token deletions, duplications and swaps as well, mostly syntax errors."""
    keep_syntax = rng.random() < 0.6
    for _ in range(rng.randint(1, 3)):
        spans = [m.span() for m in TOKEN.finditer(text)]
        if not spans:
            return rng.choice(WEIRD)
        tokens = [text[a:b] for a, b in spans]
        numbers = [span for span, token in zip(spans, tokens) if NUMBER.fullmatch(token)]
        names = [span for span, token in zip(spans, tokens) if NAME.fullmatch(token) and token not in STRUCTURE]
        action = rng.random() * (0.5 if keep_syntax else 1.0)
        if action < 0.3 and numbers:
            start, end = rng.choice(numbers)
            text = text[:start] + rng.choice(ODD_NUMBERS) + text[end:]
        elif action < 0.5 and names:
            start, end = rng.choice(names)
            other = text[slice(*rng.choice(names))]
            text = text[:start] + (other if rng.random() < 0.8 else rng.choice(ODD_NUMBERS)) + text[end:]
        else:
            text = _break(text, spans, rng)
    return text


def _break(text: str, spans: list[tuple[int, int]], rng: random.Random) -> str:
    """Delete, duplicate, swap or replace one token: mostly syntax errors, some near misses."""
    start, end = rng.choice(spans)
    token = text[start:end]
    action = rng.randrange(4)
    if action == 0:
        return text[:start] + text[end:]
    if action == 1:
        return text[:start] + token + " " + token + text[end:]
    if action == 2:
        others = [s for s in spans if s[0] > end][:5]
        if others:
            o_start, o_end = rng.choice(others)
            return text[:start] + text[o_start:o_end] + text[end:o_start] + token + text[o_end:]
    return text[:start] + rng.choice(WEIRD) + text[end:]


ACCEPTED = "accepted"


def run_one(text: str) -> str | None:
    """None when the input is rejected with an ArchError, ACCEPTED when it compiles and evaluates,
    else the traceback of an escape."""
    from archcost.compiler.compilation import compile_text
    from archcost.compiler.numbers.evaluate import by_op, evaluate
    from archcost.compiler.render import dot, formula, listing
    from archcost.compiler.serving.state import profile
    from archcost.compiler.terms.scenario import Scenario
    from archcost.dsl.errors import ArchError

    try:
        model = compile_text(text, name="<fuzz>", base=ROOT / "specs")
        evaluate(model, "decode", Scenario(B=2, S=100))
        evaluate(model, "prefill", Scenario(P=3))
        evaluate(model, "request", Scenario(P=5, G=3))
        by_op(model, "decode", Scenario(S=7))
        profile(model, [64, 1024], budget=2**20)
        dot.to_dot(model)
        listing.graph_listing(model)
        formula.render(model, ["M", "F", "R"], "call")
    except ArchError:
        return None
    except Exception:  # noqa: BLE001 - an escape is exactly what we are looking for
        return traceback.format_exc()
    return ACCEPTED


@functools.cache
def _oracles():
    """tools/oracles.py, loaded beside this file (the tests load this one from its path, not as a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("archcost_oracles", Path(__file__).with_name("oracles.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_numbers(text: str):
    """run_one, then every spec oracle (tools/oracles.py) on a mutant that compiles: (outcome, {oracle:
    failed}); an oracle that fails, or raises, makes the outcome an escape naming it."""
    from archcost.compiler.compilation import compile_text
    from archcost.dsl.errors import ArchError

    oracles = _oracles()
    outcome = run_one(text)
    if outcome != ACCEPTED:
        return outcome, {}
    model = compile_text(text, name="<fuzz>", base=ROOT / "specs")
    checks, failures = {}, []
    for name, oracle in oracles.SPEC_ORACLES.items():
        try:
            found = oracle(model, text)
        except ArchError:
            found = oracles.NOT_APPLICABLE  # a shape this mutant refuses (a layout, a convention)
        except Exception:  # noqa: BLE001 - an oracle that cannot run is as much a find as one that fails
            found = traceback.format_exc()
        if found != oracles.NOT_APPLICABLE:
            checks[name] = found is not None
            if found is not None:
                failures.append(f"invariant {name}: {found}")
    return ("\n".join(failures) if failures else ACCEPTED), checks


def config_seeds() -> list[tuple[str, str]]:
    """(name, text) of the public and the tiny config.json files of tests/configs/."""
    return [(p.name, p.read_text()) for p in sorted((ROOT / "tests" / "configs").rglob("*.json"))
            if not {"specs", "next"} & set(p.relative_to(ROOT / "tests" / "configs").parts)]
    # specs/: types only hand-written specs cover; next/: families the importer does not know yet


ODD_VALUES = [0, -1, 1, 2, 3, 7, 1.5, 0.25, 10**40, 2**62, "", "x", "silu", "full_attention", None, True, False,
              [], {}, [1, 2], ["sliding_attention"], {"quant_method": "fp8"}, {"partial_rotary_factor": 3}]


def mutate_config(text: str, rng: random.Random) -> str:
    """One to three edits of a config: a value replaced by an odd one or another field's, a field
    dropped or invented, a list entry changed; one input in ten is cut or spliced as raw text."""
    if rng.random() < 0.1:
        cut = rng.randrange(len(text) + 1)
        return text[:cut] + rng.choice(["", ",", "}", "[", '"', "1e999", "NaN"]) + text[cut + rng.randrange(3):]
    config = json.loads(text)
    odd = lambda: json.loads(json.dumps(rng.choice(ODD_VALUES)))  # a fresh copy, never shared  # noqa: E731
    for _ in range(rng.randint(1, 3)):
        keys = sorted(config)
        action = rng.random()
        key = rng.choice(keys) if keys else "model_type"
        if action < 0.55:
            config[key] = odd() if rng.random() < 0.7 else json.loads(json.dumps(config.get(rng.choice(keys))))
        elif action < 0.7:
            config.pop(key, None)
        elif action < 0.8:
            config[rng.choice(["sliding_window_pattern", "n_routed_experts", "layer_types", "head_dim",
                               "use_sliding_window", "zz_unknown"])] = odd()
        elif isinstance(config.get(key), list) and config[key]:
            config[key][rng.randrange(len(config[key]))] = odd()
        else:
            config["model_type"] = rng.choice(["llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen3_moe",
                                               "deepseek_v3", "gemma2", "opt", "qwen3_next", "bert"])
    return json.dumps(config, indent=2)


def run_config(text: str) -> str | None:
    """As run_one, for a config.json: refused at a line of the config, or imported into a spec that
    compiles and evaluates; anything else is an escape."""
    from archcost.compiler.compilation import compile_text
    from archcost.compiler.importer import import_config, parse_config
    from archcost.compiler.numbers.evaluate import evaluate
    from archcost.compiler.terms.scenario import Scenario
    from archcost.dsl.errors import ArchError

    try:
        spec = import_config(parse_config(text, "config.json"))
    except ArchError as error:
        if all(d.span is None or d.span.file == "config.json" for d in error.diagnostics):
            return None
        return "refused at a place that is not the config:\n" + error.render()
    except Exception:  # noqa: BLE001
        return traceback.format_exc()
    try:
        model = compile_text(spec, name="<imported>")
        evaluate(model, "decode", Scenario(B=2, S=100))
        evaluate(model, "request", Scenario(P=5, G=3))
        differs = _oracles().import_round_trip(spec)
    except Exception:  # noqa: BLE001 - an imported spec that does not compile is the importer's bug
        return traceback.format_exc() + "\nspec:\n" + spec
    if differs is not None:
        return f"invariant import_round_trip: {differs}\nspec:\n{spec}", {"import_round_trip": True}
    return ACCEPTED, {"import_round_trip": False}


TINY = """use std.embedding
use std.attention.gqa
use std.ffn.swiglu

model "Tiny" {
  d = 64
  vocab = 100
  # a comment
  embedding(vocab, d)
  repeat 2 as layers {
    gqa(d, q_heads = 4, kv_heads = 2, head_dim = 16) as attn
    swiglu(d, f = 128) as ffn
  }
  rmsnorm(d) as final_norm
  lm_head(d, vocab)
}
"""
COMMANDS = [
    ["check"],
    ["formula", "--phase", "request"],
    ["eval", "--phase", "prefill"],
    ["eval", "--phase", "request"],
    ["compare", "--table", "chapter"],
    ["state"],
    ["capacity", "--device", "rtx-4090", "--context", "64"],
    ["roofline", "--device", "h100-sxm"],
    ["request"],
    ["sweep"],
    ["diagram", "-o", "-"],
    ["speculate", "--k", "4", "--alpha", "0.5"],
    ["layout", "--layout", "tp=2"],
    ["layouts", "--devices", "2xh100-sxm", "--context", "64"],
    ["diagram", "-o", "-", "--layout", "tp=2"],
]
FLAGS = ["--B", "--S", "--P", "--G", "--H", "--budget", "--workspace", "--reserve", "--batch", "--alpha", "--k",
         "--turns", "--from", "--to", "--phase", "--option", "--attention", "--keep", "--table", "--across",
         "--round-ms", "--decode-ms", "--context", "--device", "--format", "--weights", "-o", "--layout", "--devices",
         "--link", "--network", "--top", "--plot"]
FLAG_VALUES = [
    "0",
    "-1",
    "1",
    "7",
    "1.5",
    "nan",
    "inf",
    "-inf",
    "1e400",
    "9" * 400,
    "",
    "x",
    "5:1",
    "0:10:-1",
    "1:2:3:4",
    "512:128,",
    "a:b",
    "2^53",
    "9007199254740993",
    "1_000",
    "24GB",
    "1e400GiB",
    "-0",
    "decode",
    "Decode",
    "request",
    "mla_cache=expanded",
    "=x",
    "out.csv",
    "out.json",
    "spec.arch",
    "folder",
    "folder/x.csv",
    "missing/x.svg",
    "fifo",
    "d,vocab",
    "chapter",
    "execution",
    "tp=2",
    "tp=0",
    "ep=3",
    "tp=2,ep=2,pp=2,mb=4",
    "imb=0.5",
    "imb=1e400",
    "dispatch=zz",
    "dispatch=fp8",
    "tp=4,ep=4,node=3,limit=2",
    "cp=2,sp",
    "2xh100-sxm",
    "0xa100",
    "3xrtx-4090",
    "nvlink4",
    "ib_ndr",
    "tp,ep",
    "x.png",
]


def flag_seeds() -> list[tuple[str, str]]:
    return [(" ".join(command), json.dumps(command)) for command in COMMANDS]


def mutate_flags(text: str, rng: random.Random) -> str:
    """A command line: a command, the spec, and one to four flags with odd values."""
    argv = json.loads(text) + ["spec.arch"]
    for _ in range(rng.randint(1, 4)):
        argv += [rng.choice(FLAGS), rng.choice(FLAG_VALUES)]
    return json.dumps(argv)


def _folder_with_inputs() -> Path:
    import os
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="archcost-fuzz-"))
    (folder / "spec.arch").write_text(TINY)
    (folder / "folder").mkdir()
    os.mkfifo(folder / "fifo")
    return folder


def _run_main(argv: list[str], folder: Path, spec_may_change: bool = False) -> str | None:
    """Run the CLI in `folder`; an exit status of 3 (an internal error) or an exception is an escape, and so is
    a changed spec (no command here may write its input, but fmt --write)."""
    import contextlib
    import io
    import os

    from archcost.compiler.cli import main

    before = (folder / "spec.arch").read_bytes()
    cwd = os.getcwd()
    try:
        os.chdir(folder)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
            try:
                code = main(argv)
            except SystemExit as stop:  # argparse refusing a flag: a clean usage error
                code = stop.code
        if code not in (0, 1, 2):
            return f"exit {code}:\n{err.getvalue()}"
        if not spec_may_change and (folder / "spec.arch").read_bytes() != before:
            return "the input spec was changed"
        return None
    except Exception:  # noqa: BLE001
        return traceback.format_exc()
    finally:
        os.chdir(cwd)


def run_flags(text: str) -> str | None:
    import shutil

    folder = _folder_with_inputs()
    try:
        return _run_main(json.loads(text), folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


API_CALLS = ["evaluate", "formula", "compare", "load", "diagram", "layout"]
API_VALUES = [None, 0, -1, 1, 2.0, 1.5, True, "8", "Decode", "decode", "request", "x", b"x", [1], ["d"], "d", {},
              {"mla_cache": 1}, {"x": "y"}, 10**400, float("nan"), "F", ["M", "Q"], "chapter", "summary", "tp=2",
              "tp=2,ep=2,pp=2,mb=3", "tp=0", "imb=1e400", "h100-sxm", "nvlink4", "zz"]


def api_seeds() -> list[tuple[str, str]]:
    return [(call, call) for call in API_CALLS]


def mutate_api(text: str, rng: random.Random) -> str:
    """A call of the Python API with one to three arguments of odd types and values (their index in API_VALUES)."""
    names = {"evaluate": ["phase", "B", "S", "P", "G"], "formula": ["quantity", "phase", "keep"],
             "compare": ["table", "phase", "B", "P"], "load": ["source", "name", "ledger", "logits", "attention",
                                                               "routing", "options"], "diagram": ["path"],
             "layout": ["layout", "phase", "B", "S", "P", "device", "link"]}[text]
    chosen = {rng.choice(names): rng.randrange(len(API_VALUES)) for _ in range(rng.randint(1, 3))}
    return json.dumps([text, chosen])


def run_api(text: str) -> str | None:
    """Only ArchError may leave the API, whatever the arguments."""
    import tempfile

    import archcost
    from archcost.dsl.errors import ArchError

    call, chosen = json.loads(text)
    values = {name: API_VALUES[index] for name, index in chosen.items()}
    try:
        if call == "load":
            archcost.load(values.pop("source", TINY), **values)
            return ACCEPTED
        model = archcost.load(TINY)
        if call == "diagram":
            with tempfile.TemporaryDirectory() as folder:
                path = values.get("path")
                model.diagram().save(Path(folder) / path if isinstance(path, str) else path)
        else:
            getattr(model, call)(**values)
    except ArchError:
        return None
    except Exception:  # noqa: BLE001
        return traceback.format_exc()
    return ACCEPTED


OUTPUTS = ["symlink", "readonly", "fifo", "device", "folder", "spec", "missing/x", "hardlink", "new"]
WRITERS = [["sweep", "spec.arch", "-o"], ["diagram", "spec.arch", "-o"], ["import", "config.json", "-o"],
           ["plot", "state", "spec.arch", "-o"], ["fmt", "--write"]]


def file_seeds() -> list[tuple[str, str]]:
    return [(" ".join(writer), json.dumps(writer)) for writer in WRITERS]


def mutate_files(text: str, rng: random.Random) -> str:
    return json.dumps([json.loads(text), rng.choice(OUTPUTS), rng.choice([".csv", ".json", ".dot", ".svg", ".arch"])])


def run_files(text: str) -> str | None:
    """Writers aimed at hostile targets: the target is written as a regular file or refused; a FIFO, a device,
    a read-only file and the link of a symlink are never replaced, and the spec changes only under fmt."""
    import shutil

    writer, target, suffix = json.loads(text)
    folder = _folder_with_inputs()
    try:
        (folder / "config.json").write_text((ROOT / "tests" / "configs" / "qwen3-8b.json").read_text())
        name = _prepare_target(folder, target, suffix)
        kinds, guarded = _snapshot(folder)
        formats = writer[0] == "fmt"
        # fmt rewrites its input by design; a command that does not read the spec may write over it (or over a
        # hard link to it) when asked to
        may_change = formats or "spec.arch" not in writer
        outcome = _run_main(writer + [name if not formats or name.endswith(".arch") else "spec.arch"], folder,
                            spec_may_change=may_change)
        return outcome or _damaged(folder, kinds, guarded)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _prepare_target(folder: Path, target: str, suffix: str) -> str:
    import os
    import stat

    if target == "symlink":
        (folder / "target").write_text("old")
        os.symlink("target", folder / f"link{suffix}")
        return f"link{suffix}"
    if target == "readonly":
        (folder / "readonly").write_text("old")
        os.chmod(folder / "readonly", 0o444)
        return "readonly"
    if target == "device":
        try:
            os.mknod(folder / "device", 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # like /dev/null, in the temp folder
        except OSError:
            return "fifo"
        return "device"
    if target == "hardlink":
        os.link(folder / "spec.arch", folder / "hard.arch")
        return "hard.arch"
    return {"fifo": "fifo", "folder": "folder", "spec": "spec.arch", "missing/x": f"missing/x{suffix}"}.get(
        target, f"new{suffix}")


def _snapshot(folder: Path) -> tuple[dict[str, int], dict[str, bytes]]:
    import os
    import stat

    kinds = {p.name: stat.S_IFMT(os.lstat(p).st_mode) for p in folder.iterdir()}
    guarded = {name: (folder / name).read_bytes() for name in ("readonly", "target") if (folder / name).exists()}
    return kinds, guarded


def _damaged(folder: Path, kinds: dict[str, int], guarded: dict[str, bytes]) -> str | None:
    """A special file replaced, a link turned into a file, or a read-only file rewritten."""
    import os
    import stat

    for name, kind in kinds.items():
        if not os.path.lexists(folder / name) or stat.S_IFMT(os.lstat(folder / name).st_mode) != kind:
            return f"`{name}` was replaced or removed"
    if "readonly" in guarded and (folder / "readonly").read_bytes() != guarded["readonly"]:
        return "a read-only file was rewritten"
    return None


# ------------------------------------------------------------------------------------ the server's API (issue 45)

SECRET = "the first line of a file the server must never show\n"
METHOD_FIELDS = {"compile": ["spec", "conventions", "scenario"], "evaluate": ["spec", "conventions", "scenario"],
                 "node": ["spec", "node", "scenario"], "formulas": ["spec", "scenario"],
                 "diagram": ["spec", "blocks", "layout"], "layout": ["spec", "degrees", "device", "link", "scenario"],
                 "plots": ["spec", "device"], "compare": ["specs", "table", "scenario"], "import": ["config", "file"]}
REQUEST_VALUES = [None, 0, -1, 5, 2.5, True, "", "x", "/etc/passwd", "SECRET", "../SECRET", "untitled.arch",
                  "specs/qwen3-8b.arch", "h100_sxm", "tp=2", "=2", "tp=1000000000", "decode", "summary", [], [1],
                  {}, {"text": "SECRET"}, {"text": 5}, {"text": "TINY"}, {"text": "TINY", "source": "SECRET"},
                  {"text": "TINY", "source": "untitled.arch"}, {"text": "TINY", "extra": 1}, {"B": "8"},
                  {"B": 10 ** 30}, {"phase": "decode", "S": 4}, {"options": {"a": 1}}, {"ledger": 5},
                  [{"text": "TINY"}], "nested"]


def server_seeds() -> list[tuple[str, str]]:
    return [(method, json.dumps([method, {"spec": {"text": "TINY"}}])) for method in METHOD_FIELDS]


def mutate_server(text: str, rng: random.Random) -> str:
    """A request: the method's fields (and a stranger) set to odd values, and now and then a deep body."""
    method, payload = json.loads(text)
    fields = [*METHOD_FIELDS[method], "stranger"]
    for _ in range(rng.randint(1, 3)):
        payload[rng.choice(fields)] = REQUEST_VALUES[rng.randrange(len(REQUEST_VALUES))]
    return json.dumps([method, payload])


@functools.cache
def _server():
    """A workspace, the server's library and scratch folder, and a secret file: what one worker's requests use."""
    import tempfile

    from archcost.compiler.playground.library import Library
    from archcost.compiler.playground.session import Workspace

    folder = Path(tempfile.mkdtemp(prefix="archcost-fuzz-server-"))
    (folder / "secret.txt").write_text(SECRET)
    return Workspace(), Library.of([]), folder


def _filled(value, secret: str):
    if value == "SECRET":
        return secret
    if value == "../SECRET":
        return "../" + secret
    if value == "TINY":
        return TINY
    if value == "nested":
        return json.loads("[" * 60 + "]" * 60)
    if isinstance(value, dict):
        return {k: _filled(v, secret) for k, v in value.items()}
    if isinstance(value, list):
        return [_filled(v, secret) for v in value]
    return value


def run_server(text: str):
    """A request through the server's own steps (the JSON depth check, names to files, the worker's answer):
    it is answered or refused with a located problem, never an internal error, and no answer shows a line of a
    file the server does not serve. Oracles: `answered` (ok or problem, nothing else) and `no_leak`."""
    from archcost.compiler.playground.app import MAX_JSON_DEPTH, _nesting, _with_files
    from archcost.compiler.playground.worker import METHODS, answer

    workspace, library, folder = _server()
    method, payload = json.loads(text)
    payload = _filled(payload, str(folder / "secret.txt"))
    body = json.dumps(payload).encode()
    try:
        if _nesting(body) > MAX_JSON_DEPTH:
            return None  # refused before json.loads, as the app refuses it (400, E111)
        try:
            payload = _with_files(json.loads(body), library, folder)
        except LookupError:
            return None  # E112: a name the server does not serve
        reply = answer(workspace, method, payload) if method in METHODS else {"problem": "E111"}
    except Exception:  # noqa: BLE001
        return traceback.format_exc()
    shown = json.dumps(reply)
    checks = {"answered": set(reply) not in ({"ok"}, {"problem"}), "no_leak": SECRET.strip() in shown}
    return _judged(checks, f"request {text}: answered {shown[:400]}", ACCEPTED if "ok" in reply else None)


def _judged(checks: dict[str, bool], failure: str, passed: str | None = ACCEPTED):
    """(the outcome, the oracles' verdicts): `failure` when an oracle failed, else `passed`."""
    return (failure if any(checks.values()) else passed), checks


# ------------------------------------------------------------------------ the caches, tampered with (issue 45)

CACHE_DAMAGE = ["digit", "byte", "truncate", "pickle", "swap", "empty", "resealed_code", "others_write", "symlink",
                "foreign_owner", "grammar_pickle", "devices"]
CACHE_COMMANDS = [["eval", "spec.arch", "--phase", "decode", "--S", "100", "--json"],
                  ["eval", "spec.arch", "--phase", "prefill", "--P", "64", "--json"],
                  ["compare", "spec.arch", "--phase", "decode"], ["sweep", "spec.arch", "--B", "1,2", "--S", "0,9"],
                  ["capacity", "spec.arch", "--device", "h100-sxm", "--context", "4096"]]


def cache_seeds() -> list[tuple[str, str]]:
    return [(" ".join(command), json.dumps(command)) for command in CACHE_COMMANDS]


def mutate_cache(text: str, rng: random.Random) -> str:
    return json.dumps([json.loads(text), rng.choice(CACHE_DAMAGE), rng.randrange(10 ** 6)])


def run_cache(text: str):
    """A command run cold, its cache entries damaged one way or another, then run warm: the warm output is the
    cold one byte for byte (a damaged entry is rebuilt, never served), and nothing planted runs. Oracles:
    `same_output` and `nothing_ran`."""
    import contextlib
    import io
    import os
    import pickle
    import shutil
    import tempfile

    from archcost.compiler.cli import main
    from archcost.compiler.cli.cached import served
    from archcost.dsl.cachedir import sealed, unsealed

    argv, damage, where = json.loads(text)
    folder = Path(tempfile.mkdtemp(prefix="archcost-fuzz-cache-"))
    marker = folder / "ran"
    saved = {name: os.environ.get(name) for name in ("XDG_CACHE_HOME", "ARCHCOST_NO_CACHE")}
    cwd = os.getcwd()
    try:
        (folder / "spec.arch").write_text(TINY)
        os.environ["XDG_CACHE_HOME"] = str(folder / "cache")
        os.environ.pop("ARCHCOST_NO_CACHE", None)
        os.chdir(folder)

        def run(warm: bool) -> str:
            with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()):
                code = (served(argv) if warm else None)
                if code is None:
                    code = main(argv)
            return f"{code}\n{out.getvalue()}"

        cold = run(False)
        entries = sorted((folder / "cache" / "archcost").rglob("*.json"))
        top = folder / "cache" / "archcost"

        class Planted:
            def __reduce__(self):
                return (open, (str(marker), "w"))

        if damage in ("others_write", "symlink", "foreign_owner", "grammar_pickle") or not entries:
            if damage == "others_write":
                top.chmod(0o777)
            elif damage == "symlink":
                shutil.move(str(top), str(folder / "elsewhere"))
                top.symlink_to(folder / "elsewhere")
            elif damage == "foreign_owner" and os.getuid() == 0:
                os.chown(top, 4242, 4242)
            (top / "grammar").mkdir(parents=True, exist_ok=True)
            for name in ("grammar.lark", f"grammar-{where:016x}.lark"):
                (top / "grammar" / name).write_bytes(pickle.dumps(Planted()))
        else:
            entry = entries[where % len(entries)]
            if damage == "devices":  # the device sheets' entry, one digit changed
                entry, damage = next((e for e in entries if e.parent.name == "devices"), entry), "digit"
            raw = entry.read_text()
            head, _, body = raw.partition("\n")
            digits = [m.start() for m in re.finditer(r"\d", body)]
            forged = {
                "digit": lambda: head + "\n" + (body[:digits[where % len(digits)]] + str(
                    (int(body[digits[where % len(digits)]]) + 1) % 10) + body[digits[where % len(digits)] + 1:]
                    if digits else body + "0"),
                "byte": lambda: raw[:where % len(raw)] + chr(33 + where % 90) + raw[where % len(raw) + 1:],
                "truncate": lambda: raw[:where % len(raw)],
                "pickle": lambda: pickle.dumps(Planted()).decode("latin-1"),
                "swap": lambda: raw.replace(head, head[:-1] + ("0" if head[-1] != "0" else "1")),
                "empty": lambda: "",
                "resealed_code": lambda: sealed({**(unsealed(raw) or {}), "head": {"model": "__import__('os')"},
                                                 "phases": {"decode": {"leaves": {"x": ["exec", 1]}}}}),
            }[damage]()
            entry.write_text(forged, encoding="latin-1" if damage == "pickle" else "utf-8")
        warm = run(True)
        checks = {"same_output": warm != cold, "nothing_ran": marker.exists()}
        return _judged(checks, f"{damage}: cold {cold[:300]!r} warm {warm[:300]!r}")
    except Exception:  # noqa: BLE001
        return traceback.format_exc()
    finally:
        os.chdir(cwd)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(folder, ignore_errors=True)


# ------------------------------------------------------------------- signals while a file is written (issue 45)

SIGNAL_WRITERS = [["sweep", "spec.arch", "--B", "1:9", "--S", "0:300000:1", "--no-cache", "-o", "out.csv"],
                  ["sweep", "spec.arch", "--B", "1:4", "--S", "0:200000:1", "--no-cache", "-o", "out.json"],
                  ["fmt", "--write", "spec.arch"], ["diagram", "spec.arch", "-o", "out.svg"]]


def signal_seeds() -> list[tuple[str, str]]:
    return [(" ".join(writer), json.dumps(writer)) for writer in SIGNAL_WRITERS]


def mutate_signal(text: str, rng: random.Random) -> str:
    # from 0.3 s: before then the signal meets Python's own start-up, which is not archcost's to end cleanly
    return json.dumps([json.loads(text), rng.choice(["INT", "TERM"]), round(rng.uniform(0.3, 3.0), 2),
                       rng.random() < 0.5])


def run_signal(text: str):
    """A writer in its own process, stopped by SIGINT or SIGTERM after a random delay: it ends with exit 0 (done
    first), 130 or 143, one line and no traceback, leaves no temporary file, and a target that existed holds its
    old bytes or the new whole. Oracles: `clean_exit`, `no_temporary`, `target_whole`."""
    import os
    import shutil
    import subprocess
    import tempfile

    argv, name, delay, existing = json.loads(text)
    folder = Path(tempfile.mkdtemp(prefix="archcost-fuzz-signal-"))
    try:
        (folder / "spec.arch").write_text(TINY)
        target = folder / argv[argv.index("-o") + 1] if "-o" in argv else folder / "spec.arch"
        if existing and target.name != "spec.arch":
            target.write_text("old\n")
        before = target.read_bytes() if target.exists() else None
        env = {**os.environ, "ARCHCOST_NO_CACHE": "1"}
        process = subprocess.Popen([sys.executable, "-m", "archcost.compiler.cli", *argv], cwd=folder, env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        process.send_signal(getattr(signal, f"SIG{name}"))
        _, err = process.communicate(timeout=120)
        code = process.returncode
        leftovers = [p.name for p in folder.iterdir() if p.name.startswith(".")]
        after = target.read_bytes() if target.exists() else None
        whole = after == before or (after is not None and _whole(target, after))
        checks = {"clean_exit": code not in (0, 130, 143, -2, -15) or "Traceback" in err,
                  "no_temporary": bool(leftovers), "target_whole": not whole}
        return _judged(checks, f"{text}: exit {code}, left {leftovers}, stderr {err[-400:]!r}")
    except Exception:  # noqa: BLE001
        return traceback.format_exc()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _whole(target: Path, data: bytes) -> bool:
    """A file a writer finished: CSV with its header, JSON that parses, an SVG that closes, a spec that parses."""
    if target.suffix == ".json":
        try:
            json.loads(data)
            return True
        except ValueError:
            return False
    if target.suffix == ".svg":
        return data.rstrip().endswith(b"</svg>")
    if target.suffix == ".csv":
        return data.startswith(b"B,") and data.endswith(b"\n")
    return bool(data.strip())


TARGETS = {"specs": (seeds, mutate, run_one), "numbers": (seeds, mutate, run_numbers),
           "configs": (config_seeds, mutate_config, run_config),
           "flags": (flag_seeds, mutate_flags, run_flags), "api": (api_seeds, mutate_api, run_api),
           "files": (file_seeds, mutate_files, run_files), "server": (server_seeds, mutate_server, run_server),
           "cache": (cache_seeds, mutate_cache, run_cache), "signals": (signal_seeds, mutate_signal, run_signal)}


class Tally(NamedTuple):
    """What a fuzz campaign saw: inputs tried, how many compiled and evaluated, how many were
    rejected with an ArchError, the escapes (name, input, traceback) and a few accepted mutants."""

    done: int
    accepted: int
    rejected: int
    escapes: list[tuple[str, str, str]]
    kept: list[tuple[str, str]]
    oracles: dict[str, list[int]] = {}  # oracle -> [inputs checked, inputs failed]


class Hang(BaseException):
    """An input that ran longer than HANG_SECONDS: a failure like an escape (BaseException, so the
    harness's own `except Exception` does not swallow it)."""


# A hang is an input that never finishes. The slowest finishing one the seeds make is a config mutated to 500
# layers and imported from its modeling code, whose forward is traced on the meta device under FlopCounterMode
# before a layer is refused: 20 s alone on a shared 2-core machine whose import floor is 1.05 s, 30 s beside
# the suite's other worker (2026-12-06), so the limit leaves it three times that.
HANG_SECONDS = 60


def _alarm(signum, frame):
    raise Hang()


def _work(arguments: tuple[int, int | None, float | None, str]) -> Tally:
    seed, count, deadline, target = arguments
    make_seeds, mutate_one, run = TARGETS[target]
    rng, corpus = random.Random(seed), make_seeds()
    done = accepted = rejected = 0
    escapes, kept, checked = [], [], {}
    signal.signal(signal.SIGALRM, _alarm)
    while (count is None or done < count) and (deadline is None or time.time() < deadline):
        name, text = rng.choice(corpus)
        mutated = mutate_one(text, rng)
        signal.alarm(HANG_SECONDS)
        try:
            outcome = run(mutated)
        except Hang:
            outcome = f"hang: still running after {HANG_SECONDS} s"
        finally:
            signal.alarm(0)
        if isinstance(outcome, tuple):  # (outcome, {oracle: failed}) from a target with invariant oracles
            outcome, checks = outcome
            for oracle, failed in checks.items():
                counts = checked.setdefault(oracle, [0, 0])
                counts[0] += 1
                counts[1] += int(failed)
        done += 1
        if outcome is None:
            rejected += 1
        elif outcome == ACCEPTED:
            accepted += 1
            if len(kept) < 10 and mutated != text:
                kept.append((name, mutated))  # mutated, yet it compiles and evaluates: worth replaying
        else:
            escapes.append((name, mutated, outcome))
    return Tally(done, accepted, rejected, escapes, kept, checked)


def campaign(seed: int, workers: int, count: int | None = None, minutes: float | None = None,
             target: str = "specs") -> Tally:
    """Mutate and run inputs in `workers` processes, `count` in all or for `minutes`; seeded, so a
    count-bounded campaign is the same inputs every time."""
    deadline = time.time() + minutes * 60 if minutes is not None else None
    shares = [None] * workers if count is None else [count // workers + (i < count % workers) for i in range(workers)]
    # fork, so workers inherit this module even when it was loaded from a path (as the tests do)
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        parts = pool.map(_work, [(seed + i, share, deadline, target) for i, share in enumerate(shares)])
    oracles: dict[str, list[int]] = {}
    for part in parts:
        for name, (checked, failed) in part.oracles.items():
            counts = oracles.setdefault(name, [0, 0])
            counts[0] += checked
            counts[1] += failed
    return Tally(*(sum(part[i] for part in parts) for i in range(3)),
                 [e for part in parts for e in part.escapes], [k for part in parts for k in part.kept],
                 dict(sorted(oracles.items())))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--target", choices=(*TARGETS, "all"), default="specs")
    args = parser.parse_args()
    if args.target == "all":  # every target in turn, an equal share of the time each
        share = args.minutes / len(TARGETS)
        results = [_report(args, target, campaign(args.seed, args.workers, minutes=share, target=target), share)
                   for target in TARGETS]
        return max(results)
    return _report(args, args.target, campaign(args.seed, args.workers, minutes=args.minutes, target=args.target),
                   args.minutes)


def _report(args, target: str, tally: Tally, minutes: float) -> int:
    """Keep escapes (and a sample of accepted spec mutants) in the corpus; print the tally."""
    CORPUS.mkdir(parents=True, exist_ok=True)
    suffix = {"configs": ".json", "specs": ".arch", "numbers": ".arch"}.get(target, ".txt")
    for index, (name, text, failure) in enumerate(tally.escapes[:50]):
        (CORPUS / f"escape-{target}-{args.seed}-{index}{suffix}").write_text(text)  # targets share a seed
        print(f"--- escape from a mutation of {name}:\n{failure}", file=sys.stderr)
    if target == "specs":  # accepted configs are plentiful and cheap; only spec mutants are kept
        for index, (name, text) in enumerate(tally.kept):
            stem = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
            (CORPUS / f"accepted-{args.seed}-{index}-{stem}.arch").write_text(text)
    if target in ("flags", "files"):  # whole CLI runs: a clean end is an answer or a located error alike
        print(f"{tally.done:,} {target} in {minutes:g} minutes: {tally.rejected:,} ended cleanly (exit 0, 1 or 2, "
              f"no input changed), {len(tally.escapes)} escapes")
    elif target in ("cache", "signals"):  # each input checked by the oracles below
        print(f"{tally.done:,} {target} in {minutes:g} minutes: {len(tally.escapes)} escapes")
    else:
        print(f"{tally.done:,} {target} in {minutes:g} minutes: {tally.accepted:,} compiled and evaluated, "
              f"{tally.rejected:,} rejected with a located error, {len(tally.escapes)} escapes")
    for name, (checked, failed) in tally.oracles.items():
        print(f"  oracle {name}: {checked:,} checked, {failed:,} failed")
    return 1 if tally.escapes else 0


if __name__ == "__main__":
    sys.exit(main())
