"""Mutated specs and stdlib blocks never escape the public API with anything but an ArchError.

The mutator and the harness are tools/fuzz.py, the long-running target; here they run on a fixed
budget and seed: the default run a bounded sample, the `long` marker (.ci/run) 30 times as many.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import load_tool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
SAMPLE, LONG = 100, 4_000  # mutations: the default run's bounded sample, and the `long` run's (.ci/run)


fuzz = load_tool("fuzz")


def test_every_spec_and_stdlib_block_is_a_seed():
    names = {name.split(":")[0] for name, _ in fuzz.seeds()}
    assert {p.name for p in (ROOT / "specs").glob("*.arch")} <= names
    assert "moe.arch" in names and "dsv4.arch" in names


def test_unmutated_seeds_compile_and_evaluate():
    """A seed the harness rejects would make every mutation of it trivially `rejected`."""
    for name, text in fuzz.seeds():
        assert fuzz.run_one(text) == fuzz.ACCEPTED, name


@pytest.mark.parametrize("count", [SAMPLE, pytest.param(LONG, marks=pytest.mark.long)])
def test_mutations_never_escape(count):
    tally = fuzz.campaign(seed=20261129, workers=2, count=count)
    assert tally.done == count
    assert not tally.escapes, "\n".join(f"--- mutation of {name}:\n{text}\n{failure}"
                                         for name, text, failure in tally.escapes[:3])
    # Both kinds must be common, or the mutator has stopped exercising the compiler's back half.
    assert tally.accepted > count // 10 and tally.rejected > count // 10, tally[:3]


@pytest.mark.parametrize("count", [SAMPLE, pytest.param(LONG, marks=pytest.mark.long)])
def test_config_mutations_never_escape(count):
    """config.json files from anywhere: refused at a line of the config, or imported into a spec that
    compiles and evaluates (the same harness as `tools/fuzz.py --target configs`)."""
    for name, text in fuzz.config_seeds():
        assert _outcome(fuzz.run_config(text)) == fuzz.ACCEPTED, name
    tally = fuzz.campaign(seed=20261129, workers=2, count=count, target="configs")
    assert not tally.escapes, "\n".join(f"--- mutation of {name}:\n{text}\n{failure}"
                                         for name, text, failure in tally.escapes[:3])
    assert tally.accepted > count // 10 and tally.rejected > count // 10, tally[:3]


def _outcome(result):
    """A target with invariant oracles answers (outcome, {oracle: failed}); the others the outcome alone."""
    return result[0] if isinstance(result, tuple) else result


@pytest.mark.parametrize("count", [50, pytest.param(2_000, marks=pytest.mark.long)])
def test_numbers_hold_their_invariants(count):
    """Spec mutants that compile, checked by every oracle of tools/oracles.py: cold and warm print the same
    bytes, one card is `eval`, data- and expert-parallel cards do one card's work, prefill grows with P,
    written attention never exceeds causal, decode is the prefill difference where attention is causal."""
    tally = fuzz.campaign(seed=20261201, workers=2, count=count, target="numbers")
    assert not tally.escapes, "\n".join(f"--- mutation of {name}:\n{failure}" for name, _, failure in tally.escapes[:3])
    assert set(tally.oracles) == set(fuzz._oracles().SPEC_ORACLES)
    assert all(checked > 0 for checked, _ in tally.oracles.values()), tally.oracles


@pytest.mark.parametrize("target,count", [("flags", 120), ("api", 200), ("files", 60)])
def test_flags_api_and_file_outputs_never_escape(target, count):
    """Odd flag values, odd API argument types and hostile output targets (symlink, read-only file, FIFO,
    device node, folder, missing folder, the command's own input): a clean refusal or a right result."""
    tally = fuzz.campaign(seed=20261130, workers=2, count=count, target=target)
    assert tally.done == count
    assert not tally.escapes, "\n\n".join(f"{name}: {text}\n{failure}" for name, text, failure in tally.escapes[:3])


@pytest.mark.parametrize("target,count,oracles", [
    ("server", 200, {"answered", "no_leak"}), ("cache", 24, {"same_output", "nothing_ran"}),
    ("signals", 2, {"clean_exit", "no_temporary", "target_whole"}),
    pytest.param("server", 20_000, {"answered", "no_leak"}, marks=pytest.mark.long),
    pytest.param("cache", 400, {"same_output", "nothing_ran"}, marks=pytest.mark.long),
    pytest.param("signals", 40, {"clean_exit", "no_temporary", "target_whole"}, marks=pytest.mark.long)])
def test_the_server_the_caches_and_signals_hold(target, count, oracles):
    """Issue 45's targets: odd requests to the playground's API (never an internal error, never a line of a file
    it does not serve), caches damaged or planted between a cold and a warm run (the same output, nothing run),
    writers stopped by a signal (a clean end, no temporary file, the target old or whole)."""
    tally = fuzz.campaign(seed=20261205, workers=2, count=count, target=target)
    assert tally.done == count
    assert not tally.escapes, "\n\n".join(f"{name}: {text}\n{failure}" for name, text, failure in tally.escapes[:3])
    assert set(tally.oracles) == oracles and all(checked > 0 for checked, _ in tally.oracles.values())


def _shrinking(seed, rng):
    """The same property under hypothesis, which shrinks a failure to the fewest edits."""
    outcome = fuzz.run_one(fuzz.mutate(seed[1], rng))
    assert outcome in (None, fuzz.ACCEPTED), outcome


def shrinking(examples: int):
    # the seeds are drawn from when the test runs (st.deferred), not when the file is collected: every
    # worker of the suite collects every file, and the seeds cost seconds of probe compiles
    return settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(
        given(seed=st.deferred(lambda: st.sampled_from(fuzz.seeds())),
              rng=st.randoms(use_true_random=False))(_shrinking))


test_mutations_never_escape_shrinking = shrinking(30)
test_mutations_never_escape_shrinking_long = pytest.mark.long(shrinking(1_000))
