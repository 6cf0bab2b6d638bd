"""The files behind the loader's module names (`std/...` is the standard library's), without parsing them."""

from __future__ import annotations

from pathlib import Path


def source_file(name: str) -> Path:
    """The file a module name of the loader stands for."""
    if name.startswith("std/"):
        from importlib import resources

        return Path(str(resources.files("archcost.stdlib"))) / name.removeprefix("std/")
    return Path(name)
