"""What sits between the layers' stream and the vocabulary beside the plain embedding and head: a norm
inside the embedding's own module (ModernBERT's embeddings.norm, Inkling's embed_tokens.embed_norm), a
transform before the head (ModernBERT's prediction head: dense, GELU, LayerNorm; std.embedding's
head_transform), and a learned scale a logit held by the head (Dory's DoryLMHead; std.embedding's lm_head
`logit_scale`)."""

from __future__ import annotations

from archcost.dsl import ast

from .reading.modules import Linear, linear, norm, own, parameters_of
from .reading.spec import call, op


def embedding_norm(child, embedding, d: int) -> ast.BlockCall | None:
    """The norm a module holding the embedding applies to it (ModernBertDecoderEmbeddings: tok_embeddings, norm,
    dropout), or None when `child` is not such a module."""
    if not any(part is embedding for part in child.children()):
        return None
    return _one_norm([part for part in child.children() if part is not embedding], d)


def inner_norm(embedding, d: int) -> ast.BlockCall | None:
    """The norm an embedding module holds as its own child and applies to the rows it looks up (Inkling's
    InklingNormedEmbedding: an nn.Embedding with an embed_norm), or None."""
    return _one_norm(list(embedding.children()), d)


def _one_norm(modules: list, d: int) -> ast.BlockCall | None:
    """`embed_norm`'s call when exactly one of `modules` holds parameters and it is a norm of width d."""
    held = [module for module in modules if any(True for _ in module.parameters())]
    kind = norm(held[0]) if len(held) == 1 else None
    return call(kind.block, "d", label="embed_norm") if kind is not None and kind.width == d else None


def transform(model, base, head, d: int) -> tuple[list[ast.BlockCall], set[int]]:
    """A prediction-head transform of the CausalLM, beside its base model and head: its call and parameters."""
    for child in model.children():
        if child is base or child is head or not type(child).__name__.endswith("PredictionHead"):
            continue
        parts = dict(child.named_children())
        dense, kind = linear(parts.get("dense")), norm(parts["norm"]) if "norm" in parts else None
        if dense is None or dense != Linear(d, d, dense.bias) or kind is None or kind.width != d \
                or kind.block not in ("layernorm", "layernorm_unbiased") or set(parts) - {"dense", "act", "norm"}:
            return [], set()
        return ([call("head_transform", "d", bias=dense.bias or None,
                      norm_bias=True if kind.block == "layernorm" else None, label="head_transform",
                      note=f"{type(child).__name__}: dense, activation, norm")], parameters_of(child))
    return [], set()


def held_vectors(base, d: int) -> list[ast.Op]:
    """The vectors of d the base model holds itself, outside its modules (HRM-Text's z_L_init, the low stack's
    first state): its parameters, read once a call and added once to the stream."""
    return [op("elementwise", name, f"{type(base).__name__}.{name}: a vector of d the model holds itself",
               width="d", params="d", flops="d")
            for name, shape in own(base).items() if shape == (d,)]


def embed_scale(note: str = "Gemma scales the embedding by √d") -> ast.Op:
    """One multiply a value of each embedding row looked up."""
    return op("elementwise", "embed_scale", note, width="d", flops="d")


def embedding_scale(embedding, base) -> list[ast.Op]:
    """Gemma's scaled embedding (its class says how much), or a number the base model multiplies the embeddings
    by (HRM-Text's embedding_scale)."""
    if getattr(embedding, "scalar_embed_scale", 1.0) != 1.0:
        return [embed_scale()]
    scale = getattr(base, "embedding_scale", 1.0)
    if isinstance(scale, (int, float)) and not isinstance(scale, bool) and scale != 1.0:
        return [embed_scale(f"{type(base).__name__} multiplies the embeddings by its embedding_scale")]
    return []


LOGIT_SCALE = "logit_scale"


def logit_scale(head) -> bool:
    """Whether the head holds, beside its matrix (and a bias), one learned scale a row it scores (DoryLMHead:
    `logit_scale`, a vector of the vocabulary's size, multiplying the logits)."""
    held = own(head)
    rows = held.get("weight", (0,))[0]
    return held.get(LOGIT_SCALE) == (rows,) and not set(held) - {"weight", "bias", LOGIT_SCALE}
