"""archcost against the real modeling code, for every model type the importer reads, the published configs and
the hand-written specs of models it does not read yet: parameters exactly, and matrix FLOPs of a prefill and
of a decode step with a cache under the counter's conventions (tests/transformers_runs.py states them).

The reference figures are what transformers computes, recorded with its version in
tests/reference/transformers.json (tools/transformers_figures.py writes it); the `long` run recomputes every
recorded figure with the installed transformers and fails unless the record is exactly what it computes, so
the default suite compares against transformers itself without building a model.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
import transformers_runs as runs
from transformers_runs import CASES, PUBLISHED, SHAPES, SPEC_MODELS

from archcost.compiler.compilation import compile_text
from archcost.compiler.importer import IMPORTERS, REMOTE, import_config, parse_config
from archcost.compiler.importer.reading.paths import transformers_paths_of
from archcost.compiler.numbers.evaluate import evaluate
from archcost.compiler.terms.scenario import Conventions, Scenario

ROOT = Path(__file__).resolve().parents[1]
RECORD = runs.read_record()
FIGURES = RECORD["figures"]


def test_every_supported_type_has_a_case():
    """Every type transformers implements; a remote-code type is checked on its published configs (built as the
    type its auto_map names, transformers_runs.REMOTE_AS)."""
    assert {model_type for model_type, *_ in CASES.values()} == set(IMPORTERS) - set(REMOTE)
    assert set(REMOTE) == set(runs.REMOTE_AS)


def test_the_record_holds_every_case():
    assert list(FIGURES) == runs.record_keys()


def our_flops(compiled, batch: int, cached: int, new: int) -> int:
    """Matrix FLOPs of the call the counter runs: a decode step when positions are cached, else a prefill."""
    phase = "decode" if cached else "prefill"
    return evaluate(compiled, phase, Scenario(B=batch, S=cached, P=new)).flops_matrix


@cache
def small_spec(case: str):
    """The spec imported from the config exactly as transformers writes it (the record holds it): every field
    it holds must be understood by the importer or known to change no cost."""
    config = FIGURES[f"small/{case}"]["config"]
    spec = import_config(parse_config(json.dumps(config, indent=2), f"{case}.json"), case)
    # transformers' eager paths, as the import's own check compiles the spec (issue 45: the defaults are the
    # serving engines')
    options = Conventions(attention="rectangle", paths=transformers_paths_of(spec))
    return compile_text(spec, conventions=options)


@pytest.mark.parametrize("case", CASES)
def test_parameters_equal(case):
    assert evaluate(small_spec(case), "prefill", Scenario(P=1)).params == FIGURES[f"small/{case}"]["params"]


@pytest.mark.parametrize("shape", SHAPES, ids=[runs.shape_id(s) for s in SHAPES])
@pytest.mark.parametrize("case", CASES)
def test_flops_equal(case, shape):
    assert our_flops(small_spec(case), *shape) == FIGURES[f"small/{case}"]["flops"][runs.shape_id(shape)]


@cache
def published_spec(path: Path, flops: bool):
    spec = import_config(parse_config(path.read_text(), path.name))
    options = Conventions(attention="rectangle", paths=transformers_paths_of(spec)) if flops else Conventions()
    return compile_text(spec, conventions=options)


@pytest.mark.parametrize("path", PUBLISHED, ids=[p.stem for p in PUBLISHED])
def test_published_configs_count_as_transformers_builds_them(path):
    """A published config.json, full size: transformers' model on the meta device has exactly the parameters
    the imported spec counts (a multimodal checkpoint's text model; the weights as stored, unquantized)."""
    ours = evaluate(published_spec(path, False), "decode", Scenario()).params
    assert ours == FIGURES[f"published/{path.stem}"]["params"]


@pytest.mark.parametrize("path", PUBLISHED, ids=[p.stem for p in PUBLISHED])
@pytest.mark.parametrize("shape", runs.PUBLISHED_SHAPES, ids=["prefill", "decode"])
def test_published_configs_flops_as_transformers_runs_them(path, shape):
    """The same published configs at full size: the meta device counts FLOPs without computing, so no config
    needs shrinking; a prefill and a decode step equal the spec's matrix FLOPs."""
    theirs = FIGURES[f"published/{path.stem}"]["flops"][runs.shape_id(shape)]
    assert our_flops(published_spec(path, True), *shape) == theirs


@cache
def hand_written(name: str):
    spec = ROOT / "specs" / f"{name}.arch"
    options = Conventions(attention="rectangle", paths=SPEC_MODELS[name][2])
    return compile_text(spec.read_text(), conventions=options, name=str(spec), base=spec.parent)


@pytest.mark.parametrize("name", SPEC_MODELS)
def test_hand_written_specs_count_as_transformers(name):
    ours = evaluate(hand_written(name), "decode", Scenario()).params
    assert ours == FIGURES[f"spec/{name}"]["params"] + runs.BUFFERED.get(name, 0)


@pytest.mark.parametrize("shape", SHAPES, ids=[runs.shape_id(s) for s in SHAPES])
@pytest.mark.parametrize("name", SPEC_MODELS)
def test_hand_written_specs_flops_as_transformers(name, shape):
    assert our_flops(hand_written(name), *shape) == FIGURES[f"spec/{name}"]["flops"][runs.shape_id(shape)]


def test_deepseek_v4_flash_is_transformers_count_plus_its_buffered_router_bias():
    """Issue 24: transformers 5.24 counts 284,332,230,231 parameters for DeepSeek-V4-Flash's published config,
    specs/deepseek-v4-flash.arch (the chapter's calculator) 284,332,240,471. The 10,240 are the score-correction
    biases of the 40 score-routed layers' routers (256 each): the checkpoint stores them and the chapter counts
    them; transformers holds them in a buffer, which `parameters()` leaves out (docs/conventions.md)."""
    theirs = FIGURES["buffers/DeepSeek-V4-Flash"]
    spec_path = ROOT / "specs" / "deepseek-v4-flash.arch"
    ours = evaluate(compile_text(spec_path.read_text(), name=str(spec_path), base=spec_path.parent), "decode",
                    Scenario()).params
    assert theirs["router_bias_buffers"] == 40 * 256
    assert ours == theirs["params"] + theirs["router_bias_buffers"] == 284_332_240_471


# ---------------------------------------------------------------------------------------------- the record

@pytest.mark.long
def test_the_record_is_of_the_installed_transformers():
    assert {k: RECORD[k] for k in ("transformers", "torch")} == runs.versions()


@pytest.mark.long
@pytest.mark.parametrize("key", runs.record_keys())
def test_the_record_is_what_transformers_computes(key):
    """Every recorded figure recomputed: the model built on the meta device, counted as the record says."""
    assert runs.live_figures(key) == FIGURES[key]
