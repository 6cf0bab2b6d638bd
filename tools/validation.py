"""Write docs/validation.md: archcost's expected step times and serving throughput beside published measured runs.

The runs are docs/research/measured-runs.yaml's (each with its source and what it leaves unstated). They only
validate: no figure here feeds an efficiency (those come from kernel-level measurements, stdlib/efficiency).
A run is predicted when archcost has a spec of its model, an efficiency table of its device, and the figures
to cost its step (layout, batch, sequence, number format, and a step time or a throughput to compare with);
every other run is listed with what is missing. Assumptions the sources leave open are the same for every row
and said in the document: sequence parallelism wherever tp > 1, Megatron's distributed optimizer (ZeRO 1)
unless the run shards with FSDP (ZeRO 3), no recomputation unless stated, a micro-batch of 1 unless stated.

    .venv/bin/python tools/validation.py
"""

from __future__ import annotations

import math
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "docs" / "research" / "measured-runs.yaml"
# Megatron-Bridge's benchmark recipes at the tag of each table's container (what the published runs ran)
RECIPES = ROOT / "docs" / "research" / "megatron-bridge-recipes" / "recipes.yaml"
# a recipe's settings → the run's layout words and workload fields they replace
RECIPE_FIELDS = (("tensor_model_parallel_size", "layout", "tp"), ("pipeline_model_parallel_size", "layout", "pp"),
                 ("context_parallel_size", "layout", "cp"), ("virtual_pipeline_model_parallel_size", "layout", "vp"),
                 ("expert_model_parallel_size", "layout", "ep"), ("micro_batch_size", "workload", "micro_batch"))
OUTPUT = ROOT / "docs" / "validation.md"

# model names as the sources print them → the spec of that architecture
SPECS = {"LLAMA3_8B": "llama-3.1-8b", "LLAMA3-8B": "llama-3.1-8b", "Llama3 8B": "llama-3.1-8b",
         "Llama-3.1-8B": "llama-3.1-8b", "LLAMA3_70B": "deepseek-r1-distill-llama-70b",
         "LLAMA3-70B": "deepseek-r1-distill-llama-70b", "Llama3 70B": "deepseek-r1-distill-llama-70b",
         "Llama-3.1-70B": "deepseek-r1-distill-llama-70b", "LLAMA3.1_405B": "llama-3.1-405b",
         "Llama-3.1-405B": "llama-3.1-405b", "GPT OSS 120B": "gpt-oss-120b", "GPT-OSS 120B": "gpt-oss-120b",
         "GPT-OSS 20B": "gpt-oss-20b", "Qwen3_30B_a3B": "qwen3-30b-a3b", "Qwen3 MoE 30B": "qwen3-30b-a3b",
         "Qwen3_235B_a22B": "qwen3-235b-a22b", "GPT3-175B": "gpt-3-175b", "GPT 175B (GPT-3)": "gpt-3-175b",
         "GPT 22B": "megatron-22b", "GPT 530B (MT-NLG)": "mt-nlg-530b", "GPT 1T": "megatron-1t",
         "DeepSeekV3": "deepseek-v3", "DeepSeek V3 671B": "deepseek-v3", "DeepSeekV3 (dropless)": "deepseek-v3",
         "LLAMA2-7B": "llama-2-7b", "LLAMA2-70B": "llama-2-70b",
         **{f"GPT ({size}B params)": f"megatron-gpt-{size}b" for size in ("1.7", "3.6", "7.5", "18.4", "39.1", "76.1",
                                                                        "145.6", "310.1")},
         "GPT (529.6B params)": "mt-nlg-530b", "GPT (1008.0B params)": "megatron-1t",
         "Nemotron_3_Nano": "nemotron-3-nano-30b-a3b", "Nemotron-8B": "nemotron-3-8b", "Nemotron-22B": "nemotron-3-22b",
         "Nemotron-340B": "nemotron-4-340b", "LLAMA2-13B": "llama-2-13b", "Kimi K2": "kimi-k2",
         "Nemotron V3 Nano 30B (26.02)": "nemotron-3-nano-30b-a3b"}
# device keys of the collection → (device sheet, link inside a server, network between servers)
DEVICES = {"h100_sxm_80gb": ("h100-sxm", "nvlink4", "ib_ndr"), "a100_sxm_80gb": ("a100", "nvlink3", "ib_hdr"),
           "h200_sxm": ("h200", "nvlink4", "ib_ndr"), "b200": ("b200", "nvlink5", "ib_ndr"),
           # a GB200 NVL72's NVLink joins its 72 GPUs (the sheet's domain: a layout's servers, on_device); its
           # racks talk over one ConnectX-7 per GPU (4 a compute tray of 4 GPUs: docs.nvidia.com/dgx/
           # dgxgb200-user-guide/hardware.html; mlcommons/inference_results_v6.1 Crusoe's GB200-NVL72 system
           # description), at most 400 Gb/s, InfiniBand NDR's rate
           "gb200": ("gb200", "nvlink5", "ib_ndr"),
           # GB300 NVL72 and HGX B300: one ConnectX-8 at 800 Gb/s a GPU (stdlib/hardware.arch's xdr_800g)
           "gb300": ("gb300", "nvlink5", "xdr_800g"), "b300": ("b300", "nvlink5", "xdr_800g"),
           "l40s": ("l40s", "pcie4", "ib_ndr")}  # no NVLink: the cards of a server talk over PCIe 4.0 x16
