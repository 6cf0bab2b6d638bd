"""The time of one collective as NCCL prices it: a base latency per algorithm and protocol, a latency per hop
inside a server (NVLink or PCIe) and between servers, and the protocol's share of the link's bandwidth;
NCCL runs the algorithm and protocol its model finds fastest for the size, and so does this one.

Constants from NCCL's tuning model, src/graph/tuning.cc (NVIDIA/nccl @ b6475625), in microseconds:
`baseLat` (Ring LL 6.6, LL128 14.0, Simple 8.4; Tree 6.8, 14.0, 0) and `hwLat` per hop (Ring on NVLink .6,
1.9, 3.4; on PCIe 1.0, 2.5, 5.7; on the network 2.7, 4.0, 14.0; Tree on NVLink .6, 1.25, 28, PCIe 1.0, 1.9,
28, network 5.0, 8.5, 28). A ring all-reduce of n ranks over N servers takes 2(n − 1) steps, 2N of them
between servers (N > 1); a reduce-scatter or all-gather n − 1, N − 1 between servers; a tree all-reduce
2((n/N − 1) hops inside plus log₂ N between). Bandwidth shares: LL carries 8 bytes of data per 16 (¼ of
the bus for an all-reduce or across servers, ⅓ otherwise), LL128 0.92, Simple all of it; a tree runs at
0.92 of the bus and moves the buffer twice (LL ×1/3.8, LL128 ×7/9 in a server, 120/128 across). On an
NVLink 4 or 5 server the switch can reduce (NVLS: 23 µs, the buffer at 5/6 of the link), which is how
nccl-tests reports 460-480 GB/s of bus bandwidth for an 8 × H100 all-reduce over 450 GB/s links.

An all-to-all and a pipeline send are point-to-point: every pair sends at once, the bytes inside a server
over its link and those between servers over the network at the same time, after one hop's latency (the
lowest protocol's, NCCL's send/recv and DeepEP's kernels alike). So each figure is what the fastest
protocol can do: a lower bound against measurements (an 8-card NVLink all-reduce of a few bytes: 15 µs,
where a ring step of 3 µs each gave 42).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

PROTOCOLS = ("LL", "LL128", "Simple")
US = 1e-6
BASE = {"ring": (6.6, 14.0, 8.4), "tree": (6.8, 14.0, 0.0)}
HOP = {"nvlink": {"ring": (0.6, 1.9, 3.4), "tree": (0.6, 1.25, 28.0)},
       "pci": {"ring": (1.0, 2.5, 5.7), "tree": (1.0, 1.9, 28.0)},
       "net": {"ring": (2.7, 4.0, 14.0), "tree": (5.0, 8.5, 28.0)}}
# NVLink SHARP: the NVSwitch of an NVLink 4 or 5 server reduces in the switch (NCCL's NVLS algorithm: one
# 23 µs hop, the buffer at 5/6 of the bus as its algorithm bandwidth)
NVLS_HOP, NVLS_SHARE = 23.0, 5 / 6
RING_STEPS = {"all_reduce": lambda n: 2 * (n - 1), "reduce_scatter": lambda n: n - 1, "all_gather": lambda n: n - 1}


@dataclass(frozen=True)
class Use:
    """One collective one card takes part in: `copies` of it, each sending `sent` bytes from the card, in a
    group of `cards` over `servers` servers, `network` of the bytes between servers."""

    kind: str
    cards: int
    servers: int
    copies: float
    sent: float
    network: float


def link_class(name: str) -> str:
    """NCCL's hardware class of an interconnect sheet, by its name: NVLink, PCIe, or a network."""
    return "nvlink" if name.startswith("nvlink") else "pci" if name.startswith("pcie") else "net"


def seconds(use: Use, link, network) -> float:
    """All copies of a collective, each at the fastest algorithm and protocol."""
    if use.copies == 0 or use.cards == 1:
        return 0.0
    figures = (use.kind, use.cards, use.servers, use.sent)
    if use.kind in RING_STEPS:
        one = min(_ring(*figures, link, network, p, SCALARS) for p in range(3))
        if use.kind == "all_reduce":
            one = min(one, *(_tree(*figures[1:], link, network, p, SCALARS) for p in range(3)))
        if use.servers == 1 and link.nvls:
            one = min(one, _nvls(use.kind, use.cards, use.sent, link, SCALARS))
    else:
        one = min(_pairwise(use.sent, use.network, link, network, p, SCALARS) for p in range(3))
    return use.copies * one


