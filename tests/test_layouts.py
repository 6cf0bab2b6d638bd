"""Many cards (issue 18): per-card M, F, R of a layout, the collectives on the graph's edges, and the layouts
that hold a model. Figures from seed 002 §2.4.3, §2.5.1 and §2.6.2 (Qwen3-235B-A22B's deployment) and from
Megatron-LM (Shoeybi et al. 2019: two all-reduces per transformer layer in the forward pass)."""

from __future__ import annotations

import pytest
import sympy as sp
from helpers import ROOT, compiled
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from archcost.compiler.cards.degrees import Layout, parse_layout
from archcost.compiler.cards.fleet import ranked
from archcost.compiler.cards.layout import layout_report
from archcost.compiler.cards.placement import place
from archcost.compiler.cli import main
from archcost.compiler.front.hardware import device, link
from archcost.compiler.numbers.evaluate import by_op, evaluate
from archcost.compiler.numbers.plain import PlainEvaluator
from archcost.compiler.terms.scenario import Conventions, Scenario
from archcost.dsl.errors import ArchError

QWEN_235B = "qwen3-235b-a22b"
DECODE_8K = Scenario(B=1, S=8191)
CARD_FIELDS = ("params", "weight_bytes", "state_bytes", "flops_matrix", "flops_nonmatrix")
SPECS = sorted(p.stem for p in (ROOT / "specs").glob("*.arch"))


def test_235b_in_bf16_does_not_fit_eight_rtx_4090():
    """§2.6.2: the BF16 weights, about 470 GB, exceed the 192 GB of eight RTX 4090s: no layout holds them."""
    model = compiled(QWEN_235B)
    assert round(evaluate(model, "decode", Scenario()).weight_bytes / 1e9, -1) == 470
    assert not any(f.fits for f in ranked(model, 8, device("rtx-4090"), link("pcie4"), context=1, batch=1))


def test_235b_fits_one_hgx_h100_server_with_about_170_gb_left():
    """§2.6.2: one HGX server of eight H100 SXM offers 640 GB; after the weights about 170 GB remain."""
    report = layout_report(compiled(QWEN_235B), Layout(tp=8, ep=8), "decode", DECODE_8K)
    left = 8 * device("h100-sxm", "nominal").memory - 8 * report.cards[0].weight_bytes
    assert round(left / 1e9, -1) == 170


@pytest.mark.parametrize("name,reported,nominal", [
    ("h100-sxm", 81_559 * 2**20, 80e9),     # nvidia-smi in NVIDIA/nccl#1264
    ("h200", 143_771 * 2**20, 141e9),       # nvidia-smi in NVIDIA/cuda-samples#311
    ("a100", 81_920 * 2**20, 80e9),         # modal-labs/modal-client PR #2797
    ("mi300x", 206_141_652_992, 192e9),     # rocm-smi in ROCm/legacy-rocm-build#4750
])
def test_capacity_is_what_the_device_reports_and_the_vendor_figure_on_request(name, reported, nominal):
    """Issue 26: the H100's and H200's 80 GB and 141 GB were stored as 80·10⁹ and 141·10⁹ bytes, about 7 % under
    what the cards report (B_max low by as much); the vendor's figure stays for the seeds' arithmetic."""
    assert device(name).memory == reported and device(name, "nominal").memory == nominal


@pytest.mark.parametrize("name,fmt,dense", [
    ("rtx-4090", "fp16", 330.3e12),          # Ada whitepaper appendix A: FP16 with FP16 accumulate
    ("rtx-4090", "fp16_fp32acc", 165.2e12),  # the same table: with FP32 accumulate
    ("rtx-4090", "bf16", 165.2e12),
    ("rtx-6000-ada", "bf16", 364.2e12),       # RTX 6000 Ada datasheet: 728.4 with sparsity
    ("b200", "fp4", 9000e12), ("gb200", "fp8", 5000e12), ("l40s", "bf16", 362.05e12), ("mi325x", "fp8", 2614.9e12),
    ("mi355x", "fp8", 256 * 8192 * 2.4e9), ("mi355x", "bf16", 256 * 8192 * 2.4e9 / 2),
])
def test_dense_peaks_are_the_datasheets(name, fmt, dense):
    """Issue 26: the RTX 4090's FP16 figures and the RTX 6000 Ada's dense peak were half the datasheets'."""
    assert device(name).peak_for(fmt) == pytest.approx(dense, rel=2e-5)  # sheets round to 0.1 TFLOPS


def test_gb200_joins_72_cards_in_one_nvlink_domain():
    assert device("gb200").domain == 72 and device("h100-sxm").domain == 8 and device("rtx-4090").domain == 1


def test_tp8_stores_each_of_the_four_kv_heads_twice():
    """§2.6.2: four KV heads over eight cards, each head stored once per two cards."""
    model = compiled(QWEN_235B)
    whole = evaluate(model, "decode", DECODE_8K).state_bytes
    report = layout_report(model, Layout(tp=8, ep=8), "decode", DECODE_8K)
    assert 8 * report.cards[0].state_bytes == 2 * whole


def test_norms_and_routers_are_counted_on_every_card():
    """§2.6.2: norm and router parameters stored once per card; with the K and V projections of the four KV
    heads held twice, that is all eight cards hold beyond the model."""
    layers, d, experts, head_dim, kv_width = 94, 4096, 128, 128, 4 * 128
    replicated = layers * (d * experts + 2 * d + 2 * head_dim) + d  # routers, pre-norms, q/k norms, final norm
    report = layout_report(compiled(QWEN_235B), Layout(tp=8, ep=8), "decode", DECODE_8K)
    assert report.replicated_params == 7 * replicated + layers * 2 * d * kv_width
    assert report.cards[0].params * 8 == report.whole_params + report.replicated_params


def test_ep8_holds_16_of_the_128_experts_of_each_layer():
    """§2.4.3: 128 experts split into eight groups of 16."""
    model = compiled(QWEN_235B)
    placement = place(model.graph, Layout(tp=8, ep=8).degrees())
    routed = [(node, model.graph.nodes[node]["op"]) for node in placement.shares
              if model.graph.nodes[node]["op"].shard[0] == "ep"]
    assert routed and all(placement.shares[node].hold * op.args.count == 16 for node, op in routed)


