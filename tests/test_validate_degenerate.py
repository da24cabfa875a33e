"""``tkit validate``'s degenerate implementations (:mod:`autograder.mistakes.degenerate`): a constant,
zeros, the identity, a model that ignores its context, uniform attention, a PE that adds nothing, an
AutoEncoder that decodes a constant grey image, a Transformer whose logits come from the current
token alone. Each may earn at most 20 % of its exercise; graded without the training tests, as
here, of the exercise's non-training points, but the AutoEncoder's: its model is judged by values
tests that train (a few seconds on the shipped MNIST), and without them only its loop would count.
Reproduce with ``tkit validate --exercise NAME --no-training --seed 20240`` (the AutoEncoder's
without ``--no-training``)."""

import pytest
from click.testing import CliRunner

from autograder import exercises, validate
from autograder.commands.validate import command
from autograder.mistakes import degenerate

SEED = 20240


def test_registry_is_well_formed():
    ids = [d.id for d in degenerate.all_degenerates()]
    assert len(ids) == len(set(ids))
    assert {d.exercise for d in degenerate.all_degenerates()} == set(exercises.NAMES)
    for entry in degenerate.all_degenerates():
        assert entry.exercise in exercises.NAMES
        compile(entry.source(), f"{entry.target}.py", "exec")
        assert entry.source().startswith(validate.paths.solutions_dir().joinpath(f"{entry.target}.py")
                                         .read_text(encoding="utf-8").rstrip())


def test_plan_runs_the_degenerate_implementations_of_the_selected_exercises():
    jobs = validate.plan(["transformer"], training=False, seed=SEED)
    assert ("degenerate", "transformer_current_token_only", False, SEED) in jobs
    assert all(job[1] in {d.id for d in degenerate.for_exercises(["transformer"])}
               for job in jobs if job[0] == "degenerate")


def test_a_degenerate_that_earns_too_much_fails_the_check():
    harmless = degenerate.Degenerate("feed_forward_reference", "feed_forward", "the reference itself", "pass")
    result = validate.check_degenerate(harmless, training=False, seed=SEED)
    assert not result.ok
    assert result.kind == "degenerate"
    assert result.detail.startswith("not degenerate: it passes every value test of feed_forward")
    # one that earns too much: wrong in float64 only
    almost = degenerate.Degenerate("feed_forward_float64_zeros", "feed_forward", "zeros in float64", """
_reference_forward = PositionwiseFeedForward.forward
def _forward(self, x):
    out = _reference_forward(self, x)
    return out if x.dtype == torch.float32 else torch.zeros_like(out)
PositionwiseFeedForward.forward = _forward
""")
    result = validate.check_degenerate(almost, training=False, seed=SEED)
    assert not result.ok and "more than 20%" in result.detail, result.detail


def test_validate_prints_each_degenerate_share(monkeypatch):
    monkeypatch.setattr(validate, "plan", lambda names, training, seed: [
        ("degenerate", "feed_forward_identity", training, seed)])
    outcome = CliRunner().invoke(command, ["--exercise", "feed_forward", "--no-training", "--seed", str(SEED)])
    assert outcome.exit_code == 0, outcome.output
    assert "feed_forward_identity, 0/5 = 0%" in outcome.output
    assert "share of the non-training points" in " ".join(outcome.output.split())  # rich wraps lines


@pytest.mark.slow
@pytest.mark.parametrize("degenerate_id", [d.id for d in degenerate.all_degenerates()])
def test_degenerate_earns_at_most_a_fifth(degenerate_id):
    entry = degenerate.by_id(degenerate_id)
    result = validate.check_degenerate(entry, training=entry.exercise == "autoencoder", seed=SEED)
    assert result.max_score > 0
    assert result.score <= degenerate.MAX_SHARE * result.max_score + 1e-9, (
        f"{degenerate_id}: {result.score:g}/{result.max_score:g} {result.detail} (seed {SEED})")
    assert result.ok, result.detail
