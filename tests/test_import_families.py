"""The importer's families against transformers' config classes (every field known, the same defaults), the
specs of published configs against the hand-written ones, and the formats quantized checkpoints store.

Published configs: tests/configs/published/ (sources in its SOURCES.md).
"""

from __future__ import annotations

import json
import warnings

import pytest
from helpers import ROOT, check_golden, compiled, load_tool

from archcost.compiler.compilation import compile_text
from archcost.compiler.importer import FAMILIES, MULTIMODAL, Multimodal, import_config, parse_config, read_config
from archcost.compiler.numbers.evaluate import evaluate
from archcost.compiler.terms.scenario import Conventions, Scenario
from archcost.dsl.errors import ArchError
from archcost.dsl.parser import parse
from archcost.dsl.printer import canonical

PUBLISHED = ROOT / "tests" / "configs" / "published"


def class_fields(model_type: str) -> dict:
    """The fields transformers' config class writes for `model_type`, with their default values."""
    import transformers  # imported where it is used: collecting the suite does not pay for it

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return transformers.AutoConfig.for_model(model_type).to_dict()


@pytest.mark.parametrize("model_type", sorted({*FAMILIES, *MULTIMODAL}))
def test_every_field_of_the_config_class_is_known(model_type):
    """Each field transformers' config class holds is typed by the family's schema (it may change a cost) or
    listed as neutral with a reason: none is left for the published configs to trip on."""
    schema = Multimodal if model_type in MULTIMODAL else FAMILIES[model_type].schema
    known = schema.fields() | set(schema.neutral())
    assert sorted(set(class_fields(model_type)) - known) == []
    assert all(why for why in schema.neutral().values())


@pytest.mark.parametrize("model_type", sorted(FAMILIES))
def test_defaults_are_the_config_class_defaults(model_type):
    """A field a config leaves out means transformers' default (save_pretrained writes only the fields that
    differ from it: Gemma 3's published configs leave out even the head count): every field the class gives
    a value takes that value here too; None here is the value transformers derives (head_dim = d / heads,
    MHA without num_key_value_heads), and Jamba's "auto" the rank the class works out."""
    schema, defaults = FAMILIES[model_type].schema, class_fields(model_type)
    derived = {
        "num_key_value_heads": defaults.get("num_attention_heads"),
        "word_embed_proj_dim": defaults.get("hidden_size"),
        "head_dim": defaults.get("hidden_size", 0) // defaults.get("num_attention_heads", 1),
    }
    rope = defaults.get("rope_parameters") or {}
    assert rope.get("partial_rotary_factor", 1) == schema.ROTARY if hasattr(schema, "ROTARY") else True
    for name, info in schema.model_fields.items():
        key = info.alias or name
        if isinstance(defaults.get(key), (list, dict)):
            continue  # per-layer lists the builders derive by the class's own rule (the parity cases check them)
        if key in defaults and defaults[key] is not None:
            assert not info.is_required(), key
            assert info.default in ("auto", defaults[key]) or (
                info.default is None and derived.get(key) == defaults[key]
            ), key


@pytest.mark.parametrize("path", sorted(PUBLISHED.glob("*.json")), ids=lambda p: p.stem)
def test_imported_spec_is_canonical_and_cites_its_fields(path):
    """The spec is printed from a syntax tree in the layout `archcost fmt` gives, and says where it came from."""
    text = import_config(read_config(path))
    assert canonical(text) == text
    parse(text, "imported.arch")
    assert "hidden_size" in text and "imported from" in text


# published configs of models specs/ holds by hand: every number of every phase the same
SAME_MODEL = {"gpt-oss-20b": ("gpt-oss-20b", ()), "gpt-oss-120b": ("gpt-oss-120b", ()),
              "llama-4-scout-17b-16e-instruct": ("llama-4-scout-17b-16e", (("experts", "dense"),))}
SHAPES = [("prefill", Scenario(P=8192)), ("decode", Scenario(B=8, S=8191)), ("request", Scenario(P=512, G=64))]


@pytest.mark.parametrize("phase,scenario", SHAPES, ids=[s[0] for s in SHAPES])
@pytest.mark.parametrize("stem", SAME_MODEL)
def test_published_import_equals_hand_written(stem, phase, scenario):
    spec, paths = SAME_MODEL[stem]
    text = import_config(read_config(PUBLISHED / f"{stem}.json"))
    apart = {"model", "options", "experts"}
    for conventions in (Conventions(), Conventions(paths=paths)):
        ours = evaluate(compile_text(text, conventions=conventions), phase, scenario).model_dump(exclude=apart)
        theirs = evaluate(compiled(spec, conventions=conventions), phase, scenario).model_dump(exclude=apart)
        assert ours == theirs


def test_gpt_oss_20b_as_published():
    """Issue 14: 20.91 B parameters, and the checkpoint's 12.8 GiB with its experts in MXFP4."""
    text = import_config(read_config(PUBLISHED / "gpt-oss-20b.json"))
    assert "routed_experts = mxfp4" in text
    report = evaluate(compile_text(text), "decode", Scenario())
    assert round(report.params / 1e9, 2) == 20.91
    assert round(report.weight_bytes / 2**30, 1) == 12.8


