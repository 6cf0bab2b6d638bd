"""Number formats as values: bytes derived from bits, block scales, mixed records and padding.

The formats themselves are data, declared in stdlib/formats.arch (`format mxfp4 { bits = 4, ... }`).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

# roles every model has, and the format each takes when a spec says nothing
DEFAULT_ROLES: dict[str, str] = {"weights": "bf16", "kv": "bf16", "act": "bf16", "state": "fp32"}


@dataclass(frozen=True)
class Format:
    """`count * fmt` is the bytes of `count` values stored in this format.

    A plain format stores `bits` per value, plus one `scale_bits` scale per `block` values; a record
    (`parts`) lays out a fixed number of values in several formats and pads the whole to `align`.
    """

    name: str
    bits: sp.Rational = sp.Integer(16)
    scale_bits: sp.Integer = sp.Integer(0)
    block: sp.Integer = sp.Integer(1)
    align: sp.Integer = sp.Integer(1)
    parts: tuple[tuple[Format, sp.Integer], ...] = ()

    @property
    def values(self) -> sp.Integer | None:
        """Values one record holds; None for a plain format."""
        return sp.Add(*(n for _, n in self.parts)) if self.parts else None

    def scale_count(self, count) -> sp.Expr:
        """Block scales `count` values stored in this format carry: one per `block` values, the last block
        partial (DeepSeek-V3's weight_scale_inv, one fp32 per 128 × 128 tile); none for a record or a plain
        format."""
        return sp.ceiling(count / self.block) if self.scale_bits and not self.parts else sp.Integer(0)

    def bytes(self, count) -> sp.Expr:
        if not self.parts and not self.scale_bits and self.align == 1:  # a plain format: bits / 8 a value
            return count * (self.bits / 8)
        if self.parts:
            raw = sp.Add(*(fmt.bytes(n) for fmt, n in self.parts))
            records = count / self.values  # a record format stores whole records
        else:
            raw = count * self.bits / 8 + self.scale_count(count) * self.scale_bits / 8
            records = 1
        padded = sp.ceiling(raw / self.align) * self.align if self.align != 1 else raw
        return records * padded

    def __rmul__(self, count):
        return self.bytes(count)

    __mul__ = __rmul__
