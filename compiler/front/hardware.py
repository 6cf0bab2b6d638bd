"""Hardware sheets (`device` definitions of stdlib/hardware.arch) as values."""

from __future__ import annotations

import hashlib
import re
from importlib import resources

from pydantic import BaseModel, ValidationError

from archcost.dsl.errors import ArchError, Diagnostic, did_you_mean

# the peak the capacity tools take when none is named: FP32 accumulation first (the seeds' RTX 2080 Ti figures)
PEAK_PREFERENCE = ("fp16_fp32acc", "bf16", "fp16")


class Device(BaseModel):
    name: str
    memory: float                 # bytes, as the device reports its capacity (else the vendor's figure)
    bandwidth: float              # bytes per second
    peak: dict[str, float]        # FLOPS per number format
    nominal_memory: float | None = None  # the vendor's decimal figure ("80 GB"), where it differs from memory
    domain: int = 8               # cards one NVLink domain joins

    def with_memory(self, which: str) -> Device:
        """This sheet with the capacity `which` names: `reported` (the default) or `nominal` (the vendor's
        figure, which the seeds' arithmetic uses)."""
        if which == "nominal" and self.nominal_memory is not None:
            return self.model_copy(update={"memory": self.nominal_memory})
        return self

    def ridge(self, fmt: str) -> float:
        """FLOPs per byte at which compute and memory take the same time (the roofline's knee)."""
        return self.peak_for(fmt) / self.bandwidth

    def preferred_peak(self) -> str:
        """The format of the peak taken when none is named (PEAK_PREFERENCE, else the sheet's first)."""
        return next((f for f in PEAK_PREFERENCE if f in self.peak), next(iter(self.peak)))

    def peak_for(self, fmt: str) -> float:
        if fmt not in self.peak:
            raise ArchError([Diagnostic(code="E406", message=f"the `{self.name}` sheet gives no peak for `{fmt}`",
                                        hint=f"it gives: {', '.join(self.peak)}")])
        return self.peak[fmt]


# the link that joins a device's cards inside one server, where none is named (each sheet's comment in
# stdlib/hardware.arch says which): NVLink of its generation, the H800's cut NVLink, PCIe where there is none
OWN_LINK = {"a100": "nvlink3", "a100_40gb": "nvlink3", "h100_sxm": "nvlink4", "h200": "nvlink4", "h20": "nvlink4",
            "h800": "nvlink4_h800", "h100_pcie": "nvlink_bridge", "b200": "nvlink5", "b300": "nvlink5",
            "gb200": "nvlink5", "gb300": "nvlink5", "rtx_2080_ti": "pcie4", "rtx_4090": "pcie4",
            "rtx_6000_ada": "pcie4", "l40s": "pcie4"}


def own_link(device_name: str) -> Link:
    """The link inside one server of this device; E406 for a device whose link archcost has no sheet of."""
    if sheet_key(device_name) not in OWN_LINK:
        raise ArchError([Diagnostic(code="E406", message=f"no link sheet joins `{device_name}` cards inside a server",
                                    hint="name one with --link")])
    return link(OWN_LINK[sheet_key(device_name)])


def server_link(sheet: Device, named: str | None = None) -> Link:
    """The link inside one server: the one named (`--link`), else the device's own."""
    return link(named) if named else own_link(sheet.name)


def fleet(text: str, memory: str = "reported", most: int = 4096, name: str = "--devices") -> tuple[int, Device]:
    """`8xh100-sxm` as (cards, the device's sheet): 1 to `most` cards of a device (E401 naming the flag `name`
    for any other text)."""
    from archcost.compiler.terms.letters import bad_value

    count, _, device_name = text.partition("x")
    if not re.fullmatch(r"[0-9]{1,6}", count) or not device_name:
        raise bad_value(f"`{name}` = `{text[:40]}`: write COUNTxDEVICE, e.g. 8xh100-sxm")
    if not 1 <= int(count) <= most:
        raise bad_value(f"`{name}` = `{text[:40]}`: from 1 to {most:,} cards")
    return int(count), device(device_name, memory)


