"""Active parameters against the figures the model publishers print (issue 13's acceptance list).

Published counts differ on the embedding: gpt-oss's model card counts active parameters without the
embedding table (the unembedding stays in), Llama 4's "17B active" counts everything a token uses.
Sources: openai/gpt-oss-20b and -120b model cards ("21B parameters with 3.6B active", "117B ... 5.1B
active"; the gpt-oss model card paper, Table 1: 20.91 B / 3.61 B and 116.83 B / 5.13 B);
meta-llama/Llama-4-Scout-17B-16E model card ("17B activated, 109B total"); microsoft/Phi-3.5-MoE-instruct
model card ("6.6B active parameters", "42B parameters"; 41.9 B in its paper, arXiv:2404.14219 §6);
ai21labs/AI21-Jamba-1.5-Mini model card ("12B active parameters, 52B total", and the Jamba-1.5 paper,
arXiv:2408.12570, Table 1: 12B / 52B, "KV cache at 256K context: 4GB"); mistralai/Mamba-Codestral-7B-v0.1
model card ("Number of parameters: 7,285,403,648"); MiniMaxAI/MiniMax-Text-01 model card ("456 billion
parameters, of which 45.9 billion are activated per token"; MiniMax-01, arXiv:2501.08313, counts it without
the embedding and the head).
"""

from pathlib import Path

import pytest

from archcost.compiler.compilation import compile_text
from archcost.compiler.numbers.evaluate import evaluate
from archcost.compiler.terms.scenario import Scenario

SPECS = Path(__file__).parent.parent / "specs"

# spec, quantity, published figure in billions, printed decimals
PUBLISHED = [
    ("gpt-oss-20b", "params", 20.91, 2),
    ("gpt-oss-20b", "params_active_no_embedding", 3.61, 2),
    ("gpt-oss-120b", "params", 116.83, 2),
    ("gpt-oss-120b", "params_active_no_embedding", 5.13, 2),
    ("llama-4-scout-17b-16e", "params_active", 17, 0),
    ("jamba-1.5-mini", "params", 51.6, 1),
    ("jamba-1.5-mini", "params_active", 12, 0),
    ("mamba-codestral-7b", "params", 7_285_403_648 / 1e9, 9),
    ("minimax-text-01", "params", 456, 0),
    ("minimax-text-01", "params_active_no_vocabulary", 45.9, 1),
    ("phi-3.5-moe", "params", 41.9, 1),
    ("phi-3.5-moe", "params_active", 6.6, 1),
]


@pytest.mark.parametrize("spec, quantity, billions, decimals", PUBLISHED)
def test_published_active_parameters(spec, quantity, billions, decimals):
    path = SPECS / f"{spec}.arch"
    report = evaluate(compile_text(path.read_text(), name=str(path), base=path.parent), "decode", Scenario())
    assert round(getattr(report, quantity) / 1e9, decimals) == billions


def test_without_lookups_leaves_out_exactly_the_embedding_table():
    path = SPECS / "gpt-oss-20b.arch"
    report = evaluate(compile_text(path.read_text(), name=str(path), base=path.parent), "decode", Scenario())
    assert report.params_active - report.params_active_no_embedding == 201_088 * 2880  # vocab × d


def test_jamba_holds_4_gib_of_kv_at_256k():
    """Four attention layers of 8 key/value heads of 128 in bf16: 16 KiB a position, 4 GiB at 262,144."""
    path = SPECS / "jamba-1.5-mini.arch"
    model = compile_text(path.read_text(), name=str(path), base=path.parent)
    report = evaluate(model, "decode", Scenario(S=262_143))
    assert report.state_by_kind["kv"] == 4 * 2**30


def test_without_the_vocabulary_leaves_out_the_embedding_and_the_head():
    """MiniMax's 45.9 B leaves out both vocabulary tables (200,064 × 6,144 each, untied)."""
    path = SPECS / "minimax-text-01.arch"
    report = evaluate(compile_text(path.read_text(), name=str(path), base=path.parent), "decode", Scenario())
    assert report.params_active - report.params_active_no_vocabulary == 2 * 200_064 * 6144
