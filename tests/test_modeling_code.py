"""The import from the modeling code (`archcost import --from-modeling-code`): transformers builds the config's
model on the meta device, archcost recognises the stdlib's blocks in its modules and checks the spec against
that model (parameters exactly, matrix FLOPs with FlopCounterMode at four shapes) before writing it.

Two independent references: the check itself (transformers' model, counted by PyTorch), and the schema path,
written by hand from the families' configs, which must give every number the same for every small parity
case both paths read. The long run enumerates every decoder-only text model type of the installed
transformers and keeps docs/importing.md's list of the ones not read yet exact.
"""

from __future__ import annotations

import contextlib
import json
import re
from functools import cache

import modeling_types
import pytest
import transformers_runs as runs
from helpers import ROOT, load_tool

from archcost.compiler.cli import main
from archcost.compiler.compilation import compile_file, compile_text
from archcost.compiler.importer import import_spec, parse_config
from archcost.compiler.numbers.evaluate import evaluate
from archcost.compiler.terms.scenario import Scenario
from archcost.dsl.errors import ArchError

FIGURES = runs.read_record()["figures"]
# small parity cases the schema reads and the modeling code does not (yet): each names what stops it
SHAPES = [("prefill", Scenario(B=2, P=12)), ("decode", Scenario(B=2, S=30)), ("prefill", Scenario(P=3000)),
          ("request", Scenario(B=3, S=40, P=7, G=9))]
# the types a default run imports from small configs: one per recogniser and layout of parameters
SAMPLE = ("olmoe", "starcoder2", "qwen3_5_moe", "nanochat", "olmo", "granitemoeshared", "gpt2", "lfm2", "vaultgemma",
          "minimax_m2", "bloom", "exaone4", "deepseek_v32", "phi", "falcon_h1",
          # each a mechanism this round's import reads (issue 24)
          "lfm2_moe", "apertus", "persimmon", "bitnet", "laguna", "afmoe", "kolibri1", "beam", "olmo_hybrid",
          "axk1",
          # residual gates, per-expert norms, transposed ungated experts (issue 48, transformers 5.25)
          "ergo",
          # a layer of two attention-and-MLP pairs and a shortcut MoE with identity experts, counted by num_layers
          "longcat_flash")


@cache
def _both(case: str) -> tuple[str, str]:
    text = json.dumps(FIGURES[f"small/{case}"]["config"], indent=2)
    schema = import_spec(parse_config(text, f"{case}.json")).text
    return schema, import_spec(parse_config(text, f"{case}.json"), from_modeling_code=True).text


def _numbers(report: dict) -> dict:
    """A report's figures without the names of ops (the two paths name their layer kinds apart)."""
    return {field: value for field, value in report.items() if field not in ("experts", "by_op")} | {
        "experts": [{k: v for k, v in row.items() if k != "op"} for row in report.get("experts") or []]}


# the schema counts RoPE on SmolLM3's NoPE layers too (its non-matrix FLOPs); the modeling code reads each layer's
# own `use_rope`
APART: tuple[str, ...] = ()


# the default run compares one case of each layout of modules; the long run every case both paths read
COMPARED = ("llama", "mistral-window", "qwen3_moe", "deepseek_v3", "gemma2", "qwen3_next", "gpt_oss", "mamba2", "phi3",
            "opt", "jamba", "qwen3_vl-tied", "smollm3", "ernie4_5_moe", "llama4")


@pytest.mark.parametrize("case", [case if case in COMPARED else pytest.param(case, marks=pytest.mark.long)
                                  for case in runs.CASES if case not in APART])
def test_the_modeling_code_and_the_schema_give_the_same_numbers(case):
    schema, modeling = (compile_text(text) for text in _both(case))
    for phase, scenario in SHAPES:
        ours = _numbers(evaluate(modeling, phase, scenario).model_dump())
        assert ours == _numbers(evaluate(schema, phase, scenario).model_dump()), (phase, scenario)


@pytest.mark.parametrize("model_type", SAMPLE)
def test_a_type_without_a_schema_imports_from_its_modeling_code(model_type):
    """No schema: a plain import reads the modeling code; the spec it writes passed the check (its header
    and the returned lines say what was compared) and compiles."""
    imported = import_spec(parse_config(modeling_types.small_config(model_type), f"{model_type}.json"))
    assert imported.checked[0].startswith("checked with --attention rectangle") and len(imported.checked) == 8
    assert imported.checked[1].startswith("parameters ")
    assert all(re.fullmatch(r".*: matrix FLOPs ([\d,]+) = FlopCounterMode's \1", line)
               for line in imported.checked[2:6])
    assert re.fullmatch(r"keys and values per token: ([\d,]+) values = transformers' cache's \1", imported.checked[6])
    assert re.fullmatch(r"fixed state: none|fixed state \(conv slots, recurrent matrices\): ([\d,]+) values = "
                        r"transformers' \1", imported.checked[7])
    assert "Checked against that model" in imported.text
    assert evaluate(compile_text(imported.text), "decode", Scenario(S=100)).params > 0


