"""A training step as text: per card its memory ledger and work, the step's traffic, FLOPs and bounds."""

from __future__ import annotations

from .table import Table

GB = 1e9
STAGES = {"whole": "each", "first": "first stage", "last": "last stage"}
GROUPS = {"tp": "tensor parallel", "cp": "context parallel", "ep": "expert all-to-all", "nodes": "expert, between "
          "servers", "pp": "pipeline sends", "dp": "gradient sync (dp)", "dp_experts": "expert gradient sync"}


def train_text(report) -> str:
    setup = (f"{report.global_batch:,} sequences of {report.seq:,} tokens, micro-batches of {report.micro_batch} "
             f"({report.micro_batches} per replica, {report.schedule}); recompute {report.recompute}, ZeRO "
             f"{report.zero}, {report.optimizer} with {report.grad_format} gradients, dropout "
             f"{'on' if report.dropout else 'off'}")
    lines = [f"{report.model} training on {report.layout.text()}", f"  {setup}", ""]
    lines.append(_memory_table(report).text().rstrip("\n"))
    lines += ["", f"  FLOPs per step, all cards: model {report.model_flops:,.4g} (3 × forward), hardware "
                  f"{report.flops_matrix:,.4g} (with recomputation); {report.tokens:,} tokens"]
    busiest = next(card for card in report.cards if card.stage == report.busiest)
    if busiest.traffic:
        lines += ["", "  collectives per step on the busiest card (bytes it sends):"]
        lines += [f"    {GROUPS.get(t.group, t.group):<24} {t.sent_bytes / GB:>12,.3f} GB in {t.steps:,} steps"
                  + (f" ({t.network_bytes / GB:,.3f} GB between servers)" if t.network_bytes else "")
                  for t in busiest.traffic]
    if report.times is not None:
        lines += [""] + _times_lines(report.times, len(report.cards) > 1)
    return "\n".join(lines) + "\n"


def _memory_table(report) -> Table:
    rows = []
    for card in report.cards:
        mark = " (busiest)" if card.stage == report.busiest and len(report.cards) > 1 else ""
        name = STAGES.get(card.stage, card.stage)
        rows.append([f"{name}{mark}", f"{card.params / 1e9:,.3f}", f"{card.weight_bytes / GB:,.2f}",
                     f"{card.gradient_bytes / GB:,.2f}", f"{card.optimizer_bytes / GB:,.2f}",
                     f"{card.activation_bytes / GB:,.2f}", f"{card.activation_bytes_per_layer / 1e6:,.1f}",
                     f"{card.micro_batches_held:.4g}", f"{card.memory_bytes / GB:,.2f}",
                     f"{card.flops_matrix / 1e15:,.3f}"])
    return Table("per card, one step", ["card", "params (B)", "weights (GB)", "gradients (GB)", "optimizer (GB)",
                                        "activations (GB)", "per layer (MB)", "held", "memory (GB)",
                                        "matrix (PFLOPs)"], rows,
                 ["activations: kept for the backward passes of the micro-batches the card holds at once (held); "
                  "per layer: one micro-batch, one layer. memory: all of it, with the layer full recomputation "
                  "rebuilds."])


def _times_lines(t, stages: bool) -> list[str]:
    source = {"given": "at the given step time", "predicted": "at the predicted step time",
              "bound": "at the full-overlap bound (an upper bound)"}[t.step_time_from]
    paced = f", paced by the {STAGES.get(t.stage, t.stage)}'s card" if stages else ""
    return [f"  bounds on {t.device} ({t.compute_format} peak) with {t.link}{paced}:",
            f"    compute {t.compute:,.3f} s, communication {t.communication:,.3f} s, pipeline bubble "
            f"{t.bubble:.1%} of the ideal",
            f"    step: no overlap {t.no_overlap:,.3f} s, full overlap {t.full_overlap:,.3f} s",
            f"    MFU {t.mfu:.1%}, HFU {t.hfu:.1%} {source}, {t.step_time:,.3f} s"
            + ("" if t.fits else "; the busiest card does not fit in the device's memory"),
            *([f"    expected step {t.expected:,.3f} s, MFU {t.expected_mfu:.1%} (kernel efficiencies measured on the "
               f"device, {t.efficiency_table})"] if t.expected is not None else [])]
