"""The page's plots as data for uPlot: state and decode FLOPs against context, the requests that fit on a
device, and the device's roofline with the call placed on it (the curves of `archcost plot`)."""

from __future__ import annotations

import numpy as np

from archcost import checks
from archcost.compiler.front.hardware import device as device_sheet
from archcost.compiler.serving.curves import capacity_curve, decode_flops_curve, roof_line, roofline_points, state_curve
from archcost.compiler.terms.scenario import Scenario

CONTEXTS = [int(n) for n in np.unique(np.geomspace(1024, 2**20, 41).astype(int))]  # 1K … 1M positions
CAPACITY_CONTEXTS = [2**k for k in range(10, 21)]


def plots(compiled, device_name: str, scenario) -> dict:
    """Every curve of the page for one model on one device, at the page's scenario."""
    device = device_sheet(device_name)
    states, fixed = state_curve(compiled, CONTEXTS)
    calls = [("decode", Scenario(B=scenario.B, S=scenario.S)), ("decode", Scenario(B=64, S=scenario.S)),
             ("prefill", Scenario(B=scenario.B, S=scenario.S, P=checks.new_tokens("prefill", scenario.P)))]
    points = roofline_points(compiled, device, calls)
    fmt = points[0]["peak_format"]
    roof_x, roof = roof_line(device, fmt, 64)
    return {
        "model": compiled.name, "device": device.name,
        "context": {"x": CONTEXTS, "state_bytes": states, "state_fixed_bytes": fixed,
                    "decode_flops_matrix": decode_flops_curve(compiled, CONTEXTS, scenario.B)},
        "capacity": {"x": CAPACITY_CONTEXTS, "max_batch": capacity_curve(compiled, device, CAPACITY_CONTEXTS),
                     "memory_bytes": device.memory},
        "roofline": {"x": roof_x, "roof": roof, "peak_format": fmt, "ridge": device.ridge(fmt), "points": points},
    }