def test_the_cli_prints_the_check_and_writes_the_spec(tmp_path, capsys):
    config = tmp_path / "small-qwen3.json"
    config.write_text(json.dumps(FIGURES["small/qwen3"]["config"], indent=2))
    assert main(["import", str(config), "--from-modeling-code", "-o", str(tmp_path / "q.arch")]) == 0
    captured = capsys.readouterr()
    params = FIGURES["small/qwen3"]["params"]
    assert f"parameters {params:,} = transformers' {params:,}" in captured.err
    assert "wrote" in captured.out and (tmp_path / "q.arch").read_text().startswith("# small-qwen3")


def test_the_same_config_gives_the_same_spec():
    text = modeling_types.small_config("olmoe")
    first, second = (import_spec(parse_config(text, "olmoe.json")).text for _ in range(2))
    assert first == second


@pytest.mark.long
def test_the_coverage_record_is_what_transformers_gives():
    """Every decoder-only text type of the installed transformers, from a small config: read and checked, or
    refused with a located error. tests/reference/modeling_coverage.json (which docs/importing.md lists) must be
    exactly that, so the list of types not read yet stays short and true."""
    coverage = load_tool("modeling_coverage")
    live = coverage.coverage(workers=2)
    read = sum(1 for o in live["types"].values() if o.get("read"))
    print(f"\n{read} of {len(live['types'])} decoder-only text model types import from the modeling code and "
          "verify exactly")
    assert live == json.loads(coverage.RECORD.read_text())


def test_the_coverage_record_covers_the_installed_types():
    record = json.loads((ROOT / "tests" / "reference" / "modeling_coverage.json").read_text())
    assert list(record["types"]) == modeling_types.decoder_types()


NEXT = ROOT / "tests" / "configs" / "next"


def _without_schema() -> list:
    from archcost.compiler.importer import SUPPORTED

    return [path for path in sorted(NEXT.glob("*.json")) if json.loads(path.read_text())["model_type"] not in SUPPORTED]


@pytest.mark.long
@pytest.mark.parametrize("path", _without_schema(), ids=lambda path: path.stem)
def test_this_years_published_configs_import_from_their_modeling_code(path):
    """As downloaded, full size: the import's own check (parameters, matrix FLOPs at four shapes, keys and
    values per token against the model transformers builds) passes."""
    config = parse_config(path.read_text(), path.name)
    imported = import_spec(config)
    assert len(imported.checked) == 8 and "Checked against that model" in imported.text


@pytest.mark.long
def test_deepseek_v4_flash_import_leaves_out_only_the_router_bias_the_spec_counts():
    """Issue 24: transformers counts DeepSeek-V4-Flash at 284,332,230,231 parameters, the chapter's calculator
    (specs/deepseek-v4-flash.arch) at 284,332,240,471; the import follows transformers, and the difference is
    the score-correction bias of the 40 score-routed layers' 256 experts, a buffer in transformers
    (docs/conventions.md, `router_bias`)."""
    imported = import_spec(parse_config((NEXT / "DeepSeek-V4-Flash.json").read_text(), "DeepSeek-V4-Flash.json"))
    ours = evaluate(compile_text(imported.text), "prefill", Scenario(P=1)).params
    spec = evaluate(compile_file(ROOT / "specs" / "deepseek-v4-flash.arch"), "prefill", Scenario(P=1)).params
    assert (ours, spec) == (284_332_230_231, 284_332_240_471) and spec - ours == 40 * 256


def test_every_filled_config_is_of_an_enumerated_type():
    assert set(modeling_types.FILLED) <= set(modeling_types.decoder_types())


@pytest.mark.parametrize("window", [2, 3])
def test_a_window_shorter_than_the_checks_prompts_is_checked_not_refused(window):
    """Issue 45: a window shorter than the check's shapes was refused with "-128 values": transformers' sliding
    cache keeps w − 1 positions, so the keys per token are measured on prompts the window still holds in full
    (1 and 2 positions), and a window too short to hold two is said to be left out, not refused."""
    config = {"model_type": "mistral", "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 500,
              "torch_dtype": "bfloat16", "sliding_window": window}
    imported = import_spec(parse_config(json.dumps(config), "mistral.json"), from_modeling_code=True)
    last = next(line for line in imported.checked if line.startswith("keys and values per token"))
    if window == 3:
        assert last == "keys and values per token: 128 values = transformers' cache's 128"
    else:
        assert last.startswith("keys and values per token: not compared, a window or chunk of fewer than 3")


