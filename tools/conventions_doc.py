"""Write docs/conventions.md: every counting choice the specs make, who makes it which way, and what it moves.

The reasons are written here by hand (REASONS); the figures are computed: each spec is evaluated along its
default and along every other word of each of its `option`s. Run after changing a spec's options:

    .venv/bin/python tools/conventions_doc.py
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "docs" / "conventions.md"
SCENARIOS = (
    ("prefill", dict(P=8192), "prefill 8K"),
    ("prefill", dict(P=1000), "prefill 1000"),
    ("decode", dict(S=8191), "decode at 8K"),
    ("request", dict(S=2000, P=500, G=64), "request S 2000 P 500 G 64"),
)

# option -> (what it chooses, who chooses which way)
REASONS = {
    "mla_cache": ("MLA's cache: the latent and the key branch (`compressed`, the up-projections absorbed), per-head "
                  "K and V (`expanded`), or the latent re-expanded every call (`reexpand`, transformers 5).",
                  "The chapter counts the compressed path (Table 2-3 prints the expanded one beside it)."),
    "index_kernel": ("DeepSeek Sparse Attention's lightning indexer: each query scores the keys up to itself and "
                     "the heads' weighted sum is reduced in the kernel (`fused`, DeepSeek's fp8_index), or every "
                     "query scores every cached key and the heads are summed by a matrix product (`eager`, "
                     "transformers' DeepseekV32Indexer).",
                     "The parity tests run `eager`, the modeling code's; `fused` is the work DeepSeek's kernels do."),
    "zero_routing": ("LongCat-Flash's zero-computation experts: all 12 of a token's picks on weighted experts "
                     "(`most`) or none (`fewest`, the identities only); a token's compute and active parameters lie "
                     "between.",
                     "The technical report gives the range (18.6 B to 31.3 B active) and an average of about 27 B, "
                     "which depends on the trained router; `most` is the bound a deployment provisions for."),
    "storage": ("Record formats: the BF16 reference layout of Table 2-E, or the production records of §2.3.6.",
                "The chapter's tables use the reference layout; §2.3.6 prints the production one."),
    "indexer": ("What the CSA indexer scores: every completed entry for every query of the call (`rectangle`, the "
                "reference indexer) or only the entries before each query (`causal`).",
                "The chapter's calculator scores the rectangle in a prefill (Table 2-C)."),
    "mtp": ("The multi-token-prediction block (§2.5.3), drafted tokens' extra layer.",
            "The chapter's model totals leave it out; speculative decoding switches it on."),
    "cached_prefill": ("A prompt after a history (S > 0, P > 1): one parallel call of P rows with one vocabulary "
                       "head per request (`parallel`), or the prompt continued one token at a time, a head per "
                       "token and a causal index scan (`sequential`).",
                       "The book's calculator has no parallel prefill on a compressed, indexed cache "
                       "(v4_attention refuses it) and runs v4_prefix_continuation: `sequential`, the default. "
                       "The chapter's request convention (§2.2.3) is `parallel`. Both agree when S = 0 or P = 1."),
    "execution": ("DeepSeek V4.1's CED path (the decoder replays the last 128 positions) or the reference path "
                  "(every layer on every position, the rectangle indexer).",
                  "The chapter prints both (Table 2-D); its totals use CED."),
    "image_router_bias": ("V4.1's second router bias, for image tokens (gate.bias_vl): counted in the text model's "
                          "parameters or not.",
                          "The book's calculator keeps it (its inventory drops only vision., aligner., image_ "
                          "names), and Table 2-B's 0.118 B other agrees; `excluded` treats it as the vision "
                          "model's."),
    "chunk_tail": ("A chunked prefill's partial last chunk of r = P mod 64 positions: each position at a whole "
                   "chunk's per-position cost (`average`), a whole padded chunk (`pad`), or a chunk of r evaluated "
                   "at its own size (`exact`).",
                   "The book's calculator pads Gated DeltaNet (qwen35_forward: ⌈P/64⌉ chunks, as transformers' "
                   "torch reference pads, and a one-token prompt runs a chunk too) and evaluates KDA's tail exactly "
                   "(kda_math.work). The chapter prints only whole chunks (P = 8192, 128)."),
    "conv_update": ("The short conv at a decode step: the new position only (`new`, 2·channels·kernel), or the "
                    "kept slots and the new input convolved as one sequence (`window`, two outputs), as "
                    "transformers' torch source runs it (a prompt after a history: P + 2·kernel − 1 outputs).",
                    "The book's calculator counts the torch source's products (qwen35_reference_steps.supplement); "
                    "the chapter's 7.33 GFLOPs fits both."),
    "rope_tables": ("RoPE's cos and sin tables built once per call: the positions' outer product with the "
                    "inverse frequencies, 2·3·32 FLOPs per token for Qwen3.6's M-RoPE.",
                    "The book's calculator counts it as matrix work (rope.frequency_outer_product); far below "
                    "any printed digit."),
    "full_attention": ("Qwen3.6's full attention scored as the eager rectangle B·P·(S+P) or causal-effective.",
                       "The chapter's ledger scores the rectangle (shared conventions, Table 2-C)."),
    "experts": ("Llama 4's experts: the top-1 expert's work per token (`routed`), or every token through all its "
                "experts (16 in Scout, 128 in Maverick) with the unrouted weighted 0 (`dense`), as transformers' "
                "Llama4TextExperts computes.",
                "`routed` is the work a routed kernel does; the parity test runs `dense`, the modeling code's."),
    "linear_kernels": ("Qwen3-Next's linear attention as the fused kernels compute it, or transformers' torch "
                       "reference as PyTorch's FLOP counter sees it.",
                       "Parity tests compare the torch reference; the fused kernels are the default."),
}

# Choices a seed spec writes into its block calls to follow the chapter's ledger (shared/reference/conventions.md):
# (spec, the text as written, the other way, what it chooses)
FIXED = [
    ("qwen3.6-35b-a3b.arch", "conv_padded = true", "conv_padded = false",
     "the short conv in prefill counted slot by slot over the padded sequence, 2·channels·kernel·(P + kernel − 1) "
     "(while conv_update = window, the window's rule counts instead)"),
    ("qwen3.6-35b-a3b.arch", "conv_flops = matrix", "conv_flops = nonmatrix", "the short conv as matrix work"),
    ("qwen3.6-35b-a3b.arch", "chunk = 64,", "chunk = 64, update_as = nonmatrix,",
     "the decode recurrence (6·dk·dv per value head per token) as matrix work, the block's default"),
    ("kimi-k3.arch", "update_as = nonmatrix", "update_as = matrix",
     "the KDA decode recurrence as scalar work: the printed 5465.40 GFLOPs leaves no room for it"),
    ("deepseek-v4-flash.arch", "router_bias = true", "router_bias = false",
     "the score-correction bias of the 40 score-routed layers' routers (256 values a layer, the checkpoint's "
     "ffn.gate.bias) counted as parameters, as the checkpoint stores them and the chapter counts them. "
     "transformers 5.24 holds it as a buffer (DeepseekV4's `e_score_correction_bias = nn.Buffer(...)`), which "
     "`model.parameters()` leaves out: its count for DeepSeek-V4-Flash, 284,332,230,231, is 40 × 256 = 10,240 "
     "below this spec's 284,332,240,471, and an import follows transformers"),
    ("kimi-k3.arch", "prefill = kda,", "prefill = stepwise,",
     "KDA prefilled by flash-linear-attention's chunked algorithm (chunk 64), not step by step"),
]

RUN_CONVENTIONS = [
    ("--attention as_written | causal | rectangle | half_rectangle",
     "pairs an attention scores; each spec's own choice by default; seed 000's ledger halves the rectangle"),
    ("--logits last | all", "rows through the vocabulary head: the last token of each request (seed 002 §2.1.2)"),
    ("--vector-params nonmatrix | matrix", "norm scales and biases as scalar work, or 2 FLOPs each as matrix work "
     "(seed 000's 2N per token)"),
    ("--routing uniform | concentrated | random", "which experts a batch touches (seed 002 Example 2-4)"),
    ("--scales logical | stored", "parameters as the model's values, or as a checkpoint stores them with the block "
     "scales of FP8 and grouped formats (MiniMax-M2's safetensors total, 228,703,644,928)"),
    ("--ledger chapter | kipply", "a source's conventions in one word"),
]

NOT_REPORTED = ("The calculator's state *access* curves (chapter2_models.py, `accounted_access_bytes`) count a "
                "recurrent state as read and written every step and leave the conv slots out; archcost reports "
                "state read (`read_bytes.state`) and written (`write_bytes.state`) apart, conv slots included. "
                "Those curves are not among the test facts.")


@functools.cache
def compiled_specs() -> dict:
    """Every spec of specs/, compiled once (each is the base of every comparison made on it); read only."""
    from archcost.compiler.compilation import compile_file

    return {path.name: compile_file(path) for path in sorted((ROOT / "specs").glob("*.arch"))}


def spec_options(bases: dict | None = None) -> list[tuple[str, str, list[str]]]:
    """(spec file, option, its words with the default first) for every `option` of every spec."""
    bases = compiled_specs() if bases is None else bases
    return [(spec, name, words) for spec, compiled in bases.items() for name, words in compiled.ir.path_choices.items()]


def moved(base, option: str, word: str) -> list[str]:
    """How each figure moves from the compiled spec's default to `option = word`."""
    from archcost.compiler.compilation import with_path

    return _compared(base, with_path(base, option, word))


