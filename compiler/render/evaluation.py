"""`archcost eval` as a person reads it, from the report's data: no sympy, so a cached evaluation prints it too."""

from __future__ import annotations

import json

from .table import Table
from .units import grouped, human_bytes, human_count, human_flops


def data_of(report) -> dict:
    """A Report's data as its JSON shows it (a dict passes through)."""
    return report if isinstance(report, dict) else report.model_dump(exclude_none=True)


def scenario_text(report) -> str:
    data = data_of(report)
    shape = ", ".join(f"{k} = {v:,}" for k, v in data["scenario"].items())
    return f"phase {data['phase']} ({shape})"


def options_text(report) -> str:
    return ", ".join(f"{k} = {v}" for k, v in data_of(report)["options"].items())


def report_table(report, plain: bool = False) -> Table:
    """An evaluation as rows of quantity, exact value in base units, and a readable value (for Markdown,
    CSV and notebooks); `plain` writes the values without digit grouping, for machines."""
    data = data_of(report)
    rows = [[name, str(value) if plain else grouped(value), human] for name, value, human in _report_items(data)]
    return Table(f"{data['model']}: {scenario_text(data)}", ["quantity", "value", "readable"], rows,
                 [f"options: {options_text(data)}"])


def _report_items(data: dict) -> list[tuple[str, float, str]]:
    items = [("params", data["params"], human_count(data["params"])),
             ("params_active", data["params_active"], human_count(data["params_active"])),
             ("weight_bytes", data["weight_bytes"], human_bytes(data["weight_bytes"]))]
    items += [(name, data[name], human_flops(data[name])) for name in ("flops", "flops_matrix", "flops_nonmatrix",
                                                                        "context_flops")]
    items += [(name, data[name], human_bytes(data[name])) for name in ("state_bytes", "kv_bytes_per_token")]
    items += [(f"read_bytes.{key}", value, human_bytes(value)) for key, value in data["read_bytes"].items()]
    items += [(f"write_bytes.{key}", value, human_bytes(value)) for key, value in data["write_bytes"].items()]
    return items


def report_text(report) -> str:
    """`archcost eval` for a person: every quantity with exact base units and a readable unit."""
    data = data_of(report)
    lines = [f"{data['model']}: {scenario_text(data)}", f"options: {options_text(data)}", ""]
    item = lambda name, value, human: lines.append(f"  {name:<22} {grouped(value):>26}   {human}")  # noqa: E731
    for name, value, human in _report_items(data):
        item(name, value, human)
    if data.get("prefill") is not None and data.get("decode") is not None:
        lines.append("")
        for part_name, part in (("prefill", data["prefill"]), ("decodes", data["decode"])):
            item(f"{part_name}.flops_matrix", part["flops_matrix"], human_flops(part["flops_matrix"]))
            item(f"{part_name}.read_state", part["read_bytes_state"], human_bytes(part["read_bytes_state"]))
            item(f"{part_name}.write_state", part["write_bytes_state"], human_bytes(part["write_bytes_state"]))
        if data.get("context_token_reads") is not None:  # a model with no growing state reads no positions
            item("context_token_reads", data["context_token_reads"], "positions read by decodes")
        item("positions_retained", data["positions_retained"], "S + P + G − 1")
    lines += ["", "  params by component:"]
    for name, value in data["params_by_component"].items():
        if value:
            lines.append(f"    {name:<20} {grouped(value):>26}   {human_count(value)}")
    return "\n".join(lines) + "\n"


def print_report(data: dict, style: str) -> None:
    """An evaluation as text, JSON, Markdown or CSV: the cold path and the cache print through here alike."""
    if style == "json":
        print(json.dumps(data, indent=2))
    elif style in ("markdown", "csv"):
        print(getattr(report_table(data, plain=style == "csv"), style)(), end="")
    else:
        print(report_text(data), end="")
