"""Tables a person reads: the side-by-side comparison, the check summary, an evaluation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..terms.letters import COMPONENTS
from .evaluation import data_of, report_table, report_text  # noqa: F401  (one import for every table)
from .evaluation import scenario_text as _scenario_text
from .table import Table
from .units import BINARY, grouped

if TYPE_CHECKING:
    from ..numbers.report import Report


def summary_table(reports: list) -> Table:
    """One row per model: size, state growth and the cost of the chosen call (reports or their data)."""
    data = [data_of(r) for r in reports]
    header = ["model", "params (B)", "active (B)", "weights (GB)", "KV/token (KiB)", "state (GiB)",
              "matrix (TFLOPs)", "context (GFLOPs)", "non-matrix (GFLOPs)", "weights read (GB)", "state read (GiB)"]
    rows = [[r["model"], f"{r['params'] / 1e9:,.3f}", f"{r['params_active'] / 1e9:,.3f}",
             f"{r['weight_bytes'] / 1e9:,.2f}", f"{r['kv_bytes_per_token'] / BINARY['KiB']:,.1f}",
             f"{r['state_bytes'] / BINARY['GiB']:,.3f}", f"{r['flops_matrix'] / 1e12:,.2f}",
             f"{r['context_flops'] / 1e9:,.2f}", f"{r['flops_nonmatrix'] / 1e9:,.2f}",
             f"{r['read_bytes']['weights'] / 1e9:,.2f}", f"{r['read_bytes']['state'] / BINARY['GiB']:,.3f}"]
            for r in data]
    notes = ["GB = 10^9 bytes, GiB = 2^30 bytes. State is what the batch holds after the call.",
             *option_notes(data[0]["conventions"], [(r["model"], r["paths"]) for r in data])]
    return Table(f"Cost comparison, {_scenario_text(data[0])}", header, rows, notes)


def option_notes(conventions: dict, paths: list[tuple[str, dict]]) -> list[str]:
    """A table's footer: the run's conventions once, then each model's own execution paths (every model's,
    not the first's)."""
    notes = [f"options: {', '.join(f'{k} = {v}' for k, v in conventions.items())}"]
    notes += [f"{model}: {', '.join(f'{k} = {w}' for k, w in chosen.items())}" for model, chosen in paths if chosen]
    return notes


def params_table(reports: list) -> Table:
    """The chapter's Table 2-B: parameters in six classes, in billions (reports or their data)."""
    data = [data_of(r) for r in reports]
    header = ["model", "total", *COMPONENTS]
    rows = [[r["model"], f"{r['params'] / 1e9:,.3f}",
             *(_billions(r["params_by_component"].get(c, 0)) for c in COMPONENTS)] for r in data]
    return Table("Table 2-B: parameters by class (billions of logical parameters)", header, rows,
                 ["'<0.001' marks a class with fewer than a million parameters."])


def _billions(value: float) -> str:
    if value == 0:
        return "0"
    return "<0.001" if value < 5e5 else f"{value / 1e9:,.3f}"


def state_table(profiles) -> Table:
    """Seed 002 §2.3.5–2.3.6: fixed state, growth per token, crossover, state at chosen lengths."""
    lengths = list(profiles[0].state_at)
    header = ["model", "fixed (MiB)", "growth (B/token)", "H* (tokens)",
              *(f"state @{_length(n)} (MiB)" for n in lengths)]
    budget = profiles[0].budget_bytes
    if budget is not None:
        header.append(f"longest context in {budget / BINARY['MiB']:,.0f} MiB")
    rows = []
    for p in profiles:
        row = [p.model, f"{p.state_fixed_bytes / BINARY['MiB']:,.3f}", grouped(p.kv_bytes_per_token),
               "—" if p.crossover_tokens is None else f"{p.crossover_tokens:,.0f}",
               *(f"{p.state_at[n] / BINARY['MiB']:,.1f}" for n in lengths)]
        if budget is not None:
            row.append("none fits" if p.max_context is None and "exceeds" in (p.budget_note or "")
                       else "any" if p.max_context is None else f"{p.max_context:,}")
        rows.append(row)
    notes = ["State of one request after H positions; MiB = 2^20 bytes. H* = fixed / growth (§2.3.5)."]
    notes += [f"{p.model}: {p.budget_note}" for p in profiles if p.budget_note]
    return Table("Context state against context length", header, rows, notes)


