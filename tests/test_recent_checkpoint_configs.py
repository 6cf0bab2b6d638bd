"""config.json files of this year's checkpoints (tests/configs/next/), kept for the families the importer does
not know yet: each is the published file, byte for byte, where the hash inventory in EXPECTED_SHA256.tsv holds
its checkpoint (sha256 of the config.json at a Hugging Face revision, from a public inventory named in its
first line); SOURCES.md says where each came from."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

NEXT = Path(__file__).resolve().parent / "configs" / "next"
FILES = sorted(NEXT.glob("*.json"))


def _inventory() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for line in (NEXT / "EXPECTED_SHA256.tsv").read_text().splitlines()[1:]:
        parts = line.split("\t")
        found.setdefault(parts[0], set()).add(parts[3])
    return found


def _checkpoint(name: str) -> str:
    row = re.search(r"^\| " + re.escape(name) + r" \| ([^|]+) \|", (NEXT / "SOURCES.md").read_text(), re.M)
    assert row, f"{name} has no row in SOURCES.md"
    return row.group(1).strip()


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_each_config_is_the_published_file(path):
    config = json.loads(path.read_text())
    assert config.get("model_type") and config.get("architectures")
    inventory = _inventory()
    checkpoint = _checkpoint(path.name)
    if checkpoint in inventory:
        assert hashlib.sha256(path.read_bytes()).hexdigest() in inventory[checkpoint]


def test_most_are_verified_against_the_inventory():
    verified = [p for p in FILES if _checkpoint(p.name) in _inventory()]
    assert len(verified) >= 11 and len(FILES) >= 16


# --------------------------------------------------------------------------- published figures of the specs

def _report(name: str, **paths: str):
    """A spec's decode report, on the execution paths named (`mtp="on"`)."""
    from helpers import compiled

    from archcost.compiler.numbers.evaluate import evaluate
    from archcost.compiler.terms.scenario import Conventions, Scenario

    return evaluate(compiled(name, conventions=Conventions(paths=tuple(paths.items()))), "decode", Scenario())


def test_minimax_m2_is_its_safetensors_total_less_the_fp8_scales():
    """MiniMax-M2's checkpoint holds 228,703,644,928 values (the Hub's safetensors total, issue 25): the
    logical weights, the 62 × 256 router correction biases, and one FP32 scale per 128 × 128 tile of every
    FP8 matrix (attention's 2,688 tiles and the experts' 256 × 864 a layer: 62 × 223,872). The spec's FP8
    weight bytes hold those scales; counted as values, they close the gap exactly."""
    report = _report("minimax-m2")
    # the FP8 matrices; the norms and the routers are `other`, in BF16
    fp8 = report.params_by_component["attention"] + report.params_by_component["routed_experts"]
    bf16 = report.params - fp8
    scales = (report.weight_bytes - 2 * bf16 - fp8) / 4
    assert scales == 62 * 223_872
    assert report.params + scales == 228_703_644_928


def test_the_scales_convention_counts_a_checkpoints_values():
    """`--scales stored` (`scales="stored"`) counts the block scales as parameters, as the safetensors total
    does: MiniMax-M2's published 228,703,644,928 exactly. Its bytes, which always held the scales, stay."""
    from helpers import compiled

    from archcost.compiler.numbers.evaluate import evaluate
    from archcost.compiler.terms.scenario import Conventions, Scenario

    logical, stored = (evaluate(compiled("minimax-m2", conventions=Conventions(scales=word)), "decode", Scenario())
                       for word in ("logical", "stored"))
    assert stored.params == 228_703_644_928 == logical.params + 62 * 223_872
    assert stored.weight_bytes == logical.weight_bytes and stored.flops == logical.flops
    assert stored.params_active > logical.params_active  # the routed experts' and attention's scales of a token
    qwen = [evaluate(compiled("qwen3-8b", conventions=Conventions(scales=w)), "decode", Scenario()).params
            for w in ("logical", "stored")]
    assert qwen[0] == qwen[1] == 8_190_735_360  # bf16 carries no scales


