"""Write docs/language.md, the language reference, from the grammar, the op definitions and the stdlib.

Statements come from dsl/grammar.lark (each with the example its comment gives), primitive ops from
their definitions in compiler/ops/ (arguments, types, defaults, allowed words, cost rule), blocks from
the stdlib's own files (parameters, defaults, the comment above each). Run after changing any of them:

    .venv/bin/python tools/language_doc.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "docs" / "language.md"
GRAMMAR = ROOT / "dsl" / "grammar.lark"
STDLIB = ROOT / "stdlib"
STATEMENT_RULES = ("_item", "_stmt")
KIND_WORDS = {"signature": "`in -> out`", "dim": "size", "expr": "expression", "bool": "true / false",
              "enum": "word", "mode": "mode", "dtype": "format or role", "state": "cache names"}


def grammar_statements() -> list[tuple[str, str, str]]:
    """(rule, syntax, example) for each statement the grammar's `_item` and `_stmt` list."""
    lines = GRAMMAR.read_text().splitlines()
    rules = {m.group(1): (i, m.group(2)) for i, line in enumerate(lines)
             if (m := re.match(r"^(\w+): (.*?)\s*(?://.*)?$", line))}
    names = [n for rule in STATEMENT_RULES for n in rules[rule][1].split(" | ")]
    return [(name, rules[name][1], _example(lines, rules[name][0])) for name in dict.fromkeys(names)
            if name in rules and not name.startswith("_")]


def _example(lines: list[str], index: int) -> str:
    """The comment on a rule's line, or the comment lines just above it."""
    trailing = lines[index].partition("//")[2].strip()
    if trailing:
        return trailing
    above = []
    for line in reversed(lines[:index]):
        if not line.startswith("//"):
            break
        above.insert(0, line.removeprefix("//").strip())
    return " ".join(above)


def _cell(text: str) -> str:
    """Text inside a Markdown table cell: a `|` would end the cell."""
    return text.replace("|", "\\|")


def _shown(value) -> str:
    import sympy as sp

    from archcost.compiler.ops.base import describe_terms

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return describe_terms(value)
    return sp.sstr(value) if isinstance(value, sp.Basic) else str(value)


def _default(arg) -> str:
    if arg.required:
        return "required"
    if arg.default is None:
        return "—"
    return f"`{_shown(arg.default)}`"


def _words(arg) -> str:
    shown = (c.replace("/1", "(n)").replace("/2", "(n, r)") for c in arg.choices)
    return ", ".join(f"`{c}`" for c in shown)


def op_section(spec) -> list[str]:
    """One primitive op: what it models, its arguments and its cost rule."""
    head = [f"### `{spec.kind}`", "", " ".join(line.strip() for line in spec.doc.strip().splitlines()), ""]
    positional = ", ".join(f"`{p}`" for p in spec.positional) or "none (all by name)"
    facts = [f"Positional arguments: {positional}."]
    if spec.formula:
        facts.append(f"Cost rule: {spec.formula}.")
    if spec.saved is not None and spec.saved.__doc__:
        kept = " ".join(line.strip() for line in spec.saved.__doc__.strip().splitlines())
        facts.append(f"Keeps for the backward pass (a training step, docs/training.md): {kept}")
    facts.append("Shards as: " + ", ".join(f"`{w}`" + ("(n)" if w == "heads" else "") for w in spec.shards) + ".")
    flags = [text for on, text in ((spec.stores_state, "holds context state that others read with `state = NAME`"),
                                   (spec.quantizable, "its weights follow a run's `--weights FORMAT`"),
                                   (spec.token_input, "reads the token ids when nothing feeds it"),
                                   (spec.figures is not None, f"adds `{spec.figures.key}` to reports"
                                    if spec.figures else "")) if on]
    if flags:
        facts.append("Notes: " + "; ".join(flags) + ".")
    table = ["| argument | type | default | words | meaning |", "|---|---|---|---|---|"]
    table += [f"| `{a.name}` | {KIND_WORDS.get(a.kind, a.kind)} | {_default(a)} | {_words(a)} | {_cell(a.doc)} |"
              for a in spec.args]
    return head + facts + [""] + table + [""]


