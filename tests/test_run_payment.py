"""Points follow values (autograder.run.payment): a public test is paid as far as its hidden twin
passes, and every test that is not a values test as far as its exercise's values tests pass; and
the twins' inputs (autograder.checks.examples)."""

import pytest

from autograder.checks.examples import Example
from autograder.results.model import TestResult
from autograder.run import payment


def record(nodeid, kind, score, max_score, *, exercise="masks", hidden=False, twin_of=None, part=None,
           not_graded=None):
    other = {k: v for k, v in ((payment.TWIN_OF, twin_of), (payment.PART, part)) if v}
    return TestResult(name=nodeid, score=score, max_score=max_score, status="passed" if score >= max_score else "failed",
                      visibility="after_published" if hidden else "visible", tags=[exercise], nodeid=nodeid,
                      kind=kind, other=other, not_graded=not_graded)


def test_gated_kinds_are_paid_the_values_fraction_and_the_exercise_never_more():
    tests = [record("v1", "values", 1, 2), record("v2", "values", 0, 2), record("n", "names", 1, 1),
             record("p", "property", 2, 2), record("e", "errors", 0.5, 1)]
    paid = payment.apply(tests)
    by = {t.nodeid: t for t in paid}
    assert by["n"].score == 0.25 and by["p"].score == 0.5 and by["e"].score == 0.125
    assert by["n"].status == "passed" and "Paid 25%" in by["n"].output
    assert sum(t.score for t in paid) <= 0.25 * sum(t.max_score for t in paid)


def test_a_public_test_is_paid_as_far_as_its_twin_passes_and_the_twin_leaves():
    tests = [record("pub", "values", 2, 2), record("pub[twin]", "values", 0, 2, hidden=True, twin_of="pub"),
             record("ok", "values", 1, 1), record("ok[twin]", "values", 1, 1, hidden=True, twin_of="ok")]
    paid = payment.apply(tests)
    assert [t.nodeid for t in paid] == ["pub", "ok"]
    assert paid[0].score == 0 and paid[0].status == "failed" and "other inputs" in paid[0].output
    assert paid[1].score == 1 and paid[1].status == "passed"


def test_a_twin_the_grader_could_not_judge_leaves_the_public_test_as_it_is():
    tests = [record("pub", "values", 2, 2), record("pub[twin]", "values", 0, 2, hidden=True, twin_of="pub",
                                                   not_graded="an internal error")]
    assert payment.apply(tests)[0].score == 2


def test_parts_conventions_and_runs_without_values_tests():
    tests = [record("model", "values", 0, 7, exercise="autoencoder"),
             record("shapes", "shapes", 1.5, 1.5, exercise="autoencoder"),
             record("loop", "values", 1, 1, exercise="autoencoder", part="train_autoencoder"),
             record("conv", "convention", 0, 0.5, exercise="multi_head_attention"),
             record("mv", "values", 1, 1, exercise="multi_head_attention"),
             record("mn", "names", 0.5, 0.5, exercise="multi_head_attention"),
             record("alone", "property", 1, 1, exercise="rope")]
    by = {t.nodeid: t for t in payment.apply(tests)}
    assert by["shapes"].score == 0 and by["loop"].score == 1   # the loop is its own part
    assert by["mn"].score == 0.5                                  # a convention does not lower v
    assert by["alone"].score == 1                                 # no values test ran: premises only


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_public_test_draws_its_examples_and_the_twin_others_of_the_same_kind(seed):
    public, twin = Example(twin=False, seed=seed), Example(twin=True, seed=seed)
    assert public.sizes((11, 6), 4, 40) == [11, 6]
    assert public.pick("given", lambda rng: "drawn") == "given" and twin.pick("given", lambda rng: "drawn") == "drawn"
    drawn = twin.sizes((11, 6), 4, 40, exclude=(5,))
    assert len(set(drawn)) == 2 and all(4 <= n <= 40 and n != 5 for n in drawn)
    assert all(n % 2 == 0 for n in twin.sizes((8, 16, 4), 2, 64, even=True))
    import torch

    assert torch.equal(torch.randn(3, generator=public.rng(7)), torch.randn(3, generator=torch.Generator().manual_seed(7)))
    assert not torch.equal(torch.randn(3, generator=twin.rng(7)), torch.randn(3, generator=public.rng(7)))
    assert torch.equal(torch.randn(3, generator=Example(True, seed).rng(7)), torch.randn(3, generator=twin.rng(7)))
