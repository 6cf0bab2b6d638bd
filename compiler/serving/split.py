"""Disaggregated serving through the steady state of throughput.py: the prompts on a prefill layout, the decodes
on another. The decode side is the same steady state with no prefill beside it, the prefill side packs whole
prompts into steps of the engine's token budget, and the first token leaves the prefill with the state handed
over (Splitwise, Patel et al. 2024; DistServe, Zhong et al. 2024)."""

from __future__ import annotations

from pydantic import BaseModel

from ..terms.scenario import Scenario
from .steady import Serving, call_times, calls


class Side(BaseModel):
    """One side of a disaggregated deployment on its layout."""

    layout: str
    cards: int
    batch: int                 # requests a replica runs (decode) or prompts a step packs (prefill)
    step_seconds: float
    step_bound_seconds: float
    requests_per_second_per_card: float


class Disaggregated(BaseModel):
    model: str
    device: str
    engine: str
    isl: int
    osl: int
    prefill: Side
    decode: Side
    transfer_seconds: float        # one step's prompts' state from the busiest prefill card over the network
    ttft_seconds: float            # the prefill step and the hand-off (the prefill yields the first token)
    tpot_seconds: float
    prefill_cards_per_decode_card: float
    output_tokens_per_second_per_card: float   # both sides' cards together
    times: dict[str, float] = {}


def prefill_side(serving: Serving, layout, prompts: int) -> tuple[Side, float]:
    """A prefill replica packing `prompts` whole prompts into a step (side, the hand-off of their state)."""
    from ..cards.nccl import Use, seconds
    from ..numbers.evaluate import evaluate

    expected, bound = call_times(serving, layout, "prefill", Scenario(B=prompts * layout.dp, P=serving.isl))
    per_request = evaluate(serving.compiled, "prefill", Scenario(B=1, P=serving.isl)).state_bytes
    held = per_request * prompts / (layout.tp * layout.pp)
    transfer = seconds(Use(kind="send", cards=2, servers=2, copies=1, sent=held, network=1.0), serving.link,
                       serving.network)
    return Side(layout=layout.text(), cards=layout.cards, batch=prompts, step_seconds=expected,
                step_bound_seconds=bound, requests_per_second_per_card=prompts * layout.dp / expected / layout.cards
                ), transfer


def decode_side(serving: Serving, layout, batch: int) -> Side:
    decode, _ = calls(serving, layout, batch, 0.0)
    return Side(layout=layout.text(), cards=layout.cards, batch=batch, step_seconds=decode[0],
                step_bound_seconds=decode[1],
                requests_per_second_per_card=batch * layout.dp * serving.tokens_per_step / decode[0] / serving.osl
                / layout.cards)


def disaggregated(serving: Serving, prefill: Side, transfer: float, decode: Side) -> Disaggregated:
    """Both sides together: prefill cards per decode card so that neither waits, and what a card of the whole
    deployment yields: 1 / (1/d + 1/p) requests a second a card, d and p each side's own."""
    d, p = decode.requests_per_second_per_card, prefill.requests_per_second_per_card
    per_card = serving.osl / (1 / d + 1 / p)
    tpot = decode.step_seconds / serving.tokens_per_step
    ttft = prefill.step_seconds + transfer
    return Disaggregated(model=serving.compiled.name, device=serving.device.name, engine=serving.engine.name,
                         isl=serving.isl, osl=serving.osl, prefill=prefill, decode=decode, transfer_seconds=transfer,
                         ttft_seconds=ttft, tpot_seconds=tpot, prefill_cards_per_decode_card=d / p,
                         output_tokens_per_second_per_card=per_card,
                         times={"ttft_bound": prefill.step_bound_seconds + transfer,
                                "tpot_bound": decode.step_bound_seconds / serving.tokens_per_step,
                                "ttft_expected": ttft, "tpot_expected": tpot})
