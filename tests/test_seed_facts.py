"""Every seed figure for a specified model, reproduced by the compiler within its printed rounding."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy as sp
from helpers import compiled, facts_file

from archcost.compiler.front.hardware import device
from archcost.compiler.graph import costs
from archcost.compiler.numbers.evaluate import attention_crossover, by_op, evaluate, state_bytes_at
from archcost.compiler.serving.capacity import capacity, prefix_reuse, roofline, speculate
from archcost.compiler.serving.state import profile
from archcost.compiler.terms import symbols
from archcost.compiler.terms.letters import LEDGERS
from archcost.compiler.terms.scenario import Conventions, Scenario, call_form

FACTS = facts_file(Path(__file__).parent / "seed_facts.yaml")


def sheet(q: dict):
    """The query's device, with the capacity its `memory` names (the seeds' arithmetic uses `nominal`)."""
    return device(q["device"], q.get("memory", "reported"))


def query(spec: str, q: dict) -> float:
    """Evaluate one query of seed_facts.yaml against the compiled spec."""
    spec = q.get("spec", spec)
    options = Conventions(**LEDGERS[q.get("ledger", "chapter")], paths=tuple(q.get("paths", {}).items()),
                      routing=q.get("routing", "uniform"), weights=q.get("weights"))
    model = compiled(spec, tuple(q.get("edit", {}).items()), options)
    if "const" in q:
        return q["const"]
    if "product" in q:
        first, second = (query(spec, part) for part in q["product"])
        return first * second
    if "ratio" in q:
        numerator, denominator = (query(spec, part) for part in q["ratio"])
        return numerator / denominator
    if "sum" in q:
        return sum(query(spec, part) for part in q["sum"])
    if "difference" in q:
        first, second = (query(spec, part) for part in q["difference"])
        return first - second
    if "state_at" in q:
        return state_bytes_at(model, history=q["state_at"], batch=q.get("B", 1))
    if "coefficient" in q:
        total = _layer_total(model, q["layer"], q["field"], q.get("kinds"))
        return int(sp.expand(total).coeff(symbols.SCENARIO[q["coefficient"]]))
    if "layer" in q:
        total = _layer_total(model, q["layer"], q["field"], q.get("kinds"), q.get("only"))
        shape = Scenario(**{k: q[k] for k in ("B", "S", "P") if k in q})
        return int(call_form(total, options).xreplace(shape.values())) * q.get("per", 1)
    if "capacity" in q:
        result = capacity(model, sheet(q), q["H"], q.get("workspace", 0), q.get("reserve", 0), q.get("batch"))
        return getattr(result, q["capacity"])
    if "roofline" in q:
        shape = Scenario(**{k: q[k] for k in ("B", "S") if k in q})
        return getattr(roofline(model, sheet(q), "decode", shape), q["roofline"])
    if "ridge" in q:
        return sheet(q).ridge(q["ridge"])
    if "bandwidth" in q:
        return sheet(q).bandwidth
    if "speculate" in q:
        result = speculate(q["k"], q["alpha"], q.get("round"), q.get("decode"), q.get("accepted"))
        return getattr(result, q["speculate"])
    if "reuse" in q:
        return getattr(prefix_reuse(model, Scenario(S=q["S"], P=q["P"])), q["reuse"])
    if "stage" in q:
        return _stage_flops(model, q["stage"], q["P"])
    if "profile" in q:
        result = profile(model, [], q.get("budget"))
        if q["profile"] == "never_fits":
            return int(result.max_context is None and "exceeds" in (result.budget_note or ""))
        return getattr(result, q["profile"])
    if "crossover" in q:
        return attention_crossover(model)
    if "group_size" in q:
        return _group_size(model, q["group_size"])
    if "get" in q:
        shape = {k: q[k] for k in ("B", "S", "P", "G") if k in q}
        report = evaluate(model, q.get("phase", "decode"), Scenario(**shape)).model_dump()
        for key in q["get"].split("."):
            report = report[int(key)] if isinstance(report, list) else report[key]
        return report
    raise NotImplementedError(f"query {q} is not implemented yet")


def _layer_total(model, prefix: str, field: str, kinds, only: str | None = None) -> sp.Expr:
    """Per-instance sum over the ops under `prefix` (one layer of a stack, not ×L)."""
    return sp.Add(*(getattr(model.graph.nodes[op.id]["cost"], field) for op in costs.ops(model.graph)
                    if op.id.startswith(prefix + ".") and (kinds is None or op.kind in kinds)
                    and (only is None or op.label == only)))


SOURCE_OPS = (".global_kv", ".compress_gate", ".index_key")  # the decoder's global KV source (Table 2-D row 2)


def _stage_flops(model, stage: str, tokens: int) -> float:
    """Matrix FLOPs of a prefill split like Table 2-D: encoder, decoder source, decoder body, head."""
    ops = by_op(model, "prefill" if tokens > 1 else "decode", Scenario(P=tokens))
    pick = {
        "encoder": lambda o: o.op.startswith("encoder."),
        "decoder-source": lambda o: o.op.startswith("decoder.") and any(s in o.op for s in SOURCE_OPS),
        "decoder-body": lambda o: o.op.startswith("decoder.") and not any(s in o.op for s in SOURCE_OPS),
        "head": lambda o: o.op.startswith("lm_head."),
        "mtp": lambda o: o.op.startswith("mtp."),
    }[stage]
    return sum(o.flops_matrix_all_layers for o in ops if pick(o))


def _group_size(model, prefix: str) -> int:
    attend = next(op for op in costs.ops(model.graph) if op.id.startswith(prefix) and op.kind == "attend")
    cache = model.graph.nodes[attend.states[0]]["op"]
    kv_heads = cache.args.width / (2 * attend.args.qk)  # K and V of kv_heads heads per position
    return int(attend.args.heads / kv_heads)


def _marks(fact: dict):
    if "xfail" in fact:
        raises = {"AssertionError": AssertionError}.get(fact.get("xfail_raises"), NotImplementedError)
        return [pytest.mark.xfail(reason=fact["xfail"], strict=True, raises=raises)]
    return []


@pytest.mark.parametrize("fact", [pytest.param(f, id=f["id"], marks=_marks(f)) for f in FACTS])
def test_seed_fact(fact):
    value = query(fact["spec"], fact["query"])
    assert abs(value - fact["value"]) <= fact["tolerance"], (
        f"{fact['id']}: got {value}, the seed prints {fact['printed']} ({fact['source']})")


def test_every_fact_names_its_source():
    for fact in FACTS:
        assert fact["source"].split()[0] in ("000", "001", "002"), fact["id"]
