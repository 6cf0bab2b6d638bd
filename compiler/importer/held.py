"""What the model transformers built holds in its cache after a prefill, counted for the import's check: the keys
and values that grow with the context, and the state that does not (convolution slots, recurrent matrices)."""

from __future__ import annotations

import warnings

from .meta import HANDED_CACHE, RECURRENT_STATE, STATE_KEYWORD, fed, handed_cache, libraries, quiet, running


class Prefills:
    """The model's prefills of one request the check reads its cache after, each run once (the keys and values
    and the fixed state are read after the same short prompt)."""

    def __init__(self, model):
        self.model, self.runs = model, {}

    def __call__(self, new: int):
        if new not in self.runs:
            self.runs[new] = _prefilled(self.model, new)
        return self.runs[new]


def cache_values(prefills: Prefills, new: int) -> int:
    """The keys and values the model's cache holds after a prefill of `new` positions (one request), as a count
    of values (the meta model's own dtype is not the checkpoint's), the indexer's keys included; recurrent and
    convolution states, which do not grow, are left out."""
    torch, _ = libraries()
    out, handed = prefills(new)
    # RWKV's output has no past_key_values: its state is fixed in size, no keys or values
    cache = handed.get(STATE_KEYWORD) or (getattr(out, "past_key_values", None) if RECURRENT_STATE not in out
                                          else None)
    # DeepSeek Sparse Attention's layers also hold the indexer's keys; DeepSeek-V4's CSA and HCA layers their
    # compressed entries by name (the attention's, the indexer's: their pending rows are bounded, left out as
    # a convolution's state is) and their values as their keys (one tensor, counted once)
    layers = getattr(cache, "layers", ())
    tensors = [getattr(layer, name, None) for layer in layers for name in ("keys", "values", "indexer_keys")]
    tensors += [entries for layer in layers for entries in (getattr(layer, "compressed_kv", None) or {}).values()]
    return sum(t.numel() for t in {id(t): t for t in tensors if isinstance(t, torch.Tensor)}.values())


FIXED_STATE = ("conv_states", "recurrent_states")  # a linear-attention cache layer's slots and matrices
MODULE_STATE = ("conv1d_state", "recurrent_states")  # RecurrentGemma's, kept in its modules between calls
LAYER_STATES = "rnn_state"  # a cache of each layer's recurrent tensors by layer index (xLSTMCache's C, n and m)


def fixed_values(prefills: Prefills, new: int) -> int | None:
    """The values of the state that does not grow (convolution slots, recurrent matrices) the model holds after a
    prefill of `new` positions (one request): its cache layers' conv_states and recurrent_states, MiniMax's
    linear_cache, a cache's tensors by layer (LAYER_STATES), RWKV's returned state, or RecurrentGemma's modules';
    None when the model keeps it nowhere the check knows."""
    torch, _ = libraries()
    out, handed = prefills(new)
    if RECURRENT_STATE in out:
        return sum(t.numel() for t in getattr(out, RECURRENT_STATE) if isinstance(t, torch.Tensor))
    cache = handed.get(STATE_KEYWORD) or getattr(out, "past_key_values", None)
    found = []
    for layer in getattr(cache, "layers", ()):
        for name in FIXED_STATE:
            held = getattr(layer, name, None)
            found += list(held.values()) if isinstance(held, dict) else [held]
    found += [t for kept in getattr(cache, "linear_cache", ()) for t in (kept if isinstance(kept, list) else [kept])]
    found += [t for kept in (getattr(cache, LAYER_STATES, None) or {}).values() for t in kept]
    if type(prefills.model).__name__ in HANDED_CACHE:
        found += [getattr(module, name, None) for module in prefills.model.modules() for name in MODULE_STATE]
    tensors = {id(t): t for t in found if isinstance(t, torch.Tensor)}
    return sum(t.numel() for t in tensors.values()) if tensors else None


def _prefilled(model, new: int):
    """(the model's output after a prefill of `new` zero tokens for one request, the cache it was handed)."""
    handed = handed_cache(model)
    with running(model), warnings.catch_warnings(), quiet():
        warnings.simplefilter("ignore")
        out = model(**fed(model, 1, 0, new), **handed)
    return out, handed