def rewritten(base, spec: str, written: str, other: str) -> list[str]:
    """How each figure moves when the spec's text says `other` instead of `written`."""
    from archcost.compiler.compilation import compile_text

    path = ROOT / "specs" / spec
    text = path.read_text()
    assert text.count(written) >= 1, f"`{written}` is not in {spec}"
    return _compared(base, compile_text(text.replace(written, other), name=str(path), base=path.parent))


def _compared(base, other) -> list[str]:
    from archcost.compiler.numbers.evaluate import evaluate, state_bytes_at
    from archcost.compiler.terms.scenario import Scenario

    cells = []
    for phase, shape, label in SCENARIOS:
        a, b = (evaluate(m, phase, Scenario(**shape)).flops_matrix for m in (base, other))
        cells.append(_delta(label, a, b, "FLOPs"))
    a, b = (state_bytes_at(m, 8192) for m in (base, other))
    cells.append(_delta("state at 8K", a, b, "B"))
    a, b = (evaluate(m, "decode", Scenario()).params for m in (base, other))
    cells.append(_delta("params", a, b, ""))
    return [c for c in cells if c] or ["no figure of these scenarios"]


def _delta(label: str, a, b, unit: str) -> str:
    if a == b:
        return ""
    change = f"{b - a:+,}" + (f" {unit}" if unit else "")
    return f"{label} {change} ({(b - a) / a:+.3%})" if a else f"{label} {change}"