@pytest.mark.parametrize("model_type", ["recurrent_gemma", "qwen3_next", "mamba2", "minimax", "rwkv"])
def test_the_fixed_state_is_checked_against_the_models_cache(model_type):
    """Issue 45: fixed state was never checked, and RecurrentGemma's spec kept 4 conv inputs a channel where
    transformers keeps 3 (conv1d_state is (batch, hidden, conv1d_width − 1)). The check now compares the
    convolution slots and recurrent matrices transformers holds after a prefill, in values."""
    imported = import_spec(parse_config(modeling_types.small_config(model_type), f"{model_type}.json"),
                           from_modeling_code=True)
    fixed = next(line for line in imported.checked if line.startswith("fixed state"))
    assert re.fullmatch(r"fixed state \(conv slots, recurrent matrices\): ([\d,]+) values = transformers' \1", fixed)


def _claims_watched(monkeypatch, types) -> list[str]:
    """Import `types` from their small configs with every sublayer module offered to every recogniser: the pairs
    that claim one module and that the registry does not order."""
    from archcost.compiler.importer import layer, recognisers
    from archcost.dsl.errors import ArchError

    clashes, real = [], recognisers.sublayer

    def watched(module, at):
        claiming = [r for r in recognisers.ordered("sublayer") if r.recognise(module, at) is not None]
        clashes.extend(f"{type(module).__name__}: {a.name} and {b.name}" for a in claiming for b in claiming
                       if a.name < b.name and a.name not in b.before and b.name not in a.before)
        return real(module, at)

    monkeypatch.setattr(layer, "sublayer", watched)
    for model_type in types:
        with contextlib.suppress(ArchError):  # a type not read still offers its modules up to the one that stops it
            import_spec(parse_config(modeling_types.small_config(model_type), f"{model_type}.json"),
                        from_modeling_code=True)
    return sorted(set(clashes))


def test_no_module_of_the_sample_is_claimed_by_two_unordered_recognisers(monkeypatch):
    assert _claims_watched(monkeypatch, SAMPLE[:3]) == []


@pytest.mark.long
def test_no_module_of_any_type_is_claimed_by_two_unordered_recognisers(monkeypatch):
    """The walk tries recognisers in the order their `before` gives (ties by name): that order decides nothing
    unless two recognisers claim one module, and then the registry must say which goes first."""
    assert _claims_watched(monkeypatch, modeling_types.decoder_types()) == []


def test_the_recognisers_are_found_by_discovery_and_name_their_blocks():
    """One module a recogniser, named as its record is; each block it writes is one the stdlib defines; a
    `before` names a recogniser of the same level."""
    from archcost.compiler.importer.recognisers import REGISTRY
    from archcost.dsl.loader import stdlib_root

    defined = set(re.findall(r"^block (\w+)", "\n".join(p.read_text() for p in stdlib_root().rglob("*.arch")),
                             re.M))
    folder = ROOT / "compiler" / "importer" / "recognisers"
    assert sorted(REGISTRY) == sorted(p.stem for p in folder.glob("*.py") if p.stem != "__init__")
    for name, recogniser in REGISTRY.items():
        assert set(recogniser.writes) <= defined, name
        assert all(REGISTRY[other].level == recogniser.level for other in recogniser.before), name


def test_the_walk_names_no_recogniser():
    """The walk (layer.py, modeling.py) asks the registry: it imports no recogniser's module and no block name
    a recogniser writes appears in it."""
    from archcost.compiler.importer.recognisers import REGISTRY

    written = {block for r in REGISTRY.values() for block in r.writes}
    for walk in ("layer.py", "modeling.py"):
        text = (ROOT / "compiler" / "importer" / walk).read_text()
        assert not re.findall(r"from \.recognisers\.\w+ import", text), walk
        # a block named as a call's name, compared with one, or as a key: a kind word may be a block's name too
        named = sorted(block for block in written
                       if re.search(rf"(==\s*|call\(|[(,]\s*)[\"']{block}[\"']|[\"']{block}[\"']\s*:", text))
        assert named == [], (walk, named)


def test_the_readme_states_the_recorded_coverage():
    """README's count of the types the modeling code reads is the record's (it once said 147 where 148 were)."""
    record = json.loads((ROOT / "tests" / "reference" / "modeling_coverage.json").read_text())
    read = sum(1 for outcome in record["types"].values() if outcome.get("read"))
    version = ".".join(record["transformers"].split(".")[:2])
    said = f"{read} of transformers {version}'s {len(record['types'])} decoder-only text model types"
    assert said in " ".join((ROOT / "README.md").read_text().split())


def test_the_coverage_tool_says_what_moved_with_transformers():
    coverage = load_tool("modeling_coverage")
    before = {"transformers": "1.0", "types": {"a": {"read": True}, "b": {"code": "E506", "message": "no block"},
                                                "c": {"read": True}}}
    after = {"transformers": "1.1", "types": {"a": {"code": "E507", "message": "differs"}, "b": {"read": True},
                                               "d": {"code": "E506", "message": "`x` (X): no stdlib block"}}}
    assert coverage.changes(before, after) == [
        "transformers 1.0 -> 1.1: 3 decoder-only text types (1 new, 1 gone)",
        "  new   d: E506: `x` (X): no stdlib block", "  gone  c",
        "  moved a: read and checked -> E507: differs", "  moved b: E506: no block -> read and checked"]