# Megatron's runs of 2022 (Korthikanti et al., Narayanan et al.): before FlashAttention they kept the score matrix
# (its fused softmax), where every later run's framework (Transformer Engine, torchtitan, NeMo) runs FlashAttention
# or cuDNN's fused attention; and they trained with dropout: Korthikanti et al. 2022 §4.1 counts its masks in
# every layer of their runs (the attention's, as²b, and after the attention and the MLP, sbh each: the
# 34sbh + 5as²b of their equation 1)
MEGATRON_2022 = ("korthikanti22", "narayanan21")
# Narayanan et al. 2021 print achieved TFLOP/s alone, counted by their Eq. (3), F = 96·B·s·l·h²·(1 + s/6h + V/16lh)
# an iteration, which "assumes activation recomputation" (§5.1: four passes a layer, the forward twice): the
# iteration is those FLOPs over every card's TFLOP/s, and the runs recompute every layer as the count does
EQ3_RUNS = ("narayanan21",)
# A training step runs MLA over per-head keys and values rebuilt from the latent at every position, not over the
# cached latent: Megatron-Core's MultiLatentAttention (NVIDIA/Megatron-LM@003b4ce megatron/core/transformer/
# multi_latent_attention.py: its core attention takes k_channels = qk_head_dim + qk_pos_emb_head_dim and
# v_channels = v_head_dim, and refuses cache_mla_latents in training) and NeMo Automodel's MLA
# (NVIDIA-NeMo/Automodel@0b5d3f7 nemo_automodel/components/models/deepseek_v3/layers.py: kv_b_proj on every
# position, attention of qk_head_dim and v_head_dim channels): a spec's `mla_cache = expanded` path
TRAINING_PATHS = {"mla_cache": "expanded"}
FORMATS = {"bf16": "bf16", "fp8": "fp8", "fp8_current_scaling": "fp8", "fp8 tensorwise": "fp8",
           "fp8 rowwise": "fp8", "mixed precision (fp16)": "fp16", "mixed precision": "bf16"}


@dataclass
class Predicted:
    """A published run and archcost's figure for it (or what is missing to have one)."""

    run: dict
    spec: str | None = None
    measured: float | None = None
    expected: float | None = None
    missing: str = ""
    layout: str = ""

    @property
    def error(self) -> float | None:
        return None if self.expected is None or not self.measured else self.expected / self.measured - 1


@dataclass
class Row(Predicted):
    """A training run: `measured` and `expected` in seconds per step."""

    bound: float | None = None
    from_recipe: str = ""  # the layout and micro-batch its recipe ran where the printed table says otherwise


def _missing(checks) -> str:
    """What stops a prediction: the reason of each (reason, absent) pair that holds, or nothing."""
    return "; ".join(why for why, absent in checks if absent)


def measured_step(run: dict) -> float | None:
    """The measured step in seconds: printed, or a throughput's tokens over every card's tokens a second."""
    measured, workload = run.get("measured") or {}, run.get("workload") or {}
    if isinstance(measured.get("step_time_s"), (int, float)):
        return float(measured["step_time_s"])
    if _collection(run) in EQ3_RUNS and isinstance(measured.get("tflops_per_gpu"), (int, float)):
        size = run["model_config"]
        layers, hidden, vocab, seq = size["layers"], size["hidden"], size["vocab"], size["seq_len"]
        flops = 96 * workload["global_batch"] * seq * layers * hidden ** 2 * (
            1 + seq / (6 * hidden) + vocab / (16 * layers * hidden))
        return flops / (measured["tflops_per_gpu"] * 1e12 * run["gpus"])
    tokens = measured.get("tokens_per_s_per_gpu")
    if isinstance(tokens, (int, float)) and run.get("gpus") and workload.get("global_batch") \
            and workload.get("seq_len"):
        return workload["global_batch"] * workload["seq_len"] / (tokens * run["gpus"])
    return None


def _collection(run: dict) -> str:
    """The source a run was collected from, as its id begins (narayanan21, korthikanti22, mbridge, …)."""
    return run["id"].split("-")[0]


