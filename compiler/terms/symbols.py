"""The scenario's letters (B, S, P, G, m, m_out, H, N_pair) as sympy symbols, one place."""

from __future__ import annotations

import sympy as sp

from .letters import causal_pairs, rectangle_pairs  # noqa: F401  (the pair counts, on symbols or numbers)

B = sp.Symbol("B", positive=True, integer=True)        # requests in the batch
S = sp.Symbol("S", nonnegative=True, integer=True)     # context already cached per request
P = sp.Symbol("P", positive=True, integer=True)        # new tokens per request in this call
G = sp.Symbol("G", positive=True, integer=True)        # tokens returned by a request
m = sp.Symbol("m", positive=True, integer=True)        # rows through projections: B*P
m_out = sp.Symbol("m_out", positive=True, integer=True)  # rows through the vocabulary head
H = sp.Symbol("H", positive=True, integer=True)        # positions held after the call: S + P
N_pair = sp.Symbol("N_pair", positive=True, integer=True)  # causal query-key pairs per layer
N_rect = sp.Symbol("N_rect", positive=True, integer=True)  # full-rectangle pairs: B*P*(S+P)
# positions a window looks back on before the call: S, except in a replay stage's prefill (see costs)
S_w = sp.Symbol("S_w", nonnegative=True, integer=True)

SCENARIO = {s.name: s for s in (B, S, P, G, m, m_out, H, N_pair, N_rect)}

# Letters a spec may not bind: they belong to the request, not to the architecture.
RESERVED = frozenset(SCENARIO)


def dimension(name: str) -> sp.Symbol:
    """The symbol for an architecture dimension left unbound in a spec."""
    return sp.Symbol(name, positive=True, integer=True)




class Min(sp.Min):
    """sympy's Min, minus its second search for relations between arguments (factor_terms of every
    pairwise difference), which was most of the compile time of the large specs. Arguments are
    still dropped when a direct comparison under the symbols' assumptions decides; of whole or
    rational numbers alone it is the smallest, found without sympy's machinery (about 150 µs a call)."""

    def __new__(cls, *args, **options):
        return _of_numbers(min, args) if not options and _numbers(args) else super().__new__(cls, *args, **options)

    @classmethod
    def _is_connected(cls, x, y):
        return _connected(x, y)


class Max(sp.Max):
    """sympy's Max with the same cheaper search and the same shortcut for numbers as `Min`."""

    def __new__(cls, *args, **options):
        return _of_numbers(max, args) if not options and _numbers(args) else super().__new__(cls, *args, **options)

    @classmethod
    def _is_connected(cls, x, y):
        return _connected(x, y)


def _numbers(args) -> bool:
    return bool(args) and all((type(a) is int) or getattr(a, "is_Rational", False) for a in args)


def _of_numbers(pick, args) -> sp.Rational:
    """The smallest or largest of whole or rational numbers, as the sympy number sympy's Min or Max gives."""
    value = pick(args)
    return sp.Integer(value) if type(value) is int else value


def _connected(x, y):
    """Max or Min when `x >= y` or `x <= y` decides which argument the other makes redundant, True when
    they are equal, else False (sympy's rule, one pass, no factoring)."""
    if x == y:
        return True
    if _both_signs(x - y):
        return False
    larger, smaller = Max, Min
    for op in "><":
        for _ in range(2):
            try:
                decided = x >= y if op == ">" else x <= y
            except TypeError:
                return False
            if not decided.is_Relational:
                return larger if decided else smaller
            larger, smaller = smaller, larger
            x, y = y, x
        x, y = y, x
    return False


SAMPLE_OFFSETS = (0, 1_000_003)  # each symbol at its lowest value, then far above it


def _both_signs(difference) -> bool:
    """True when `difference` is negative at one admissible point and positive at another: then neither
    argument bounds the other, so no comparison can decide (sympy proves only what holds everywhere), and
    its search of the assumptions, milliseconds a pair and most of a large spec's compile time, is skipped."""
    lowest = {}
    for symbol in difference.free_symbols:
        if not (symbol.is_Symbol and symbol.is_nonnegative):
            return False
        lowest[symbol] = 1 if symbol.is_positive else 0
    signs = set()
    for offset in SAMPLE_OFFSETS:
        value = difference.xreplace({symbol: sp.Integer(low + offset) for symbol, low in lowest.items()})
        if not value.is_Number:
            return False
        signs.add(sp.sign(value))
    return signs == {-1, 1}
