"""Human units for tables: decimal GB vs binary GiB never mixed silently, units named in headers."""

from __future__ import annotations

SI = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
BINARY = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


def grouped(value: int | float) -> str:
    """8190735360 -> '8,190,735,360'."""
    return f"{value:,}" if isinstance(value, int) or float(value).is_integer() else f"{value:,.3f}"


def si_prefix(values: list[float]) -> str:
    """The largest SI prefix that keeps the largest value at or above 1."""
    top = max((abs(v) for v in values), default=0)
    chosen = ""
    for prefix, scale in SI.items():
        if top >= scale:
            chosen = prefix
    return chosen


def binary_unit(values: list[float]) -> str:
    top = max((abs(v) for v in values), default=0)
    chosen = "B"
    for unit, scale in BINARY.items():
        if top >= scale:
            chosen = unit
    return chosen


def scaled(value: float, scale: float, digits: int = 2) -> str:
    return f"{value / scale:,.{digits}f}"


def human_flops(value: float) -> str:
    prefix = si_prefix([value])
    return f"{value / SI[prefix]:,.2f} {prefix}FLOPs"


def human_bytes(value: float) -> str:
    unit = binary_unit([value])
    return f"{value / BINARY[unit]:,.3f} {unit}" if unit != "B" else f"{value:,} B"


def human_count(value: float) -> str:
    prefix = si_prefix([value])
    names = {"": "", "K": " K", "M": " M", "G": " B", "T": " T", "P": " P"}
    return f"{value / SI[prefix]:,.3f}{names[prefix]}"