def render() -> str:
    out = ["# Counting conventions", "",
           "<!-- Generated by tools/conventions_doc.py; the reasons are written there, the figures computed. -->",
           "", "Where sources count the same model differently, archcost makes the choice a named option: a run-wide "
           "counting convention (a flag, and an API keyword), or one of a spec's own `option`s (an execution path, "
           "`--option NAME=WORD`). Every output names the ones it used. A spec's default is the chapter's, and "
           "where the chapter is silent, its calculator's.", "", "## Run-wide counting conventions", ""]
    out += [f"- `{flag}`: {meaning}." for flag, meaning in RUN_CONVENTIONS]
    out += ["", "## The specs' own options", "",
            "Each line: the spec, the option with its default first, then what each other word moves "
            "(matrix FLOPs at B = 1, state of one request at 8,192 positions, parameters).", ""]
    bases = compiled_specs()
    for spec, option, words in spec_options(bases):
        what, who = REASONS.get(option, ("(no note)", ""))
        out += [f"### `{option}` in {spec}: {' | '.join(words)}", "", what, "", who, ""]
        out += [f"- `{word}`: " + "; ".join(moved(bases[spec], option, word)) for word in words[1:]] + [""]
    out += ["## Choices written into the seed specs' block calls", "",
            "What the chapter's ledger needs where a block's argument, not an option, carries it; each line: the "
            "choice as written, and what writing the other way moves.", ""]
    for spec, written, other, what in FIXED:
        moves = rewritten(bases[spec], spec, written, other)
        out += [f"- {spec}, `{written}`: {what}. With `{other}`: " + "; ".join(moves)]
    out += ["", "## Not reported", "", NOT_REPORTED]
    return "\n".join(out) + "\n"


def main() -> int:
    OUTPUT.write_text(render())
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