def stdlib_blocks() -> list[tuple[str, str, str]]:
    """(file, signature, comment above) for every block in the stdlib, files in name order."""
    from archcost.dsl.loader import load_file
    from archcost.dsl.text import format_expr

    found = []
    for file in sorted(STDLIB.rglob("*.arch")):
        lines = file.read_text().splitlines()
        module = load_file(file).entry
        for index, block in enumerate(module.blocks):
            params = ", ".join(p.name if p.default is None else f"{p.name} = {format_expr(p.default)}"
                               for p in block.params)
            # a file's first block without a comment of its own is what the file's opening comment describes
            comment = _comment_above(lines, block.span.line - 1) or (_comment_above(lines, _header_end(lines))
                                                                     if index == 0 else "")
            found.append((file.relative_to(STDLIB).as_posix(), f"{block.name}({params})", comment))
    return found


def _header_end(lines: list[str]) -> int:
    """The index of the first line after a file's opening comment."""
    return next((i for i, line in enumerate(lines) if not line.lstrip().startswith("#")), len(lines))


def _comment_above(lines: list[str], index: int) -> str:
    above = []
    for line in reversed(lines[:index]):
        if not line.lstrip().startswith("#"):
            break
        above.insert(0, line.lstrip().removeprefix("#").strip())
    return " ".join(above)


def _use_name(file: str) -> str:
    return "std." + file.removesuffix(".arch").replace("/", ".")


def render() -> str:
    from archcost.compiler.front.arguments import FLOW_ARGS, OP_WIDE_ARGS
    from archcost.compiler.front.expr import FUNCTIONS, mode_words
    from archcost.compiler.ops import REGISTRY

    out = ["# The .arch language", "",
           "<!-- Generated by tools/language_doc.py from dsl/grammar.lark, compiler/ops/ and stdlib/; "
           "do not edit. -->", "",
           "A spec is a `model` made of statements; blocks (`block name(params) { ... }`) are written in the "
           "same language, and only the primitive ops below carry cost rules. The grammar itself is "
           "`dsl/grammar.lark`.", "", "## Statements", "", "| statement | syntax | example |", "|---|---|---|"]
    out += [f"| `{name}` | `{_cell(syntax)}` | {_cell(example)} |" for name, syntax, example in grammar_statements()]
    out += ["", "## Expressions", "",
            "Numbers (`151_936`, `0.5`, exact), names (an unbound name stays a symbol), `+ - * / // ^`, "
            "parentheses, tuples `(k, v)`, `==` and `!=` in `if`, and the functions "
            + ", ".join(f"`{f}`" for f in FUNCTIONS) + ". Mode words with arguments, read by `mode` arguments: "
            + ", ".join(f"`{w}(...)`" for w in mode_words()) + ".", "",
            "## Primitive ops", "",
            "Written `kind label: arguments`. Every op also takes "
            + ", ".join(f"`{a}`" for a in FLOW_ARGS + OP_WIDE_ARGS)
            + ": `from`/`on` name the tensors it reads (default: the previous statement's output; `on` also "
              "takes over the name), `component` its class in the parameter and FLOP tables, `replay = false` "
              "keeps it on every position inside a `replay` stage, `shard` how it splits over the cards of a "
              "layout (`column`, `row`, `heads(n)`, `vocab`, `ep`; replicated when absent: docs/layouts.md), "
              "`steers` the ops of its block its output steers without flowing into them (`steers = routed`: a "
              "router's choice, a gate, sinks, an indexer's selection; drawn as a dashed edge, never costed).", ""]
    for spec in REGISTRY.values():
        out += op_section(spec)
    out += BLOCK_RULES + PIPELINE
    out += ["## Standard library blocks", "", "Load a file with `use std.<path>`; a block is called as "
            "`name(arguments) as label`.", ""]
    for file, signature, comment in stdlib_blocks():
        out += [f"- `{signature}` — `use {_use_name(file)}`" + (f". {comment}" if comment else "")]
    return "\n".join(out) + "\n"


