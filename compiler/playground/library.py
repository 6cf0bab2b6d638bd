"""What the playground may read, fixed when the server starts: the specs named on its command line, the specs
and the standard library the package ships. The page names a spec by the name listed here; a name not
listed stands for nothing (E112), so no request can reach another file."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from archcost.dsl.loader import stdlib_root


def shipped_specs() -> Path:
    from importlib import resources

    return Path(str(resources.files("archcost.specs")))


@dataclass(frozen=True)
class Library:
    """{name the page uses: file} for every spec the server serves, the named ones first."""

    specs: dict[str, Path] = field(default_factory=dict)
    named: tuple[str, ...] = ()

    @classmethod
    def of(cls, named: list[Path]) -> Library:
        specs = {str(path): path.resolve() for path in named}
        folder = shipped_specs()
        specs.update({f"specs/{p.name}": p.resolve() for p in sorted(folder.glob("*.arch"))
                      if p.resolve() not in specs.values()})
        return cls(specs, tuple(str(path) for path in named))

    def path(self, name: str) -> Path:
        if not isinstance(name, str) or name not in self.specs:
            raise LookupError(f"the server serves no spec named {name!r}: only the specs named when it started "
                              "and those archcost ships")
        return self.specs[name]

    def catalogue(self) -> dict:
        """What the page lists: the specs (with their text), the standard library, devices, links and the
        counting conventions with their words."""
        from archcost.compiler.front.hardware import devices, links
        from archcost.compiler.render.chapter import CHAPTER_TABLES
        from archcost.compiler.terms.letters import LEDGERS, PHASES
        from archcost.dsl.highlight import codemirror_mode
        from archcost.model import CONVENTIONS

        return {
            "specs": [{"name": name, "text": path.read_text(encoding="utf-8"), "named": name in self.named}
                      for name, path in self.specs.items()],
            "stdlib": _stdlib(),
            "devices": sorted(devices()), "links": sorted(links()),
            "conventions": {"ledger": sorted(LEDGERS), **{k: list(v) for k, v in CONVENTIONS.items()}},
            "phases": list(PHASES), "tables": ["summary", *CHAPTER_TABLES], "highlight": codemirror_mode(),
        }


def _stdlib() -> list[dict]:
    root = stdlib_root()
    return [{"name": f"std/{p.relative_to(root).as_posix()}", "text": p.read_text(encoding="utf-8")}
            for p in sorted(root.rglob("*.arch"))]