def test_block_fp8_checkpoints_store_every_matrix_but_embedding_head_and_routers_in_fp8():
    text = import_config(read_config(PUBLISHED / "deepseek-v3.json"))
    assert ("precision weights = bf16, kv = bf16, attention = fp8_b128x128, dense_ffn = fp8_b128x128, "
            "routed_experts = fp8_b128x128") in text
    report = evaluate(compile_text(text), "decode", Scenario())
    fp8 = report.params - report.params_by_component["embedding_output"] - report.params_by_component["other"]
    bf16 = report.params - fp8
    assert report.weight_bytes == pytest.approx(fp8 * (1 + 4 / 16384) + 2 * bf16, rel=1e-4)


def small(**quantization) -> str:
    return json.dumps({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
                       "num_attention_heads": 4, "vocab_size": 1000, "torch_dtype": "float16",
                       "quantization_config": quantization}, indent=2)


def test_group_quantized_checkpoints_store_scales_and_zero_points():
    text = import_config(parse_config(small(quant_method="gptq", bits=4, group_size=128, desc_act=False, sym=True)))
    assert "precision weights = fp16, kv = fp16, attention = int4_g128_zp, dense_ffn = int4_g128_zp" in text
    awq = import_config(parse_config(small(quant_method="awq", bits=4, group_size=64, zero_point=True, version="gemm",
                                           modules_to_not_convert=["model.layers.*.mlp"])))
    assert "attention = int4_g64_zp" in awq and "dense_ffn" not in awq.split("precision")[1].split("\n")[0]
    # transformers 5.24's quantizers match a pattern from the start of a module's name, or as its suffix:
    # `mlp` alone names no Linear (model.layers.0.mlp.gate_proj), so every MLP is quantized
    bare = import_config(parse_config(small(quant_method="awq", bits=4, group_size=64, modules_to_not_convert=["mlp"])))
    assert "dense_ffn = int4_g64_zp" in bare


@pytest.mark.parametrize("quantization,field", [
    (dict(quant_method="gptq", bits=4, group_size=128, desc_act=True), "desc_act"),
    (dict(quant_method="bitsandbytes", load_in_4bit=True), "quant_method"),
    (dict(quant_method="fp8", weight_block_size=[64, 64]), "weight_block_size"),
    (dict(quant_method="mxfp4", modules_to_not_convert=["model.layers.3.self_attn"]), "model.layers.3"),
])
def test_quantization_not_modelled_is_refused(quantization, field):
    with pytest.raises(ArchError) as caught:
        import_config(parse_config(small(**quantization), "config.json"))
    diagnostic = caught.value.diagnostics[0]
    assert diagnostic.code == "E503" and field in diagnostic.message
    assert diagnostic.source_line.strip().startswith('"quantization_config"')


def test_weights_flag_overrides_the_checkpoint_formats():
    text = import_config(read_config(PUBLISHED / "gpt-oss-20b.json"))
    stored = evaluate(compile_text(text), "decode", Scenario()).weight_bytes
    as_int4 = evaluate(compile_text(text, conventions=Conventions(weights="int4_g128")), "decode",
                       Scenario()).weight_bytes
    assert as_int4 != stored


def test_multimodal_configs_cost_the_text_model_and_say_so():
    text = import_config(read_config(PUBLISHED / "llama-4-maverick-17b-128e-instruct.json"))
    assert "the vision tower is not counted" in text


def test_unknown_field_in_a_text_config_is_located_inside_it():
    values = json.loads((PUBLISHED / "llama-4-scout-17b-16e-instruct.json").read_text())
    values["text_config"]["sliding_window"] = 4096  # transformers' shared mask code reads it
    text = json.dumps(values, indent=2)
    with pytest.raises(ArchError) as caught:
        import_config(parse_config(text, "config.json"))
    diagnostic = caught.value.diagnostics[0]
    assert diagnostic.code == "E502" and diagnostic.source_line.strip().startswith('"sliding_window"')


def test_import_doc_is_current(update_golden):
    """docs/importing.md is exactly what tools/import_doc.py writes from the schemas (regenerate with that tool)."""
    check_golden(ROOT / "docs" / "importing.md", load_tool("import_doc").render(), update_golden)


def test_ue8m0_block_scales_are_one_byte_each():
    """DeepSeek-V3.2's quantization_config says `scale_fmt: ue8m0`: transformers' FineGrainedFP8Config stores
    those block scales as one byte (torch.float8_e8m0fnu), not fp32: 1 B per 128 × 128 tile."""
    values = json.loads((PUBLISHED / "deepseek-v3.json").read_text())
    values["quantization_config"]["scale_fmt"] = "ue8m0"
    text = import_config(parse_config(json.dumps(values), "ue8m0.json"))
    assert "attention = fp8_b128x128_ue8m0" in text
    report = evaluate(compile_text(text), "decode", Scenario())
    fp8 = report.params - report.params_by_component["embedding_output"] - report.params_by_component["other"]
    assert report.weight_bytes == pytest.approx(fp8 * (1 + 1 / 16384) + 2 * (report.params - fp8), rel=1e-4)