BLOCK_RULES = [
    "## Blocks", "",
    "- A block's output is the tensor its last statement produces; `input` names what the call reads.",
    "- A parameter whose default is a block (`norm = rmsnorm`) is block-valued: `norm(d) as pre_norm` calls "
    "whichever block the caller passed (`norm = layernorm`).",
    "- A call reads the previous statement's output, or what `from` names; `from = (input, o)` passes several "
    "tensors side by side, and an op inside that reads each input alike (`elementwise`, as `std.norm`'s "
    "`residual`) reads them as its separate inputs. Inside the block, `input` is all of them and `input.1`, "
    "`input.2` each one apart: `per_layer_input(d, 256, 30, from = (previous, per_layer.inputs))` gates the "
    "stream (`input.1`) with its slice of the per-layer inputs (`input.2`; Gemma 4).",
    "- After `gqa(...) as attn`, the block's own tensors stay readable as `attn.o`, `attn.pre_norm` (a call "
    "inside it as `attn.ffn.up`): a shortcut-connected MoE reads the first attention's output with "
    "`from = attn.o` (LongCat-Flash). An unknown one is E207 with the nearest name.",
    "- A precision role exists once an op's `dtype` names it (`dtype = kv`); `precision ROLE = FORMAT` sets it "
    "for the model or a block, and a role that no op reads is a misspelling (E210).",
    "- `repeat N` multiplies costs, it never unrolls; `select` divides a repeat's layers among arms.",
    "- `loop N { ... }` runs its body N times over with one set of weights (a looped or recurrent-depth model: "
    "Dory's recurrent block, HRM's cycles): its work, reads and state are N times the body's, its parameters and "
    "weight bytes the body's once (`repeat` inside it says how many layers a pass holds). A layout splits it over "
    "tp, ep and dp cards as any layer; pipeline stages over it are refused (E405), as a stage's copy of the "
    "shared weights is not modelled.",
    "- `block(args) as label shares NAME`: calls that share NAME run one set of weights wherever they stand "
    "(Zamba's transformer block, called between Mamba layers at several depths): each does its own work and "
    "keeps its own state, and the first of them holds the weights, once however many layers around it repeat "
    "it; the others hold none. Each must call the first one's block with its arguments (E221); pipeline "
    "stages over them are refused (E405), as for a `loop`.",
    "- Sublayers side by side on one norm and one residual (GPT-J, Phi-2, Cohere, Falcon-H1's attention beside "
    "Mamba-2): write the norm once, call each sublayer with `norm = none, residual_add = false` (the second "
    "with `from = pre_norm`), and add them with `residual(d, inputs = 3, from = (input, attn, ssm))`, two adds "
    "an element. `none` (std.norm) is the block that passes its input through; the diagram draws the "
    "sublayers beside each other.", "",
    "## What `over` counts", "",
    "The new queries of a call are the i-th, i = 1…P, after S cached positions; a query at position t = S + i "
    "sees:", "",
    "| `over` | keys a query sees | prefill (S = 0) | decode (P = 1) |",
    "|---|---|---|---|",
    "| `causal` | t | B·P(P+1)/2 | B·(S+1) |",
    "| `rectangle` (the eager kernel) | S + P | B·P² | B·(S+1) |",
    "| `window(w)` | min(t, w) | B·Σ min(t, w) | B·min(S+1, w) |",
    "| `chunk(c)` | its own block of c, up to itself | B·Σ ((t−1) mod c + 1) | B·(S mod c + 1) |",
    "| `all(n)` | n | B·P·n | B·n |",
    "| `top(k)` | min(t, k), selected causally | B·Σ min(t, k) | B·min(S+1, k) |",
    "| `top(k, r)` | min(k, ⌊t/r⌋) completed entries of one per r | B·Σ min(k, ⌊t/r⌋) | B·min(k, ⌊(S+1)/r⌋) |",
    "| `blocks(r)` | ⌊t/r⌋ completed entries | B·Σ ⌊t/r⌋ | B·⌊(S+1)/r⌋ |", "",
    "Terms add (`window(128) + top(512, 4)`). Under `--attention rectangle` every full-attention term "
    "scores S + P keys, a window min(S, w − 1) + P and `top(k)` min(k, S + P) for every new query.", "",
]
PIPELINE = [
    "## Where a spec goes", "",
    "`dsl/` parses the text (`grammar.lark`, `parser.py`, `tree.py` to the AST, `loader.py` for `use`); "
    "`compiler/front/` resolves it into the IR, `compiler/graph/` lowers it to the cost graph whose nodes carry "
    "each op's cost rule from `compiler/ops/`, and `compiler/numbers/` turns the closed forms into plain forms "
    "that every printed number comes from. README.md's Layout section lists the stage packages.", "",
]


def main() -> int:
    OUTPUT.parent.mkdir(exist_ok=True)
    OUTPUT.write_text(render())
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