def seconds_of_arrays(kind: str, cards, servers, copies, sent, network, link, across):
    """`seconds` over numpy arrays of uses of one kind (the layout search's screen, screen.py): the same
    formulas, each array element one use (cards, servers, copies, bytes each copy sends, the part of them
    between servers); `across` the network link."""
    import numpy as np  # the screen's import: the exact path never loads numpy

    figures = (kind, cards, servers, sent)
    if kind in RING_STEPS:
        one = np.minimum.reduce([_ring(*figures, link, across, p, np) for p in range(3)])
        if kind == "all_reduce":
            one = np.minimum(one, np.minimum.reduce([_tree(*figures[1:], link, across, p, np) for p in range(3)]))
        if link.nvls:
            one = np.where(servers == 1, np.minimum(one, _nvls(kind, cards, sent, link, np)), one)
    else:
        one = np.minimum.reduce([_pairwise(sent, network, link, across, p, np) for p in range(3)])
    return np.where((copies == 0) | (cards == 1), 0.0, copies * one)


class SCALARS:
    """What the formulas below ask of numpy, for one use of plain numbers (the same arithmetic, in order)."""

    log2, maximum = staticmethod(math.log2), staticmethod(max)

    @staticmethod
    def where(condition, yes, no):
        return yes if condition else no


# Each formula for a use of plain numbers (ops = SCALARS) or for numpy arrays of uses (ops = numpy); the
# `where`s guard the arrays' elements a use of one card would divide by zero in (seconds never asks for those).

def _ring(kind: str, n, servers, sent, link, network, p: int, ops):
    steps = RING_STEPS[kind](n)
    across = servers > 1
    between = ops.where(across, 2 * servers, 0) if kind == "all_reduce" else servers - 1
    inside = HOP[link_class(link.name)]["ring"][p]
    latency = BASE["ring"][p] + (steps - between) * inside + between * HOP["net"]["ring"][p]
    share = (ops.where(across | (kind == "all_reduce"), 0.25, 1 / 3), 0.92, 1.0)[p]
    bandwidth = ops.where(across, network.bandwidth, link.bandwidth) * share
    return latency * US + sent / bandwidth


def _tree(n, servers, sent, link, network, p: int, ops):
    inside = HOP[link_class(link.name)]["tree"][p]
    latency = BASE["tree"][p] + 2 * ((n / servers - 1) * inside + ops.log2(servers) * HOP["net"]["tree"][p])
    share = (1 / 3.8, ops.where(servers == 1, 7 / 9, 120 / 128), 1.0)[p]
    bandwidth = ops.where(servers > 1, network.bandwidth, link.bandwidth) * 0.92 * share
    buffer = sent * n / ops.where(n > 1, 2 * (n - 1), 1)  # the ring's bytes sent back to the buffer's size
    return latency * US + 2 * buffer / bandwidth


def _nvls(kind: str, n, sent, link, ops):
    steps = RING_STEPS[kind](n)
    buffer = sent * n / ops.where(steps > 0, steps, 1)  # the ring's bytes sent back to the buffer's size
    return NVLS_HOP * US + buffer / (link.bandwidth * NVLS_SHARE)


def _pairwise(sent, part_outside, link, network, p: int, ops):
    outside = sent * part_outside
    hop = ops.where(outside > 0, HOP["net"]["ring"][p], HOP[link_class(link.name)]["ring"][p])
    share = (ops.where(outside > 0, 0.25, 1 / 3), 0.92, 1.0)[p]
    return hop * US + ops.maximum((sent - outside) / (link.bandwidth * share), outside / (network.bandwidth * share))


# a layout's collectives (cards/nccl.py's kinds) and the kernels of the efficiency tables that measure them
COLLECTIVES = {"all_reduce": "allreduce", "all_gather": "allgather", "reduce_scatter": "reducescatter",
               "all_to_all": "alltoall"}


def collective_seconds(use, link, network, table, device, bound: float | None = None) -> float:
    """One collective's expected time: within one server, its bytes at the link's bandwidth over the fraction the
    measured collectives of that kind and size reach (nccl-tests' bus bandwidth), never below NCCL's own cost
    model (the bound); between servers, or with no measured point, that model alone."""
    from ..timing import fractions

    bound = seconds(use, link, network) if bound is None else bound  # `bound`: the caller's own seconds()
    kind = COLLECTIVES.get(use.kind)
    if table is None or kind is None or use.servers != 1 or use.cards == 1 or use.copies == 0:
        return bound
    steps = RING_STEPS.get(use.kind, lambda n: n - 1)(use.cards)
    buffer = use.sent * use.cards / steps if steps else use.sent  # the sent bytes back to the buffer's size
    shape = {"bytes": buffer, "ranks": use.cards}
    found = fractions.fraction(table, kind, None, shape, device, link)
    if found is None:
        return bound
    return max(bound, use.copies * fractions.roofline_seconds(kind, None, shape, device, link) / found[0])
