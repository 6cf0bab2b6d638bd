"""A request's columns over a grid as array expressions: its first call, and its G − 1 decodes summed in closed form.

A request flow is its first call plus Σ coefficient(B, G) · Σ_{low ≤ X < high} X^k · atom(X) over the decodes'
histories, low = S + P, high = S + P + G − 1 (numbers/leaves.py splits it so). The calls and the coefficients
are forms, evaluated on the whole chunk at once like a decode sweep's. A plain power of X (the atom 1: every
model whose decode is a polynomial in its history) is summed in closed form on arrays,

    Σ_{i<c} (low + i)^k = Σ_j C(k, j) · low^(k−j) · Σ_{i<c} i^j,   Σ_{i<c} i^j = Σ_t S(j, t) · t! · C(c, t + 1),

every term non-negative (Stirling numbers of the second kind S), so floating point loses nothing to
cancellation. A flow with any other atom (a window's min, a compressed block's floor) is the report's exact
Evaluator's, point by point (the sum analysis of numbers/sums.py, each atom once per point for every flow that
holds it): the sums of neighbouring atoms can nearly cancel, which floating point would not survive.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from ..numbers import forms
from ..numbers.assemble import Evaluator, total_key
from ..terms.quantities import SWEPT


def request_columns(phase_forms: dict, helpers: dict):
    """(B, S, P, G) float arrays → one float array per column of the sweep, for a request's forms (`helpers`:
    the numpy functions of a vector form, sweep.VECTOR)."""
    leaves, requests, atoms = phase_forms["leaves"], phase_forms["requests"], phase_forms["atoms"]
    columns = [[total_key(f) for f in quantity.fields] for quantity in SWEPT]
    flows = sorted({key for keys in columns for key in keys if key in requests})
    levels = sorted({key for keys in columns for key in keys if key not in requests})
    # a flow whose decode is a polynomial in X is summed on arrays; one with any other atom by the report's own
    # exact evaluator, point by point (its atoms' sums can nearly cancel, which floating point would not survive)
    polynomial = [key for key in flows if all(atoms[atom] == 1 for atom, _, _ in requests[key]["decode"])]
    stepped = [key for key in flows if key not in polynomial]
    trees = [leaves[key] for key in levels] + [requests[key]["call"] for key in polynomial]
    terms = [(key, power) for key in polynomial for _, power, _ in requests[key]["decode"]]
    trees += [coefficient for key in polynomial for _, _, coefficient in requests[key]["decode"]]
    vector = forms.function(trees, helpers, vector=True)
    exact = Evaluator({"leaves": {}, "requests": {key: requests[key] for key in stepped}, "atoms": atoms})

    def evaluate(b, s, p, g) -> list[np.ndarray]:
        values = [np.broadcast_to(np.asarray(v, dtype=np.float64), b.shape) for v in vector(b, s, p, g)]
        found = dict(zip(levels + polynomial, values))
        low, count = s + p, g - 1
        sums: dict[int, np.ndarray] = {}
        for (key, power), coefficient in zip(terms, values[len(levels) + len(polynomial):], strict=True):
            if power not in sums:
                sums[power] = power_sums(low, count, power)
            found[key] = found[key] + coefficient * sums[power]
        if stepped:
            rows = [exact(*map(int, point)) for point in zip(b, s, p, g, strict=True)]
            found.update({key: np.array([float(row[key]) for row in rows]) for key in stepped})
        return [sum((found[key] for key in keys), np.zeros(b.shape)) for keys in columns]
    return evaluate


def power_sums(low: np.ndarray, count: np.ndarray, power: int) -> np.ndarray:
    """Σ_{i<count} (low + i)^power, element by element, in floating point without cancellation."""
    total = np.zeros(np.shape(low))
    for j in range(power + 1):
        total = total + math.comb(power, j) * np.power(low, power - j) * _falling_sums(count, j)
    return total


def _falling_sums(count: np.ndarray, j: int) -> np.ndarray:
    """Σ_{i<count} i^j = Σ_t S(j, t) · t! · C(count, t + 1)."""
    total = np.zeros(np.shape(count))
    for t in range(j + 1):
        if _stirling(j, t):
            total = total + _stirling(j, t) * math.factorial(t) * _choose(count, t + 1)
    return total


def _choose(n: np.ndarray, k: int) -> np.ndarray:
    """C(n, k) for arrays of non-negative whole numbers (0 where n < k)."""
    out = np.ones(np.shape(n))
    for i in range(k):
        out = out * np.maximum(n - i, 0) / (i + 1)
    return out


@cache
def _stirling(j: int, t: int) -> int:
    """Stirling numbers of the second kind: the ways to split j things into t non-empty groups."""
    if j == t:
        return 1
    if t == 0 or t > j:
        return 0
    return t * _stirling(j - 1, t) + _stirling(j - 1, t - 1)
