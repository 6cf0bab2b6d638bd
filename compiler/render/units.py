"""Human units for tables: decimal GB vs binary GiB never mixed silently, units named in headers."""

from __future__ import annotations

SI = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
BINARY = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
COUNT_NAMES = {"": "", "K": " K", "M": " M", "G": " B", "T": " T", "P": " P"}


def grouped(value: int | float) -> str:
    """8190735360 -> '8,190,735,360'."""
    return f"{value:,}" if isinstance(value, int) or float(value).is_integer() else f"{value:,.3f}"


def largest_unit(value: float, scales: dict[str, float]) -> str:
    """The largest unit in which `value` is still at least 1 (the first unit for small values)."""
    fitting = [unit for unit, scale in scales.items() if abs(value) >= scale]
    return fitting[-1] if fitting else next(iter(scales))


def _too_large(value) -> str | None:
    """A magnitude no float holds, shown by its power of ten instead of raising OverflowError."""
    if isinstance(value, int) and abs(value) > 10**300:
        return f"about 10^{len(str(abs(value))) - 1}"
    return None


def human_flops(value: float) -> str:
    if _too_large(value):
        return f"{_too_large(value)} FLOPs"
    prefix = largest_unit(value, SI)
    return f"{value / SI[prefix]:,.2f} {prefix}FLOPs"


def human_bytes(value: float) -> str:
    if _too_large(value):
        return f"{_too_large(value)} B"
    unit = largest_unit(value, BINARY)
    return f"{value / BINARY[unit]:,.3f} {unit}" if unit != "B" else f"{value:,} B"


def human_count(value: float) -> str:
    if _too_large(value):
        return _too_large(value)
    prefix = largest_unit(value, SI)
    return f"{value / SI[prefix]:,.3f}{COUNT_NAMES[prefix]}"