def test_megatron_two_all_reduces_per_layer_in_the_forward_pass():
    """Shoeybi et al. 2019: a tensor-parallel transformer layer all-reduces its activations twice in the
    forward pass, after the attention's output projection and after the MLP's (m × d values each); the
    vocabulary-parallel embedding adds one."""
    model = compiled("llama-3.1-8b")
    report = layout_report(model, Layout(tp=2), "prefill", Scenario(P=1000))
    tp = [t for t in report.traffic if t.group == "tp"]
    assert [(t.kind, t.count) for t in tp] == [("all_reduce", 2 * 32 + 1)]
    per_reduce = 2 * (2 - 1) / 2 * 1000 * 4096 * 2  # ring: 2(n − 1)/n of the m × d bf16 buffer
    assert tp[0].sent_bytes == (2 * 32 + 1) * per_reduce


def test_sampling_gathers_the_vocabulary_parallel_logits():
    """Issue 26: a head split by vocabulary leaves each card a slice of the logits; sampling gathers them (vLLM's
    LogitsProcessor): at decode, one row of 128,256 BF16 logits per request, each card sending (n − 1)/n of it.
    A training step's vocabulary-parallel cross-entropy gathers none."""
    model = compiled("llama-3.1-8b")
    report = layout_report(model, Layout(tp=4), "decode", Scenario(B=8, S=1000))
    gather = [t for t in report.traffic if t.group == "sampling"]
    assert [(t.kind, t.count) for t in gather] == [("all_gather", 1)]
    assert gather[0].sent_bytes == 8 * 128_256 * 2 * 3 // 4
    from archcost.compiler.train.step import TrainSetup, train_report

    step = train_report(compiled("llama-3.1-8b", conventions=Conventions(logits="all")), Layout(tp=4),
                        TrainSetup(seq=1024, global_batch=1))
    assert all(t.group != "sampling" for t in step.cards[0].traffic)


def test_sequence_parallel_moves_the_same_bytes_as_reduce_scatter_and_all_gather():
    model = compiled("llama-3.1-8b")
    plain = layout_report(model, Layout(tp=4), "prefill", Scenario(P=512))
    split = layout_report(model, Layout(tp=4, sequence_parallel=True), "prefill", Scenario(P=512))
    assert {t.kind for t in split.traffic} == {"reduce_scatter", "all_gather"}
    assert sum(t.sent_bytes for t in split.traffic) == sum(t.sent_bytes for t in plain.traffic)


def test_deepseek_v3_expert_dispatch_and_combine_per_token():
    """DeepSeek-V3 (tech report §3.2.2, §3.4): each token goes to its top-8 of 256 routed experts, dispatched
    and combined by all-to-all. With attention data parallel over 64 cards and EP = 64, a card's 64 tokens
    each send 8 copies of their 7,168 values, 63/64 of them to other cards, and as many come back, in each
    of the 58 MoE layers (bf16 activations)."""
    report = layout_report(compiled("deepseek-v3"), Layout(tp=1, ep=64, dp=64), "prefill", Scenario(B=64, P=64))
    traffic = {t.kind: t for t in report.traffic}
    per_layer = 63 / 64 * 64 * 8 * 7168 * 2
    assert traffic["all_to_all"].count == 2 * 58
    assert traffic["all_to_all"].sent_bytes == pytest.approx(2 * 58 * per_layer, rel=1e-12)
    assert per_layer / 64 <= 8 * 7168 * 2  # per token: at most its 8 copies leave the card


def test_identity_experts_stay_on_the_tokens_card():
    """LongCat-Flash's zero-computation experts return their input where the token is: each of a card's 8
    tokens (64 requests over dp = 8) sends only its picks of weighted experts over the EP group (12 under
    `most`, none under `fewest`), one copy of its 6,144 values each, 7/8 of them to other cards, and as many
    come back, in each of 28 MoE layers."""
    def sent(routing: str) -> float:
        model = compiled("longcat-flash", conventions=Conventions(paths=(("zero_routing", routing),)))
        report = layout_report(model, Layout(tp=1, ep=8, dp=8), "decode", Scenario(B=64))
        return {t.kind: t for t in report.traffic}["all_to_all"].sent_bytes

    assert sent("fewest") == 0
    assert sent("most") == pytest.approx(2 * 28 * 7 / 8 * 8 * 12 * 6144 * 2, rel=1e-12)


@pytest.mark.parametrize("spec", SPECS)
def test_one_card_is_the_single_card_model(spec):
    """TP = EP = PP = DP = 1 gives exactly the numbers of today, for every spec, and no traffic."""
    model = compiled(spec)
    for phase, scenario in (("prefill", Scenario(P=4096)), ("decode", Scenario(B=4, S=8191))):
        whole = evaluate(model, phase, scenario)
        report = layout_report(model, Layout(), phase, scenario)
        card = report.cards[0]
        assert {f: getattr(card, f) for f in CARD_FIELDS} == {f: int(getattr(whole, f)) for f in CARD_FIELDS}
        assert card.read_bytes == whole.read_bytes["total"] and card.sent_bytes == 0 and report.replicated_params == 0
        assert report.traffic == []  # no group, no collective


PARTS = {"column": lambda tp, ep, n: tp, "row": lambda tp, ep, n: tp, "vocab": lambda tp, ep, n: tp,
         "heads": lambda tp, ep, n: min(tp, n), "ep": lambda tp, ep, n: ep if ep > 1 else tp,
         "replicated": lambda tp, ep, n: 1}


@settings(max_examples=25, deadline=None)
@given(spec=st.sampled_from(["qwen3-8b", "qwen3-30b-a3b", "deepseek-v3", "gpt-oss-20b", "gemma-2-9b",
                             "jamba-1.5-mini", "mamba-codestral-7b", "minimax-text-01", "qwen3.6-35b-a3b"]),
       tp=st.sampled_from([1, 2, 4, 8]), dp=st.sampled_from([1, 2]), pp=st.sampled_from([1, 2, 4]),
       ep_index=st.integers(0, 3))