def test_a_spec_that_costs_another_model_is_refused_with_both_figures(monkeypatch):
    """E507: the check, not the recognisers, is what keeps a wrong spec from being written. A recogniser that
    misreads the key and value heads (half as many as the model has) gives a spec whose parameters and matrix
    FLOPs differ from the model transformers built: the import stops with both figures, never the spec."""
    from dataclasses import replace

    from archcost.compiler.importer import recognisers
    from archcost.compiler.importer.reading.modules import Found
    from archcost.dsl import ast
    from archcost.dsl.errors import ArchError

    honest = recognisers.REGISTRY["gqa"]

    def misread(module, at):
        found = honest.recognise(module, at)
        if found is None:
            return None
        args = [a.model_copy(update={"value": ast.Num(text=str(int(a.value.text) // 2))})
                if isinstance(a, ast.Keyword) and a.name == "kv_heads" else a for a in found.call.args]
        return Found(found.call.model_copy(update={"args": args}), found.mixer, found.post_norm)

    monkeypatch.setitem(recognisers.REGISTRY, "gqa", replace(honest, recognise=misread))
    with pytest.raises(ArchError) as refused:
        import_spec(parse_config(modeling_types.small_config("llama"), "llama.json"), from_modeling_code=True)
    (diagnostic,) = refused.value.diagnostics
    assert diagnostic.code == "E507" and "does not cost that model" in diagnostic.message
    assert "parameters: the spec 1,004,572,672, transformers 1,071,681,536" in diagnostic.message


def without_and_with(spec: str, flag: str):
    """The spec's prefill of 3 tokens without and with `flag` (its `{}` where the flag goes)."""
    return tuple(evaluate(compile_text(spec.format(extra)), "prefill", Scenario(P=3)) for extra in ("", ", " + flag))


@pytest.mark.parametrize("flag, params, nonmatrix", [
    # each expert's own RMS norm scale: E·d more parameters, 4 FLOPs a value of every routed row (m·k rows)
    ("expert_norm = true", 8 * 64, 4 * 64 * 3 * 2),
    # the shared expert's norm of its output: d more parameters, 4 FLOPs a value of every row (m rows)
    ("shared_norm = true", 64, 4 * 64 * 3),
    # the gated residual: d gate weights, two multiplies more a value (m rows) and 11 a channel once a call
    ("residual_gate = true", 64, 2 * 64 * 3 + 11 * 64),
])
def test_ergos_mechanisms_cost_what_their_modules_compute(flag, params, nonmatrix):
    """What std.ffn.moe's and std.norm's new words add over the same block without them, counted from Ergo's
    modules (ErgoExpertNorm, ErgoSharedExpert.norm, ErgoResidualGate) on 3 tokens of one request."""
    spec = ("use std.embedding\nuse std.ffn.moe\nmodel \"m\" {{\n  embedding(100, 64)\n"
            "  moe(64, experts = 8, top = 2, f = 32, shared_f = 16, matrices = 2, act_flops = 2{})\n}}\n")
    plain, flagged = without_and_with(spec, flag)
    assert flagged.params - plain.params == params
    assert flagged.flops_nonmatrix - plain.flops_nonmatrix == nonmatrix
    assert flagged.flops_matrix == plain.flops_matrix


@pytest.mark.long  # a built model a case; the default suite's CPU budget (issue 49)
def test_inklings_convolutions_relative_bias_and_scored_shared_experts_are_read_and_checked():
    """Inkling (transformers' InklingForCausalLM): residual short convolutions on the keys, the values and each
    sublayer's output, a bank of relative-bias profiles weighed by each token's heads, a router that scores the
    shared experts beside the routed ones; sliding (`hybrid_sliding`) and full layers of their own heads and
    bias reach, a dense first layer with its output scale, the full layers' log scaling: read and checked
    against the model transformers built (the import refuses a spec whose numbers differ)."""
    config = {"model_type": "inkling_text", "num_hidden_layers": 6, "hidden_size": 256, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 32, "swa_num_attention_heads": 4, "swa_num_key_value_heads": 4,
              "swa_head_dim": 32, "intermediate_size": 512, "moe_intermediate_size": 64, "n_routed_experts": 8,
              "num_experts_per_tok": 2, "vocab_size": 500, "sliding_window_size": 16, "rel_extent": 32,
              "log_scaling_n_floor": 64, "mlp_layer_types": ["dense"] + ["sparse"] * 5}
    imported = import_spec(parse_config(json.dumps(config), "inkling.json"), from_modeling_code=True)
    # 4 slots a channel: the two outputs' 2·256 in every layer, K's and V's 2·128 in the 5 sliding layers, 2·64 in
    # the full one
    assert "fixed state (conv slots, recurrent matrices): 17,920 values = transformers' 17,920" in imported.checked
    for words in ("window = 16", "kv_conv = 4, rel_states = 16, rel_extent = 16, out_conv = 4", "temperature = true",
                  "rel_extent = 32", "swiglu(d, f = 512, out_scale = true, out_conv = 4)",
                  "shared_f = 128, shared_scored = 2, router_scale = true"):
        assert words in " ".join(imported.text.split()), words  # the printer wraps long calls


@pytest.mark.parametrize("flag, params, matrix, nonmatrix", [
    # each query head's scale a channel (q_width), 4 FLOPs a query value and 3 a key value of every row
    ("qk_clip = true", 64, 0, 4 * 64 * 3 + 3 * 32 * 3),
    # sink_proj, d → q_heads: its matrix and its products, and one more score a head in the softmax
    ("token_sinks = true", 64 * 4, 2 * 3 * 64 * 4, 5 * 4 * 3),
    # the relative states' scale a head and state, 4 FLOPs a state value
    ("rel_clip = true", 4 * 2, 0, 4 * 8 * 3),
    # weight_proj on K and V (d → kv_heads·kv_conv each); the convolutions' taps summed elementwise, not convolved
    # (their 2·32·4·(3 + 4) FLOPs each move to the non-matrix count), and the static and projected taps added
    ("kv_conv_dynamic = true", 2 * 64 * 8, 2 * 3 * 64 * 8 * 2 - 2 * 1792, 2 * 1792 + 2 * 32 * 4 * 3),
    # the key's and the value's own input norms
    ("kv_norms = true", 2 * 64, 0, 2 * 4 * 64 * 3),
])
def test_inkling2s_attention_words_cost_what_their_modules_compute(flag, params, matrix, nonmatrix):
    """What std.attention.gqa's Inkling 2 words add over the same block without them, counted from its modules
    (Inkling2ScaledL2Clip and Inkling2L2Clip, sink_proj, Inkling2RelativePositionBias.norm,
    Inkling2DynamicShortConvolution, the full layers' k_ and v_input_layernorm) on 3 tokens of one request."""
    spec = ("use std.embedding\nuse std.attention.gqa\nmodel \"m\" {{\n  embedding(100, 64)\n  gqa(64, q_heads = 4, "
            "kv_heads = 2, head_dim = 16, rope = false, kv_conv = 4, rel_states = 2, rel_extent = 8{})\n}}\n")
    plain, flagged = without_and_with(spec, flag)
    assert flagged.params - plain.params == params
    assert flagged.flops_matrix - plain.flops_matrix == matrix
    assert flagged.flops_nonmatrix - plain.flops_nonmatrix == nonmatrix


@pytest.mark.parametrize("queries", [1, 3])
def test_a_block_attention_residual_costs_what_its_module_computes(queries):
    """std.depth's block_attn_res over 3 states on 3 tokens, as Inkling2BlockAttentionResidual computes it: its
    queries (d each); query·statesᵀ and weights·states through eager attention, 2·d FLOPs per query and state
    each, matrix work as FlopCounterMode counts them; the unweighted RMS norm of every state (3 a value) and the
    softmax (5 a score)."""
    spec = "use std.embedding\nuse std.depth\nmodel \"m\" {{\n  embedding(100, 64)\n{}}}\n"
    plain, mixed = (evaluate(compile_text(spec.format(body)), "prefill", Scenario(P=3)) for body in
                    ("", f"  block_attn_res(64, states = 3, queries = {queries})\n"))
    assert mixed.params - plain.params == queries * 64
    assert mixed.flops_matrix - plain.flops_matrix == 2 * (2 * 3 * 64 * queries * 3)
    assert mixed.flops_nonmatrix - plain.flops_nonmatrix == 3 * 3 * 64 * 3 + 5 * queries * 3 * 3


@pytest.mark.long  # a built model a case; the default suite's CPU budget (issue 49)
def test_inkling2s_block_attention_residuals_and_clipped_attention_are_read_and_checked():
    """Inkling 2 (transformers' Inkling2ForCausalLM) off its defaults: blocks of 2 layers, so the states its
    attention residuals stack grow every second layer; full layers (three queries before them, K's and V's inputs
    normed apart, taps made per token) at two depths, one of them a block's first; sliding layers of heads of
    their own; a head narrower than the embedding. Read and checked against the model transformers built."""
    config = {"model_type": "inkling2_text", "num_hidden_layers": 6, "hidden_size": 256, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 32, "swa_num_attention_heads": 8, "swa_num_key_value_heads": 2,
              "swa_head_dim": 16, "moe_intermediate_size": 64, "n_routed_experts": 8, "num_experts_per_tok": 2,
              "vocab_size": 500, "unpadded_vocab_size": 480, "sliding_window_size": 16, "rel_extent": 32,
              "d_rel": 8, "log_scaling_n_floor": 64, "n_layers_per_attn_res_block": 2,
              "layer_types": ["hybrid_sliding", "hybrid", "hybrid_sliding", "hybrid_sliding", "hybrid",
                              "hybrid_sliding"]}
    imported = import_spec(parse_config(json.dumps(config), "inkling2.json"), from_modeling_code=True)
    text = " ".join(imported.text.split())  # the printer wraps long calls
    # blocks close at layers 0, 2 and 4: before layer i, B of them stacked; the attention's residual reads B + 1
    # states, the MLP's one more at a block's first layer, the final one all 3 and the partial block
    expected = [(None, 2), ((2, 3), 2), (2, 3), (3, 3), ((3, 3), 4), (4, 4)]
    found = re.findall(r"block_attn_res\(d, states = (\d+)(?:, queries = (\d+))?\)", text)
    written = [(int(states), int(q or 1)) for states, q in found]
    assert written == [item for attn, mlp in expected
                       for item in ([] if attn is None else [attn if isinstance(attn, tuple) else (attn, 1)])
                       + [(mlp, 1)]] + [(4, 1)]
    for words in ("qk_clip = true, token_sinks = true, kv_conv = 4, kv_conv_dynamic = true", "kv_norms = true",
                  "window = 16", "rel_extent = 16", "rel_states = 8, rel_extent = 32", "residual_add = false",
                  "lm_head(d, 480)", "moe(d, experts = 8, top = 2, f = 64, out_conv = 4)"):
        assert words in text, words


ZAMBA2 = {"model_type": "zamba2", "hidden_size": 256, "num_hidden_layers": 8, "num_attention_heads": 4,
          "num_key_value_heads": 4, "intermediate_size": 512, "mamba_d_state": 16, "mamba_headdim": 32,
          "n_mamba_heads": 16, "vocab_size": 1000, "adapter_rank": 8, "num_mem_blocks": 2,
          "layers_block_type": ["mamba", "hybrid", "mamba", "hybrid", "mamba", "hybrid", "hybrid", "mamba"]}


@pytest.mark.long  # a built model a case; the default suite's CPU budget (issue 49)
def test_a_block_several_layers_run_with_one_set_of_weights_is_read_and_checked():
    """Zamba2 (transformers' Zamba2HybridLayer): a transformer block whose weights transformers ties across the
    layers that run it, two sets taken in turn (num_mem_blocks = 2), each holding an MLP adapter (and Q, K and
    V ones, use_shared_attention_adapter) per layer it serves. Read as calls that `share` a set (its weights
    once, each call its own work and cache) and checked against the model transformers built."""
    imported = import_spec(parse_config(json.dumps(ZAMBA2), "zamba2.json"), from_modeling_code=True)
    assert imported.checked[1] == "parameters 6,454,656 = transformers' 6,454,656"
    text = " ".join(imported.text.split())
    sets = re.findall(r"adapters = (\d+), weights = (\w+), from = \(previous, embedding\)", text)
    assert sets == [("2", "shared_transformer_1"), ("2", "shared_transformer_3")] * 2
    figures = evaluate(compile_text(imported.text), "decode", Scenario(S=100))
    alone = evaluate(compile_text(imported.text.replace("weights = shared_transformer_3", "weights = other", 1)),
                     "decode", Scenario(S=100))  # one call of a set apart: its weights held once more
    assert alone.params > figures.params and alone.flops_matrix == figures.flops_matrix
    attention_adapters = {**ZAMBA2, "use_shared_attention_adapter": True}  # Q, K and V's own, read and checked
    adapted = import_spec(parse_config(json.dumps(attention_adapters), "zamba2.json"), from_modeling_code=True)
    # two sets, each holding the adapters of its two uses: Q, K and V's, each 2·d → 8 → 2·d
    added = 2 * 2 * 3 * 2 * (2 * 256 * 8)
    assert adapted.checked[1] == f"parameters {6_454_656 + added:,} = transformers' {6_454_656 + added:,}"
    assert "attention_adapters = true" in adapted.text


@pytest.mark.long  # a built model a case; the default suite's CPU budget (issue 49)
def test_zambas_shared_block_and_multi_head_mamba_are_read_and_checked():
    """Zamba (transformers' ZambaHybridLayer): one shared block, its MLP's gate and up apart and no adapters,
    every few layers beside a Mamba whose inner channels are split into heads of their own x_proj and dt_proj
    (ZambaMambaMixer). Read and checked against the model transformers built."""
    config = {"model_type": "zamba", "hidden_size": 256, "num_hidden_layers": 7, "num_attention_heads": 4,
              "num_key_value_heads": 2, "intermediate_size": 512, "n_mamba_heads": 4, "mamba_dt_rank": 8,
              "vocab_size": 1000, "attn_layer_period": 3, "attn_layer_offset": 1}
    imported = import_spec(parse_config(json.dumps(config), "zamba.json"), from_modeling_code=True)
    text = " ".join(imported.text.split())
    # its two uses, layers 2 and 5, are a pattern's two groups: one call, repeated, holds the set once
    assert re.findall(r"weights = (\w+), from = \(previous, embedding\)", text) == ["shared_transf_2"]
    assert "repeat 2 as groups {" in text
    assert "dt_rank = 8, ssm_heads = 4" in text


@pytest.mark.long  # a built model a case; the default suite's CPU budget (issue 49)
@pytest.mark.parametrize("model_type", ["gemma4_assistant"])  # the unified one: the long run's coverage record
def test_a_draft_model_reads_its_targets_keys_and_values_and_holds_none(model_type):
    """Gemma 4's assistant (Gemma4AssistantForCausalLM): queries and outputs only, reading the keys and values its
    target stored (gqa's `kv_share = reuse`, a cache it does not hold), the target's embedding and last hidden
    state projected in and its state projected back out, every fed position scored: read and checked against the
    model transformers built (parameters, matrix FLOPs as its candidate generator feeds it, 0 values cached)."""
    imported = import_spec(parse_config(modeling_types.small_config(model_type), f"{model_type}.json"),
                           from_modeling_code=True)
    text = " ".join(imported.text.split())
    assert "keys and values per token: 0 values = transformers' cache's 0" in imported.checked
    for words in ("embedding(vocab, d, idle = true)", "linear pre_projection: 2 * ", "kv_share = reuse",
                  "lm_head(d, vocab, tied = true, rows = m)",
                  "linear post_projection: d -> "):
        assert words in text, words
    ordered = {**json.loads(modeling_types.small_config(model_type)), "use_ordered_embeddings": True}
    with pytest.raises(ArchError, match="masked_embedding"):  # the E2B/E4B assistants' centroid head: not modelled
        import_spec(parse_config(json.dumps(ordered), f"{model_type}.json"), from_modeling_code=True)


@pytest.mark.long  # a built model a case; the default suite's CPU budget (issue 49)
@pytest.mark.parametrize("extra", [{"chunk_size": 4},
                                   {"chunk_size": 8, "use_bias": True, "num_heads": 4, "weight_mode": "fused"}])
def test_the_mlstms_whole_chunks_and_stepped_tail_are_checked(extra):
    """The xLSTM (transformers' xLSTMForCausalLM) with chunks smaller than the check's prompts (5 and 9
    positions), so its prefills run whole chunks of the chunkwise form and the positions left through the step
    (wrap_chunkwise_arbitrary_sequence_length): read and checked against the model transformers built, the head
    scoring every position (its forward keeps no logits_to_keep)."""
    config = {"model_type": "xlstm", "num_hidden_layers": 2, "hidden_size": 256, "vocab_size": 1000, **extra}
    imported = import_spec(parse_config(json.dumps(config), "xlstm.json"), from_modeling_code=True)
    assert imported.checked[0] == "checked with --attention rectangle --logits all"
    assert f"chunk = {extra['chunk_size']}" in imported.text


@pytest.mark.long  # a built model a case; the default suite's CPU budget (issue 49)
def test_kv_shared_layers_read_an_earlier_layers_cache_at_every_prompt_position():
    """Gemma 4's last num_kv_shared_layers layers (E2B's and E4B's) have queries only and read the cache of the
    last earlier layer of their kind: gqa's `kv_share = reuse`, no K, V or cache of their own; checked with every
    prompt position through them, as serving engines run it (transformers slices them to the kept positions
    unless hidden states are asked for)."""
    kinds = ["sliding_attention", "sliding_attention", "full_attention"] * 2
    config = {"model_type": "gemma4_text", "num_hidden_layers": 6, "num_kv_shared_layers": 2, "layer_types": kinds,
              "per_layer_config": {}}
    imported = import_spec(parse_config(json.dumps(config), "gemma4.json"), from_modeling_code=True)
    text = " ".join(imported.text.split())
    assert text.count("kv_share = reuse") == 2
    assert "keys and values per token: 8,192 values = transformers' cache's 8,192" in imported.checked


@pytest.mark.parametrize("call, flag, params, nonmatrix", [
    # sqk: a scale a query channel, q · (s·c)²: one multiply a value (m rows) and 2 a channel once a call
    ("gqa(64, q_heads = 4, kv_heads = 2, head_dim = 16, out_gate = true{})", "q_scale = true", 64, 64 * 3 + 2 * 64),
    # s_gate: the same on the output gate's logits
    ("gqa(64, q_heads = 4, kv_heads = 2, head_dim = 16, out_gate = true{})", "gate_scale = true", 64,
     64 * 3 + 2 * 64),
    # lambda_1: h + |λ·c|·(o − h) in place of h + o: two operations more a value, 2 a channel once a call
    ("gqa(64, q_heads = 4, kv_heads = 2, head_dim = 16{})", "residual_lerp = true", 64, 2 * 64 * 3 + 2 * 64),
    # suv_gate and suv_up: a multiply a value of each (m rows), their scales made once a call (1 a channel each)
    ("swiglu(64, 32{})", "gate_up_scale = true", 2 * 32, 2 * 32 * 3 + 2 * 32),
    # logit_scale: a multiply a logit of the one row scored, the scale made once a call
    ("lm_head(64, 100{})", "logit_scale = true", 100, 100 + 100),
])
def test_dorys_mechanisms_cost_what_their_modules_compute(call, flag, params, nonmatrix):
    """What std.attention.gqa's, std.ffn.swiglu's, std.norm's and std.embedding's new words add over the same
    block without them, counted from Dory's modules (DoryAttention's sqk and s_gate, DoryDecoderLayer's lambda_1,
    DoryMLP's suv_gate and suv_up, DoryLMHead's logit_scale) on 3 tokens of one request."""
    spec = ("use std.embedding\nuse std.attention.gqa\nuse std.ffn.swiglu\nmodel \"m\" {{\n  embedding(100, 64)\n"
            "  " + call + "\n}}\n")
    plain, flagged = without_and_with(spec, flag)
    assert flagged.params - plain.params == params
    assert flagged.flops_nonmatrix - plain.flops_nonmatrix == nonmatrix
    assert flagged.flops_matrix == plain.flops_matrix


DORY = {"model_type": "dory", "num_hidden_layers": 4, "n_input_layers": 1, "n_output_layers": 1, "hidden_size": 256,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512,
        "vocab_size": 1000}


@pytest.mark.long  # a built model a case; the default suite's CPU budget (issue 49)
@pytest.mark.parametrize("loops", [1, 3])
def test_dorys_recurrent_passes_are_read_from_its_forward(loops):
    """Dory (transformers' DoryForCausalLM) runs its recurrent section `n_recurrent_loops` times with one set of
    weights, each pass on a cache of its own (recurrent_kv_cache_mode per_loop): read as `loop N` from the order
    its forward calls the layers, and checked against the model transformers built. One pass is no loop."""
    imported = import_spec(parse_config(json.dumps({**DORY, "n_recurrent_loops": loops}), "dory.json"),
                           from_modeling_code=True)
    text = " ".join(imported.text.split())
    # an input layer, two recurrent ones a pass, an output layer: 2 kv heads · 64 values, keys and values
    per_token = (2 + 2 * loops) * 2 * 128
    assert f"keys and values per token: {per_token:,} values = transformers' cache's {per_token:,}" \
        in imported.checked
    assert (f"loop {loops} as passes {{" in text) == (loops > 1)
    assert "lm_head(d, vocab, logit_scale = true)" in text


@pytest.mark.long  # a built model; the default suite's CPU budget (issue 49)
def test_dorys_last_loop_cache_is_refused_as_no_loop_holds_it():
    """recurrent_kv_cache_mode last_loop: the passes before the last read the recurrent layers' cache and write
    none, so one cache a layer, not one a pass as `loop` holds: the check refuses the spec with both figures."""
    config = {**DORY, "recurrent_kv_cache_mode": "last_loop"}
    with pytest.raises(ArchError) as refused:
        import_spec(parse_config(json.dumps(config), "dory.json"), from_modeling_code=True)
    (diagnostic,) = refused.value.diagnostics
    assert diagnostic.code == "E507"
    assert "keys and values per token: the spec 1,536 values, transformers' cache 1,024" in diagnostic.message


@pytest.mark.long  # a built model a case; the default suite's CPU budget (issue 49)
@pytest.mark.parametrize("high, low", [(2, 3), (3, 1)])
def test_a_looped_models_passes_are_read_from_its_forward(high, low):
    """HRM-Text (transformers' HrmTextForCausalLM) runs its low stack `L_cycles` times, then its high stack, all
    `H_cycles` times over, with one set of weights: the loops are read from the order its forward calls the
    stacks (not from those fields), and checked against the model transformers built (parameters, matrix FLOPs,
    one cache a layer a pass). At one low cycle a loop of one pass is not a loop: the stacks run in turn."""
    config = {"model_type": "hrm_text", "num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 4,
              "head_dim": 64, "intermediate_size": 512, "vocab_size": 1000, "H_cycles": high, "L_cycles": low}
    imported = import_spec(parse_config(json.dumps(config), "hrm.json"), from_modeling_code=True)
    text = " ".join(imported.text.split())
    # two layers a stack, a cache a layer a pass: 2 · 4 heads · 64 values, keys and values
    per_token = 2 * high * (low + 1) * 2 * 256
    assert f"keys and values per token: {per_token:,} values = transformers' cache's {per_token:,}" \
        in imported.checked
    assert f"loop {high} as passes {{" in text
    assert (f"loop {low} as l_module_passes {{" in text) == (low > 1)
    assert "elementwise z_L_init: width = d, params = d, flops = d" in text
    assert text.count("repeat 2 as") == 2  # each stack's two layers, once each