def test_nemotron_3_nano_has_the_model_cards_totals():
    """NVIDIA's model card: 31.6 B parameters, 3.6 B active with the embeddings (about 3.2 B without one of
    the two vocabulary tables)."""
    report = _report("nemotron-3-nano-30b-a3b")
    assert round(report.params / 1e9, 1) == 31.6
    assert round(report.params_active / 1e9, 1) == 3.6
    assert round((report.params_active - 131_072 * 2688) / 1e9, 1) == 3.2


def test_lfm2_1_2b_has_the_model_cards_total():
    """Liquid AI's LFM2 model card lists LFM2-1.2B at 1,170,340,608 parameters; its state per request is the
    six attention layers' keys and values and the ten convolutions' last three inputs (no growth)."""
    report = _report("lfm2-1.2b")
    assert report.params == 1_170_340_608
    assert report.kv_bytes_per_token == 6 * 2 * 8 * 64 * 2  # layers × K and V × heads × width × bf16
    assert report.state_fixed_bytes == 10 * 3 * 2048 * 2  # convolutions × taps kept × channels × bf16


def test_mimo_v2_flash_has_the_model_cards_totals():
    """Xiaomi's model card: 309 B parameters, 15 B active (the MTP layers it ships aside); per token the 9 full
    layers cache 4 KV heads and the 39 sliding layers 8, keys 192 and values 128 wide, in bf16."""
    report = _report("mimo-v2-flash")
    assert round(report.params / 1e9) == 309 and round(report.params_active / 1e9) == 15
    assert report.kv_bytes_per_token == 9 * 4 * (192 + 128) * 2  # the sliding layers' keys are a fixed window


def test_longcat_flash_has_the_reports_total_and_active_range():
    """LongCat-Flash's technical report (arXiv:2509.01322): 560 B parameters, 18.6 B to 31.3 B activated a
    token (its zero-computation experts let a token run from none to all 12 of its picks on weighted experts),
    about 27 B on average. Every expert weight stays in the total under either routing. The spec gives
    18.69 B and 31.38 B active (the head counted, the embedding table only read): the report's figures are
    these cut to one decimal (rounded, they would read 18.7 and 31.4)."""
    active = {}
    for routing in ("fewest", "most"):
        report = _report("longcat-flash", zero_routing=routing)
        assert int(report.params / 1e9) == 560   # 560.66 B: the report cuts its figures, as below
        active[routing] = report.params_active_no_embedding
    assert [int(active[r] / 1e8) / 10 for r in ("fewest", "most")] == [18.6, 31.3]
    per_pick = 28 * 3 * 6144 * 2048     # one more weighted expert in every layer
    assert active["most"] - active["fewest"] == 12 * per_pick
    assert active["fewest"] < 27e9 < active["most"]


def test_deepseek_v32_with_its_mtp_layer_is_the_model_cards_685b():
    """DeepSeek-V3.2's model card: 685 B parameters, which count the multi-token-prediction layer the checkpoint
    stores (model.layers.61) with its own copies of the embedding and the head. Without it the spec is
    transformers' 671,877,929,216; with it, one more MLA + MoE layer, eh_proj (2·d → d), three norms and the
    two vocabulary tables."""
    off, on = (_report("deepseek-v3.2", mtp=mtp).params for mtp in ("off", "on"))
    assert off == 671_877_929_216 and int(on / 1e9) == 685
    d, vocab = 7168, 129_280
    # by hand from the config: MLA (q_a, its norm, q_b, kv_a, its norm, kv_b, o), the indexer, the pre-norm
    attention = (d * 1536 + 1536 + 1536 * 128 * 192 + d * 576 + 512 + 512 * 128 * 256 + 128 * 128 * d
                 + 1536 * 64 * 128 + d * 128 + 2 * 128 + d * 64 + d)
    moe = 257 * 3 * d * 2048 + d * 256 + d     # 256 routed experts and the shared one, the router, the pre-norm
    assert on - off == attention + moe + 2 * d * d + 3 * d + 2 * vocab * d == 13_477_385_472
