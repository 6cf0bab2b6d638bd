"""DeepSeek-V4's attention (transformers' DeepseekV4Attention; std.attention.dsv4's dsv4_attention): queries
through a q_rank latent, one shared record a position (its key and its value) kept for a sliding window,
learned sinks, a grouped low-rank output; a compressor per CSA or HCA layer (DeepseekV4CSACompressor with
its lightning indexer, DeepseekV4HCACompressor) pools every compress_rate positions into one entry."""

from __future__ import annotations

from archcost.dsl import ast

from ..reading.modules import Found, Linear, Norm, Where, children, linear, norm, own
from ..reading.paths import option
from ..reading.spec import call
from . import Recogniser

NEEDED = {"q_a_proj", "q_a_norm", "q_b_proj", "kv_proj", "kv_norm", "o_a_proj", "o_b_proj"}
WINDOW_OPTION = "window_record"


def window_record_option() -> ast.Option:
    """The spec's `window_record` option: one record a position first, as std.attention.dsv4 defaults to; the
    check runs transformers' cache."""
    return option(WINDOW_OPTION, "shared", "apart",
                  note="shared: one record a position, as DeepSeek's inference code keeps it; apart: transformers "
                       "(a sliding layer's cache holds the record as keys and again as values)")
COMPRESSOR = "compressor"  # the child of a CSA or HCA layer (None on the sliding layers)


def dsv4_attention(module, at: Where) -> Found | None:
    parts = children(module)
    heads, head_dim = getattr(module, "num_heads", None), getattr(module, "head_dim", None)
    if set(parts) - {COMPRESSOR} != NEEDED or own(module) != {"sinks": (heads,)} or not isinstance(head_dim, int):
        return None
    q_down, q_up, kv = (linear(parts[name]) for name in ("q_a_proj", "q_b_proj", "kv_proj"))
    groups = getattr(parts["o_a_proj"], "n_groups", None)
    grouped, out = linear(parts["o_a_proj"]), linear(parts["o_b_proj"])
    if None in (q_down, q_up, kv, grouped, out) or not isinstance(groups, int) or grouped.width_out % groups \
            or q_up != Linear(q_down.width_out, heads * head_dim, False) or kv != Linear(at.d, head_dim, False) \
            or grouped != Linear(heads * head_dim // groups, grouped.width_out, False) \
            or out != Linear(grouped.width_out, at.d, False) or norm(parts["kv_norm"]) != Norm("rmsnorm", head_dim) \
            or norm(parts["q_a_norm"]) != Norm("rmsnorm", q_down.width_out):
        return None
    kind = _compressed(parts.get(COMPRESSOR), at, head_dim, q_down.width_out)
    if kind is None:
        return None
    return Found(call("dsv4_attention", "d", heads=heads, head_dim=head_dim, q_rank=q_down.width_out,
                      window=module.sliding_window, **kind, groups=groups, group_rank=grouped.width_out // groups,
                      rotary=at.rotary(head_dim) or head_dim), mixer=True, post_norm=False)


def _compressed(compressor, at: Where, head_dim: int, q_rank: int) -> dict | None:
    """The `kind` arguments: swa without a compressor; hca for one of head_dim-wide entries; csa for one of
    two overlapping sets with an indexer (transformers' eager indexer scores every held entry: `rectangle`)."""
    if compressor is None:
        return {"kind": "swa", "window_record": WINDOW_OPTION}
    ratio = getattr(compressor, "compress_rate", None)
    parts = children(compressor)
    if not isinstance(ratio, int):
        return None
    if set(parts) == {"kv_proj", "gate_proj", "kv_norm"} and _pool(compressor, at.d, head_dim, ratio, 1):
        return {"kind": "hca", "ratio": ratio}
    index = parts.get("indexer")
    if set(parts) != {"kv_proj", "gate_proj", "kv_norm", "indexer"} or not _pool(compressor, at.d, head_dim, ratio, 2):
        return None
    index_heads, index_dim = getattr(index, "num_heads", None), getattr(index, "head_dim", None)
    inner = children(index)
    if set(inner) != {"kv_proj", "gate_proj", "kv_norm", "q_b_proj", "scorer"} \
            or not _pool(index, at.d, index_dim, ratio, 2) or getattr(index, "compress_rate", None) != ratio \
            or linear(inner["q_b_proj"]) != Linear(q_rank, index_heads * index_dim, False) \
            or own(inner["scorer"]) or set(children(inner["scorer"])) != {"weights_proj"} \
            or linear(children(inner["scorer"])["weights_proj"]) != Linear(at.d, index_heads, False):
        return None
    return {"kind": "csa", "ratio": ratio, "overlap": 2, "top": index.index_topk, "index_heads": index_heads,
            "index_dim": index_dim, "indexer": "rectangle"}


def _pool(module, d: int, width: int, ratio: int, overlap: int) -> bool:
    """A compressor's own weights: d → overlap·width entries and gates, a position bias of ratio × overlap·width,
    and the RMS norm of a finished entry (std.attention.dsv4's compressor)."""
    parts = children(module)
    entries = Linear(d, overlap * width, False)
    return all(name in parts and linear(parts[name]) == entries for name in ("kv_proj", "gate_proj")) \
        and own(module) == {"position_bias": (ratio, overlap * width)} \
        and norm(parts["kv_norm"]) == Norm("rmsnorm", width)


def _kind_words(found: ast.BlockCall) -> list[str]:
    """A run of layers is named by its attention's kind: swa, csa or hca."""
    given = {a.name: a.value for a in found.args if isinstance(a, ast.Keyword)}
    return [getattr(given.get("kind"), "id", "swa")]

RECOGNISER = Recogniser("compressed_attention", "sublayer", dsv4_attention, writes=("dsv4_attention",), attention=True,
                        kind_words=_kind_words, options=lambda _calls: [window_record_option()])
