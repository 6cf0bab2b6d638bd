"""Published configs as downloaded: a field no transformers code reads for the model type is passed over (and
listed), a field that code reads and the importer cannot cost still stops the import (E502), and the table of what
transformers reads is the installed transformers' own (tools/config_fields.py)."""

from __future__ import annotations

import json

import pytest
from helpers import load_tool
from test_import import params, small, spec_of

from archcost.compiler.cli import main
from archcost.compiler.importer import import_spec, parse_config
from archcost.compiler.importer.schema import transformers_reads
from archcost.dsl.errors import ArchError


def imported(config: dict):
    return import_spec(parse_config(json.dumps(config, indent=2), "config.json"), "Small")


# Fields from published checkpoints that stopped the import before (issue 24's list). Those no transformers code
# reads for the model type are passed over and listed; those it reads but that change no cost are neutral.
@pytest.mark.parametrize("model_type,field,value,read", [
    ("gemma2", "_attn_implementation", "eager", True),           # google/gemma-2-27b: which kernel
    ("llama4_text", "for_llm_compressor", False, False),          # meta-llama/Llama-4-Scout-17B-16E-Instruct
    ("phimoe", "original_max_position_embeddings", 4096, True),  # microsoft/Phi-3.5-MoE-instruct: RoPE
    ("llama", "attn_logit_softcapping", 50.0, False),             # LlamaConfig has no soft cap, nor LlamaAttention
    ("mamba2", "time_step_init_scheme", "random", False),         # mistralai/Mamba-Codestral-7B-v0.1
    ("mamba2", "rms_norm", True, False),
])
def test_a_field_transformers_never_reads_is_passed_over(model_type, field, value, read):
    assert transformers_reads(model_type, field) == read
    base = small(model_type) if model_type != "mamba2" else {
        "model_type": "mamba2", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 1000, "num_heads": 4,
        "head_dim": 32, "state_size": 16, "n_groups": 1}
    if model_type == "phimoe":
        base.update(num_local_experts=4, num_experts_per_tok=2)
    if model_type == "llama4_text":
        base.update(num_local_experts=4, interleave_moe_layer_step=1, intermediate_size_mlp=256, head_dim=16)
    result = imported({**base, field: value})
    assert params({**base, field: value}) == params(base)
    if read:
        assert result.passed_over == ()
    else:
        assert result.passed_over == (field,)
        assert f"no code of transformers reads them for this model type: {field}" in " ".join(result.text.split())


def test_passed_over_fields_are_listed_on_stderr(tmp_path, capsys):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(small("llama", attn_logit_softcapping=50.0, some_new_field=1)), encoding="utf-8")
    assert main(["import", str(config), "-o", str(tmp_path / "small.arch")]) == 0
    err = capsys.readouterr().err
    assert "passed over 2 field(s)" in err and "attn_logit_softcapping, some_new_field" in err
    assert main(["import", str(config), "-o", str(tmp_path / "small.arch")]) == 0  # a second import overwrites it


def test_a_field_transformers_reads_still_stops_the_import():
    with pytest.raises(ArchError) as caught:
        spec_of(small("llama", sliding_window=16))  # read by transformers' shared mask code
    assert caught.value.diagnostics[0].code == "E502"


def test_a_remote_code_type_refuses_every_unknown_field():
    assert transformers_reads("minimax_text_01", "anything")  # not a transformers type: every field may be read
    assert not transformers_reads("llama", "anything")


def test_the_table_is_the_installed_transformers_own():
    """compiler/importer/transformers_fields.json equals what tools/config_fields.py reads from the installed
    transformers (regenerate with that tool after adding a family or upgrading transformers)."""
    pytest.importorskip("transformers")
    tool = load_tool("config_fields")
    import transformers

    written = json.loads(tool.OUTPUT.read_text(encoding="utf-8"))
    if written["transformers"] != transformers.__version__:
        pytest.skip(f"the table is for transformers {written['transformers']}, {transformers.__version__} installed")
    assert tool.text() == tool.OUTPUT.read_text(encoding="utf-8")


def test_a_text_config_transformers_builds_only_in_its_wrapper_names_the_wrapper():
    with pytest.raises(ArchError) as caught:
        spec_of({**small("qwen3_vl_moe_text"), "num_experts": 4, "num_experts_per_tok": 2})
    diagnostic = caught.value.diagnostics[0]
    assert diagnostic.code == "E501" and "qwen3_vl_moe" in diagnostic.hint
