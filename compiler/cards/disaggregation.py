"""Disaggregated serving: prefill on one layout, decode on another, the state handed over between them.

A request's prompt runs on the prefill layout; the state it leaves (its KV cache, recurrent states, windows:
exactly what `eval --phase prefill` counts as state_bytes) travels to the decode layout, each prefill card
sending its part over its own network link at once (Splitwise, Patel et al. 2024; DistServe, Zhong et al.
2024). Time to first token is at least the prefill's bound plus that hand-off; time per output token at least
the decode step's bound at the request's last position. Given targets for both, a prefill layout finishes B
prompts in its step time t_p while a decode layout carries B requests through G tokens in G·t_d: it needs
t_p / (G·t_d) prefill layouts per decode layout to be kept busy.
"""

from __future__ import annotations

from pydantic import BaseModel

from ..numbers.evaluate import evaluate
from ..terms.scenario import Scenario
from .degrees import Layout
from .layout import LayoutReport, layout_report
from .nccl import Use, seconds


class Disaggregation(BaseModel):
    model: str
    prefill: LayoutReport
    decode_first: LayoutReport       # the first decode step (history P)
    decode_last: LayoutReport        # the last (history P + G − 1): the slowest
    kv_transfer_bytes: int           # the state one request's prefill leaves
    transfer_seconds: float          # B requests' state from the busiest prefill card over its network link
    ttft: float                      # prefill bound + hand-off (seconds)
    tpot: float                      # the last decode step's bound
    prefill_per_decode: float        # prefill layouts per decode layout to keep both busy (expected times, else
                                     # bounds)
    card_ratio: float                # prefill cards per decode card
    ttft_met: bool | None = None
    tpot_met: bool | None = None
    # expected (compiler/timing), where the device has kernel measurements: the same sums of the sides' expected
    # times; the targets are judged on them when they are there
    ttft_expected: float | None = None
    tpot_expected: float | None = None
    times: dict[str, float] = {}


def disaggregate(compiled, prefill: Layout, decode: Layout, shape: Scenario, sheets, ttft: float | None = None,
                 tpot: float | None = None, peak_format: str | None = None, table=None) -> Disaggregation:
    """Both sides of a disaggregated deployment for B requests of P prompt tokens and G output tokens."""
    device, link, network = sheets
    before = layout_report(compiled, prefill, "prefill", Scenario(B=shape.B, P=shape.P), device, link,
                           peak_format, network, table)
    steps = [layout_report(compiled, decode, "decode", Scenario(B=shape.B, S=history), device, link, peak_format,
                           network, table) for history in (shape.P, shape.P + shape.G - 1)]
    per_request = evaluate(compiled, "prefill", Scenario(B=1, P=shape.P)).state_bytes
    held = max(card.state_bytes for card in before.cards)  # B requests' state, split over a replica's cards
    # a point-to-point send over the network, priced as every collective is (cards/nccl.py)
    transfer = seconds(Use(kind="send", cards=2, servers=2, copies=1, sent=held, network=1.0), link, network)
    first_token = before.times.full_overlap + transfer
    per_token = steps[1].times.full_overlap
    expected = {}
    if before.times.expected is not None:
        expected = {"ttft_expected": before.times.expected + transfer, "tpot_expected": steps[1].times.expected}
    judged = expected or {"ttft_expected": first_token, "tpot_expected": per_token}
    # the sides kept busy by their expected times where there are any, else by their bounds
    busy = before.times.expected if expected else before.times.full_overlap
    ratio = busy / (shape.G * judged["tpot_expected"]) if judged["tpot_expected"] > 0 else 0.0
    return Disaggregation(**expected, times={"ttft_bound": first_token, "tpot_bound": per_token, **expected},
                          model=compiled.name, prefill=before, decode_first=steps[0], decode_last=steps[1],
                          kv_transfer_bytes=per_request, transfer_seconds=transfer, ttft=first_token, tpot=per_token,
                          prefill_per_decode=ratio, card_ratio=ratio * prefill.cards / decode.cards,
                          ttft_met=None if ttft is None else judged["ttft_expected"] <= ttft,
                          tpot_met=None if tpot is None else judged["tpot_expected"] <= tpot)
