"""A form as a polynomial in a request's history X over atoms: Σ coefficient · X^k · atom(X).

A request's decode at history X costs a polynomial in X times what does not expand (a window's min, a
compressed block's floor, a piecewise cap): the atoms. Each atom is summed over the decodes once, however
many flows hold it (assemble.Evaluator). Expanding the form's tree gives the same split sympy's `expand`
gave, without sympy rebuilding and re-simplifying every min and max it holds: the products are distributed
and like terms gathered, exactly (coefficients divided by `exact` stay exact divisions).
"""

from __future__ import annotations

import json

from .sums import depends

ONE = "1"  # the key of the empty atom: a plain power of X

Terms = dict[tuple[str, int], list]  # (atom key, power of X) → the coefficient's factors' sum, as forms


def in_history(tree) -> tuple[dict[tuple[str, int], object], dict[str, object]]:
    """({(atom key, power): coefficient form}, {atom key: atom form}) with tree = Σ coefficient · X^power ·
    atom; the coefficients do not hold X, the atoms hold nothing that expands."""
    atoms: dict[str, object] = {ONE: 1}
    terms = _expand(tree, atoms)
    return {key: _sum(parts) for key, parts in terms.items()}, atoms


def _expand(tree, atoms: dict) -> Terms:
    if not depends(tree):
        return {(ONE, 0): [tree]}
    if tree == "X":
        return {(ONE, 1): [1]}
    tag, args = tree[0], tree[1:]
    if tag == "+":
        total: Terms = {}
        for arg in args:
            for key, parts in _expand(arg, atoms).items():
                total.setdefault(key, []).extend(parts)
        return total
    if tag == "*":
        product: Terms = {(ONE, 0): [1]}
        for arg in args:
            product = _times(product, _expand(arg, atoms), atoms)
        return product
    if tag == "^":
        power: Terms = {(ONE, 0): [1]}
        base = _expand(args[0], atoms)
        for _ in range(args[1]):
            power = _times(power, base, atoms)
        return power
    if tag == "exact":
        return {key: [["exact", _sum(parts), args[1]]] for key, parts in _expand(args[0], atoms).items()}
    key = json.dumps(tree, separators=(",", ":"))
    atoms.setdefault(key, tree)
    return {(key, 0): [1]}


def _times(left: Terms, right: Terms, atoms: dict) -> Terms:
    product: Terms = {}
    for (atom_a, power_a), parts_a in left.items():
        for (atom_b, power_b), parts_b in right.items():
            atom = _atom_product(atom_a, atom_b, atoms)
            product.setdefault((atom, power_a + power_b), []).append(_product(_sum(parts_a), _sum(parts_b)))
    return product


def _atom_product(a: str, b: str, atoms: dict) -> str:
    """The key of atom a · atom b (its factors in key order, so a · b and b · a are one atom)."""
    if a == ONE or b == ONE:
        return b if a == ONE else a
    factors = sorted(_factors(atoms[a]) + _factors(atoms[b]), key=lambda t: json.dumps(t, separators=(",", ":")))
    tree = ["*", *factors]
    key = json.dumps(tree, separators=(",", ":"))
    atoms.setdefault(key, tree)
    return key


def _factors(atom) -> list:
    return list(atom[1:]) if atom[0] == "*" else [atom]  # a "*" atom is a product of atoms made here


def _sum(parts: list):
    parts = [p for p in parts if p != 0]
    if not parts:
        return 0
    return parts[0] if len(parts) == 1 else ["+", *parts]


def _product(a, b):
    if a == 1 or b == 1:
        return b if a == 1 else a
    if a == 0 or b == 0:
        return 0
    return ["*", a, b]
