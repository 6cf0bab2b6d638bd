"""What a careful user met in issue 45, each refused with a clear error instead of an impossible figure, a
misleading word or a silent guess. Each test failed before its fix."""

from __future__ import annotations

from pathlib import Path

import pytest

import archcost
from archcost.compiler.cli import main

ROOT = Path(__file__).resolve().parents[1]
QWEN = str(ROOT / "specs" / "qwen3-8b.arch")
TRAIN = ["train", QWEN, "--seq", "4096", "--global-batch", "8", "--device", "h100-sxm", "--link", "nvlink4"]


def said(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().err


def test_a_measured_step_below_the_bound_is_refused_with_both_times(capsys):
    """Qwen3-8B on one H100 with a 1 s step printed an MFU of 162 %; the bound is 1.626 s."""
    for step in ("1", "1e-6"):
        code, err = said(capsys, *TRAIN, "--step-time", step)
        assert code == 2 and "error[E410]" in err and "lower bound, 1.626 s" in err and "MFU" not in err
    code, _ = said(capsys, *TRAIN, "--step-time", "1.7")
    assert code == 0


def test_a_step_time_and_an_efficiency_together_are_refused(capsys):
    code, err = said(capsys, *TRAIN, "--step-time", "3", "--efficiency", "0.5")
    assert code == 2 and "error[E411]" in err
    code, err = said(capsys, "train", QWEN, "--seq", "4096", "--global-batch", "8", "--step-time", "3")
    assert code == 2 and "error[E411]" in err and "device" in err
    with pytest.raises(archcost.ArchError) as caught:
        archcost.load(QWEN).train(seq=4096, global_batch=8, device="h100-sxm", link="nvlink4", step_time=3.0,
                                  efficiency=0.5)
    assert caught.value.diagnostics[0].code == "E411"


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "0"])
def test_a_step_time_that_is_not_a_time_is_refused(value, capsys):
    code, err = said(capsys, *TRAIN, "--step-time", value)
    assert code == 2 and "error[E401]" in err and "--step-time" in err


@pytest.mark.parametrize(("layout", "says"), [
    ("tp=1000000000", "1,000,000,000 is more than a degree may be"),
    ("=2", "a degree's name is missing before `=`"),
    ("tq=2", "`tq` is not a degree"),
])
def test_a_layout_word_is_refused_in_its_own_terms(layout, says, capsys):
    """`tp=1000000000` said "give a whole number"; `=2` printed pydantic's "Extra inputs are not permitted"."""
    code, err = said(capsys, "layout", QWEN, "--layout", layout)
    assert code == 2 and "error[E405]" in err and says in err and "Extra inputs" not in err


def test_a_sweep_to_a_name_that_is_not_csv_or_json_is_refused(tmp_path, capsys):
    """`sweep -o out.txt` wrote CSV under a .txt name without a word."""
    code, err = said(capsys, "sweep", QWEN, "--B", "1,2", "-o", str(tmp_path / "out.txt"))
    assert code == 2 and "error[E109]" in err and ".csv or .json" in err and not list(tmp_path.iterdir())


@pytest.mark.parametrize("ops", ["yes", 1, None])
def test_a_switch_of_the_api_takes_true_or_false_only(ops):
    """`evaluate(ops="yes")` was accepted."""
    with pytest.raises(archcost.ArchError) as caught:
        archcost.load(QWEN).evaluate("decode", ops=ops)
    assert caught.value.diagnostics[0].code == "E401" and "`ops`" in caught.value.render()


