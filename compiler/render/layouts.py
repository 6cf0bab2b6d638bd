"""A model on many cards as text: one layout's per-card figures, traffic and bounds; a ranking of layouts."""

from __future__ import annotations

from .table import Table
from .training import STAGES

GB = 1e9


def layout_text(report) -> str:
    shape = ", ".join(f"{k} = {v:,}" for k, v in report.scenario.model_dump().items())
    lines = [f"{report.model} on {report.layout.text()}: phase {report.phase} ({shape})", ""]
    if report.stage_layers:
        lines[-1:-1] = [f"  pipeline stages of {stage_sizes(report.stage_layers)} layers"]
    table = cards_table(report)
    lines.append(table.text().rstrip("\n"))
    lines += ["", f"  whole model {report.whole_params:,} parameters; held on more than one card: "
                  f"{report.replicated_params:,} more (Σ over all {report.layout.cards} cards − the model)"]
    if report.traffic:
        lines += ["", "  collectives per call (bytes one card sends):"]
        lines += [
            f"    {t.kind:<15} over {t.group}  ×{t.count:<6,} {t.sent_bytes / 1e6:,.3f} MB" for t in report.traffic
        ]
    if report.times is not None:
        t = report.times
        whose = "the most loaded card" if len(report.cards) == 1 else (
            f"the {STAGES.get(t.stage, t.stage)}'s card, the slowest")
        lines += ["", f"  bounds on {t.device} ({t.compute_format} peak) with {t.link}, one micro-batch on {whose}:",
                  f"    compute {t.compute * 1e3:,.4f} ms, memory {t.memory * 1e3:,.4f} ms, "
                  f"communication {t.communication * 1e3:,.4f} ms",
                  ("  the step" if report.layout.pp == 1 and report.layout.micro_batches == 1 else
                   f"  the step ({report.layout.micro_batches} micro-batches through {report.layout.pp} stages)")
                  + f": no overlap {t.no_overlap * 1e3:,.4f} ms, full overlap {t.full_overlap * 1e3:,.4f} ms"
                  + (f", pipeline bubble {t.bubble:.1%}" if t.bubble else "")]
        if t.expected is not None:
            lines.append(f"  expected {t.expected * 1e3:,.4f} ms ({t.expected / t.full_overlap:,.2f} × the "
                         f"full-overlap bound; collectives {t.expected_communication * 1e3:,.4f} ms; kernel "
                         f"efficiencies measured on the device, {t.efficiency_table})")
        elif t.efficiency_table is None:
            lines.append("  expected — (no kernel measurements for this device in stdlib/efficiency; give "
                         "--efficiency-table)")
    return "\n".join(lines) + "\n"


def cards_table(report) -> Table:
    """One row per card of each pipeline position: what it holds, computes, moves and sends."""
    rows = []
    for card in report.cards:
        mark = " (most loaded)" if card.stage == report.busiest and len(report.cards) > 1 else ""
        name = STAGES.get(card.stage, card.stage)
        rows.append([f"{name}{mark}", f"{card.params / 1e9:,.3f}", f"{card.weight_bytes / GB:,.3f}",
                     f"{card.state_bytes / GB:,.3f}", f"{card.flops_matrix / 1e12:,.4f}",
                     f"{(card.read_bytes + card.write_bytes) / GB:,.3f}", f"{card.sent_bytes / 1e6:,.3f}"])
    return Table("per card (one card of each pipeline position)",
                 ["card", "params (B)", "weights (GB)", "state (GB)", "matrix (TFLOPs)", "R (GB)", "sent (MB)"],
                 rows, [])


def stage_sizes(sizes: list[int]) -> str:
    """`15 + 15 × 2 + 16`: the layers of each pipeline stage, in order, equal neighbours run together."""
    runs: list[list[int]] = []
    for size in sizes:
        if runs and runs[-1][0] == size:
            runs[-1][1] += 1
        else:
            runs.append([size, 1])
    return " + ".join(f"{size}" if count == 1 else f"{size} × {count}" for size, count in runs)


def capacity_text(held) -> str:
    return (f"  on {held.layout.cards} × {held.device}: B_max {held.batch_max:,} requests of {held.context:,} "
            f"positions; {held.batch:,} requests reach {held.context_max:,} positions each\n")


def fits_text(model: str, fits: list, device, link, context: int, batch: int) -> str:
    expected = any(f.step_expected is not None for f in fits)
    rows = [[f"TP {f.layout.tp}", f"EP {f.layout.ep}", f"PP {f.layout.pp}", f"DP {f.layout.dp}",
             "yes" if f.fits else "no", f"{f.weight_bytes / GB:,.2f}", f"{f.state_bytes / GB:,.2f}",
             f"{f.free_bytes / GB:,.2f}", f"{f.batch_max:,}", f"{f.context_max:,}", f"{f.step_no_overlap * 1e3:,.3f}",
             f"{f.step_full_overlap * 1e3:,.3f}"] + ([f"{f.step_expected * 1e3:,.3f}"] if expected else [])
            for f in fits]
    cards = fits[0].layout.cards if fits else 0
    table = Table(f"{model} on {cards} × {device.name} ({link.name}), context {context:,}, batch {batch:,}",
                  ["tp", "ep", "pp", "dp", "fits", "weights (GB)", "state (GB)", "free (GB)", "B_max",
                   "H_max", "step (ms)", "overlapped (ms)"] + (["expected (ms)"] if expected else []), rows,
                  ["Per card, most loaded card. B_max: requests of the context all replicas hold; H_max: the "
                   "positions each request of the batch can reach. step: one decode step's lower bound without "
                   "overlap (its slowest stage's card), then with compute, memory and communication fully "
                   "overlapped" + (
                       ", then expected (kernel efficiencies measured on the device, stdlib/efficiency)"
                       if expected else "") + ". Those that fit come first, fastest first."],
                  text_columns=5)
    return table.text()