def layout_of(run: dict) -> tuple[str, int]:
    """(the layout words, the ZeRO stage) of a run as its source states them."""
    given = run.get("layout") or {}
    words = []
    for name in ("tp", "pp", "cp", "ep", "dp", "vp"):
        value = given.get(name)
        if isinstance(value, int) and value > 1:
            words.append(f"{name}={value}")
    if isinstance(given.get("tp"), int) and given["tp"] > 1 and given.get("sp") is not False:  # unless it says not
        words.append("sp")
    sharded = given.get("data_parallel_mode") == "fsdp" or (isinstance(given.get("fsdp"), int) and given["fsdp"] > 1)
    return ",".join(words) or "tp=1", 3 if sharded else 1


def predict(row: Row, models: dict) -> None:
    from archcost.compiler.cards.degrees import parse_layout
    from archcost.compiler.cards.expected import table_for
    from archcost.compiler.front.hardware import device, link
    from archcost.compiler.train.step import TrainSetup, train_report
    from archcost.dsl.errors import ArchError

    run = row.run
    workload = run.get("workload") or {}
    fmt = FORMATS.get(str(run.get("precision")))
    sheets = DEVICES.get(run.get("device"))
    row.spec, row.measured = SPECS.get(run.get("model")), measured_step(run)
    task = workload.get("task")
    row.missing = _missing((("no spec of this model", row.spec is None),
                            ("no efficiency table or sheet for this device", sheets is None),
                            (f"number format `{run.get('precision')}`", fmt is None),
                            ("no step time or tokens per second", row.measured is None),
                            (f"a {task} run", task not in (None, "pretrain"))))
    if row.missing:
        return
    words, zero = layout_of(run)
    row.layout = words
    try:
        if row.spec not in models:
            models[row.spec] = training_model(row.spec)
        recompute = workload.get("activation_recompute") or ("full" if _collection(run) in EQ3_RUNS else None)
        megatron_2022 = _collection(run) in MEGATRON_2022
        setup = TrainSetup(seq=workload["seq_len"], global_batch=workload["global_batch"],
                           micro_batch=workload.get("micro_batch") or 1,
                           recompute=recompute if recompute in ("full", "selective") else "none", zero=zero,
                           attention_kernel="eager" if megatron_2022 else "flash", dropout=megatron_2022)
        sheet = device(sheets[0])
        report = train_report(models[row.spec], parse_layout(words), setup,
                              (sheet, link(sheets[1]), link(sheets[2])), peak_format=fmt, table=table_for(sheet))
    except ArchError as error:
        row.missing = f"refused: {error.diagnostics[0].message}"[:160]
        return
    row.expected, row.bound = report.times.expected, report.times.full_overlap


def training_model(spec: str):
    """The spec compiled as the runs' frameworks train it: every execution path of TRAINING_PATHS it offers."""
    from archcost.compiler.compilation import compile_file
    from archcost.compiler.terms.scenario import Conventions

    path = ROOT / "specs" / f"{spec}.arch"
    plain = compile_file(path, Conventions(logits="all"))
    chosen = tuple((name, word) for name, word in TRAINING_PATHS.items()
                   if word in plain.ir.path_choices.get(name, ()))
    return compile_file(path, Conventions(logits="all", paths=chosen)) if chosen else plain