def _length(n: int) -> str:
    for unit, scale in (("M", 2**20), ("K", 2**10)):
        if n % scale == 0:
            return f"{n // scale}{unit}"
    return f"{n:,}"


def by_op_table(ops, report: Report) -> Table:
    """Every op's shape and FLOPs for the call, in graph order (the chapter's per-matrix tables)."""
    header = ["op", "kind", "shape", "layers", "params / layer", "matrix GFLOPs / layer", "matrix GFLOPs, all layers"]
    rows = [[o.op, o.kind, o.shape, grouped(o.layers), grouped(o.params), f"{o.flops_matrix / 1e9:,.4f}",
             f"{o.flops_matrix_all_layers / 1e9:,.3f}"] for o in ops]
    return Table(f"{report.model}: op by op, {_scenario_text(report)}", header, rows, [], text_columns=3)


def capacity_text(c) -> str:
    GB, GiB = 1e9, BINARY["GiB"]
    lines = [f"{c.model} on {c.device}, {c.context:,} positions per request",
             f"  device memory        {c.device_bytes / GB:,.3f} GB, usable {c.usable_bytes / GB:,.3f} GB",
             f"  weights              {c.weight_bytes / GB:,.3f} GB ({c.weight_bytes / GiB:,.3f} GiB)",
             f"  workspace            {c.workspace_bytes / GiB:,.3f} GiB",
             f"  state per request    {c.state_bytes_per_request / GiB:,.3f} GiB",
             "  max_batch            " + (f"{c.max_batch}" if c.max_batch is not None else
                                          "no bound from memory: the model keeps no state per request"),
             f"  crossover_batch      {c.crossover_batch} (context reads exceed weight reads from here, §2.2.2)"]
    if c.max_params is not None:
        lines.append(f"  max_params           {c.max_params / 1e9:,.3f} B for {c.batch} requests (§2.6.2)")
    return "\n".join(lines) + "\n"


def roofline_text(r) -> str:
    shape = ", ".join(f"{k} = {v:,}" for k, v in r.scenario.items())
    return "\n".join([
        f"{r.model} on {r.device}: phase {r.phase} ({shape}), peak {r.peak_format}",
        f"  matrix FLOPs         {r.flops:,.0f}",
        f"  bytes moved          {r.bytes:,.0f}   (weights, rows, context read and written)",
        "  intensity            " + ("— (no bytes moved)" if r.intensity is None else f"{r.intensity:,.2f} FLOP/byte")
        + f"   ridge {r.ridge:,.2f}",
        f"  compute time         {r.compute_seconds * 1e3:,.4f} ms",
        f"  memory time          {r.memory_seconds * 1e3:,.4f} ms",
        f"  step lower bound     {r.step_seconds * 1e3:,.4f} ms ({r.bound}-bound)",
        f"  expected             {r.expected_seconds * 1e3:,.4f} ms ({r.expected_seconds / r.step_seconds:,.2f} × the "
        f"bound; kernel efficiencies measured on the device, {r.efficiency_table})" if r.expected_seconds is not None
        else "  expected             — (no kernel measurements for this device in stdlib/efficiency; give "
             "--efficiency-table)"]) + "\n"


def throughput_text(t) -> str:
    cost = (f"\n  cost                 ${t.cost_per_million_output_tokens:,.3f} per million output tokens at "
            f"${t.price_per_hour:,.2f} a card an hour" if t.cost_per_million_output_tokens is not None else "")
    cached = f", {t.cached_fraction:.0%} of each prompt cached" if t.cached_fraction else ""
    return "\n".join([
        f"{t.model} served by {t.engine} on {t.layout} ({t.device}, {t.link}): ISL {t.isl:,}, OSL {t.osl:,}{cached}",
        f"  batch                {t.batch:,} requests a replica ({t.batch_limit} binds; "
        + (f"the KV cache holds {t.kv_requests_max:,}, {t.kv_budget_bytes / 2**30:,.2f} GiB a card)"
           if t.kv_requests_max is not None else "a request keeps no state: the KV cache bounds no batch)"),
        f"  prefill beside       {t.prefill_tokens_per_step:,.1f} prompt tokens a step",
        *([f"  drafts               {t.mtp} a step, each accepted with chance {t.acceptance:g}: "
           f"{t.tokens_per_step:,.3f} tokens a request a step"] if t.mtp else []),
        *([f"  request rate         {t.request_rate:,.3g} a second keeps {t.batch:,} "
           "requests a replica in flight (Little's law)"] if t.request_rate is not None else []),
        f"  time per output      {t.tpot_seconds * 1e3:,.3f} ms expected (bound {t.step_bound_seconds * 1e3:,.3f} ms)",
        f"  time to first token  {t.ttft_seconds * 1e3:,.3f} ms expected (half a step's wait, "
        + ("a step more as the overlap scheduler admits it, " if t.overlap else "")
        + "then the steps that carry the prompt; no queue)",
        f"  throughput           {t.output_tokens_per_second:,.0f} output tokens/s, "
        f"{t.output_tokens_per_second_per_card:,.0f} a card, {t.requests_per_second:,.2f} requests/s" + cost,
        f"  engine defaults      {t.engine_source}",
        f"  kernel efficiencies  {t.efficiency_table}"]) + "\n"


