"""The spec's execution paths an import writes: `option` lines with the serving engines' path first, and the one
table of the words under which transformers' eager code runs the model (the check compiles with them)."""

from __future__ import annotations

from archcost.dsl import ast

# The word of each option an import may write under which transformers' eager code runs the model: the check
# compiles the spec with these (and says so in its lines), while the spec's default, the first word, is the
# serving engines' path that the stdlib blocks and the hand-written specs default to: one model, one number
# (issue 45).
TRANSFORMERS_PATHS = {"mla_cache": "reexpand", "index_kernel": "eager", "linear_kernels": "torch",
                      "diff_kernel": "two_calls", "experts": "dense", "hc_comb": "matrix", "window_record": "apart"}


def option(name: str, *words: str, note: str | None = None) -> ast.Option:
    """`option name = default | …`: the serving engines' path first; transformers' path is among the words."""
    assert name not in TRANSFORMERS_PATHS or TRANSFORMERS_PATHS[name] in words[1:], name
    return ast.Option(name=name, value=words[0], alternatives=list(words[1:]), note=note)


def transformers_paths_of(text: str) -> tuple[tuple[str, str], ...]:
    """The same, read from an imported spec's text (its model's `option` lines)."""
    from archcost.dsl.parser import parse

    return transformers_paths([stmt for model in parse(text).models for stmt in model.body])


def transformers_paths(options) -> tuple[tuple[str, str], ...]:
    """The option words under which the spec runs as transformers' eager code does, for the options it declares."""
    return tuple((o.name, TRANSFORMERS_PATHS[o.name]) for o in options
                 if isinstance(o, ast.Option) and o.name in TRANSFORMERS_PATHS)
