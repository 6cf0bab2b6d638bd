"""A report's numbers from its plain-data forms, and the report assembled from them as the plan says (no sympy).

The same assembly serves every path: numbers from the forms' evaluators (a compiled model, or the formula
cache), or from the symbolic evaluator when a fast number cannot be vouched for, which then says why.
"""

from __future__ import annotations

from fractions import Fraction

from . import forms, sums

PART_FLOWS = ("flops_matrix", "flops_nonmatrix", "context_flops", "read_state", "write_state")
MAX_DECODE_STEPS = 1_000_000  # a decode the sum analysis cannot vouch for is summed step by step, this many at most


class Fallback(Exception):
    """A number the fast path does not vouch for (negative, a division by zero, an unsummable decode)."""


def plain(value):
    """Exact integers stay integers; anything fractional becomes a float for JSON."""
    if type(value) is int:
        return value
    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else float(value)
    if isinstance(value, bool):
        raise Fallback("a condition where a number belongs")
    return value


class Evaluator:
    """Every leaf of one phase's forms as exact numbers of (B, S, P, G): built once, called per scenario."""

    def __init__(self, phase_forms: dict):
        self.keys = list(phase_forms["leaves"])
        requests = phase_forms["requests"]
        trees = list(phase_forms["leaves"].values())
        self.request_keys = list(requests)
        self.calls = len(trees)
        trees += [requests[k]["call"] for k in self.request_keys]
        self.coefficients: list[list[tuple[int, int, int]]] = []
        for k in self.request_keys:
            row = []
            for atom, power, coefficient in requests[k]["decode"]:
                row.append((atom, power, len(trees)))
                trees.append(coefficient)
            self.coefficients.append(row)
        self.function = forms.function(trees)
        self.atoms = phase_forms["atoms"]
        self.atom_functions = [forms.function([atom]) for atom in self.atoms]
        # the leaves whose value may be other than a Python integer (a fraction, a float, a truth value)
        self.unplain = [key for key, tree in phase_forms["leaves"].items() if not forms.integral(tree)]

    def __call__(self, B: int, S: int, P: int, G: int) -> dict:
        try:
            values = self.function(B, S, P, G)
            numbers = dict(zip(self.keys, values))
            for key in self.unplain:
                numbers[key] = plain(numbers[key])
            if self.request_keys:
                numbers.update(self._requests(values, B, S, P, G))
        except (ZeroDivisionError, ValueError, TypeError, OverflowError, sums.Unsummable) as error:
            raise Fallback(str(error)) from None
        return numbers

    def _requests(self, values: tuple, B: int, S: int, P: int, G: int) -> dict:
        """First call, then the G − 1 decodes at histories S + P ... S + P + G − 2."""
        low, high, done = S + P, S + P + G - 1, {}
        env = {"B": B, "S": 0, "P": 1, "G": G}
        out = {}
        for index, key in enumerate(self.request_keys):
            decodes = 0
            for atom, power, slot in self.coefficients[index]:
                if (atom, power) not in done:
                    done[atom, power] = self._atom_sum(atom, power, env, low, high)
                decodes += values[slot] * done[atom, power]
            out[key] = plain(values[self.calls + index]) + plain(decodes)
        return out

    def _atom_sum(self, atom: int, power: int, env: dict, low: int, high: int):
        function, B, G = self.atom_functions[atom], env["B"], env["G"]
        step = lambda x: function(B, 0, 1, G, x)[0]  # noqa: E731
        try:
            return sums.form_sum(self.atoms[atom], step, env, low, high, power)
        except sums.Unsummable:
            if high - low > MAX_DECODE_STEPS:
                raise
            return sum(x ** power * step(x) for x in range(low, high))


class Numbers:
    """Leaf values for the assembly, from a dict of exact numbers: a negative total is not vouched for."""

    def __init__(self, values: dict):
        self.values = values
        self.leaf = values.__getitem__  # a leaf is its value, as it is

    def total(self, key: str):
        value = self.values[key]
        if value < 0:
            raise Fallback(key)
        return value