def test_every_card_together_holds_the_model_plus_its_replicas(spec, tp, dp, pp, ep_index):
    """Σ over all cards = the model + exactly the replicated parts, counted here from each op's shard word:
    an op split `parts` ways is held tp·dp/parts times over."""
    eps = [e for e in (1, 2, 4, 8) if (tp * dp) % e == 0]
    layout = Layout(tp=tp, dp=dp, pp=pp, ep=eps[ep_index % len(eps)])
    model = compiled(spec)
    try:
        report = layout_report(model, layout, "decode", Scenario())
    except ArchError as refused:  # heads, experts or layers that do not split evenly: refused, at the op
        assert set(refused.codes) == {"E405"} and "evenly" in refused.diagnostics[0].message
        assume(False)
    extra = 0
    for row in by_op(model, "decode", Scenario()):
        word, heads = model.graph.nodes[row.op]["op"].shard
        parts = PARTS[word](tp, layout.ep, int(heads) if heads is not None else 0)
        extra += row.layers * row.params * (tp * dp // parts - 1) if (tp * dp) % parts == 0 else \
            row.layers * row.params * (tp * dp / parts - 1)
    assert report.replicated_params == pytest.approx(extra, abs=1)


def test_layout_text_is_refused_with_a_reason():
    for text, words in (("tp=8,ep=3", "ep = 3 does not divide"), ("tp=x", "whole number"), ("zz=2", "zz")):
        with pytest.raises(ArchError) as caught:
            parse_layout(text)
        assert caught.value.codes == ["E405"] and words in caught.value.diagnostics[0].message


def test_cli_layout_and_layouts(capsys, tmp_path):
    spec = str(ROOT / "specs" / f"{QWEN_235B}.arch")
    assert main(["layout", spec, "--layout", "tp=8,ep=8", "--S", "8191", "--device", "h100-sxm",
                 "--link", "nvlink4"]) == 0
    out = capsys.readouterr().out
    assert "TP 8 × EP 8 × PP 1 × DP 1 (8 cards)" in out and "all_reduce" in out and "no overlap" in out
    assert main(["layout", str(ROOT / "specs" / "qwen3-8b.arch"), "--layout", "tp=8", "--keep", "tp"]) == 0
    assert "/tp" in capsys.readouterr().out
    plot = tmp_path / "memory.png"
    assert main(["layouts", spec, "--devices", "8xh100-sxm", "--context", "8192", "--batch", "64", "--top", "3",
                 "--plot", str(plot), "--fewest"]) == 0
    out = capsys.readouterr().out
    assert "fewest: 8 × h100-sxm" in out and plot.stat().st_size > 0


def test_layouts_and_layout_take_the_weights_format(capsys):
    """Issue 26: `--weights` on `layout` and `layouts`, as on `capacity`: Qwen3-235B's matrix weights in FP8 hold
    half the bytes per card (seed 002 §2.6.2: about 235 GB in FP8 against 470 GB in BF16)."""
    import json

    spec = str(ROOT / "specs" / f"{QWEN_235B}.arch")
    per_card = {}
    for weights in ([], ["--weights", "fp8"]):
        assert main(["layout", spec, "--layout", "tp=8,ep=8", "--json", *weights]) == 0
        per_card[bool(weights)] = json.loads(capsys.readouterr().out)["cards"][0]["weight_bytes"]
    assert 0.5 < per_card[True] / per_card[False] < 0.51  # the embedding, head and norms stay in BF16
    assert main(["layouts", spec, "--devices", "4xh100-sxm", "--context", "8192", "--batch", "1", "--weights", "fp8",
                 "--json"]) == 0
    assert any(f["fits"] for f in json.loads(capsys.readouterr().out))  # 235 GB in FP8 fit 4 × 80 GB; BF16 not


def test_pipeline_stages_split_the_layers_and_name_the_busiest():
    model = compiled("qwen3-8b")
    whole = evaluate(model, "decode", Scenario()).params
    report = layout_report(model, Layout(pp=4, micro_batches=4), "decode", Scenario(B=8),
                           device("h100-sxm"), link("nvlink4"))
    first, last = report.cards
    assert first.params + last.params + 2 * (whole - _ends(model)) // 4 == whole
    assert report.times.bubble == 0  # four micro-batches keep four stages busy from one decode step to the next
    assert report.busiest in ("first", "last")


@pytest.mark.parametrize("phase, micro, slots", [("decode", 4, 4), ("decode", 2, 4), ("decode", 8, 8),
                                                 ("prefill", 4, 7)])
def test_steady_state_decode_pays_no_pipeline_fill(phase, micro, slots):
    """Issue 26: the (p − 1)/(m + p − 1) bubble is a batch's fill and drain (Narayanan et al. 2021 §2.2); decode
    steps follow each other, so a step of m micro-batches over p stages takes max(m, p) stage times."""
    model = compiled("qwen3-8b")
    shape = Scenario(B=8, S=1000) if phase == "decode" else Scenario(B=8, P=1000)
    report = layout_report(model, Layout(pp=4, micro_batches=micro), phase, shape, device("h100-sxm"),
                           link("nvlink4"))
    t = report.times
    stage = t.compute + t.memory + t.communication
    assert t.no_overlap == pytest.approx(slots * stage, rel=1e-12)
    assert t.bubble == pytest.approx((slots - micro) / slots)


def _ends(model) -> int:
    """Parameters outside the repeated layers (embedding, final norm, head)."""
    return sum(row.params for row in by_op(model, "decode", Scenario()) if row.layers == 1)


def test_evaluator_in_use():  # the per-card numbers come from the same exact evaluator as `eval`
    model = compiled("qwen3-8b")
    assert PlainEvaluator(model, "decode", Scenario())(model.total("params"), "params") == \
        evaluate(model, "decode", Scenario()).params


def test_docs_worked_example_is_what_the_compiler_prints():
    """docs/layouts.md's worked example quotes `archcost layout` on Qwen3-235B-A22B; its figures must stay true."""
    from archcost.compiler.render.layouts import layout_text

    doc = (ROOT / "docs" / "layouts.md").read_text()
    report = layout_report(compiled(QWEN_235B), Layout(tp=8, ep=8), "decode", Scenario(B=16, S=8191),
                           device("h100-sxm"), link("nvlink4"))
    text = layout_text(report)
    card = report.cards[0]
    for figure in (f"{card.params / 1e9:,.3f}", f"{card.weight_bytes / 1e9:,.3f}", f"{report.replicated_params:,}",
                   f"{(card.read_bytes + card.write_bytes) / 1e9:,.3f}", f"{card.sent_bytes / 1e6:,.3f}",
                   f"{report.times.full_overlap * 1e3:,.4f}", f"{report.times.no_overlap * 1e3:,.4f}",
                   f"{8 * card.weight_bytes / 1e9:,.1f}"):
        assert figure in doc and (figure in text or figure == f"{8 * card.weight_bytes / 1e9:,.1f}"), figure
    from archcost.compiler.cards.fleet import capacity_on

    held = capacity_on(compiled(QWEN_235B), Layout(tp=8, ep=8), device("h100-sxm"), context=8192, batch=16)
    assert f"holds {held.batch_max} requests of 8K" in doc and f"reach {held.context_max:,} positions" in doc


def test_deepseek_v3_node_limited_dispatch_per_token():
    """DeepSeek-V3 (tech report §3.2.2): node-limited routing sends each token to at most 4 servers (in FP8),
    where NVLink forwards it to its experts; the combine comes back in BF16. Over EP = 64 (8 servers of 8),
    each token crosses the network min(8, 4) times, 7/8 of them to another server: at most 4 × 7,168 bytes."""
    layout = parse_layout("tp=1,ep=64,dp=64,node=8,limit=4,dispatch=fp8")
    report = layout_report(compiled("deepseek-v3"), layout, "prefill", Scenario(B=64, P=64))
    card = report.cards[0]
    tokens, layers, d = 64, 58, 7168
    dispatch_per_token = 7 / 8 * 4 * d * 1
    combine_per_token = 7 / 8 * 4 * d * 2
    assert card.network_bytes == pytest.approx(layers * tokens * (dispatch_per_token + combine_per_token))
    assert dispatch_per_token <= 4 * d  # the report's bound: four servers, one FP8 copy each
    inside = card.sent_bytes - card.network_bytes  # forwarded to the 8 experts on the 8 cards of each server
    assert inside == pytest.approx(layers * tokens * 7 / 8 * 8 * d * (1 + 2))


def test_context_parallel_splits_positions_and_gathers_each_layers_kv():
    model = compiled("qwen3-8b")
    whole = evaluate(model, "prefill", Scenario(P=8192))
    report = layout_report(model, Layout(cp=4), "prefill", Scenario(P=8192))
    card = report.cards[0]
    assert card.state_bytes * 4 == whole.state_bytes and card.params == whole.params
    assert card.flops_matrix * 4 == whole.flops_matrix
    gathers = {t.kind: t for t in report.traffic}["all_gather"]
    assert gathers.count == 36 and gathers.sent_bytes == 3 / 4 * whole.state_bytes



def test_context_parallel_reads_every_weight_and_keeps_a_decode_token_on_one_card():
    """Issue 26: CP divided weight reads, decode FLOPs and TP bytes by cp (Llama-2-70B tp=8,cp=2 read 14.0 GB
    per card while holding 17.2 GB, below the weights ÷ bandwidth floor of any decode step). In ring attention
    (Liu et al. 2023) each card runs its own positions through every weight, and the keys and values go round
    the ring, not the queries: a decode step's one new token is all on one card, whose attention meets each
    card's part of the cache there."""
    model = compiled("llama-2-70b")
    scenario = Scenario(B=1, S=4000)
    alone = layout_report(model, Layout(tp=8), "decode", scenario).cards[0]
    card = layout_report(model, Layout(tp=8, cp=2), "decode", scenario).cards[0]
    assert card.read_bytes >= card.weight_bytes and card.weight_bytes == alone.weight_bytes
    attention = evaluate(model, "decode", scenario).context_flops / 8  # the scores and sums of a tp card's heads
    assert card.flops_matrix == alone.flops_matrix - attention / 2
    prefill = layout_report(model, Layout(tp=8, cp=2), "prefill", Scenario(P=4096)).cards[0]
    assert prefill.read_bytes >= prefill.weight_bytes
    assert prefill.flops_matrix * 2 == layout_report(model, Layout(tp=8), "prefill", Scenario(P=4096)).cards[0] \
        .flops_matrix

def test_expert_imbalance_loads_the_busiest_card():
    model = compiled("qwen3-30b-a3b")
    even = layout_report(model, Layout(tp=8, ep=8), "prefill", Scenario(P=4096)).cards[0]
    skewed = layout_report(model, parse_layout("tp=8,ep=8,imb=1.5"), "prefill", Scenario(P=4096)).cards[0]
    assert skewed.flops_matrix > even.flops_matrix and skewed.params == even.params


def test_capacity_on_a_layout():
    """B_max at 8K on TP 8 × EP 8: (80 GB − a card's weights) / a request's 8K state on one card, times the
    replicas; the longest context a batch reaches shrinks as the batch grows."""
    from archcost.compiler.cards.fleet import capacity_on

    model, sheet = compiled(QWEN_235B), device("h100-sxm")
    held = capacity_on(model, Layout(tp=8, ep=8), sheet, context=8192, batch=16)
    card = layout_report(model, Layout(tp=8, ep=8), "decode", DECODE_8K).cards[0]
    assert held.batch_max == int((sheet.memory - card.weight_bytes) // card.state_bytes)
    wider = capacity_on(model, Layout(tp=8, ep=8), sheet, context=8192, batch=32)
    assert 8192 < wider.context_max < held.context_max
    assert (
        capacity_on(model, Layout(tp=2, ep=2), sheet, context=8192, batch=1).context_max == 0
    )  # weights alone too big


@given(st.integers(-1, 2**31), st.integers(-5, 2**31 + 5))
@settings(max_examples=300, deadline=None)
def test_the_longest_context_is_found_from_any_guess(answer, guess):
    """fleet._longest, from a guess (the straight line through a state's values), finds what a bisection of the
    whole range [0, 2^31] finds: the largest h with fits(h), 0 where none fits, for any boundary and guess."""
    from archcost.compiler.cards.fleet import _longest

    assert _longest(lambda h: h <= answer, guess) == max(answer, 0)


def _bisected(fits) -> int:
    """The capacity's search before its guess: a bisection of [0, 2^31]."""
    low, high = 0, 2**31
    if fits(high):
        return high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return low


@pytest.mark.parametrize("name, text, batch", [
    (QWEN_235B, "tp=8,ep=8", 16),            # a state that grows the same bytes a position
    ("gemma-3-27b", "tp=2", 8),              # sliding windows beside global layers: a bend at each window
    ("gpt-oss-120b", "tp=4,pp=2", 4),        # half the layers windowed, over two stages
    ("jamba-1.5-mini", "tp=2", 2),           # a fixed recurrent state beside a few attention layers
    ("mamba-codestral-7b", "tp=1", 1)])      # a fixed state alone: every context fits once one does
def test_the_longest_context_is_the_bisections(name, text, batch):
    """capacity_on's longest context against the bisection of the exact state formula it replaced."""
    from archcost.compiler.cards import fleet
    from archcost.compiler.cards.pipeline import stage_keys
    from archcost.compiler.cards.placement import placed

    model, sheet, layout = compiled(name), device("h100-sxm"), parse_layout(text)
    degrees = layout.degrees(formats=model.ir.formats)
    weights, states = fleet._stage_memory(model, degrees, stage_keys(placed(model, degrees), layout.pp))
    room = [sheet.memory - w for w in weights]
    replica = -(-batch // layout.dp)
    expected = _bisected(lambda h: all(state(replica, h) <= r for state, r in zip(states, room)))
    assert fleet.capacity_on(model, layout, sheet, context=8192, batch=batch).context_max == expected


def test_diagram_marks_the_collectives_on_their_edges(capsys):
    """`archcost diagram --layout`: the all-reduces after the row-parallel linears and the experts' all-to-all
    dispatch and combine are drawn on the edges that carry them."""
    assert main(["diagram", str(ROOT / "specs" / "qwen3-30b-a3b.arch"), "-o", "-", "--layout", "tp=4,ep=4"]) == 0
    dot = capsys.readouterr().out
    assert '"layers.attn.o" -> "layers.attn.residual.add" [label=" m×2048\nall-reduce over tp"' in dot
    assert dot.count("all-to-all over ep") == 2


def test_recurrent_state_splits_by_heads():
    """Mamba-2's state (its convolution window and its per-head SSM state) splits over TP like K and V: each
    of 8 cards holds 16 of Mamba-Codestral's 128 heads; Qwen3.6's Gated DeltaNet layers split their 32 value
    heads over 4 cards while its full-attention layers' 2 KV heads are held twice."""
    model = compiled("mamba-codestral-7b")
    whole = evaluate(model, "decode", DECODE_8K).state_bytes
    assert layout_report(model, Layout(tp=8), "decode", DECODE_8K).cards[0].state_bytes * 8 == whole
    model = compiled("qwen3.6-35b-a3b")
    card = layout_report(model, Layout(tp=4), "decode", DECODE_8K).cards[0]
    kinds = evaluate(model, "decode", DECODE_8K).state_by_kind
    assert card.state_bytes == kinds["kv"] / 2 + (evaluate(model, "decode", DECODE_8K).state_bytes - kinds["kv"]) / 4


def test_uneven_splits_are_refused_at_the_op():
    """32 query heads over 3 cards, 128 experts over 3, 36 layers over 37 stages or with 30 on the first and
    last: no card layout makes them."""
    for spec, text, words in (("qwen3-8b", "tp=3", "32 heads"), ("qwen3-30b-a3b", "tp=3,ep=3", "heads"),
                              ("qwen3-8b", "pp=37", "36 repeated layers"),
                              ("qwen3-8b", "pp=4,first=30,last=30", "first = 30")):
        with pytest.raises(ArchError) as caught:
            layout_report(compiled(spec), parse_layout(text), "decode", Scenario())
        assert set(caught.value.codes) == {"E405"} and words in caught.value.diagnostics[0].message


def test_layouts_plot_refuses_a_file_it_cannot_draw(capsys, tmp_path):
    """A fuzzer find: `--plot x.csv` reached matplotlib's ValueError; it is a located usage error now."""
    spec = str(ROOT / "specs" / "qwen3-8b.arch")
    assert main(["layouts", spec, "--devices", "2xh100-sxm", "--context", "64", "--plot", str(tmp_path / "x.csv")]) == 2
    assert "use .png or .svg" in capsys.readouterr().err


def test_traffic_between_servers_is_charged_to_the_network():
    """Issue 26: without `limit`, an EP group of 256 cards over 32 servers reported no network bytes. With the
    cards of a group numbered in a row (Megatron's order), an all-to-all over 256 cards of 8-card servers sends
    248 of each 255 parts it sends to other servers; a TP ring over two servers runs at its network hops."""
    model = compiled("deepseek-v3")
    card = layout_report(model, parse_layout("tp=1,dp=256,ep=256,node=8"), "decode", Scenario(B=256, S=1000)).cards[0]
    assert card.network_bytes == pytest.approx(card.sent_bytes * 248 / 255, abs=64)
    inside = layout_report(model, parse_layout("tp=1,dp=8,ep=8,node=8"), "decode", Scenario(B=8, S=1000)).cards[0]
    assert inside.network_bytes == 0 and inside.sent_bytes > 0
    dense = compiled("llama-2-70b")
    ring = layout_report(dense, parse_layout("tp=16,node=8"), "decode", Scenario(B=1, S=1000)).cards[0]
    assert ring.network_bytes == ring.sent_bytes > 0


def test_mla_under_tp_keeps_its_per_head_matrices_on_their_heads():
    """Issue 26: a heads-split linear always asked for its whole input, so MLA's absorbed-K and restored-V
    matrices (one per head, on a head-split input) all-gathered at every layer: DeepSeek-V3 prefill at tp = 4
    sent 57 % of its bytes in 122 all-gathers, where Megatron has none. Now, as Shoeybi et al. (2019) count,
    one all-reduce after each attention and each FFN block (61 + 61) and the head's; with sequence parallelism
    each becomes a reduce-scatter and an all-gather of the same bytes (Korthikanti et al. 2022)."""
    model = compiled("deepseek-v3")
    plain = {t.kind: t for t in layout_report(model, Layout(tp=4, ep=4), "prefill", Scenario(P=1024)).traffic
             if t.group == "tp"}  # the logits gathered for sampling are their own group
    assert "all_gather" not in plain and plain["all_reduce"].count == 61 + 61 + 1
    split = {t.kind: t for t in layout_report(model, parse_layout("tp=4,ep=4,sp"), "prefill",
                                                Scenario(P=1024)).traffic if t.group == "tp"}
    assert split["all_gather"].count == split["reduce_scatter"].count == 123
    assert split["all_gather"].sent_bytes + split["reduce_scatter"].sent_bytes == plain["all_reduce"].sent_bytes


def test_compute_format_sets_the_peak_of_the_time_bound(capsys):
    """Issue 26: `layout` always used the BF16 peak. `--compute FORMAT` names it (default: the format the
    spec's activations are stored in); FP8 on an H100 SXM is 1,978.9 TFLOPS dense (NVIDIA's datasheet)."""
    model, scenario = compiled("deepseek-v3"), Scenario(B=64, S=4000)
    sheets = device("h100-sxm"), link("nvlink4")
    default = layout_report(model, Layout(tp=8, ep=8), "decode", scenario, *sheets).times
    fp8 = layout_report(model, Layout(tp=8, ep=8), "decode", scenario, *sheets, "fp8").times
    assert default.compute_format == "bf16" and fp8.compute_format == "fp8"
    assert fp8.compute * 1978.9 == pytest.approx(default.compute * 989.4)
    spec = str(ROOT / "specs" / "deepseek-v3.arch")
    assert main(["layout", spec, "--layout", "tp=8,ep=8", "--device", "h100-sxm", "--link", "nvlink4",
                 "--compute", "fp4"]) == 2
    assert "gives no peak for `fp4`" in capsys.readouterr().err


EXPERT_PARAMS_V3 = 3 * 7168 * 2048  # one routed expert of DeepSeek-V3: gate, up and down, 7,168 × 2,048


def test_deepseek_v3_published_deployments_with_redundant_experts():
    """DeepSeek-V3 report §3.4.1 (prefill): "4 nodes with 32 GPUs. The attention part employs 4-way Tensor
    Parallelism (TP4) with Sequence Parallelism (SP), combined with 8-way Data Parallelism (DP8) ... For the MoE
    part, we use 32-way Expert Parallelism (EP32)" and 32 redundant experts: "each GPU hosts 8 original experts
    and one additional redundant expert". §3.4.2 (decode): "40 nodes with 320 GPUs", TP4 with SP and DP80 for
    attention, EP320 for the MoE: "each GPU hosts only one expert" (the 64 beyond the 256 are redundant copies)."""
    model = compiled("deepseek-v3")
    prefill = parse_layout("tp=4,dp=8,sp,ep=32,redundant=32,node=8,limit=4")
    plain = parse_layout("tp=4,dp=8,sp,ep=32,node=8,limit=4")
    decode = parse_layout("tp=4,dp=80,sp,ep=320,redundant=64,node=8,limit=4")
    assert (prefill.cards, decode.cards) == (32, 320)
    cards = {name: layout_report(model, layout, phase, shape).cards[0].params for name, layout, phase, shape in (
        ("prefill", prefill, "prefill", Scenario(B=8, P=4096)), ("plain", plain, "prefill", Scenario(B=8, P=4096)),
        ("decode", decode, "decode", Scenario(B=80, S=4096)))}
    moe_layers = 58
    assert cards["prefill"] - cards["plain"] == moe_layers * EXPERT_PARAMS_V3       # 9 experts a card, not 8
    assert cards["prefill"] - cards["decode"] == 8 * moe_layers * EXPERT_PARAMS_V3  # and 1 at decode
    with pytest.raises(ArchError, match="redundant copies cannot be split evenly"):
        layout_report(model, parse_layout("tp=4,dp=8,ep=32,redundant=5"), "decode", Scenario())
    with pytest.raises(ArchError, match="give ep > 1"):
        parse_layout("tp=4,redundant=4")
    with pytest.raises(ArchError, match="cannot be split evenly"):
        layout_report(model, parse_layout("tp=4,dp=80,ep=320"), "decode", Scenario())  # 256 over 320: refused


def test_uneven_pipeline_stages_take_the_layers_in_order():
    """Issue 26: DeepSeek-V3's 61 layers allowed no pp > 1. Stages now take the layers in order, the extra ones
    on the later stages (15 + 15 + 15 + 16); the first holds the 3 dense layers and 12 MoE ones. Every layer is
    on exactly one stage: with tp = 1 no parameter is held twice."""
    model = compiled("deepseek-v3")
    report = layout_report(model, parse_layout("pp=4"), "decode", Scenario(B=4, S=1000))
    assert report.stage_layers == [15, 15, 15, 16] and report.replicated_params == 0
    first, last = report.cards
    ends = _stage_only(model, "first"), _stage_only(model, "last")
    rows = by_op(model, "decode", Scenario())
    # one layer's attention (all 61), dense MLP (the select's first 3) and MoE (its 58)
    attention, dense, moe = (sum(r.params for r in rows if r.layers == n) for n in (61, 3, 58))
    assert first.params == ends[0] + 15 * attention + 3 * dense + 12 * moe
    assert last.params == ends[1] + 16 * (attention + moe)


def _stage_only(model, stage: str) -> int:
    """Parameters of the ops only the first (or the last) stage holds: before the layers, or after them."""
    stages = place(model.graph, parse_layout("pp=2").degrees()).stages
    return sum(row.params for row in by_op(model, "decode", Scenario()) if stages[row.op] == stage)


def test_first_and_last_give_the_end_stages_layers_as_llama_3_does():
    """Llama 3 §3.3.2 takes one layer off the first and the last stage (Megatron-LM's first- and last-stage
    layer counts): Llama-3.1-8B's 32 layers over 4 stages as 7 + 9 + 9 + 7; a middle stage, heavier than both
    ends, is shown; the cards of all stages together hold the model once."""
    model = compiled("llama-3.1-8b")
    report = layout_report(model, parse_layout("pp=4,first=7,last=7"), "decode", Scenario())
    assert report.stage_layers == [7, 9, 9, 7] and [c.stage for c in report.cards] == ["first", "stage 1", "last"]
    first, middle, last = report.cards
    layer = middle.params / 9
    assert first.params + 2 * middle.params + last.params == evaluate(model, "decode", Scenario()).params
    assert first.params - 7 * layer + last.params - 7 * layer == _ends(model)
    from archcost.compiler.render.layouts import layout_text

    assert "pipeline stages of 7 + 9 × 2 + 7 layers" in layout_text(report)


def test_disaggregated_serving_hands_over_exactly_the_prefill_state(capsys):
    """Issue 26: `archcost disaggregate`. Llama-3.1-8B's 4,096-token prompt leaves 32 layers × 2 (K and V) × 8 KV
    heads × 128 × 2 bytes a position (seed 000's 128 KiB a token) = 536,870,912 bytes; time to first token is the
    prefill's bound plus the busiest prefill card's state over the network; the ratio of prefill to decode
    layouts keeps both busy: t_prefill / (G · t_decode)."""
    import json

    from archcost.compiler.cards.disaggregation import disaggregate

    model = compiled("llama-3.1-8b")
    sheets = (device("h100-sxm"), link("nvlink4"), link("ib_ndr"))
    report = disaggregate(model, parse_layout("tp=2"), parse_layout("tp=1,dp=2"), Scenario(B=16, P=4096, G=512),
                          sheets, ttft=0.5, tpot=0.02)
    assert report.kv_transfer_bytes == 32 * 2 * 8 * 128 * 2 * 4096 == 536_870_912
    card_state = report.prefill.cards[0].state_bytes
    assert card_state == 16 * 536_870_912 / 2  # 16 requests, their KV heads split over the two cards
    assert report.transfer_seconds == pytest.approx(14e-6 + card_state / link("ib_ndr").bandwidth)
    assert report.ttft == pytest.approx(report.prefill.times.full_overlap + report.transfer_seconds)
    assert report.prefill_per_decode == pytest.approx(report.prefill.times.full_overlap /
                                                      (512 * report.decode_last.times.full_overlap))
    assert report.decode_last.scenario.S == 4096 + 511 and report.ttft_met is False and report.tpot_met is True
    spec = str(ROOT / "specs" / "llama-3.1-8b.arch")
    assert main(["disaggregate", spec, "--prefill", "tp=2", "--decode", "tp=1,dp=2", "--B", "16", "--device",
                 "h100-sxm", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["kv_transfer_bytes"] == 536_870_912


def test_docs_disaggregation_example_is_what_the_command_prints(capsys):
    spec = "specs/llama-3.1-8b.arch"
    assert main(["disaggregate", str(ROOT / spec), "--prefill", "tp=2", "--decode", "tp=1,dp=2", "--B", "16", "--P",
                 "4096", "--G", "512", "--device", "h100-sxm", "--ttft", "0.5", "--tpot", "0.02"]) == 0
    assert capsys.readouterr().out in (ROOT / "docs" / "layouts.md").read_text()


WORK_PARTS = {"column": lambda tp, n: tp, "row": lambda tp, n: tp, "vocab": lambda tp, n: tp,
              "heads": lambda tp, n: min(tp, n), "ep": lambda tp, n: tp, "replicated": lambda tp, n: 1}
ALL_SPECS = sorted(p.stem for p in (ROOT / "specs").glob("*.arch"))


def _cards_do_the_work(spec, tp, dp, ep_index, B):
    """The tp·dp cards of a one-stage layout together do each op's matrix FLOPs once per card its split leaves
    it on: an op split p ways over a replica's tp cards (an expert layer: each card 1/tp of its tokens, whatever
    ep spans) is done tp/p times over (counted from the op's shard word, not from the placement); a dense decode
    card reads at least the weights it holds."""
    eps = [e for e in (1, 2, 4, 8) if (tp * dp) % e == 0]
    layout = Layout(tp=tp, dp=dp, ep=eps[ep_index % len(eps)])
    model = compiled(spec)
    shape = Scenario(B=B * dp, S=512)
    try:
        report = layout_report(model, layout, "decode", shape)
    except ArchError as refused:
        assert set(refused.codes) == {"E405"} and "evenly" in refused.diagnostics[0].message
        return
    expected = 0
    for row in by_op(model, "decode", shape):
        word, heads = model.graph.nodes[row.op]["op"].shard
        expected += row.flops_matrix_all_layers * tp / WORK_PARTS[word](tp, int(heads) if heads is not None else 0)
    card = report.cards[0]
    assert card.flops_matrix * tp * dp == pytest.approx(expected, rel=1e-9)
    # in a transformer every tensor-parallel all-reduce adds up the residual stream: B/dp rows of the model's
    # width, by the ring formula 2(n − 1)/n of the buffer a card (a Mamba layer also reduces its narrow dt, B, C)
    kinds = {model.graph.nodes[n]["op"].kind for n in model.graph.nodes}
    width = next(data["op"].out_width for data in (model.graph.nodes[n] for n in model.graph.nodes)
                 if data["op"].kind == "lookup")
    for t in report.traffic if not kinds & {"recurrent", "conv", "mix", "index"} else []:
        if t.kind == "all_reduce" and t.group == "tp":
            buffer = B * int(width) * (sp.Integer(1) * model.ir.act_format)
            assert t.sent_bytes == pytest.approx(t.count * 2 * (tp - 1) / tp * float(buffer), rel=1e-9), spec
    ops = [model.graph.nodes[n] for n in model.graph.nodes]
    if not any(data["op"].kind == "experts" for data in ops):  # routed experts: only the touched ones are read
        # a table is read row by row: its weights need not all be read (split by vocabulary over tp)
        tables = sum(float(data["cost"].weight_bytes) / (tp if data["op"].shard[0] == "vocab" else 1)
                     for data in ops if data["op"].kind == "lookup")
        assert card.read_bytes >= card.weight_bytes - tables


@settings(max_examples=30, deadline=None)
@given(spec=st.sampled_from(ALL_SPECS), tp=st.sampled_from([1, 2, 4, 8]), dp=st.sampled_from([1, 2, 4]),
       ep_index=st.integers(0, 3), B=st.sampled_from([1, 8]))
def test_cards_together_do_the_single_card_work_plus_the_replicated(spec, tp, dp, ep_index, B):
    """Issue 26's property over random layouts of every spec (decode, one stage)."""
    _cards_do_the_work(spec, tp, dp, ep_index, B)


@pytest.mark.long
@settings(max_examples=2000, deadline=None)
@given(spec=st.sampled_from(ALL_SPECS), tp=st.sampled_from([1, 2, 4, 8]), dp=st.sampled_from([1, 2, 4]),
       ep_index=st.integers(0, 3), B=st.sampled_from([1, 8, 64]))
def test_cards_together_do_the_work_long(spec, tp, dp, ep_index, B):
    _cards_do_the_work(spec, tp, dp, ep_index, B)


def _kept_formulas_equal_the_numbers(spec, tp, dp, ep_index, pp, capsys):
    """`layout --keep` at random layouts: the per-card formulas with the degrees as letters, evaluated at the
    layout's degrees, give the layout's own numbers."""
    import re

    import sympy as sp

    eps = [e for e in (1, 2, 4, 8) if (tp * dp) % e == 0]
    words = f"tp={tp},dp={dp},ep={eps[ep_index % len(eps)]},pp={pp}"
    kept = "tp,ep,dp" + (",pp" if pp > 1 else "")
    model = compiled(spec)
    try:
        card = layout_report(model, parse_layout(words), "decode", Scenario(B=8, S=100)).cards[0]
    except ArchError:
        return  # refused as an uneven split: the property is about the layouts that exist
    code = main(["layout", str(ROOT / "specs" / f"{spec}.arch"), "--layout", words, "--keep", kept, "--B", "8",
                 "--S", "100"])
    out = capsys.readouterr()
    if code == 2:
        assert "--keep pp" in out.err  # stages that take the layers in order have no letter for pp
        return
    printed = dict(re.findall(r"^  (\w+) = (.+)$", out.out, re.M))
    layout = parse_layout(words)
    letters = {k: (sp.Symbol(k, positive=True, integer=True), getattr(layout, k)) for k in ("tp", "ep", "dp", "pp")}
    names = {**{k: s for k, (s, _) in letters.items()}, "B": sp.Symbol("B"), "S": sp.Symbol("S")}
    values = {**{s: v for s, v in letters.values()}, names["B"]: 8, names["S"]: 100}
    for name in ("params", "weight_bytes", "state_bytes", "flops_matrix"):
        formula = sp.parse_expr(printed[name], local_dict=names)  # the test reads our own printed formula back
        assert formula.xreplace(values) == pytest.approx(getattr(card, name), rel=1e-12), (name, words)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spec=st.sampled_from(ALL_SPECS), tp=st.sampled_from([1, 2, 4]), dp=st.sampled_from([1, 2]),
       ep_index=st.integers(0, 3), pp=st.sampled_from([1, 2]))
def test_kept_degree_formulas_equal_the_numbers_over_every_spec(spec, tp, dp, ep_index, pp, capsys):
    _kept_formulas_equal_the_numbers(spec, tp, dp, ep_index, pp, capsys)


@pytest.mark.long
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spec=st.sampled_from(ALL_SPECS), tp=st.sampled_from([1, 2, 4, 8]), dp=st.sampled_from([1, 2, 4]),
       ep_index=st.integers(0, 3), pp=st.sampled_from([1, 2, 4]))
def test_kept_degree_formulas_long(spec, tp, dp, ep_index, pp, capsys):
    _kept_formulas_equal_the_numbers(spec, tp, dp, ep_index, pp, capsys)


def test_sglang_published_disaggregated_deployment_is_stated():
    """LMSYS, "Deploying DeepSeek with PD Disaggregation and Large-scale Expert Parallelism on 96 H100 GPUs"
    (2025-05-05): DP attention with expert parallelism, prefill on 4 nodes (EP32) and decode on 9 (72 cards),
    where EPLB's redundant experts make "more flexible EP sizes (e.g., 288 experts)" possible: 256 + 32 copies,
    4 a card. Written as layouts, both sides and the hand-off of `archcost disaggregate`."""
    from archcost.compiler.cards.disaggregation import disaggregate

    model = compiled("deepseek-v3")
    prefill = parse_layout("tp=1,dp=32,ep=32,node=8")
    decode = parse_layout("tp=1,dp=72,ep=72,redundant=32,node=8")
    assert (prefill.cards, decode.cards) == (32, 72)
    report = disaggregate(model, prefill, decode, Scenario(B=72, P=2000, G=100),
                          (device("h100-sxm"), link("nvlink4"), link("ib_ndr")))
    experts = {side: getattr(report, side).cards[0].params for side in ("prefill", "decode_last")}
    assert experts["prefill"] - experts["decode_last"] == (256 // 32 - 288 // 72) * 58 * EXPERT_PARAMS_V3
    assert report.kv_transfer_bytes == evaluate(model, "prefill", Scenario(P=2000)).state_bytes


def test_llama_3_1_405b_fits_one_h100_server_in_fp8_not_in_bf16():
    """Llama 3 paper §6.1: "When using a BF16 number representation for the model parameters, Llama 3 405B does
    not fit in the GPU memory of a single machine with 8 Nvidia H100 GPUs" (so BF16 runs on 16 over two
    machines); §6.2: FP8 quantization runs it on one. At tp = 8, 8K positions."""
    from archcost.compiler.cards.fleet import capacity_on
    from archcost.compiler.terms.scenario import Conventions

    h100 = device("h100-sxm")
    bf16 = capacity_on(compiled("llama-3.1-405b"), Layout(tp=8), h100, 8192, 1)
    fp8 = capacity_on(compiled("llama-3.1-405b", conventions=Conventions(weights="fp8")), Layout(tp=8), h100, 8192, 1)
    two = capacity_on(compiled("llama-3.1-405b"), Layout(tp=8, pp=2), h100, 8192, 1)
    assert bf16.batch_max == 0 and fp8.batch_max > 0 and two.batch_max > 0


def test_expert_tensor_parallelism_splits_each_expert_inside_its_ep_rank():
    """Issue 26: with ep smaller than a stage's tp × dp cards each expert was held whole by tp·dp/ep cards.
    `etp` (Megatron-Core's expert_tensor_parallel_size) splits each expert's matrices over the etp cards of its
    EP rank: Qwen3-235B at tp=4,ep=2,etp=2 holds what ep=4 holds a card (1/4 of every layer's experts), does the
    same FLOPs (a card's own tokens), and each EP rank's cards all-gather their tokens and reduce-scatter their
    partial sums: one card's routed rows, B·top·d/tp BF16 values, (etp − 1) times a layer."""
    model = compiled(QWEN_235B)
    shape = Scenario(B=8, S=1000)
    split, wide, whole = (layout_report(model, parse_layout(text), "decode", shape)
                          for text in ("tp=4,ep=2,etp=2", "tp=4,ep=4", "tp=4,ep=2"))
    assert split.cards[0].params == wide.cards[0].params < whole.cards[0].params
    assert split.replicated_params == wide.replicated_params
    assert split.cards[0].flops_matrix == whole.cards[0].flops_matrix
    rows = 8 * 8 * 4096 * 2 // 4  # per layer: B · top · d BF16 values over the tp cards
    etp = {t.kind: t for t in split.traffic if t.group == "etp"}
    assert etp["all_gather"].count == etp["reduce_scatter"].count == 94
    assert etp["all_gather"].sent_bytes == etp["reduce_scatter"].sent_bytes == 94 * rows * (2 - 1)
    for text, words in (("tp=4,etp=2", "give ep > 1"), ("tp=4,ep=4,etp=2", "ep × etp = 8 does not divide")):
        with pytest.raises(ArchError, match=words):
            parse_layout(text)


@pytest.mark.parametrize("name, words, between", [("gb200", "tp=8,ep=16,dp=2", 0), ("h100-sxm", "tp=8,ep=16,dp=2", 1),
                                                  ("gb200", "tp=8,ep=16,dp=2,node=8", 1)])
def test_a_layout_on_a_gb200_stays_inside_its_nvlink_domain(name, words, between):
    """A GB200 NVL72's 72 GPUs are one NVLink domain (its sheet's `domain`): a layout on it that names no `node`
    has servers of 72, so an expert all-to-all over 16 cards sends nothing over the network; on HGX H100s, or
    when the layout says node=8, half of each card's peers are in the other server."""
    model, wire = compiled(QWEN_235B), link("nvlink5")
    report = layout_report(model, parse_layout(words), "decode", DECODE_8K, device(name), wire, network=link("ib_ndr"))
    network = sum(card.network_bytes for card in report.cards)
    assert (network > 0) == bool(between)
    assert report.layout.node == (72 if name == "gb200" and "node" not in words else 8)
    assert ("servers of 72" in report.layout.text()) == (report.layout.node == 72)