def request_times_text(t) -> str:
    """A request's time on a device, bound and expected, its prefill and its decodes apart."""
    def both(bound: float, expected: float | None) -> str:
        return f"{bound * 1e3:,.3f} ms at least" + (f", {expected * 1e3:,.3f} ms expected" if expected is not None
                                                   else "")
    middle = t.decode_middle
    lines = [f"\ntime on {t.device} ({t.prefill.peak_format} peak)",
             f"  prefill              {both(t.prefill.step_seconds, t.prefill.expected_seconds)}"]
    if middle is not None:
        expected = None if middle.expected_seconds is None else t.decodes * middle.expected_seconds
        name = f"{t.decodes:,} decodes"
        lines.append(f"  {name:<21}{both(t.decodes * middle.step_seconds, expected)} (the middle one at "
                     f"{middle.scenario['S'] + 1:,} positions)")
    lines.append(f"  the request          {both(t.bound_seconds, t.expected_seconds)}")
    if t.expected_seconds is None:
        lines.append("  (no kernel measurements for this device in stdlib/efficiency: its bound alone)")
    return "\n".join(lines) + "\n"


def speculation_text(s) -> str:
    lines = [f"k = {s.k} drafted tokens, acceptance α = {s.alpha}",
             f"  tokens per round     {s.tokens_per_round:,.4f}   (1 − α^(k+1)) / (1 − α)"]
    if s.seconds_per_output is not None:
        lines.append(f"  time per output      {s.seconds_per_output * 1e3:,.3f} ms   (T_s + T_v) / ḡ")
    if s.break_even_tokens is not None:
        verdict = "faster than plain decoding" if s.worth_it else "not faster than plain decoding"
        lines.append(f"  break-even           ḡ > {s.break_even_tokens:,.3f}: {verdict}")
    return "\n".join(lines) + "\n"


def conversation_table(turns) -> Table:
    header = ["turn", "cached S", "prompt P", "returned G", "matrix TFLOPs", "context read (GiB)", "state after (GiB)"]
    rows = [[str(t.turn), grouped(t.cached), grouped(t.prompt), grouped(t.returned),
             f"{t.report['flops_matrix'] / 1e12:,.3f}", f"{t.report['read_bytes']['state'] / BINARY['GiB']:,.3f}",
             f"{t.report['state_bytes'] / BINARY['GiB']:,.3f}"] for t in turns]
    total = sum(t.report["flops_matrix"] for t in turns)
    return Table(f"{turns[0].report['model']}: a conversation of {len(turns)} turns", header, rows,
                 [f"total {total / 1e12:,.3f} matrix TFLOPs; each turn keeps S + P + G − 1 positions"])


def roofline_ops_table(ops, call) -> Table:
    header = ["op", "kind", "bound", "GFLOPs", "MB moved", "FLOP/byte", "µs at least", "µs expected"]
    rows = [[o.op, o.kind, o.bound, f"{o.flops / 1e9:,.3f}", f"{o.bytes / 1e6:,.3f}",
             "—" if o.intensity is None else f"{o.intensity:,.1f}", f"{o.seconds * 1e6:,.2f}",
             "—" if o.expected_seconds is None else f"{o.expected_seconds * 1e6:,.2f}"] for o in ops]
    return Table(f"Op by op on {call.device} (ridge {call.ridge:,.1f} FLOP/byte, all layers of each op)", header,
                 rows, [], text_columns=3)
