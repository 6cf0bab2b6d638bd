"""The parts of feed-forward modules that several recognisers read (recognisers/swiglu.py, gelu_mlp.py, moe.py):
the matrices' names, the gated blocks by activation, and the activation a module or its config names."""

from __future__ import annotations

from .modules import (
    children,
    learned_activation,
    own,
    shapes_of,
)

GATE = ("gate_proj", "w1", "proj_up_gate")
UP = ("up_proj", "w3", "fc1", "c_fc", "dense_h_to_4h", "fc_in", "proj_up")
DOWN = ("down_proj", "w2", "fc2", "c_proj", "dense_4h_to_h", "fc_out", "Wo", "proj_down")
# fc1: Moshi's, 2f wide (a plain MLP's is f); Wi: ModernBERT's; proj_up_gate_z: the gate then the up, as xLSTM's
FUSED_GATE_UP = ("gate_up_proj", "input_linear", "fc1", "Wi", "proj_up_gate_z")
ROUTER = ("gate", "router")
SHARED = ("shared_expert", "shared_experts", "shared_mlp")
GATED_BLOCKS = {"silu": "swiglu", "gelu": "geglu", "relu2": "relu2_glu"}


SUB_NORM = "ffn_sub_norm"  # BitNet's RMSNorm of the gated product, before the down projection (Dory's: weightless)
OUT_SCALE = "global_scale"  # a learned scalar the MLP multiplies its output by (Inkling's InklingMLP)
GATE_UP_SCALES = ("suv_gate", "suv_up")  # Dory's DoryMLP: a learned scale a channel of gate and of up (nGPT's s_v, s_u)
MOE_POST_NORM = "post_mlp_layernorm"  # A.X-K1's RMSNorm of the MoE block's output, held by the block itself


def ffn_parts(module, scaled: bool = False) -> tuple[dict, dict] | None:
    """The MLP's matrices by name and shape (an activation with learned scalars is the activation's, a
    sub-norm the gated MLP's own); `scaled` lets the module hold learned scales of its own: OUT_SCALE, a scalar
    on its output, or GATE_UP_SCALES, a vector on each of gate and up (their width the caller's to check)."""
    parts = {name: child for name, child in children(module).items()
             if not learned_activation(child) and name != SUB_NORM}
    held = own(module)
    vectors = set(held) == set(GATE_UP_SCALES) and all(len(shape) == 1 for shape in held.values())
    if (held and not (scaled and (held == {OUT_SCALE: (1,)} or vectors))) or not parts:
        return None
    shapes = shapes_of(parts)
    return (parts, shapes) if all(shape is not None for shape in shapes.values()) else None


def forward_act(module) -> str | None:
    """The activation a module's own forward calls by name (LFM2's MLP calls F.silu and holds no activation
    module, and its config names none): the modeling code read as text, never run."""
    import inspect

    try:
        source = inspect.getsource(type(module).forward)
    except (OSError, TypeError):
        return None
    found = {act for act, calls in (("silu", ("silu(",)), ("gelu", ("gelu(",))) if any(c in source for c in calls)}
    return found.pop() if len(found) == 1 else None


def config_act(config) -> str | None:
    act = getattr(config, "hidden_act", None) or getattr(config, "hidden_activation", None)
    if act in ("silu", "swish"):
        return "silu"
    return "gelu" if isinstance(act, str) and act.startswith("gelu") else ("relu" if act == "relu" else None)