def shape(scenario: dict, phase: str) -> dict:
    shown = dict(scenario)
    if phase == "decode":
        shown["P"] = 1
    if phase != "request":
        shown.pop("G")
    return shown


def total_key(field: str) -> str:
    """The leaf of a field's total over the graph."""
    return f"total:{field}"


def assemble(head: dict, plan: list, phase: str, scenario: dict, numbers) -> dict:
    """The report as data, in the Report's field order: head, quantities, figures, a request's parts."""
    data = {"model": head["model"], "phase": phase, "scenario": shape(scenario, phase),
            **{k: dict(head[k]) for k in ("options", "conventions", "paths")}}
    total, leaf = numbers.total, numbers.leaf
    for entry in plan:
        kind, name = entry[0], entry[1]
        if kind == "sum":  # totals, less other totals, less classes' shares
            value = sum(map(total, entry[2]))
            if entry[3]:
                value -= sum(map(total, entry[3]))
            if len(entry) > 4:
                value -= sum(map(leaf, entry[4:]))
            data[name] = value
        elif kind == "each":
            data[name] = {group: leaf(key) for group, key in entry[2]}
        elif kind == "parts":
            parts = {part: total(key) for part, key in entry[2]}
            data[name] = {**parts, "total": sum(parts.values())}
        elif kind == "peak":
            data[name] = max(map(leaf, entry[2]), default=0)
        else:  # figures: one row per op that adds them
            data[name] = [{figure: fixed if key is None else leaf(key) for figure, fixed, key in row}
                          for row in entry[2]]
    if phase == "request":
        data.update(_request_parts(data, numbers, scenario))
    return data


def _request_parts(data: dict, numbers, scenario: dict) -> dict:
    """A request's flows apart: its prefill, and its decodes (Example 2-3 reads them apart)."""
    first = {f: numbers.total(f"prefill:{f}") for f in PART_FLOWS}
    whole = {f: data.get(f) for f in PART_FLOWS}
    whole.update(read_state=data["read_bytes"]["state"], write_state=data["write_bytes"]["state"])
    decodes = {f: whole[f] - first[f] for f in PART_FLOWS}
    growth = data["kv_bytes_per_token"] * scenario["B"]
    token_reads = Fraction(data["read_bytes"]["state"]) / growth if growth else None
    return {"prefill": _part(first), "decode": _part(decodes), "decode_steps": scenario["G"] - 1,
            "context_token_reads": plain(token_reads) if token_reads is not None else None,
            "positions_retained": scenario["S"] + scenario["P"] + scenario["G"] - 1}


def _part(flows: dict) -> dict:
    return {"flops": flows["flops_matrix"] + flows["flops_nonmatrix"], "flops_matrix": flows["flops_matrix"],
            "context_flops": flows["context_flops"], "read_bytes_state": flows["read_state"],
            "write_bytes_state": flows["write_state"]}


def phase_key(phase: str, reads: tuple[str, ...] | None) -> str:
    """Where a phase's forms are kept in a cache entry: under the phase, or beside it when they hold only the
    quantities `reads` names (quantities.reading), so that no command that prints them all finds them."""
    return phase if reads is None else f"{phase}:{','.join(reads)}"


def excluded_of(plan: list) -> dict[str, list[str]]:
    """The figures each kind of op figure leaves out of a report as JSON shows it (Field(exclude=True))."""
    return {item[1]: item[3] for item in plan if item[0] == "figures"}


def dumped(data: dict, excluded: dict[str, list[str]]) -> dict:
    """The report as `Report.model_dump(exclude_none=True)` gives it: no None, no figure marked excluded."""
    out = {k: v for k, v in data.items() if v is not None}
    for key, names in excluded.items():
        if key in out:
            out[key] = [{k: v for k, v in row.items() if k not in names} for row in out[key]]
    return out
