"""The model states a training step holds per parameter: weights, gradients, the optimizer's master copy and
moments, and how ZeRO shards them over the data-parallel replicas.

Mixed precision (Micikevicius et al. 2018; Rajbhandari et al. 2019 §3.1): the weights in their stored format,
an FP32 master copy where they are narrower, and the optimizer's moments in FP32. Gradients are kept in
`grad_format`: FP32 by default, as Megatron-LM accumulates its main gradients (its distributed-optimizer
table: bf16 parameters with fp32 gradients, 18 bytes per parameter, 6 + 12/d distributed); `bf16` or `fp16`
gives ZeRO's 2 + 2 + 12 = 16. ZeRO stage 1 shards the master copy and the moments over dp, stage 2 the
gradients too, stage 3 the weights too (ZeRO Figure 1: 4Ψ + 12Ψ/N_d, 2Ψ + 14Ψ/N_d, 16Ψ/N_d).
"""

from __future__ import annotations

from pydantic import BaseModel

# moments per parameter, each in FP32 (4 bytes)
OPTIMIZERS = {
    "adamw": 2,   # first and second moments (Loshchilov & Hutter 2019)
    "adam": 2,
    "lion": 1,    # one momentum (Chen et al. 2023)
    "sgd": 1,     # momentum
    "sgd_plain": 0,
}
GRADIENT_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2}
FP32 = 4


class ModelStates(BaseModel):
    """Bytes of one card's model states."""

    weight_bytes: int | float
    gradient_bytes: int | float
    optimizer_bytes: int | float     # master copy and moments

    @property
    def total(self) -> int | float:
        return self.weight_bytes + self.gradient_bytes + self.optimizer_bytes


def model_states(params, weight_bytes, replicas: int, zero: int, optimizer: str, grad_format: str) -> ModelStates:
    """One card's states for `params` parameters held in `weight_bytes`, sharded by ZeRO `zero` over the
    `replicas` cards that hold the same parameters (the data-parallel group of those parameters)."""
    master = 0 if weight_bytes >= FP32 * params else FP32 * params  # FP32 weights are their own master copy
    optimizer_bytes = master + OPTIMIZERS[optimizer] * FP32 * params
    gradient_bytes = GRADIENT_BYTES[grad_format] * params
    return ModelStates(weight_bytes=_sharded(weight_bytes, zero >= 3, replicas),
                       gradient_bytes=_sharded(gradient_bytes, zero >= 2, replicas),
                       optimizer_bytes=_sharded(optimizer_bytes, zero >= 1, replicas))


def _sharded(value, on: bool, replicas: int):
    if not on or replicas == 1:
        return value
    share = value / replicas
    return int(share) if share == int(share) else share
