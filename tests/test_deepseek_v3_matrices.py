"""DeepSeek-V3: every matrix of seed 002 Table 2-3 appears in `--by-op` with the table's shape and FLOPs."""

from __future__ import annotations

import pytest
from helpers import compiled

from archcost.compiler.numbers.evaluate import by_op
from archcost.compiler.terms.scenario import Conventions, Scenario

P = 8192
N_PAIR = P * (P + 1) // 2  # causal pairs of a prefill from S = 0

# (shape as --by-op prints it, layers, matrix FLOPs per layer for m = 8192 rows) — Table 2-3 row by row
TABLE_2_3 = [
    ("129280×7168", 1, 0),                                   # token embedding lookup: 0 matrix FLOPs
    ("7168×1536", 61, 2 * P * 7168 * 1536),                  # query down-projection
    ("1536×24576", 61, 2 * P * 1536 * 24576),                # query up-projection, 128 heads × 192
    ("7168×576", 61, 2 * P * 7168 * 576),                    # KV down: latent 512 + RoPE branch 64
    ("512×32768", 61, 2 * P * 512 * 32768),                  # KV up: 128 × (128 K + 128 V)
    ("128 heads · qk 192 · v 128 · causal", 61, 2 * 128 * (192 + 128) * N_PAIR),  # expanded MLA
    ("16384×7168", 61, 2 * P * 16384 * 7168),                # attention output projection
    ("7168×18432", 3, 2 * P * 7168 * 18432),                 # dense FFN gate and up (first 3 layers)
    ("18432×7168", 3, 2 * P * 18432 * 7168),                 # dense FFN down
    ("7168×256", 58, 2 * P * 7168 * 256),                    # router
    ("256 experts × 3 matrices 7168×2048, top 8", 58, 6 * (P * 8) * 7168 * 2048),  # Σ t_e = 8·m rows
    ("7168×2048", 58, 2 * P * 7168 * 2048),                  # shared expert gate and up
    ("2048×7168", 58, 2 * P * 2048 * 7168),                  # shared expert down
    ("7168×129280", 1, 2 * 1 * 7168 * 129280),               # vocabulary head, m_out = 1
]


@pytest.fixture(scope="module")
def ops():
    model = compiled("deepseek-v3", (), Conventions(paths=(("mla_cache", "expanded"),)))
    return by_op(model, "prefill", Scenario(P=P))


@pytest.mark.parametrize("shape,layers,flops", TABLE_2_3, ids=[row[0] for row in TABLE_2_3])
def test_each_matrix_of_table_2_3(ops, shape, layers, flops):
    matches = [o for o in ops if o.shape == shape and o.layers == layers and o.flops_matrix == flops]
    assert matches, f"no op {shape} ×{layers} with {flops} FLOPs; have {[(o.shape, o.layers) for o in ops]}"
