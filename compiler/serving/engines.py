"""Serving engines' documented defaults, as data: the batch they cap, the tokens a step takes, the memory their
KV cache gets and the page it is kept in. Each figure is the engine's own default, read in its source
(docs/research/engine-defaults.yaml quotes the code); `archcost throughput` starts from them and its flags
override each."""

from __future__ import annotations

from dataclasses import dataclass, replace

GIB = 2**30


MIB = 2**20


@dataclass(frozen=True)
class Engine:
    """An engine's defaults (a dataclass: the CLI's argument parser reads ENGINES without importing pydantic)."""

    name: str
    max_batch: int                 # requests running at once
    max_num_tokens: int            # tokens one step takes: the decodes and a chunk of prefill beside them
    block: int                     # tokens a KV page holds: a request's cache is rounded up to whole pages
    source: str
    # the engine schedules and launches the next step while the GPU runs this one (an overlap scheduler): a request
    # that arrives during a step joins the step after next, one step later than a synchronous loop admits it
    overlap: bool = False

    def kv_budget(self, memory: float, weights: float, activations: float, tp: int, pp: int) -> float:
        """The bytes of one card's KV cache, as the engine sizes it from the card's memory, its weights and the
        activations of its largest step."""
        if self.name == "vllm":  # gpu_memory_utilization of the whole card, less weights and the profiled peak
            return 0.9 * memory - weights - activations
        if self.name == "trtllm":  # free_gpu_memory_fraction of what is left after weights and the peak
            return 0.9 * (memory - weights - activations)
        # SGLang: mem_fraction_static = (gpu_mem - reserved) / gpu_mem, reserved (MB) = 512 + 1.5 · the chunk +
        # tp·pp/8 GiB + 2 MB per decode CUDA graph batch (256, or 512 from tp 4), at least 10 GiB on a card of more
        # than 60 GiB (the prefill graphs' term, by its default backend, is left out); the pool is the fraction
        # less the weights
        reserved = 512 + 1.5 * max(self.max_num_tokens, 2048) + tp * pp / 8 * 1024 + 2 * (256 if tp < 4 else 512)
        if memory > 60 * 1024 * MIB:
            reserved = max(reserved, 10 * 1024)
        fraction = round((memory / MIB - reserved) / (memory / MIB), 3)
        return fraction * memory - weights


def preset(name: str, card_memory: float, a100: bool, overlap: bool | None = None) -> Engine:
    """The engine's defaults on a card of this memory (vLLM and SGLang choose by it); `overlap` given says
    otherwise of its scheduler (a release that schedules as its preset does not)."""
    engine = _defaults(name, card_memory, a100)
    return engine if overlap is None else replace(engine, overlap=overlap)


def _defaults(name: str, card_memory: float, a100: bool) -> Engine:
    large = card_memory >= 70 * GIB and not a100
    if name == "vllm":
        return Engine(name="vllm", max_batch=1024 if large else 256, max_num_tokens=8192 if large else 2048,
                      block=16,
                      source="vllm-project/vllm@99d7eb5d vllm/engine/arg_utils.py EngineArgs._set_default_args "
                             "(max_num_seqs 1024 / 256, max_num_batched_tokens 8192 / 2048 for `vllm serve` on a "
                             "card of 70 GiB or more that is not an A100); vllm/config/cache.py CacheConfig "
                             "(gpu_memory_utilization 0.9 of the card, less weights and the profiled peak); "
                             "vllm/platforms/cuda.py (block_size 16); vllm/config/scheduler.py (async_scheduling "
                             "False: a synchronous loop)")
    if name == "sglang":
        gib = card_memory / GIB
        chunk = 2048 if gib < 20 else 4096 if gib < 60 else 8192 if gib < 160 else 16384
        return Engine(name="sglang", max_batch=4096, max_num_tokens=chunk, block=1,
                      source="sgl-project/sglang@a82da8da python/sglang/srt/arg_groups/memory_hook.py "
                             "handle_gpu_memory_settings (chunked_prefill_size by the card's memory, "
                             "mem_fraction_static from the memory it reserves); model_runner_kv_cache_mixin.py"
                             "@226149ac (a request pool of at most 4096); overrides.py@bc0c93b5 (page size 1); "
                             "server_args.py@001067ff (disable_overlap_schedule False: the overlap scheduler)",
                      overlap=True)
    if name == "trtllm":
        return Engine(name="trtllm", max_batch=2048, max_num_tokens=8192, block=32,
                      source="NVIDIA/TensorRT-LLM@0004396 tensorrt_llm/llmapi/llm_args.py BaseLlmArgs (max_batch_size "
                             "2048, max_num_tokens 8192), KvCacheConfig (free_gpu_memory_fraction 0.9 of the memory "
                             "left after weights and the profiled peak, tokens_per_block 32), TorchLlmArgs "
                             "(disable_overlap_scheduler False: the overlap scheduler)", overlap=True)
    raise KeyError(name)


ENGINES = ("vllm", "sglang", "trtllm")
