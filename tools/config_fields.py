"""Write compiler/importer/transformers_fields.json: for each model type `archcost import` reads, every config
field that transformers' code for that type could read.

A config.json field outside this set is read by no code of the installed transformers, so it cannot change what
that code computes and the importer passes it over (listing it); a field inside it that the importer's schema does
not know stops the import (E502). The set is deliberately generous, a union of:

- the config class's own fields (transformers 5 config classes are dataclasses) and its `attribute_map` aliases;
- the names its configuration module takes from `**kwargs` (legacy fields such as Gemma 3's
  `sliding_window_pattern`, which `__post_init__` still turns into `layer_types`);
- every `config.NAME` and `getattr(config, "NAME")` in the type's modeling module (extra fields become
  attributes of the config, so modeling code may read a field its class does not define);
- the names shared code reads from any model's config (masks, caches, RoPE, generation, the weight loader).

Run with transformers installed (the `hf` or `test` extra), after adding a family or upgrading transformers:

    .venv/bin/python tools/config_fields.py
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "compiler" / "importer" / "transformers_fields.json"

# transformers' modules that read fields of any model's config
SHARED_MODULES = ("configuration_utils", "modeling_utils", "modeling_rope_utils", "masking_utils", "cache_utils",
                  "modeling_flash_attention_utils", "integrations.sdpa_attention", "integrations.flash_attention",
                  "integrations.flex_attention", "generation.utils")
_ATTRIBUTE = re.compile(r"\b(?:self\.)?(?:config|text_config|layer_config|effective_config)\.([A-Za-z_]\w*)")
_GETATTR = re.compile(r"(?:getattr|hasattr)\(\s*(?:self\.)?\w*config\s*,\s*[\"']([A-Za-z_]\w*)[\"']")
_KWARGS = re.compile(r"kwargs\.(?:get|pop)\(\s*[\"']([A-Za-z_]\w*)[\"']")


def names_read(source: str) -> set[str]:
    """The config field names a module's source reads, by attribute, getattr/hasattr or **kwargs."""
    return {*_ATTRIBUTE.findall(source), *_GETATTR.findall(source), *_KWARGS.findall(source)}


def fields_of(model_type: str, shared: set[str]) -> list[str]:
    """The fields `model_type`'s own classes and modules can read, beyond those shared code reads."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    config_class = CONFIG_MAPPING[model_type]
    names = {field.name for field in dataclasses.fields(config_class)} | set(getattr(config_class, "attribute_map", {}))
    module = inspect.getmodule(config_class)
    names |= set(_KWARGS.findall(inspect.getsource(module)))
    modeling = module.__name__.replace(".configuration_", ".modeling_")
    with contextlib.suppress(ImportError):  # a config-only type (a wrapper whose modeling lives elsewhere)
        names |= names_read(inspect.getsource(importlib.import_module(modeling)))
    return sorted(names - shared)


def table() -> dict:
    import transformers

    sys.path.insert(0, str(ROOT.parent))
    from archcost.compiler.importer import FAMILIES, MULTIMODAL

    shared = set()
    for name in SHARED_MODULES:
        shared |= names_read(inspect.getsource(importlib.import_module(f"transformers.{name}")))
    types = sorted({*FAMILIES, *MULTIMODAL, *MULTIMODAL.values()})
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    return {"transformers": transformers.__version__, "causal_lm_types": sorted(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES),
            "about": "config fields transformers' code can read: by any model (shared) and per model type; "
                     "tools/config_fields.py writes it",
            "shared": sorted(shared), "types": {model_type: fields_of(model_type, shared) for model_type in types}}


def text() -> str:
    return json.dumps(table(), indent=1, sort_keys=True) + "\n"


def main() -> int:
    OUTPUT.write_text(text(), encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
