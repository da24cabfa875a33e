"""``tkit validate --seeds N``: a check passes only when it passes under every
seed, and a mistake's points must not move with the seed."""

from click.testing import CliRunner

from autograder import validate
from autograder.commands.validate import command
from autograder.validate import CheckResult


def _result(kind, label, ok=True, score=3.0, detail=""):
    return CheckResult(kind, label, "attention", ok, score, 10.0, detail, 0.5)


def test_a_check_passes_only_under_every_seed_and_steady_points():
    runs = {
        1: [_result("reference", "reference", score=10), _result("mutant", "a"), _result("mutant", "b"),
            _result("degenerate", "c", score=1)],
        2: [_result("reference", "reference", score=10), _result("mutant", "a", score=3.5),
            _result("mutant", "b", ok=False, detail="not named"), _result("degenerate", "c", score=1)],
    }
    merged = {r.label: r for r in validate.across_seeds(runs)}
    assert merged["reference"].ok and merged["c"].ok and merged["c"].seconds == 1.0
    assert not merged["a"].ok and merged["a"].score == 3.0
    assert merged["a"].detail == "points move with the seed: 3 (seed 1), 3.5 (seed 2)"
    assert not merged["b"].ok and merged["b"].detail == "seed 2: not named"


def test_the_command_runs_each_seed_and_exits_1_on_a_moving_grade(monkeypatch):
    seen = []

    def fake(names, *, training, seed, jobs, on_result=None):
        seen.append(seed)
        return [_result("mutant", "attention_no_scaling", score=3.0 if seed == 7 else 2.5)]

    monkeypatch.setattr(validate, "validate", fake)
    out = CliRunner().invoke(command, ["--exercise", "attention", "--seed", "7", "--seeds", "2", "--no-training"],
                             env={"COLUMNS": "200"})
    assert seen == [7, 8] and out.exit_code == 1, out.output
    assert "seeds 7..8" in out.output and "points move with the seed" in out.output
    assert "0 of 1 checks passed" in out.output
