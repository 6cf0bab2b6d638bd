"""Invariant oracles for the fuzzer: properties whose numbers must agree, checked on every input that compiles.

An exit code says only that nothing escaped; these compare numbers. Each oracle takes a compiled mutant (or an
imported spec) and returns None when it holds or does not apply, else what differed. tools/fuzz.py's
`numbers` target runs them on spec mutants, its `configs` target runs the import round trip; the tally
counts, per oracle, the inputs it checked and those it failed.

- cold_warm: `eval --json` from the compiler and from the formula cache print the same bytes
- one_card: the layout tp = ep = pp = 1 gives single-card `eval`'s params, weight bytes, state and FLOPs
- cards_sum: the cards of a tp = 1 layout (data and expert parallel) together do one card's matrix FLOPs
- prefill_grows: a prefill of more new positions does no fewer FLOPs and (without chunked caches) holds no less
  state
- window_le_causal: attention as written (windows, chunks, selection) never does more than causal
- decode_difference: for causal attention, decode at S is the prefill of S + 1 less the prefill of S
- import_round_trip: an imported spec, printed canonically and compiled again, has the same parameters
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

SHAPE = {"B": 2, "S": 37}
NOT_APPLICABLE = "n/a"  # what an oracle returns for an input it says nothing about


def _same(a, b) -> bool:
    """Exact integers equal exactly; a float (a spec whose sizes make a fraction) to the last few digits."""
    import math

    return a == b if isinstance(a, int) and isinstance(b, int) else math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-30)


def _report(model, phase: str, **shape):
    from archcost.compiler.numbers.evaluate import evaluate
    from archcost.compiler.terms.scenario import Scenario

    return evaluate(model, phase, Scenario(**shape))


def cold_warm(model, text: str) -> str | None:
    """The spec written to a file, evaluated by the CLI cold then warm (its own cache folder)."""
    import contextlib
    import io

    from archcost.compiler.cli import main
    from archcost.compiler.cli.cached import served

    with tempfile.TemporaryDirectory() as folder:
        spec = Path(folder) / "spec.arch"
        spec.write_text(text)
        argv = ["eval", str(spec), "--phase", "decode", "--B", "2", "--S", "37", "--json"]
        before = os.environ.get("XDG_CACHE_HOME")
        os.environ["XDG_CACHE_HOME"] = folder
        try:
            outputs = []
            for run in (main, served):
                buffer = io.StringIO()
                with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
                    code = run(argv)
                outputs.append((code, buffer.getvalue()))
        finally:
            os.environ.pop("XDG_CACHE_HOME") if before is None else os.environ.update(XDG_CACHE_HOME=before)
    (cold_code, cold), (warm_code, warm) = outputs
    if cold_code != 0 or warm_code is None:
        return NOT_APPLICABLE  # refused at the CLI, or a model whose forms the cache does not hold
    return None if cold == warm else f"cold and warm differ:\n{cold[:2000]}\n---\n{warm[:2000]}"


def one_card(model, text: str) -> str | None:
    from archcost.compiler.cards.degrees import Layout
    from archcost.compiler.cards.layout import layout_report
    from archcost.compiler.terms.scenario import Scenario

    card = layout_report(model, Layout(), "decode", Scenario(**SHAPE)).cards[0]
    whole = _report(model, "decode", **SHAPE)
    for name in ("params", "weight_bytes", "state_bytes", "flops_matrix"):
        if not _same(getattr(card, name), getattr(whole, name)):
            return f"one card's {name} {getattr(card, name):,} is not eval's {getattr(whole, name):,}"
    return None


def cards_sum(model, text: str) -> str | None:
    from archcost.compiler.cards.degrees import parse_layout
    from archcost.compiler.cards.layout import layout_report
    from archcost.compiler.terms.scenario import Scenario
    from archcost.dsl.errors import ArchError

    single = _report(model, "decode", B=4, S=37).flops_matrix
    if not _same(single, 2 * _report(model, "decode", B=2, S=37).flops_matrix):
        return NOT_APPLICABLE  # work not linear in the requests (a size in B): replicas need not add up
    checked = False
    for words in ("dp=2", "dp=2,ep=2", "dp=4,ep=2", "dp=4,ep=4"):
        try:
            report = layout_report(model, parse_layout(words), "decode", Scenario(B=4, S=37))
        except ArchError:
            continue  # the layout does not split this model (no experts to split, uneven)
        checked = True
        together = report.cards[0].flops_matrix * report.layout.dp
        if not _same(together, single):
            return f"{words}: the cards do {together:,} matrix FLOPs together, one card {single:,}"
    return None if checked else NOT_APPLICABLE


def prefill_grows(model, text: str) -> str | None:
    """FLOPs always; state too, unless a cache keeps only the current chunk (Llama 4's local attention holds
    H mod chunk positions, which falls as H passes a chunk's end)."""
    chunked = any(term[0] == "chunk" for _, data in model.graph.nodes(data=True)
                  for term in (getattr(data["op"].args, "growth", None) or ()))
    small, large = (_report(model, "prefill", B=1, S=5, P=p) for p in (8, 40))
    for name in ("flops_matrix",) if chunked else ("flops_matrix", "state_bytes"):
        if getattr(large, name) < getattr(small, name):
            return f"{name} falls from {getattr(small, name):,} to {getattr(large, name):,} as P grows 8 → 40"
    return None


def window_le_causal(model, text: str) -> str | None:
    from archcost.compiler.compilation import compile_text
    from archcost.compiler.terms.conventions import Conventions

    for _, data in model.graph.nodes(data=True):  # a spec may count the full rectangle on purpose
        over = getattr(data["op"].args, "over", ())
        if data["op"].kind == "attend" and any(term[0] in ("rectangle", "half_rectangle") for term in over):
            return NOT_APPLICABLE
    causal = compile_text(text, Conventions(attention="causal"), name="<fuzz>", base=_specs())
    for phase, shape in (("prefill", {"P": 300}), ("decode", {"S": 5000})):
        written, counted = _report(model, phase, **shape), _report(causal, phase, **shape)
        if written.context_flops > counted.context_flops:
            return f"{phase}: attention as written does {written.context_flops:,} context FLOPs, causal " \
                   f"{counted.context_flops:,}"
    return None


CAUSAL_KINDS = {"linear", "lookup", "elementwise", "cache", "attend"}


def decode_difference(model, text: str) -> str | None:
    """Only where every op is token by token: a row per position, linear work, per-token caches, causal
    attention (no windows, chunks, selection, recurrent scans or replays, whose prefill runs another
    algorithm)."""
    from archcost.compiler.compilation import compile_text
    from archcost.compiler.terms.conventions import Conventions
    from archcost.compiler.terms.symbols import m, m_out

    for _, data in model.graph.nodes(data=True):
        op = data["op"]
        if op.rows not in (m, m_out):  # rows of its own (`rows = B`): not one row per position
            return NOT_APPLICABLE
        if op.kind != "attend" and not data["cost"].flops_matrix.free_symbols <= {m, m_out}:
            return NOT_APPLICABLE  # work per row that depends on the history (`flops = 64 / H`)
        over = getattr(op.args, "over", (("causal", ()),))
        growth = getattr(op.args, "growth", (("per_token", ()),))
        if op.kind not in CAUSAL_KINDS or data.get("tail") is not None or over != (("causal", ()),) \
                or growth != (("per_token", ()),):
            return NOT_APPLICABLE
    every = compile_text(text, Conventions(logits="all"), name="<fuzz>", base=_specs())  # logits per position
    for history in (0, 9, 300):
        step = _report(every, "decode", S=history).flops_matrix
        grown = _report(every, "prefill", P=history + 1).flops_matrix
        before = _report(every, "prefill", P=history).flops_matrix if history else 0
        if not _same(step, grown - before):
            return f"decode at S = {history}: {step:,} matrix FLOPs, the prefill difference {grown - before:,}"
    return None


def import_round_trip(spec_text: str) -> str | None:
    from archcost.compiler.compilation import compile_text
    from archcost.dsl.printer import canonical

    first = compile_text(spec_text, name="<imported>")
    again = compile_text(canonical(spec_text), name="<imported>")
    one, two = (_report(m, "decode", **SHAPE).params for m in (first, again))
    return None if one == two else f"the imported spec has {one:,} parameters, printed again {two:,}"


def _specs() -> Path:
    return Path(__file__).resolve().parents[1] / "specs"


SPEC_ORACLES = {"cold_warm": cold_warm, "one_card": one_card, "cards_sum": cards_sum,
                "prefill_grows": prefill_grows, "window_le_causal": window_le_causal,
                "decode_difference": decode_difference}
