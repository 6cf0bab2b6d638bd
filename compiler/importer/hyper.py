"""Hyper-connections (std.depth's mhc and mhc_merge): `streams` residual streams of d around each sublayer,
one projection of all of them giving the coefficients that read the sublayer's input and write its output
back, and a merge of the streams before the head. DeepSeek-V4's DeepseekV4HyperConnection holds
2·s + s² coefficients (the stream-mixing matrix too, made doubly stochastic by Sinkhorn iterations) and
three scales; HY-V4's HYV4HyperConnection 2·s and two scales (no mixing matrix: `comb = false`). Their
input_norm is a weightless RMS norm."""

from __future__ import annotations

from archcost.dsl import ast

from .reading.modules import Linear, children, linear, norm, own
from .reading.paths import option
from .reading.spec import call, with_keyword

AROUND = ("attn_hc", "ffn_hc")  # a decoder layer's connections, before its mixer and its feed-forward
GATED_AROUND = ("attn_hyper_connection", "mlp_hyper_connection")  # Qwen4-Exp's
COMB_OPTION = "hc_comb"


def comb_option() -> ast.Option:
    """The spec's `hc_comb` option: the weighted sums first, as std.depth's mhc defaults to; the check runs
    transformers' matrix product."""
    return option(COMB_OPTION, "nonmatrix", "matrix",
                  note="nonmatrix: the chapter's weighted sums, as DeepSeek's kernels mix the streams; matrix: "
                       "transformers (the streams mixed by a matmul, which FlopCounterMode counts)")


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
    """The layer's connections by child name, in the sublayers' order ({} for a layer without them)."""
    parts = dict(layer.named_children())
    for names, read in ((AROUND, lambda m, name: connection(m, d, config, name)),
                        (GATED_AROUND, lambda m, name: gated_residual(m, d, name))):
        found = {name: read(parts[name], name) for name in names if name in parts}
        if found:
            return found if set(found) == set(names) and None not in found.values() else {}
    return {}


def holds_norms(connections: dict) -> bool:
    """Whether the connections norm the sublayers' input themselves (Qwen4-Exp's: the sublayers have none)."""
    return bool(connections) and all(c.name == "gated_residual" for c in connections.values())


def interleaved(calls: tuple[ast.BlockCall, ...], connections: dict) -> tuple[ast.BlockCall, ...] | None:
    """Each connection before its sublayer: attn_hc, the mixer, ffn_hc, the feed-forward; behind a gated
    residual, a sublayer's own residual add is the connection's write-back."""
    if len(calls) != len(connections):
        return None
    if holds_norms(connections):
        calls = with_keyword(calls, "residual_add", False, only_where_taken=True)
    return tuple(item for connection, sublayer in zip(connections.values(), calls) for item in (connection, sublayer))


def gated_residual(module, d: int, label: str, combine: bool = True) -> ast.BlockCall | None:
    """`gated_residual(d, streams = s, rank = r) as label` for Qwen4ExpTextGatedResidual: a norm of s·d, the
    low-rank mixer s·d → r → s·d, and (combine) the s·d → s write-back weights; None for anything else."""
    parts = children(module)
    kind = norm(parts["hc_norm"]) if "hc_norm" in parts else None
    down = linear(parts["input_mix_weight_down"]) if "input_mix_weight_down" in parts else None
    if own(module) or kind is None or kind.block != "rmsnorm" or not kind.width or kind.width % d or down is None:
        return None
    streams, rank = kind.width // d, down.width_out
    expected = {"hc_norm", "input_mix_weight_down", "input_mix_weight_up", *(("block_inject_weight",) if combine
                                                                            else ())}
    if set(parts) != expected or down != Linear(streams * d, rank, False) \
            or linear(parts["input_mix_weight_up"]) != Linear(rank, streams * d, False) \
            or (combine and linear(parts["block_inject_weight"]) != Linear(streams * d, streams, False)):
        return None
    return call("gated_residual", "d", streams=streams, rank=rank, combine=None if combine else False, label=label)


def merge(module, d: int) -> ast.BlockCall | None:
    """The streams' merge before the head: `mhc_merge(d, streams = s)` for DeepseekV4HyperHead and HYV4HyperHead
    (s weights from all streams, a base each and one scale), a gated residual without its write-back for
    Qwen4-Exp's hyper_connection_mixer."""
    return _weighed_merge(module, d) or gated_residual(module, d, "merge", combine=False)


def _weighed_merge(module, d: int) -> ast.BlockCall | None:
    held = own(module)
    fn = held.get("hc_fn", ())
    if set(held) != {"hc_fn", "hc_base", "hc_scale"} or children(module) or len(fn) != 2 \
            or fn[1] != fn[0] * d or held["hc_base"] != (fn[0],) or held["hc_scale"] != (1,):
        return None
    return call("mhc_merge", "d", streams=fn[0], label="merge")
