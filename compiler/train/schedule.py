"""Pipeline schedules: how many micro-batches' activations a stage holds, and the bubble.

GPipe runs every micro-batch forward before any backward: each stage holds all m. 1F1B (PipeDream-Flush)
starts backward passes as soon as the last stage can: stage r (0 the first) holds at most p − r (Narayanan
et al. 2021 §2.2.1: "p or fewer"). The interleaved schedule gives each card v chunks of L/(p·v) layers; rank
r runs (p − r − 1)·2 + (v − 1)·p warm-up chunk passes before its first backward (Megatron-LM's
`get_forward_backward_func`, pipeline_parallel/schedules.py), so the first stage holds
L·(1 + (p − 1)/(p·v)) layers' worth (Korthikanti et al. 2022 §4.2.3). All three idle (p − 1)/(v·m) of the
ideal time (v = 1 but for interleaving; Narayanan et al. 2021 §2.2).
"""

from __future__ import annotations

from fractions import Fraction

SCHEDULES = ("1f1b", "interleaved", "gpipe")


def in_flight(schedule: str, rank: int, pp: int, vp: int, micro_batches: int) -> Fraction:
    """Micro-batches' worth of its layers' activations stage `rank` holds at its fullest."""
    if schedule == "gpipe":
        return Fraction(micro_batches)
    if schedule == "interleaved":
        chunks = min((pp - rank - 1) * 2 + (vp - 1) * pp + 1, micro_batches * vp)
        return Fraction(chunks, vp)
    return Fraction(min(pp - rank, micro_batches))


def bubble(pp: int, vp: int, micro_batches: int) -> Fraction:
    """The pipeline's idle time over the ideal time of the step's micro-batches."""
    return Fraction(pp - 1, vp * micro_batches)