def rows() -> list[Row]:
    sys.path.insert(0, str(ROOT))
    runs = yaml.load(RUNS.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["runs"]
    recipes = _recipes()
    found, models = [], {}
    for run in runs:
        if run["kind"] != "training":
            continue
        run, row_recipe = as_its_recipe_ran(run, recipes)
        row = Row(run, from_recipe=row_recipe)
        predict(row, models)
        found.append(row)
    return found


def _recipes() -> dict[tuple[str, int], dict]:
    """Megatron-Bridge's recipes by (container release, the line of the printed table's row they explain)."""
    found = {}
    for recipe in yaml.safe_load(RECIPES.read_text())["rows"]:
        sources = recipe["table_source"] if isinstance(recipe["table_source"], list) else [recipe["table_source"]]
        for source in sources:
            found[str(recipe["release"]), int(source.rsplit("#L", 1)[1])] = recipe
    return found


def as_its_recipe_ran(run: dict, recipes: dict) -> tuple[dict, str]:
    """The run with the layout and micro-batch of the recipe its container ran (docs/research/
    megatron-bridge-recipes/: the tag of the container's release), where the printed table says otherwise or
    nothing, and what changed ("" when nothing did or no recipe explains the run). The tables' cells were
    carried over from older releases for some rows (that folder's README: GPT-OSS's EP and micro-batch,
    Qwen3-30B-A3B's micro-batch and virtual stages)."""
    source = run.get("source_ref") or {}
    release = str(run.get("engine", {}).get("version", "")).replace("NeMo container ", "")
    recipe = recipes.get((release, source.get("line"))) if "performance-summary" in str(source.get("path")) else None
    if recipe is None:
        return run, ""
    changed, run = [], {**run, "layout": dict(run.get("layout") or {}), "workload": dict(run.get("workload") or {})}
    for setting, part, name in RECIPE_FIELDS:
        value = recipe["settings"].get(setting, {}).get("value")
        value = 1 if value is None and name == "vp" else value
        printed = run[part].get(name)
        if isinstance(value, int) and value != (printed or 1):
            changed.append(f"{name} {printed if printed is not None else 'unprinted'} → {value}")
            run[part][name] = value
    if any(name in ("tp", "pp", "cp") for name in (c.split()[0] for c in changed)):
        layout = run["layout"]
        layout["dp"] = run["gpus"] // (layout.get("tp", 1) * layout.get("pp", 1) * layout.get("cp", 1))
    return run, ", ".join(changed)


SERVED = {"LLaMA v3.1 8B": "llama-3.1-8b", "LLaMA 3.1 8B": "llama-3.1-8b", "Llama 3.1 8B": "llama-3.1-8b",
          "LLaMA v3.1 70B": "deepseek-r1-distill-llama-70b", "LLaMA 3.1 70B": "deepseek-r1-distill-llama-70b",
          "Llama 3.3 70B": "deepseek-r1-distill-llama-70b", "LLaMA v3.1 405B": "llama-3.1-405b",
          "Llama 3.1 405B": "llama-3.1-405b", "Qwen3-235B-A22B": "qwen3-235b-a22b", "Qwen3-30B-A3B": "qwen3-30b-a3b",
          "Mixtral 8x7B": "mixtral-8x7b", "Mixtral 8x22B": "mixtral-8x22b",
          "Llama 4 Maverick": "llama-4-maverick-17b-128e"}


@dataclass
class Served(Predicted):
    """A serving figure: `measured` and `expected` in output tokens a second of the whole layout."""

    batch: int | None = None


def predict_served(row: Served, models: dict) -> None:
    """An offline max-throughput run of TensorRT-LLM's performance tables: every request queued at once, so the
    engine runs as many as its caps and KV budget allow; FP8 runs with FP8 weights, KV cache and products."""
    run, workload = row.run, row.run.get("workload") or {}
    measured = run.get("measured") or {}
    row.measured = measured.get("output_tokens_per_s") or measured.get("token_throughput_tokens_per_s")
    row.spec = SERVED.get(run.get("model"))
    fmt = (run.get("precision") or {}).get("weights_compute")
    sheets = DEVICES.get(run.get("device"))
    offline = "offline" in str(workload.get("mode")) and workload.get("isl") and workload.get("osl")
    row.missing = _missing((("no spec of this model", row.spec is None),
                            ("no efficiency table or sheet for this device", sheets is None),
                            (f"number format `{fmt}`", fmt not in ("fp4", "fp8", "bf16", "fp16")),
                            ("not an offline max-throughput run", not offline),
                            ("no throughput printed", not isinstance(row.measured, (int, float)))))
    if row.missing:
        return
    result = _served(row, models, fmt, sheets[0], "trtllm")
    if result is None:
        return
    row.expected, row.batch = result.output_tokens_per_second, result.batch


@dataclass
class Latency(Predicted):
    """An online run at a request rate: `measured` and `expected` the time per output token (the mean
    inter-token latency where that is what is printed), `ttft` beside them, in seconds."""

    ttft_measured: float | None = None
    ttft_expected: float | None = None
    rate: float | None = None

    @property
    def ttft_error(self) -> float | None:
        return None if self.ttft_expected is None or not self.ttft_measured else (
            self.ttft_expected / self.ttft_measured - 1)


def predict_latency(row: Latency, models: dict) -> None:
    """An online run at a finite request rate with its prompt and output lengths printed: the steady state
    that rate keeps (Little's law), under the run's engine's defaults."""
    from archcost.compiler.serving.engines import ENGINES

    run, workload = row.run, row.run.get("workload") or {}
    measured = run.get("measured") or {}
    row.measured, row.ttft_measured = measured.get("tpot_s") or measured.get("itl_s"), measured.get("ttft_s")
    row.spec = SERVED.get(run.get("model"))
    fmt = str((run.get("precision") or {}).get("weights_compute")).split()[0]
    sheets = DEVICES.get(run.get("device"))
    try:
        row.rate = float(workload.get("request_rate_qps"))
    except (TypeError, ValueError):
        row.rate = None
    engine = workload.get("engine")
    row.missing = _missing((("no spec of this model", row.spec is None),
                            ("no efficiency table or sheet for this device", sheets is None),
                            (f"number format `{fmt}`", fmt not in ("fp8", "bf16", "fp16")),
                            ("no finite request rate (an infinite rate's TTFT is time in the queue)",
                             row.rate is None or not math.isfinite(row.rate)),
                            ("prompt and output lengths not printed (a dataset's mix)",
                             not (workload.get("isl") and workload.get("osl"))),
                            (f"engine `{engine}`", engine not in ENGINES),
                            ("no TTFT or TPOT printed", row.measured is None and row.ttft_measured is None)))
    if row.missing:
        return
    result = _served(row, models, fmt, sheets[0], engine, request_rate=row.rate)
    if result is None:
        return
    row.expected, row.ttft_expected = result.tpot_seconds, result.ttft_seconds


def latency_rows() -> list[Latency]:
    sys.path.insert(0, str(ROOT))
    runs = yaml.load(RUNS.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["runs"]
    found, models = [], {}
    for run in runs:
        if run["kind"] == "serving" and any((run.get("measured") or {}).get(k) for k in ("tpot_s", "ttft_s",
                                                                                         "itl_s")):
            row = Latency(run)
            predict_latency(row, models)
            found.append(row)
    return found


# TensorRT-LLM before 1.0 served through its C++ executor (Triton's tensorrtllm_backend), one micro-batch a step
# and no overlap: the backend dropped enable_trt_overlap ("the overlapping of micro-batches did not provide
# additional benefits", tensorrtllm_backend@v0.14.0 docs/model_config.md); the overlap scheduler the trtllm preset
# has on is the PyTorch backend's (on by default from NVIDIA/TensorRT-LLM#4174), which trtllm-serve runs from 1.0
TRTLLM_OVERLAP_FROM = (1, 0)


def ran_the_presets_scheduler(engine: str, version) -> bool:
    """Whether the run's engine release schedules as its preset does (a release not printed: taken to)."""
    numbers = re.findall(r"\d+", str(version or ""))[:2]
    if engine != "trtllm" or not numbers:
        return True
    return tuple(int(n) for n in numbers) >= TRTLLM_OVERLAP_FROM


# what a low-precision serving run stores: TensorRT-LLM's FP8 checkpoints (nvidia/*-FP8) FP8 weights and KV cache;
# its FP4 ones (nvidia/*-FP4, ModelOpt's NVFP4: 4 bits and an FP8 scale per 16 values, the output head kept) NVFP4
# weights and, as the FP8 runs, an FP8 KV cache (the tables print no KV format: the same for every row)
LOW_PRECISION = {"fp8": {"weights": "fp8", "kv": "fp8"}, "fp4": {"weights": "fp4_b16", "kv": "fp8"}}


def _served(row: Predicted, models: dict, fmt: str, sheet_name: str, engine: str, request_rate=None):
    """`archcost throughput` of a serving run as its source states it (the layout, FP8 weights, KV cache and
    products for an FP8 run, the engine's defaults), or None with what refused it in `row.missing`."""
    from archcost.compiler.cards.degrees import parse_layout
    from archcost.compiler.cards.expected import table_for
    from archcost.compiler.compilation import compile_file
    from archcost.compiler.front.hardware import device, own_link
    from archcost.compiler.serving.engines import preset
    from archcost.compiler.serving.throughput import throughput
    from archcost.compiler.terms.scenario import Conventions
    from archcost.dsl.errors import ArchError

    run, workload = row.run, row.run.get("workload") or {}
    given = run.get("layout") or {}
    row.layout = ",".join(f"{k}={given[k]}" for k in ("tp", "pp", "ep") if isinstance(given.get(k), int)
                          and given[k] > 1) or "tp=1"
    options = Conventions(**LOW_PRECISION.get(fmt, {}))
    key = (row.spec, fmt)
    try:
        if key not in models:
            models[key] = compile_file(ROOT / "specs" / f"{row.spec}.arch", options)
        sheet = device(sheet_name)
        engine_as_run = preset(engine, sheet.memory, sheet.name.startswith("a100"),
                               None if ran_the_presets_scheduler(engine, workload.get("engine_version")) else False)
        return throughput(models[key], parse_layout(row.layout), sheet, own_link(sheet.name), own_link(sheet.name),
                          engine_as_run, workload["isl"],
                          workload["osl"], table=table_for(sheet), compute=fmt if fmt in sheet.peak else None,
                          request_rate=request_rate)
    except ArchError as error:
        row.missing = f"refused: {error.diagnostics[0].message}"[:160]
        return None


def served_rows() -> list[Served]:
    sys.path.insert(0, str(ROOT))
    runs = yaml.load(RUNS.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["runs"]
    found, models = [], {}
    for run in runs:
        if run["kind"] == "serving":
            row = Served(run)
            predict_served(row, models)
            found.append(row)
    return found


def _spread(rows) -> str:
    errors = sorted(abs(r.error) for r in rows)
    return (f"median |error| {statistics.median(errors):.1%}, quartiles {errors[len(errors) // 4]:.1%} and "
            f"{errors[3 * len(errors) // 4]:.1%}, largest {errors[-1]:.1%}")


def _median(values: list[float]) -> str:
    ordered = sorted(abs(v) for v in values)
    return (f"median |error| {statistics.median(ordered):.1%} (quartiles {ordered[len(ordered) // 4]:.1%} and "
            f"{ordered[3 * len(ordered) // 4]:.1%})")


def latency_section(rows: list[Latency]) -> list[str]:
    hit = [r for r in rows if r.error is not None or r.ttft_error is not None]
    tpot = [r.error for r in hit if r.error is not None]
    ttft = [r.ttft_error for r in hit if r.ttft_error is not None]
    out = ["", "## Time per output token and time to first token", "",
           f"{len(rows)} published serving runs print a TTFT or a TPOT; {len(hit)} are predicted by `archcost "
           "throughput --request-rate` (the concurrency the rate keeps, by Little's law, under the engine's "
           "defaults)" + (f": TPOT {_median(tpot)}, TTFT {_median(ttft)}." if hit else "."), "",
           "| run | model (spec) | device | layout | ISL / OSL | rate /s | measured TPOT ms | expected TPOT ms | "
           "error | measured TTFT ms | expected TTFT ms | error |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in hit:
        run, workload = r.run, r.run["workload"]
        cells = [f"{v * 1e3:,.1f}" if v is not None else "–" for v in (r.measured, r.expected)]
        cells += [f"{r.error:+.1%}" if r.error is not None else "–"]
        cells += [f"{v * 1e3:,.1f}" if v is not None else "–" for v in (r.ttft_measured, r.ttft_expected)]
        cells += [f"{r.ttft_error:+.1%}" if r.ttft_error is not None else "–"]
        out.append(f"| {run['id']} | {run['model']} (`{r.spec}`) | {run['device']} ×{run['gpus']} | `{r.layout}` | "
                   f"{workload['isl']:,} / {workload['osl']:,} | {r.rate:g} | " + " | ".join(cells) + " |")
    out += ["", "Where it misses: the time to first token of these runs includes what no kernel measures (the "
            "HTTP request, tokenisation, the scheduler's turn, Triton's backend), which the expected TTFT leaves "
            "out: it counts half a step's wait and the steps that carry the prompt. The same table shows a part that "
            "does not grow with the prompt: at 2 requests a second Llama 3.1 8B's first token takes 19 ms after a "
            "prompt of 202 tokens and after one of 467 (OSL 214 and 16), 70B's 48 and 53 ms, where archcost's prefill "
            "of the longer prompt alone takes about twice as long. The miss is about one step, but these runs' "
            "engine does not wait a step: TensorRT-LLM 0.14 served through its C++ executor, which syncs the step "
            "it launched before it answers and admits (Executor::Impl::executionLoop: forwardSync, the responses, "
            "then forwardAsync; one micro-batch without pipeline stages, enable_trt_overlap dropped from the Triton "
            "backend), so they run with the overlap scheduler off; adding the step anyway would fit the runs, not "
            "the engine. The engines whose scheduler runs a step ahead (SGLang's overlap scheduler, TensorRT-LLM's "
            "PyTorch backend from 1.0) admit a request a step later, which their presets count. Near a layout's "
            "limit the "
            "runs queue (a request rate close to what the layout serves), which a steady state without a queue "
            "does not show.", "", "### Not predicted", "", "| run | model | device | what is missing |",
            "|---|---|---|---|"]
    out += [f"| {r.run['id']} | {r.run['model']} | {r.run['device']} | {r.missing} |" for r in rows
            if r.error is None and r.ttft_error is None]
    return out


def render(found: list[Row], served: list[Served] | None = None, latency: list[Latency] | None = None) -> str:
    predicted = [r for r in found if r.error is not None]
    errors = sorted(abs(r.error) for r in predicted)
    serving = [r for r in yaml.load(RUNS.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["runs"]
               if r["kind"] == "serving"]
    out = ["# Validation: expected times against published measured runs", "",
           "Written by `tools/validation.py` from docs/research/measured-runs.yaml (each run's source, what it "
           "states and what it leaves unstated are there). These runs only validate: archcost's efficiencies come "
           "from kernel-level measurements alone (stdlib/efficiency), and no figure below feeds them.", "",
           "## Training steps", "",
           f"{len(predicted)} of {len(found)} published training runs are predicted. Median |error| "
           f"{statistics.median(errors):.1%}, quartiles {errors[len(errors) // 4]:.1%} and "
           f"{errors[3 * len(errors) // 4]:.1%}, largest {errors[-1]:.1%}; {sum(r.error < 0 for r in predicted)} "
           f"runs took longer than expected (a negative error: the expected step is short), "
           f"{sum(r.error > 0 for r in predicted)} less."
           if predicted else "No run is predicted yet.", "",
           "Assumed where the sources are silent, the same for every row: sequence parallelism wherever tp > 1 "
           "(not where the run says it ran without); "
           "Megatron's distributed optimizer (ZeRO 1), ZeRO 3 where the run shards with FSDP; no activation "
           "recomputation unless the run states it; a micro-batch of one where none is printed; Megatron's 2022 runs "
           "(Korthikanti et al.) with their eager attention kernel and with dropout, as that paper's equation 1 "
           "counts it; MLA over keys and values rebuilt at every position (`mla_cache = expanded`), as Megatron-Core "
           "and NeMo Automodel train it. The step is the number printed, or the global batch's tokens over every "
           "card's measured tokens a second, or for Narayanan et al. 2021 (who print TFLOP/s alone) their Eq. (3)'s "
           "FLOPs an iteration over every card's TFLOP/s, with every layer recomputed as Eq. (3) counts it.", "",
           "| run | model (spec) | device | layout | batch × seq | format | measured s | bound s | expected s | "
           "error |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in predicted:
        run, workload = r.run, r.run["workload"]
        out.append(f"| {run['id']} | {run['model']} (`{r.spec}`) | {run['device']} ×{run['gpus']} | "
                   f"`{r.layout}` | {workload['global_batch']:,} × {workload['seq_len']:,} | "
                   f"{FORMATS[str(run['precision'])]} | {r.measured:.3f} | {r.bound:.3f} | {r.expected:.3f} | "
                   f"{r.error:+.1%} |")
    from_recipes = [r for r in predicted if r.from_recipe]
    if from_recipes:
        out += ["", "Where a printed table's row disagrees with the benchmark recipe its container ran "
                "(Megatron-Bridge's, at the tag of the container's release: docs/research/megatron-bridge-recipes/), "
                "the row runs the recipe's layout and micro-batch: "
                + "; ".join(f"{r.run['id']}: {r.from_recipe}" for r in from_recipes) + "."]
    out += ["", "Where the model misses, and why (from the rows above): the expected step counts the matrix "
            "products at their kernels' measured efficiency in the format they multiply in (FP8 runs by FP8 "
            "points, attention in BF16), the elementwise kernels between them moving their activations through "
            "memory, attention's backward at FlashAttention's measured forward-and-backward ratio (an eager "
            "kernel's products at the GEMM points and its score tensors through memory, Megatron's 2022 runs), "
            "and the collectives at their measured bus bandwidth (nccl-tests' points within a server), each "
            "model-parallel one after the compute. It does not "
            "count MoE dispatch and load imbalance (the Megatron-Bridge GPT-OSS and Qwen3-MoE runs, the furthest "
            "below), the optimizer step, or overlap of the data-parallel gradient sync beyond full. A tensor-parallel "
            "card's products are timed at the measured GEMM of its own shape (1/tp of the width), which for FP8 "
            "reaches much less of the peak than the whole layer's. Most runs take longer than expected: the MoE "
            "runs by their dispatch, the dense data-parallel ones (Llama 8B, -15 to -26 %) by kernels no table "
            "measures (the backward's FP8 casts, the loss, the optimizer). Runs shorter than expected point at "
            "communication the run hides: Megatron-Bridge's recipes overlap the TP collectives with their GEMMs "
            "on the Llama 3.1 405B runs (tp_comm_overlap), where the expected step adds them after the compute; "
            "DeepSeek-V3 under NeMo Automodel recomputes every block (its recipe's activation "
            "checkpointing), and archcost's recomputed forward sends its expert all-to-all between servers again "
            "and adds it to the compute, where DeepEP's kernels overlap part of it. Nemotron 3 Nano's runs take "
            "about twice the expected step (-32 to -52 %): its 23 Mamba-2 layers' chunked scans are timed as "
            "memory-bound copies, as no table measures the SSD kernels (Dao and Gu 2024), and its experts "
            "(2,688 × 1,856, 128 of them) are narrower than any measured series, read at the nearest. Narayanan et "
            "al. 2021's runs without pipeline stages come within 7 % (-7 to 0 %); those with stages take 10 to 15 % "
            "longer than expected, and their micro-batch size and interleaving are not printed (the expected step "
            "assumes micro-batches of one without interleaving). The GB200 and GB300 runs take a rack's NVLink "
            "domain of 72 as one server (the sheets' domain); their dense runs come within -26 to +24 %, and "
            "GPT-OSS 120B's miss as on the B200 and H100, by its MoE dispatch.", "",
            "### Not predicted yet", "", "| run | model | device | what is missing |", "|---|---|---|---|"]
    out += [f"| {r.run['id']} | {r.run['model']} | {r.run['device']} | {r.missing} |" for r in found
            if r.error is None]
    served = served or []
    hit = [r for r in served if r.error is not None]
    out += ["", "## Serving", "",
            f"{len(serving)} published serving figures are collected (TensorRT-LLM's performance overview, SGLang's "
            f"and DeepSeek's deployments, vLLM); {len(hit)} are predicted by `archcost throughput` (TensorRT-LLM's "
            "offline max-throughput tables: every request queued at once, so the engine runs as many as its caps "
            "and KV budget allow)" + (f": {_spread(hit)}; {sum(r.error < 0 for r in hit)} runs faster than "
                                      f"expected, {sum(r.error > 0 for r in hit)} slower." if hit else "."), "",
            "Assumed where the tables are silent: TensorRT-LLM's documented defaults (max batch 2,048, 8,192 tokens "
            "a step, 0.9 of the free memory for the KV cache in pages of 32; trtllm-bench may tune them), FP8 "
            "weights, KV cache and products for the FP8 rows, each card's own NVLink, the tables' token "
            "throughput taken as output tokens.", "",
            "| run | model (spec) | device | layout | ISL / OSL | format | measured tok/s | batch | expected tok/s | "
            "error |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in hit:
        run, workload = r.run, r.run["workload"]
        out.append(f"| {run['id']} | {run['model']} (`{r.spec}`) | {run['device']} ×{run['gpus']} | `{r.layout}` | "
                   f"{workload['isl']:,} / {workload['osl']:,} | {run['precision']['weights_compute']} | "
                   f"{r.measured:,.0f} | {r.batch:,} | {r.expected:,.0f} | {r.error:+.1%} |")
    out += ["", "Where it misses: Mixtral 8x7B and 8x22B under TensorRT-LLM 0.17's TensorRT engines serve less "
            "than expected (-4 to +52 %, the H100 and H200 rows furthest): on the H100 and H200 their "
            "experts' grouped GEMMs are read from AIConfigurator's measurements of TensorRT-LLM 1.x's MoE kernels, "
            "the only measured series of those widths, which are newer than the kernels these engines ran (the "
            "A100, with no grouped GEMM measured, runs one expert's dense GEMM of the same shape); the batch "
            "trtllm-bench tuned is not printed. Llama 4 Maverick's 400 B parameters in FP8 leave an H100 card "
            "little room for the cache: the expected figure runs the batch that room allows and is +77 % over "
            "the measured one, whose batch is not printed. Qwen3-235B-A22B's rows ran with attention data "
            "parallelism and an expert-parallel size the table does not print; they run here with every expert "
            "split over TP 8, each card's grouped GEMM "
            "1/8 of each expert's width, which measured kernels run at a smaller part of the peak. On the L40S "
            "(PCIe, no NVLink) Llama 3.1 8B on one card runs -29 to +13 %, and 70B over TP 4 and TP 8 serves less "
            "than expected (-7 to +47 % and +23 to +63 %): no collective measured on the servers these rows ran on "
            "is published, so their all-reduces take NCCL's model at a PCIe 4.0 x16 link's bandwidth; the one L40S "
            "server AIConfigurator measured all-reduced at a twentieth of that, which would put these rows at "
            "-43 to -87 % instead. The table ships no collective for the L40S (its header says why). The FP4 rows "
            "(B200 and GB200) run NVFP4 weights and products at AIConfigurator's NVFP4 GEMM and MoE measurements "
            "and an FP8 KV cache, which the tables do not print; most serve more than expected: Qwen3-235B-A22B "
            "and Llama 4 Maverick as their FP8 rows do (attention data parallelism run here as TP 8), and the "
            "long prompts (ISL 20,000, -48 and -57 %) with a batch of 35 to 37 that the FP8 cache's room allows. "
            "Every op here runs its own kernel: the projections an engine runs as one GEMM (a layer's queries, keys "
            "and values; an MLP's gate and up: vLLM's QKVParallelLinear, TensorRT-LLM's fused QKV, Megatron-Core's "
            "linear_qkv) are timed one by one, and a narrow key or value GEMM reaches a small part of the peak. "
            "Timing them fused moved every median further from the measurements (2026-12-07: this table 14.5 -> "
            "16.3 %, time per output token 5.9 -> 13.0 %, training 13.5 -> 13.7 %): the expected step lacks a cost "
            "of about that size (the gaps between kernels, the elementwise kernels engines fuse), which no "
            "kernel-level table measures and the separate GEMMs stand in for; the fusion waits for it."]
    out += ["", "### Serving figures not predicted yet", "", "| run | model | device | what is missing |",
            "|---|---|---|---|"]
    out += [f"| {r.run['id']} | {r.run['model']} | {r.run['device']} | {r.missing} |" for r in served
            if r.error is None]
    out += latency_section(latency or [])
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    OUTPUT.write_text(render(rows(), served_rows(), latency_rows()))
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
