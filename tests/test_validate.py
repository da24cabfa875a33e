"""``tkit validate`` in CI: the reference scores 100/100, the stubs 0, and every catalog mutant loses
points on its own exercise and is named as itself. Plus the validator's own failure modes: a
harmless "mutant" is reported as not caught, a stale patch as a failed check, a bad exercise name
as a usage error. The seed is fixed so a failure reproduces with ``tkit validate --seed 20240``."""

import pytest
from click.testing import CliRunner

from autograder import exercises, validate
from autograder.commands.validate import command
from autograder.mistakes import catalog

SEED = 20240


def _explain(result: validate.CheckResult) -> str:
    return f"{result.label}: {result.score:g}/{result.max_score:g} {result.detail} (seed {SEED})"


@pytest.mark.slow
def test_reference_gets_every_point():
    result = validate.check_reference(list(exercises.NAMES), training=True, seed=SEED)
    assert result.ok, _explain(result)
    assert result.score == result.max_score == 100


@pytest.mark.slow
def test_stubs_get_nothing():
    result = validate.check_stubs(list(exercises.NAMES), training=True, seed=SEED)
    assert result.ok, _explain(result)
    assert result.score == 0 and result.max_score == 100


@pytest.mark.slow
@pytest.mark.parametrize("mutant_id", [m.id for m in catalog.all_mutants()])
def test_mutant_is_caught_and_named(mutant_id):
    result = validate.check_mutant(catalog.by_id(mutant_id), training=True, seed=SEED)
    assert result.ok, _explain(result)
    assert result.score < result.max_score


def test_harmless_change_is_reported_as_not_caught():
    harmless = catalog.Mutant(id="feed_forward_harmless", exercise="feed_forward", hint_en="-", hint_ko="-",
                              replace=(("# HINT: linear1, then ReLU", "# HINT (same code): linear1, then ReLU"),))
    result = validate.check_mutant(harmless, training=False, seed=SEED)
    assert not result.ok
    assert result.score == result.max_score == exercises.get("feed_forward").points
    assert result.detail == "loses no points"


def test_stale_patch_is_a_failed_check():
    stale = catalog.Mutant(id="feed_forward_stale", exercise="feed_forward", hint_en="-", hint_ko="-",
                           replace=(("this text is not in feed_forward.py", "x"),))
    result = validate.check_mutant(stale, training=False, seed=SEED)
    assert not result.ok
    assert result.detail.startswith("the patch no longer applies")
    assert "feed_forward_stale" in result.detail


def test_unknown_exercise_is_a_usage_error():
    outcome = CliRunner().invoke(command, ["--exercise", "attenion"])
    assert outcome.exit_code == 2
    assert "unknown exercise 'attenion'" in outcome.output
