"""The error catalogue: every code the toolchain can raise, what it means and what usually fixes it."""

from __future__ import annotations

from typing import NamedTuple


class ErrorKind(NamedTuple):
    """What an error code means and what usually fixes it; docs/errors.md is generated from these."""

    title: str
    fix: str


# Every code the toolchain can raise. tools/errors_doc.py turns this table into docs/errors.md.
CODES: dict[str, ErrorKind] = {
    "E100": ErrorKind("syntax error",
                      "Read the caret: the token under it is not allowed there. The message lists what was "
                      "expected; a missing `}` or `->` is the usual cause."),
    "E101": ErrorKind("unreadable source file",
                      "Check the path and that the file is UTF-8 text."),
    "E102": ErrorKind("`use` of a missing file",
                      "Paths in `use` are relative to the file that says `use`; `std.<name>` loads from the "
                      "standard library. Fix the path or the spelling."),
    "E103": ErrorKind("cyclic `use`",
                      "Two files load each other. Move the shared blocks into a third file both of them `use`."),
    "E104": ErrorKind("no model in file",
                      "Commands that cost something need one `model \"Name\" { ... }`. A file of blocks only "
                      "is a library: `archcost check` accepts it; `use` it from a spec."),
    "E105": ErrorKind("more than one model in file",
                      "Write one model per file; share the common part as a block."),
    "E106": ErrorKind("input too large or too deeply nested",
                      "The file, an expression or the chain of `use` passes a safety limit (4 MB per file, "
                      "100,000 lines, 200 nested brackets, an operator chain of a few hundred terms, 64 "
                      "nested `use`). Split the expression with bindings or flatten the includes."),
    "E107": ErrorKind("`use` outside the spec's folder",
                      "A spec may load files below its own folder and the standard library. Copy the file "
                      "next to the spec, or pass `--allow-use-outside` if you trust it."),
    "E108": ErrorKind("output file refused",
                      "archcost writes only regular files that are not inputs of the command and that can be "
                      "written: not a folder, device, FIFO or read-only file, in a folder that exists, and (for "
                      "`fmt --write`) not changed since it was read. The message says which; choose another "
                      "output, or run `fmt` again on the new text."),
    "E109": ErrorKind("unknown output format",
                      "The output file's suffix names what to write: .dot, .svg or .png for diagrams, .png or .svg "
                      "for plots."),
    "E110": ErrorKind("page request past the time limit",
                      "`archcost serve` gives each request of the page a time limit (`--time-limit`, 60 s by "
                      "default) and stops the compiler when a request runs past it. Make the spec smaller, or "
                      "start the server with a longer limit."),
    "E111": ErrorKind("malformed page request",
                      "The page sent a request the server cannot read (a missing or mistyped field). A page "
                      "other than `archcost serve`'s own must send the fields docs/playground.md lists."),
    "E112": ErrorKind("path not served",
                      "`archcost serve` reads only the specs named on its command line, the specs and standard "
                      "library it ships, and what the page sends. Name the file when starting the server."),
    "E113": ErrorKind("page request too large",
                      "`archcost serve` reads requests of up to 8 MiB (HTTP 413 past it). Send the spec's text "
                      "without what it does not need, or run the command line on the file."),
    "E114": ErrorKind("model past the op limit",
                      "A model expands to more primitive ops than the compiler builds (20,000): a repeated layer "
                      "written out by hand, or repeats nested too deep. Write a repeated layer once inside "
                      "`repeat N`."),
    "E200": ErrorKind("unknown block",
                      "Check the spelling (the hint names the closest block) and that the file defining it "
                      "is loaded with `use`."),
    "E201": ErrorKind("unknown operation argument",
                      "The op or block has no argument by that name; the hint names the closest one. "
                      "`archcost check --emit ast` shows how the line was read."),
    "E202": ErrorKind("missing argument",
                      "Give the argument, by position or as `name = value`."),
    "E203": ErrorKind("too many positional arguments",
                      "Drop the extra values or name them with `name = value`."),
    "E204": ErrorKind("argument given twice",
                      "An argument was given by position and again by name, or twice by name; keep one."),
    "E205": ErrorKind("unknown op kind",
                      "The hint names the closest primitive op; docs/language.md lists them all with their "
                      "arguments. Anything else must be a block call `name(args)`."),
    "E207": ErrorKind("unknown tensor name",
                      "`from` and `on` name a labelled op or cache earlier in the same block; `state` names a "
                      "cache declared before the op or one declared `shared`."),
    "E208": ErrorKind("reserved name",
                      "B, S, P, G, N_pair and the other scenario letters are set per request; bind the value "
                      "under a different name."),
    "E209": ErrorKind("unknown component class",
                      "Use one of the classes the hint lists (attention, ffn, experts, embedding, other, ...)."),
    "E210": ErrorKind("unknown precision format",
                      "Use a format from stdlib/formats.arch (bf16, fp8, fp4, int4, ...) or define one with "
                      "`format NAME { ... }`."),
    "E211": ErrorKind("bad argument value",
                      "The argument takes another kind of value: true or false, one of the words the message "
                      "lists, a value rather than `in -> out` (or the reverse), a shard word the op knows."),
    "E214": ErrorKind("number out of range",
                      "A size passes a limit no model comes near (40 digits, exponent 256, a power of the request "
                      "letters above 8) or a format's field is below its least value. Check the binding."),
    "E215": ErrorKind("not a number",
                      "A tuple, a boolean or a word stands where a number goes: `x = (1, 2)`, `d = true`. Write "
                      "the number, or name a binding that holds one."),
    "E216": ErrorKind("unknown function or wrong arity",
                      "Expressions know min, max, floor and ceil (docs/language.md); each takes the arguments the "
                      "message says."),
    "E217": ErrorKind("division by zero in the spec",
                      "A binding or argument divides by a value that is zero when the spec compiles; fix the "
                      "divisor."),
    "E218": ErrorKind("value not known when the spec compiles",
                      "An exponent, or a field of a format, must be a number fixed by the spec, not a scenario "
                      "letter or a name left unbound."),
    "E219": ErrorKind("tied table with no owner",
                      "`tied = true` reuses a table another op owns; when every table is tied, none owns the "
                      "parameters. Declare the embedding without `tied`."),
    "E220": ErrorKind("inexact power",
                      "A power whose exponent is not a whole number and whose value is no fraction (`10 ^ 1.5` is "
                      "31.62…, `S ^ 0.5` grows with the request): archcost counts in exact whole numbers and "
                      "fractions. Write the value, or a whole exponent."),
    "E221": ErrorKind("calls sharing weights differ",
                      "Calls that `shares NAME` run one set of weights, so each must call the block the first one "
                      "calls with the same arguments. Give the differing call another name after `shares`, or "
                      "none."),
    "E212": ErrorKind("duplicate definition",
                      "A block or format defined twice: in one file, in two files the same spec uses (the `use` "
                      "order would pick one), or a format the stdlib already defines. Rename one of them."),
    "E213": ErrorKind("recursive block",
                      "A block calls itself, directly or through others. Use `repeat N` for depth."),
    "E300": ErrorKind("width mismatch",
                      "The op reads a tensor of one width and declares another. Fix `in -> out`, or read "
                      "another tensor with `from`."),
    "E301": ErrorKind("non-positive dimension",
                      "Sizes, head counts and widths must be at least 1; check the binding the message names."),
    "E302": ErrorKind("repeat count is not a positive integer",
                      "`repeat N` needs a whole number of layers of at least 1."),
    "E303": ErrorKind("repeat body changes the width",
                      "A repeated body (or each arm of a `select`) must end at the width it started with; add "
                      "the missing projection back to the model width."),
    "E304": ErrorKind("condition is not a known boolean",
                      "`if` needs a condition decidable when the spec compiles: compare option words or numbers "
                      "bound in the spec, not scenario letters."),
    "E305": ErrorKind("select counts do not add up to the stack",
                      "The layer counts of the arms of `select` must add up to the `repeat` count."),
    "E306": ErrorKind("select outside a repeat",
                      "Put `select` inside `repeat N as name { ... }`; it divides those N layers."),
    "E307": ErrorKind("option inside a block",
                      "Options belong to the model; pass their value into the block as an argument."),
    "E308": ErrorKind("unknown option",
                      "Name an option the model declares, with one of its words: `--option NAME=WORD`; "
                      "`archcost check` lists them."),
    "E309": ErrorKind("requirement not met",
                      "A block checks its arguments with `require`; this call gives values it refuses (a negative "
                      "window, two mechanisms that exclude each other). The message says which; the note names "
                      "the call."),
    "E400": ErrorKind("unbound symbol in evaluation",
                      "A formula still holds a letter with no value. Bind it in the spec or give it on the "
                      "command line (--B, --S, --P, --G ...)."),
    "E401": ErrorKind("bad scenario value",
                      "A value given for a scenario letter, a flag or an API keyword is out of range (negative "
                      "lengths, zero batch) or not one the command takes. The message says which."),
    "E402": ErrorKind("division by zero at this scenario",
                      "At these values of B, S, P and G a size of the model divides by zero (a window or block "
                      "size that comes out 0); the message names the op. Choose other values or fix the size."),
    "E403": ErrorKind("negative cost",
                      "An op's cost comes out below zero in this scenario (a subtraction in the spec that the "
                      "scenario makes negative); the message names the op."),
    "E404": ErrorKind("work limit reached",
                      "A request with more decode steps than are summed one by one, a sweep grid with too many "
                      "points, or a value too large to compute. Split the request into turns or shrink the grid."),
    "E405": ErrorKind("layout refused",
                      "The layout string is malformed, or its degrees do not split the model evenly (heads over "
                      "tp, experts over ep, layers over pp). docs/layouts.md lists the words."),
    "E406": ErrorKind("unknown device or link",
                      "The hint lists the sheets stdlib/hardware.arch defines, or the sheet has no peak for the "
                      "format asked; define a `device` or `link` of your own in a spec's `use`d file."),
    "E407": ErrorKind("figure the model does not have",
                      "The command asks for something this model lacks: a crossover its attention never reaches, "
                      "or a stage (a drafter) it does not define."),
    "E408": ErrorKind("no single closed form",
                      "The decode steps change form as the history grows (windows, compressed blocks), so a request "
                      "has no one formula. Evaluate it with numbers: `archcost eval --phase request`."),
    "E409": ErrorKind("training step refused",
                      "The batch does not split into micro-batches on the data-parallel replicas, or the schedule "
                      "cannot run the layout (interleaving needs vp > 1 and micro-batches in groups of pp). "
                      "docs/training.md lists the words."),
    "E410": ErrorKind("measured time below its bound",
                      "A time given as measured (`--step-time`) is shorter than the lower bound archcost derives "
                      "for it (the compute at the device's peak, or the traffic at the link's bandwidth), so it "
                      "could not have been measured on this layout and device: check the time, the layout, "
                      "the device and `--compute`."),
    "E411": ErrorKind("flags that contradict each other",
                      "Two flags ask for different answers to one question (a measured step time and an "
                      "efficiency that predicts it), or one needs another that is missing. Give one of them, "
                      "or the one it needs; the message says which."),
    "E412": ErrorKind("efficiency table refused",
                      "A kernel efficiency table (`--efficiency-table`, stdlib/efficiency) has a point without its "
                      "source, a field out of range or unknown, a point faster than the device's roofline, or is "
                      "for another device. Fix the point at the line shown; every point names where it was "
                      "measured."),
    "E413": ErrorKind("serving steady state refused",
                      "`archcost throughput` found no steady state: the engine leaves no KV room for one request "
                      "(the weights and the peak step fill the card), the step's token budget cannot prefill a "
                      "prompt beside the decodes, or no efficiency table covers the device. The message names "
                      "the figures and the hint the nearest choice that runs."),
    "E414": ErrorKind("no layout found",
                      "A search over layouts (`layouts`, `layouts --fewest`) found none "
                      "that splits the model evenly over the cards given, or none that holds it. Give more cards, "
                      "a shorter context or a smaller batch; the message says which search ran dry."),
    "E500": ErrorKind("config is not a JSON object",
                      "`archcost import` reads a Hugging Face config.json: one JSON object. The caret marks where "
                      "the JSON stops being valid (a trailing comma, a missing quote)."),
    "E501": ErrorKind("unsupported model_type",
                      "The hint lists the model types the importer knows. For another architecture, write the "
                      "spec by hand from the stdlib blocks, starting from the closest imported one."),
    "E502": ErrorKind("config field not understood",
                      "A field that may change the cost is missing or unknown to the importer, which stops rather "
                      "than guess. Write that part of the spec by hand, or remove the field if it is stale."),
    "E503": ErrorKind("config value not supported",
                      "The field is understood but this value is not (the message lists the supported ones), or "
                      "it is not a valid number. Fix the value or write that part of the spec by hand."),
    "E504": ErrorKind("the modeling code's libraries are not installed",
                      "The import from the modeling code builds the model with transformers and torch, which the "
                      "plain install leaves out. Install them with `pip install \"archcost[hf]\"`."),
    "E505": ErrorKind("transformers cannot build or run the config",
                      "transformers' own config class or model refused the config (its message is quoted), or "
                      "the model it built does not run on the meta device. Fix the field it names."),
    "E506": ErrorKind("module the import cannot map",
                      "A module of the model transformers built has no stdlib block of its structure; the "
                      "message names its path, class and parameter shapes. Write that part of the spec by hand."),
    "E507": ErrorKind("imported spec does not cost the model it came from",
                      "The spec read from the modeling code was checked against the model and a figure differs "
                      "(both are printed): a mechanism the recognised blocks do not hold. Write it by hand."),
}


# Codes that once stood for several causes, and where each cause went (docs/errors.md lists them).
SPLIT: dict[str, tuple[str, ...]] = {
    "E211": ("E211", "E214", "E215", "E216", "E217", "E218", "E219", "E106"),
    "E401": ("E401", "E402", "E403", "E404", "E405", "E406", "E407", "E408", "E109"),
    "E106": ("E106", "E113", "E114"),
    "E405": ("E405", "E414"),
}

# Codes only the playground's HTTP API raises (`archcost serve`): no command line produces them, so their
# examples are tests/test_playground_api.py's, not tests/errors/ cases.
PAGE_ONLY = ("E110", "E111", "E112", "E113")

# Codes no input shows today: the import's check refusing a spec that costs another model (E507). Every type of
# transformers 5.25 the recognisers read passes it (the last that did not, ZAYA1, lacked the delayed value std.
# attention.cca now keeps), so tests/test_modeling_code.py makes it happen with a recogniser that misreads a width.
CHECK_ONLY = ("E507",)
