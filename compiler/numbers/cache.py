"""The compiled-formula cache: a spec's report forms on disk, so a later run on the same sources reads no sympy.

An entry is JSON in the user cache folder (sealed with its own checksum: dsl/cachedir.py), named by the hash of
its key, which is data: the spec's resolved path,
whether `use` may leave its folder, and the counting conventions (terms.conventions.Conventions) — the same key from the
CLI's flags and from the API's keywords. It holds that key, the hash of every source file the compile read
(stdlib included) and a fingerprint of archcost's own code, and is used only when all of those still match and
every part of it checks out (forms.check, the plan's shape); anything else is ignored and rebuilt. Nothing in it
is executed: evaluators are closures built from checked forms (forms.py).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from archcost.dsl.cachedir import cache_folder, read_entry, write_entry
from archcost.dsl.files import source_file

from . import forms
from .assemble import Evaluator, Numbers, assemble, dumped, excluded_of, phase_key, plain

FORMAT = 4  # 4: entries sealed with their checksum
PACKAGE = Path(__file__).resolve().parent
MAX_ENTRY_BYTES = 64 * 2**20


def enabled(no_cache: bool = False) -> bool:
    return not no_cache and not os.environ.get("ARCHCOST_NO_CACHE")


def key(spec: str | Path, conventions: dict, allow_outside: bool = False) -> dict:
    """What an entry is for, as data: the spec file, the `use` policy and the counting conventions (as
    letters.conventions gives them, or an Conventions' model_dump())."""
    chosen = {**conventions, "paths": [list(pair) for pair in conventions["paths"]]}
    return {"spec": str(Path(spec).resolve()), "allow_outside": bool(allow_outside), "conventions": chosen}


def fingerprint() -> str:
    """archcost's version and the size and time of each of its own modules: new code, new entries."""
    stats = []
    for root, _, files in sorted(os.walk(PACKAGE)):
        for name in sorted(files):
            if name.endswith((".py", ".lark")):
                info = os.stat(os.path.join(root, name))
                stats.append(f"{root}/{name}:{info.st_size}:{info.st_mtime_ns}")
    return hashlib.sha256("\n".join(["archcost 0.1.0", *stats]).encode()).hexdigest()


def entry_path(key: dict) -> Path | None:
    base = cache_folder("forms")
    if base is None:
        return None
    return base / f"{hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]}.json"


def digest(name: str) -> str:
    return hashlib.sha256(source_file(name).read_bytes()).hexdigest()


def load(key: dict) -> dict | None:
    """The entry for this key, when its checksum holds, it was written for this key, and every source and
    archcost itself are as they were."""
    entry = read_entry(entry_path(key), MAX_ENTRY_BYTES)
    try:
        if entry is None or not _valid(entry) or entry["key"] != key or entry["fingerprint"] != fingerprint():
            return None
        if any(digest(name) != hashed for name, hashed in entry["sources"]):
            return None
        if any(os.path.realpath(written) != reached for written, reached in entry["links"]):
            return None  # a `use` as written now reaches another file
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None
    return entry


def store(key: dict, head: dict, sources: list[str], phases: dict[str, dict], extras: dict | None = None,
          links: list | None = None) -> None:
    """Add these phases' forms (and `extras`: facts, state_at) to the entry, written whole and atomically; a
    folder that says no is no error."""
    path = entry_path(key)
    if path is None:
        return
    try:
        entry = load(key) or {"format": FORMAT, "key": key, "fingerprint": fingerprint(),
                                     "sources": [[name, digest(name)] for name in sources],
                                     "links": [list(pair) for pair in links or []], "head": head, "phases": {}}
        entry["phases"].update(phases)
        entry.update(extras or {})
    except OSError:
        return
    write_entry(path, entry)


def held(compiled, phase: str, entry: dict | None = None) -> dict | None:
    """An entry kept in memory only (spec text with no file, or no cache folder): `entry` with the forms of
    `phase` added, so that the next evaluation reads them as a cached model does."""
    from .evaluate import head
    from .leaves import phase_forms

    forms = phase_forms(compiled, phase)
    if forms is None:
        return entry
    entry = entry or {"head": {**head(compiled), "model": compiled.name}, "phases": {}}
    entry["phases"][phase_key(phase, None)] = forms
    return entry


def remember(key: dict, compiled, phases: list[str], name: str | None = None, extras: dict | None = None,
             reads: tuple[str, ...] | None = None) -> None:
    """Keep a compiled model's forms of these phases (of every quantity, or of those `reads` names), and `extras`
    (the architecture facts and M(H) the chapter's tables read), under `key`; a model whose forms are not plain
    is not kept."""
    from .evaluate import head
    from .leaves import phase_forms

    found = {phase_key(phase, reads): phase_forms(compiled, phase, reads) for phase in phases}
    if compiled.program is None or any(forms is None for forms in found.values()):
        return
    store(key, {**head(compiled), "model": name or compiled.name}, list(compiled.program.modules), found, extras,
          compiled.program.links)


def files_read(entry: dict) -> list[Path]:
    """Every file the compile behind an entry read (the spec, what it `use`s, the stdlib files)."""
    return [source_file(name) for name, _ in entry["sources"]]


def report(entry: dict, phase: str, scenario: dict, reads: tuple[str, ...] | None = None,
           built: dict | None = None) -> dict | None:
    """The report data of `phase` at `scenario`, as JSON shows it (of every quantity, or at least of those `reads`
    names), or None when the entry lacks the phase or a number is not vouched for (the compiler then runs and says
    why). `built` keeps each phase's evaluator for the caller that asks again (a loaded model, a view)."""
    phase_forms = _forms_holding(entry["phases"], phase, reads)
    if phase_forms is None:
        return None
    try:
        key = (phase, reads)
        evaluator = built.get(key) if built is not None else None
        if evaluator is None:
            evaluator = Evaluator(phase_forms)
            if built is not None:
                built[key] = evaluator
        numbers = Numbers(evaluator(**scenario))
        data = assemble(entry["head"], phase_forms["plan"], phase, scenario, numbers)
    except Exception:  # noqa: BLE001  (any surprise: the compiler's path decides, and explains)
        return None
    return dumped(data, excluded_of(phase_forms["plan"]))


def _forms_holding(phases: dict, phase: str, reads: tuple[str, ...] | None) -> dict | None:
    """The forms of `phase` kept for these `reads` (None: every quantity), or any kept for more: those of every
    quantity, or of a larger selection (`compare --table prefill` after `--table chapter`)."""
    if reads is None or phase_key(phase, reads) in phases:
        return phases.get(phase_key(phase, reads))
    wanted = set(reads)
    for key in (phase, *sorted(phases)):
        name, _, held = key.partition(":")
        if key in phases and name == phase and (not held or wanted <= set(held.split(","))):
            return phases[key]
    return None


class CachedView:
    """A model as the chapter's tables read it (see views.CompiledView), from its cache entry."""

    def __init__(self, entry: dict, reads: tuple[str, ...] | None = None):
        head = entry["head"]
        self.entry, self.name, self.conventions, self.paths = entry, head["model"], head["conventions"], head["paths"]
        self.reads = reads
        self.built: dict = {}  # each phase's evaluator, built once

    @property
    def facts(self) -> dict:
        if self.entry.get("facts") is None:
            raise LookupError("no architecture facts cached")
        return self.entry["facts"]

    def report(self, phase: str, **shape) -> dict:
        data = report(self.entry, phase, {"B": 1, "S": 0, "P": 1, "G": 1, **shape}, self.reads, self.built)
        if data is None:
            raise LookupError(f"no {phase} forms cached")
        return {**data, "model": self.name}

    def state_at(self, history: int):
        value = plain(forms.function([self.entry["state_at"]])(1, history, 1, 1)[0])
        if value < 0:
            raise LookupError("negative state")
        return value


# ---------------------------------------------------------------------------------------------- checking

def _valid(entry) -> bool:
    try:
        return (type(entry) is dict and entry.get("format") == FORMAT and type(entry.get("fingerprint")) is str
                and type(entry.get("key")) is dict and _pairs(entry["sources"]) and _pairs(entry["links"])
                and _head(entry["head"]) and type(entry["phases"]) is dict
                and all(type(k) is str and _phase(v) for k, v in entry["phases"].items())
                and _facts(entry.get("facts")) and ("state_at" not in entry or forms.check(entry["state_at"])))
    except (KeyError, TypeError, IndexError):
        return False


def _facts(facts) -> bool:
    if facts is None:
        return True
    words = ("layers", "width", "attention", "ffn", "depth")
    routed = facts["routed"]
    return (type(facts) is dict and all(type(facts[k]) is str for k in words)
            and (routed is None or (_strings(routed) and len(routed) == 4)))


def _strings(items) -> bool:
    return type(items) is list and all(type(item) is str for item in items)


def _pairs(items) -> bool:
    return type(items) is list and all(_strings(item) and len(item) == 2 for item in items)


def _head(head) -> bool:
    return (type(head) is dict and type(head["model"]) is str
            and all(type(head[k]) is dict and all(type(v) is str for v in head[k].values())
                    for k in ("options", "conventions", "paths")))


def _phase(phase_forms) -> bool:
    leaves, requests, atoms = phase_forms["leaves"], phase_forms["requests"], phase_forms["atoms"]
    if type(leaves) is not dict or type(requests) is not dict or type(atoms) is not list:
        return False
    budget = [forms.MAX_NODES]
    if not all(forms.check(tree, 0, budget) for tree in [*leaves.values(), *atoms]):
        return False
    for request in requests.values():
        if not forms.check(request["call"], 0, budget) or type(request["decode"]) is not list:
            return False
        for atom, power, coefficient in request["decode"]:
            if not (type(atom) is int and 0 <= atom < len(atoms) and type(power) is int and 0 <= power <= 8
                    and forms.check(coefficient, 0, budget)):
                return False
    return _plan(phase_forms["plan"], set(leaves) | set(requests))


def _plan(plan, keys: set) -> bool:
    if type(plan) is not list:
        return False
    for item in plan:
        kind = item[0]
        if kind == "sum":
            ok = (_strings(item[2]) and _strings(item[3]) and set(item[2] + item[3]) <= keys
                  and all(type(k) is str and k in keys for k in item[4:]))
        elif kind in ("each", "parts"):
            ok = _pairs(item[2]) and {key for _, key in item[2]} <= keys
        elif kind == "peak":
            ok = _strings(item[2]) and set(item[2]) <= keys
        elif kind == "figures":
            ok = _strings(item[3]) and all(type(row) is list and all(
                type(name) is str and (fixed is None) != (key is None) and (key is None or key in keys)
                and (fixed is None or type(fixed) is str) for name, fixed, key in row) for row in item[2])
        else:
            return False
        if not (ok and type(item[1]) is str):
            return False
    return True
