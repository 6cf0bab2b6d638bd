"""transformers' own model of a config, built on PyTorch's meta device (shapes only: no weights, no memory, no
download), and what PyTorch's FlopCounterMode counts when it runs.

torch and transformers come with the `hf` extra (`pip install "archcost[hf]"`); they are imported here, when
the import from the modeling code asks for them, never by the plain install's commands.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import warnings
from typing import NamedTuple

from archcost.dsl.errors import ArchError, Diagnostic

from .config import Config

# the config's fields that say which class to build or where the file came from, not the model itself
NOT_FIELDS = ("model_type", "architectures", "transformers_version", "_name_or_path", "auto_map")
# (batch, cached positions, new positions) the check runs: two prefills, then the decode steps after them
CHECK_SHAPES = ((1, 0, 5), (2, 0, 9), (1, 5, 1), (2, 9, 1))
# prompts the cache is measured after: their difference is the keys and values of two positions (shorter than
# any window, so a sliding layer still keeps every one)
STATE_KEYWORD = "cache"  # the keyword the state-space models' forward takes their recurrent state by
RECURRENT_STATE = "state"  # RWKV's: the keyword, and the output's field
CACHE_PROMPTS = (2, 4)
# building and running a model costs time per layer: the deepest published decoders have a few hundred
MAX_BUILT_LAYERS = 1_000
# a model whose forward the meta device cannot run (a data-dependent op: torch.nonzero, Tensor.item) is run again
# with real weights on the CPU when this small (a test's small config, ~200 MB in fp32); a full-size one: E505
MAX_CPU_PARAMS = 50_000_000


def libraries():
    """(torch, transformers), or E504 saying how to install them."""
    try:
        import torch
        import transformers
    except ImportError as missing:
        raise ArchError([Diagnostic(
            code="E504", message=f"the import from the modeling code needs torch and transformers ({missing.name} "
                                 "is not installed)",
            hint='pip install "archcost[hf]"   (the plain install stays without torch)')]) from None
    transformers.logging.set_verbosity_error()
    return torch, transformers


class Built(NamedTuple):
    """The model transformers builds for a config, and the config object it read."""

    model: object           # a PreTrainedModel on the meta device
    config: object          # its (text) PretrainedConfig
    wrapper: str | None     # a vision-language checkpoint's model type: its text model is what was built
    auto: object            # the auto class it was built by
    built_from: object      # and the config it was built from


def refuse_unknown(config: Config, model_type: str, schemas: list[str]) -> None:
    """E501 for a model type the installed transformers does not know (a remote-code model's `auto_map` is
    not run: its code is not transformers')."""
    _, transformers = libraries()
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    if model_type not in CONFIG_MAPPING:
        raise config.error("E501", f"model_type {json.dumps(model_type)} is not supported: neither a schema of "
                                   f"archcost nor transformers {transformers.__version__} reads it", "model_type",
                           hint="read by a schema: " + ", ".join(schemas) + "; a remote-code model (`auto_map`) is "
                                "not run")


def build(config: Config) -> Built:
    """transformers' CausalLM for `config` (or, for a vision-language checkpoint, for its text config), on
    the meta device, eager attention, experts run one batched matrix product per expert row
    (`batched_mm`) where the model offers the choice."""
    torch, transformers = libraries()
    model_type = config.values["model_type"]
    fields = {k: v for k, v in config.values.items() if k not in NOT_FIELDS}
    try:
        with warnings.catch_warnings():  # its deprecation notes (`rope_scaling`) are not the user's output
            warnings.simplefilter("ignore")
            whole = transformers.AutoConfig.for_model(model_type, **fields)
            inner = whole.get_text_config()
        layers = inner.num_hidden_layers
    except Exception as refused:  # transformers' own validation: its message says which field
        raise config.error("E505", f"transformers cannot build this config: {_first_line(refused)}", "model_type",
                           hint="fix the field transformers names") from None
    if not isinstance(layers, int) or not 0 < layers <= MAX_BUILT_LAYERS:
        raise config.error("E505", f"num_hidden_layers {layers!r}: the model built on the meta device holds 1 to "
                                   f"{MAX_BUILT_LAYERS:,} layers", "model_type")
    try:
        auto, built_from = _auto_class(transformers, inner, whole)
        model = _built(auto, built_from, "meta")
    except Exception as refused:  # the modeling code's own __init__: any exception it raises is its own
        raise config.error("E505", f"transformers cannot build model_type {json.dumps(inner.model_type)}: "
                                   f"{_first_line(refused)}", "model_type") from None
    return Built(model, inner, model_type if inner is not whole and not _holds_its_text(whole) else None, auto,
                 built_from)


def _built(auto, built_from, device: str):
    torch, _ = libraries()
    with warnings.catch_warnings(), torch.device(device), quiet():
        warnings.simplefilter("ignore")
        model = auto.from_config(built_from, attn_implementation="eager")
    if getattr(model, "_can_set_experts_implementation", lambda: False)():
        model.set_experts_implementation("batched_mm")
    # from_config leaves the model in training mode: a model that makes its cache only when not training
    # (CohereCompass) would run its decode without one, and dropout would run too
    model.train(False)
    return model


def runnable(built: Built, ran: bool = False):
    """The meta model where its forward runs there (`ran`: passes.traced ran it); one whose forward needs values
    (DBRX's torch.nonzero, Moshi's .item()) built small on the CPU; otherwise E505 with the op that failed."""
    try:
        if not ran:
            run_shapes(every_position(built.model), ((1, 0, 2),))
        return every_position(built.model)
    except ArchError:
        if sum(p.numel() for p in built.model.parameters()) > MAX_CPU_PARAMS:
            raise
    return every_position(_built(built.auto, built.built_from, "cpu"))


def every_position(model):
    """The model set to run every prompt position through every layer, as serving engines do (vLLM's
    kv_sharing_fast_prefill is off by default): Gemma 4's KV-shared layers take the kept positions alone unless
    hidden states are asked for (_maybe_slice_kv_shared_inputs; asking adds no FLOP)."""
    model.config.output_hidden_states = model.config.get_text_config().output_hidden_states = True
    return model


def _auto_class(transformers, inner, whole):
    """(the auto class, the config it builds from): the CausalLM of the text config; one whose text config has
    no CausalLM of its own but whose whole type maps to one (Emu3's, built from the text config alone) through
    that type; a text model transformers builds only inside its vision-language model (Qwen3-VL's) is run through
    that whole model, whose text path is what input ids take."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    if inner is not whole and _holds_its_text(whole):
        return transformers.AutoModelForCausalLM, whole
    if inner.model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES or inner is whole:
        return transformers.AutoModelForCausalLM, inner
    if whole.model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return transformers.AutoModelForCausalLM, whole
    return transformers.AutoModelForImageTextToText, whole


def _holds_its_text(whole) -> bool:
    """A causal LM whose text config is a part of it, not the text path of a vision-language wrapper (Gemma 4's
    assistant: its text model between projections from and to its target's width): built whole."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES,
    )

    return whole.model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES \
        and whole.model_type not in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES


def keeps_cache(model) -> bool:
    """Whether the model's forward takes a cache (GPT-1's takes none: every step recomputes the sequence)."""
    taken = inspect.signature(model.forward).parameters
    return any(name in taken for name in ("use_cache", "past_key_values", STATE_KEYWORD, "cache_params",
                                          RECURRENT_STATE))


def scores_every_position(model) -> bool:
    """Whether the model's head scores every position of a call (its forward takes no `logits_to_keep`): the check
    counts its head as `--logits all` does."""
    return "logits_to_keep" not in inspect.signature(model.forward).parameters


# models whose batched one-token step transformers computes wrongly, and why: their decode is checked at B = 1
# a model that returns no cache: its attention layers write the cache it is handed, its recurrent state stays in
# its modules between calls; the check hands it one and runs the decode on it
HANDED_CACHE = {
    "RecurrentGemmaForCausalLM": "RecurrentGemma returns no cache (its recurrent and conv states stay in its "
                                 "modules): the check handed it a DynamicCache for the prefill and its decode",
}
BATCHED_STEP_BROKEN = {
    "RwkvForCausalLM": "transformers' RwkvSelfAttention and RwkvFeedForward mix a one-token input (B, 1, d) with "
                       "the kept token (B, d), which broadcasts to B × B rows when B > 1",
}


def check_shapes(keeps_cache: bool, model=None) -> tuple[tuple[int, int, int], ...]:
    """CHECK_SHAPES; for a model that keeps no cache, each decode shape as the prefill of all its positions; for
    one whose batched step is broken (BATCHED_STEP_BROKEN), each decode at one request."""
    if not keeps_cache:
        return tuple((b, 0, s + p) for b, s, p in CHECK_SHAPES)
    if type(model).__name__ in BATCHED_STEP_BROKEN:
        return tuple((1 if s else b, s, p) for b, s, p in CHECK_SHAPES)
    return CHECK_SHAPES


def run_shapes(model, shapes) -> dict[tuple[int, int, int], int]:
    """counted_flops, with a model that cannot run on the meta device said as an error (E505)."""
    with running(model):
        return counted_flops(model, shapes)


@contextlib.contextmanager
def running(model):
    """The model's own forward on the meta device: any exception it raises is its own, said as E505."""
    try:
        yield
    except Exception as failed:
        raise ArchError([Diagnostic(code="E505", message=f"{type(model).__name__} does not run on the meta "
                                                         f"device ({type(failed).__name__}: {_first_line(failed)})")]
                        ) from None


def counted_flops(model, shapes) -> dict[tuple[int, int, int], int]:
    """FlopCounterMode's total for each (batch, cached, new) shape: a prefill of `new` positions (logits for the
    last one), or, with `cached` positions, the decode step that follows a prefill of them. That prefill is the
    counted one when it is among the shapes (CHECK_SHAPES' decode after 5 positions at B = 1 follows their
    B = 1, P = 5 prefill): the same forward runs once."""
    torch, _ = libraries()
    from torch.utils.flop_counter import FlopCounterMode

    from . import draft

    def run(batch: int, positions: int, **state):
        with FlopCounterMode(display=False) as counter:
            out = model(**fed(model, batch, 0, positions), **state)
        return counter.get_total_flops(), out

    totals, states = {}, {}  # states: (batch, positions) → a counted prefill's output and handed cache
    with warnings.catch_warnings(), quiet():
        warnings.simplefilter("ignore")
        if draft.drafts(model):  # one call a shape: its target's entries are handed, none of its own kept
            for shape in shapes:
                with FlopCounterMode(display=False) as counter:
                    model(**fed(model, *shape))
                totals[shape] = counter.get_total_flops()
            return totals
        for batch, _, new in (shape for shape in shapes if not shape[1]):  # prefills first: decodes follow them
            handed = handed_cache(model)
            totals[batch, 0, new], out = run(batch, new, **handed)
            states[batch, new] = out, handed
        for batch, cached, new in (shape for shape in shapes if shape[1]):
            # a step changes the cache it reads: a prefill's state serves one decode; another runs it again
            handed = handed_cache(model)
            out, handed = states.pop((batch, cached), None) or (run(batch, cached, **handed)[1], handed)
            totals[batch, cached, new] = run(batch, new, **(handed or cached_state(model, out)))[0]
    return {shape: totals[shape] for shape in shapes}


def fed(model, batch: int, cached: int, new: int) -> dict:
    """The forward's inputs for `new` positions of `batch` requests after `cached` ones: zero token ids, logits
    for the last position and a cache; a draft model's as its candidate generator feeds it (draft.py)."""
    from . import draft

    torch, _ = libraries()
    if draft.drafts(model):
        return draft.fed(model, batch, cached, new)
    return {"input_ids": torch.zeros(batch, new, dtype=torch.long, device=next(model.parameters()).device),
            "logits_to_keep": 1, "use_cache": True}


def handed_cache(model) -> dict:
    """A fresh DynamicCache under the `cache` keyword for a model of HANDED_CACHE; none for the others."""
    if type(model).__name__ not in HANDED_CACHE:
        return {}
    from transformers import DynamicCache

    return {STATE_KEYWORD: DynamicCache(config=model.config)}


def cached_state(model, out) -> dict:
    """The prefill's cache, under the keyword the model reads: `cache` where its forward names it (Mamba's,
    Mamba-2's and Falcon-Mamba's take only `cache`, or the old `cache_params`: `past_key_values` would land in
    **kwargs, unread, and the decode would be a fresh one-token prefill, its convolution padded to the kernel)."""
    taken = inspect.signature(model.forward).parameters
    if RECURRENT_STATE in taken and "past_key_values" not in taken and STATE_KEYWORD not in taken:
        return {RECURRENT_STATE: getattr(out, RECURRENT_STATE)}  # RWKV's forward takes and returns `state`
    return {STATE_KEYWORD if STATE_KEYWORD in taken else "past_key_values": out.past_key_values}


def versions() -> str:
    torch, transformers = libraries()
    return f"transformers {transformers.__version__}, torch {torch.__version__.split('+')[0]}"


def _first_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:300]


@contextlib.contextmanager
def quiet():
    """transformers prints advice on stdout and stderr while building; the import's own output is the spec."""
    import io

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield
