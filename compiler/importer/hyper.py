"""Hyper-connections (std.depth's mhc and mhc_merge): `streams` residual streams of d around each sublayer,
one projection of all of them giving the coefficients that read the sublayer's input and write its output
back, and a merge of the streams before the head. DeepSeek-V4's DeepseekV4HyperConnection holds
2·s + s² coefficients (the stream-mixing matrix too, made doubly stochastic by Sinkhorn iterations) and
three scales; HY-V4's HYV4HyperConnection 2·s and two scales (no mixing matrix: `comb = false`). Their
input_norm is a weightless RMS norm."""

from __future__ import annotations

from archcost.dsl import ast

from .common import option
from .modules import children, own
from .spec import call

AROUND = ("attn_hc", "ffn_hc")  # a decoder layer's connections, before its mixer and its feed-forward
COMB_OPTION = "hc_comb"


def comb_option() -> ast.Option:
    """The spec's `hc_comb` option: transformers' matrix product first (the check against it uses the default)."""
    return option(COMB_OPTION, "matrix", "nonmatrix",
                  note="matrix: transformers (the streams mixed by a matmul, which FlopCounterMode counts); "
                       "nonmatrix: the chapter's weighted sums")


def connection(module, d: int, config, label: str) -> ast.BlockCall | None:
    """`mhc(d, streams = s, …) as label` for a hyper-connection module; None for anything else."""
    held = own(module)
    fn = held.get("fn", ())
    if set(held) != {"fn", "base", "scale"} or children(module) or len(fn) != 2 or fn[1] % d:
        return None
    streams = fn[1] // d
    if fn[0] == 2 * streams and held["base"] == (fn[0],) and held["scale"] == (2,):
        return call("mhc", "d", streams=streams, comb=False, label=label)
    sinkhorn = getattr(config, "hc_sinkhorn_iters", None)
    if fn[0] == 2 * streams + streams**2 and held["base"] == (fn[0],) and held["scale"] == (3,) \
            and isinstance(sinkhorn, int):
        return call("mhc", "d", streams=streams, sinkhorn=sinkhorn, comb_flops=COMB_OPTION, label=label)
    return None


def around(layer, d: int, config) -> dict[str, ast.BlockCall]:
    """The layer's connections by child name ({} for a layer without them)."""
    parts = dict(layer.named_children())
    found = {name: connection(parts[name], d, config, name) for name in AROUND if name in parts}
    return found if found and None not in found.values() else {}


def interleaved(calls: tuple[ast.BlockCall, ...], connections: dict) -> tuple[ast.BlockCall, ...] | None:
    """Each connection before its sublayer: attn_hc, the mixer, ffn_hc, the feed-forward."""
    if set(connections) != set(AROUND) or len(calls) != len(AROUND):
        return None
    return tuple(item for name, sublayer in zip(AROUND, calls) for item in (connections[name], sublayer))


def merge(module, d: int) -> ast.BlockCall | None:
    """`mhc_merge(d, streams = s)` for the streams' merge before the final norm (DeepseekV4HyperHead,
    HYV4HyperHead: s weights from all streams, a base each and one scale)."""
    held = own(module)
    fn = held.get("hc_fn", ())
    if set(held) != {"hc_fn", "hc_base", "hc_scale"} or children(module) or len(fn) != 2 \
            or fn[1] != fn[0] * d or held["hc_base"] != (fn[0],) or held["hc_scale"] != (1,):
        return None
    return call("mhc_merge", "d", streams=fn[0], label="merge")
