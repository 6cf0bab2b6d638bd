"""config.json files of this year's checkpoints (tests/configs/next/), kept for the families the importer does
not know yet: each is the published file, byte for byte, where the hash inventory in EXPECTED_SHA256.tsv holds
its checkpoint (sha256 of the config.json at a Hugging Face revision, from a public inventory named in its
first line); SOURCES.md says where each came from."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

NEXT = Path(__file__).resolve().parent / "configs" / "next"
FILES = sorted(NEXT.glob("*.json"))


def _inventory() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for line in (NEXT / "EXPECTED_SHA256.tsv").read_text().splitlines()[1:]:
        parts = line.split("\t")
        found.setdefault(parts[0], set()).add(parts[3])
    return found


def _checkpoint(name: str) -> str:
    row = re.search(r"^\| " + re.escape(name) + r" \| ([^|]+) \|", (NEXT / "SOURCES.md").read_text(), re.M)
    assert row, f"{name} has no row in SOURCES.md"
    return row.group(1).strip()


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_each_config_is_the_published_file(path):
    config = json.loads(path.read_text())
    assert config.get("model_type") and config.get("architectures")
    inventory = _inventory()
    checkpoint = _checkpoint(path.name)
    if checkpoint in inventory:
        assert hashlib.sha256(path.read_bytes()).hexdigest() in inventory[checkpoint]


def test_most_are_verified_against_the_inventory():
    verified = [p for p in FILES if _checkpoint(p.name) in _inventory()]
    assert len(verified) >= 11 and len(FILES) >= 16