def disaggregation_text(report, generated: int) -> str:
    """Both sides of a disaggregated deployment, the hand-off, and the cards each side needs."""
    pre, last = report.prefill, report.decode_last
    card = max(pre.cards, key=lambda c: c.state_bytes)
    lines = [f"{report.model}: prefill on {pre.layout.text()}, decode on {last.layout.text()}",
             f"  {pre.scenario.B:,} requests of {pre.scenario.P:,} prompt tokens, {generated:,} generated each", "",
             f"  prefill: {pre.times.full_overlap * 1e3:,.3f} ms at least ({pre.times.no_overlap * 1e3:,.3f} ms "
             f"without overlap); its busiest card holds {card.weight_bytes / GB:,.2f} GB of weights and "
             f"{card.state_bytes / GB:,.3f} GB of state",
             f"  hand-off: {report.kv_transfer_bytes:,} bytes of state a request (kv_transfer_bytes); the busiest "
             f"card sends its {card.state_bytes / GB:,.3f} GB in {report.transfer_seconds * 1e3:,.3f} ms",
             f"  decode: {report.decode_first.times.full_overlap * 1e3:,.3f} ms a step at the first token, "
             f"{last.times.full_overlap * 1e3:,.3f} ms at the last",
             "", *_first_and_next(report),
             f"  {report.prefill_per_decode:,.3f} prefill layouts per decode layout keep both busy: "
             f"{report.card_ratio:,.3f} prefill cards per decode card"]
    return "\n".join(lines) + "\n"


def _first_and_next(report) -> list[str]:
    """Time to first token and per output token: expected where the device has kernel measurements (the targets
    judged on them), the bounds beside."""
    if report.ttft_expected is None:
        return [f"  time to first token ≥ {report.ttft * 1e3:,.3f} ms" + _verdict(report.ttft_met)
                + f", time per output token ≥ {report.tpot * 1e3:,.3f} ms" + _verdict(report.tpot_met)]
    return [f"  time to first token {report.ttft_expected * 1e3:,.3f} ms expected (bound {report.ttft * 1e3:,.3f} ms)"
            + _verdict(report.ttft_met),
            f"  time per output token {report.tpot_expected * 1e3:,.3f} ms expected (bound "
            f"{report.tpot * 1e3:,.3f} ms)" + _verdict(report.tpot_met)]


def _verdict(met) -> str:
    return "" if met is None else (" (meets the target)" if met else " (misses the target)")


def slo_text(search) -> str:
    """The SLO search: the layouts and batches that meet both targets, best per card first; with
    --disaggregated, the best prefill and decode layouts run apart."""
    rows = [[c.layout, f"{c.batch:,}", f"{c.concurrency:,}", f"{c.ttft_seconds * 1e3:,.1f}",
             f"{c.tpot_seconds * 1e3:,.2f}", f"{c.output_tokens_per_second_per_card:,.0f}",
             f"{c.output_tokens_per_second:,.0f}", c.binds] for c in search.choices]
    table = Table(f"{search.model} on {search.cards:,} × {search.device} ({search.link}) served by {search.engine}: "
                  f"ISL {search.isl:,}, OSL {search.osl:,}, TTFT ≤ {search.ttft_target * 1e3:,.1f} ms, "
                  f"TPOT ≤ {search.tpot_target * 1e3:,.2f} ms",
                  ["layout", "batch", "in flight", "TTFT (ms)", "TPOT (ms)", "tokens/s a card", "tokens/s",
                   "binds"], rows,
                  [f"{search.layouts_searched:,} layouts searched, {search.points:,} steady states costed. Expected "
                   "times (kernel efficiencies measured, cited in stdlib/efficiency); batch: requests a replica "
                   "runs; binds: what stops a larger batch."],
                  text_columns=1)
    text = table.text() if rows else (f"{search.model} on {search.cards:,} × {search.device}: no layout meets both "
                                      "targets with prefill and decode on the same cards\n")
    if search.split is not None:
        s = search.split
        text += (f"\nDisaggregated: prefill on {s.prefill.layout} ({s.prefill.batch:,} prompts a step), decode on "
                 f"{s.decode.layout} ({s.decode.batch:,} requests a replica)\n"
                 f"  TTFT {s.ttft_seconds * 1e3:,.1f} ms (hand-off {s.transfer_seconds * 1e3:,.2f} ms), TPOT "
                 f"{s.tpot_seconds * 1e3:,.2f} ms; {s.prefill_cards_per_decode_card:,.3f} prefill cards per decode "
                 f"card; {s.output_tokens_per_second_per_card:,.0f} output tokens/s a card\n")
    return text