def test_a_libraries_warning_stays_off_the_output(monkeypatch, capsys):
    """Issue 45: a transformers FutureWarning leaked into the import's output."""
    import warnings

    from archcost.compiler.importer import config as config_module

    reading = config_module.read_config

    def read_with_a_warning(path):
        warnings.warn("`torch_dtype` is deprecated! Use `dtype` instead!", FutureWarning, stacklevel=1)
        return reading(path)

    monkeypatch.setattr(config_module, "read_config", read_with_a_warning)
    monkeypatch.setattr("archcost.compiler.importer.read_config", read_with_a_warning, raising=False)
    monkeypatch.setattr("archcost.compiler.cli.importing.read_config", read_with_a_warning, raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        code, err = said(capsys, "import", str(ROOT / "tests" / "configs" / "qwen3-8b.json"))
    assert code == 0 and "Warning" not in err and "deprecated" not in err


def test_a_null_sliding_window_is_no_window(tmp_path, capsys):
    """Issue 45: Jamba-1.5-Mini's published config carries `"sliding_window": null` and was refused (E502). These
    are its architecture fields as specs/jamba-1.5-mini.arch reads them, with that null: the import costs the
    model as the hand-written spec does; a window given there is refused, not guessed."""
    import json

    fields = {"model_type": "jamba", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
              "num_attention_heads": 32, "num_key_value_heads": 8, "num_experts": 16, "num_experts_per_tok": 2,
              "expert_layer_offset": 1, "expert_layer_period": 2, "attn_layer_offset": 4, "attn_layer_period": 8,
              "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_dt_rank": 256,
              "mamba_conv_bias": True, "mamba_proj_bias": False, "vocab_size": 65536, "tie_word_embeddings": False,
              "torch_dtype": "bfloat16", "sliding_window": None}
    config = tmp_path / "jamba.json"
    config.write_text(json.dumps(fields))
    assert main(["import", str(config), "-o", str(tmp_path / "jamba.arch")]) == 0
    figures = [archcost.load(str(path)).evaluate("decode", B=4, S=1000).data
               for path in (tmp_path / "jamba.arch", ROOT / "specs" / "jamba-1.5-mini.arch")]
    assert [(f["params"], f["flops"], f["state_bytes"]) for f in figures][0] == \
        [(f["params"], f["flops"], f["state_bytes"]) for f in figures][1]
    config.write_text(json.dumps({**fields, "sliding_window": 4096}))
    code, err = said(capsys, "import", str(config))
    assert code == 2 and "error[E503]" in err and "sliding_window" in err


def test_a_stock_type_with_an_auto_map_says_whose_code_it_costs(tmp_path):
    """Issue 45: `"model_type": "llama"` with an `auto_map` was costed as the stock class without a word."""
    import json

    from archcost.compiler.importer import import_config, read_config

    fields = json.loads((ROOT / "tests" / "configs" / "llama-3.1-8b.json").read_text())
    config = tmp_path / "custom.json"
    config.write_text(json.dumps({**fields, "auto_map": {"AutoModelForCausalLM": "modeling_custom.CustomForCausalLM"}}))
    text = import_config(read_config(config))
    assert "modeling_custom.CustomForCausalLM), which archcost never runs" in text.replace("\n# ", " ")
    assert "auto_map" not in import_config(read_config(ROOT / "tests" / "configs" / "llama-3.1-8b.json"))
    # an auto_map whose entries name nothing (an empty list: the long fuzz found it as an IndexError) says nothing
    config.write_text(json.dumps({**fields, "auto_map": {"AutoTokenizer": [], "AutoConfig": None}}))
    assert "auto_map" not in import_config(read_config(config))


def test_the_import_from_the_modeling_code_raises_no_library_warning():
    """The same trap through the API and the server: transformers' `rope_scaling` FutureWarning, raised while it
    reads Llama 3.1's config, is kept inside the import (here any warning is an error)."""
    import warnings

    from archcost.compiler.importer import import_spec, read_config

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        imported = import_spec(read_config(ROOT / "tests" / "configs" / "llama-3.1-8b.json"), from_modeling_code=True)
    assert imported.checked


def test_a_null_expert_count_is_refused_at_its_field(capsys):
    """Found by the long fuzz run of this round: Qwen3-235B-A22B's config with `"num_experts": null` raised a
    TypeError inside the importer; it is a located refusal."""
    code, err = said(capsys, "import", str(ROOT / "tests" / "fuzz_corpus" / "fixed-config-null-experts.json"))
    assert code == 2 and "error[E503]" in err and "`num_experts` names no number of experts" in err