# links whose switches reduce in the network (NVLink SHARP, NCCL's NVLS algorithm): NVLink 4 and 5 switches
NVLS_LINKS = ("nvlink4", "nvlink5")


class Link(BaseModel):
    """An interconnect sheet: per card, each direction."""

    name: str
    bandwidth: float              # bytes per second
    latency: float                # the sheet's seconds per hop; collectives use NCCL's hops (cards/nccl.py)

    @property
    def nvls(self) -> bool:
        """Whether its switches reduce in the network, so an all-reduce sends each card's buffer once."""
        return self.name in NVLS_LINKS


def devices() -> dict[str, Device]:
    """Every device of the stdlib's hardware sheets, by name (`rtx_4090`): read from the cache while the
    sheets are unchanged, else compiled (and kept)."""
    from archcost.dsl.cachedir import cache_folder, read_entry, write_entry

    sheets = resources.files("archcost.stdlib").joinpath("hardware.arch").read_bytes()
    folder = cache_folder("devices")
    kept = folder / f"{hashlib.sha256(sheets).hexdigest()[:32]}.json" if folder is not None else None
    try:
        return {name: Device(**values) for name, values in read_entry(kept, 2**20).items()}
    except (AttributeError, TypeError, ValidationError):
        pass  # none kept yet, or not a sheet: compile them
    found = _compiled_devices()
    write_entry(kept, {name: sheet.model_dump() for name, sheet in found.items()})
    return found


def _compiled_devices() -> dict[str, Device]:
    from archcost.dsl.loader import load_text

    program = load_text("use std.hardware\n")
    found: dict[str, Device] = {}
    for module in program.modules.values():
        for definition in module.devices:
            found[definition.name] = _device(definition, program.sources)
    return found


def links() -> dict[str, Link]:
    """Every interconnect sheet of stdlib/hardware.arch, by name (`nvlink4`)."""
    from archcost.dsl.loader import load_text

    program = load_text("use std.hardware\n")
    return {definition.name: Link(name=definition.name, **_values(definition, program.sources))
            for module in program.modules.values() for definition in module.links}


def link(name: str) -> Link:
    known = links()
    key = name.replace("-", "_")
    if key not in known:
        raise ArchError([Diagnostic(code="E406", message=f"unknown link `{name}`",
                                    hint=did_you_mean(key, known) or f"one of {', '.join(known)}")])
    return known[key]


def device(name: str, memory: str = "reported") -> Device:
    """A device by its CLI name: `rtx-4090` or `rtx_4090`, with the capacity `memory` names (Device.with_memory)."""
    known = devices()
    key = name.replace("-", "_")
    if key not in known:
        shown = [k.replace("_", "-") for k in known]
        raise ArchError([Diagnostic(code="E406", message=f"unknown device `{name}`",
                                    hint=did_you_mean(name, shown) or f"one of {', '.join(shown)}")])
    sheet = known[key].with_memory(memory)
    # outputs name the device as the user wrote it (`h100-sxm` or `h100_sxm`); lookups use the sheet's key
    return sheet if name == key else sheet.model_copy(update={"name": name})


def sheet_key(name: str) -> str:
    """The key of a device's sheet, whichever spelling named it: `h100-sxm` is `h100_sxm`."""
    return name.replace("-", "_")


def _values(definition, sources) -> dict[str, float]:
    from archcost.dsl import ast

    from .expr import Env, Problem, to_sympy

    def problem(code, message, span, hint=None):
        return Problem(sources.diagnostic(code, message, span, hint))

    env = Env({}, problem, {})
    return {a.name: float(to_sympy(a.value, env)) for a in definition.args if isinstance(a, ast.Keyword)}


def _device(definition, sources) -> Device:
    values = _values(definition, sources)
    sheet = {name: values.pop(name) for name in ("memory", "bandwidth", "nominal_memory", "domain") if name in values}
    return Device(name=definition.name, **sheet, peak=values)  # what the sheet leaves out takes Device's default



