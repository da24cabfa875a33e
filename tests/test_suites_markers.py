"""The grading suites' markers: every test names its exercise and points, each exercise's tests add
up to its points in autograder/exercises.py (100 in all), and no public test needs the reference
solutions (the student edition has none)."""

import pytest

from autograder import exercises
from autograder.run import rubric


@pytest.fixture(scope="module")
def suite_tests():
    return rubric.collect()


def test_every_test_has_exercise_and_points(suite_tests):
    assert suite_tests, "no suite tests were collected"
    bad = [t.nodeid for t in suite_tests
           if t.exercise not in exercises.BY_NAME or not isinstance(t.points, (int, float)) or t.points <= 0]
    assert bad == [], f"tests without a known exercise() or positive points() marker: {bad}"


def test_visibility_is_public_or_hidden(suite_tests):
    bad = [(t.nodeid, t.visibility) for t in suite_tests if t.visibility not in ("public", "hidden")]
    assert bad == []


def test_points_add_up_per_exercise(suite_tests):
    split = rubric.points_split(suite_tests)
    got = {name: round(sum(split.get(name, {}).values()), 6) for name in exercises.NAMES}
    expected = {e.name: float(e.points) for e in exercises.EXERCISES}
    assert got == expected


def test_total_is_100(suite_tests):
    assert exercises.total_points() == 100
    assert round(sum(float(t.points) for t in suite_tests), 6) == 100.0


def test_every_exercise_has_public_and_hidden_tests(suite_tests):
    split = rubric.points_split(suite_tests)
    missing = [(name, vis) for name in exercises.NAMES for vis in ("public", "hidden")
               if split.get(name, {}).get(vis, 0.0) <= 0]
    assert missing == []


def test_public_tests_never_use_the_reference(suite_tests):
    bad = [t.nodeid for t in suite_tests if t.visibility == "public" and "reference" in t.fixtures]
    assert bad == [], f"public tests that request the reference fixture: {bad}"



def test_every_test_says_what_it_checks(suite_tests):
    """Points follow values (autograder.run.payment): every test is classified, so no suite can
    forget the rule; a test that is not a ``values`` test is paid as far as its exercise's are."""
    bad = [(t.nodeid, t.kind) for t in suite_tests if t.kind not in rubric.KINDS]
    assert bad == [], f"tests without a kind() marker from {sorted(rubric.KINDS)}: {bad}"


def test_every_gated_part_has_values_tests(suite_tests):
    values = {(t.exercise, t.part) for t in suite_tests if t.kind == rubric.VALUES}
    gated = {(t.exercise, t.part) for t in suite_tests if t.kind != rubric.VALUES}
    assert gated - values == set(), "parts whose gated tests no values test pays for"


def test_every_public_test_has_a_twin_that_draws_other_inputs(suite_tests):
    """A public test's hidden twin (autograder.run.twins) differs from it only through what the test
    draws from its ``seed``, ``rng`` or ``example`` fixture: a public test draws through one of them,
    or says why it has no twin."""
    draws = {"seed", "rng", "example"}
    bad = [t.nodeid for t in suite_tests if t.visibility == "public" and not t.no_twin and not draws & set(t.fixtures)]
    assert bad == [], f"public tests whose twin would repeat them (no seed, rng or example fixture): {bad}"
    hidden = [t.nodeid for t in suite_tests if t.visibility == "hidden" and t.no_twin]
    assert hidden == [], f"no_twin() on hidden tests: {hidden}"
    reasons = [t.nodeid for t in suite_tests if t.no_twin is not None and not str(t.no_twin).strip()]
    assert reasons == []


def test_every_twin_has_a_node_id_of_its_own():
    """A twin (autograder.run.twins) is its public test again under its own node id, whatever pytest
    builds a node id from (9.2: ``originalname`` and the call spec's ids; before: ``name``); with the
    public test's id, its record would replace the public test's and the public tests would vanish."""
    from autograder import paths
    from autograder.run import twins

    seen = {}

    class Twins:
        @pytest.hookimpl(trylast=True)
        def pytest_collection_modifyitems(self, items):
            twins.add(items)
            seen.update(twins={item.nodeid: twins.twin_of(item) for item in items if twins.twin_of(item)})

    tests = rubric.collect([paths.suites_dir() / vis / "test_encoder.py" for vis in ("public", "hidden")],
                           plugins=(Twins(),))
    ids = [t.nodeid for t in tests]
    assert seen["twins"] and len(set(ids)) == len(ids) and set(seen["twins"]) <= set(ids)
    assert all(twin != public and "twin" in twin and public in ids for twin, public in seen["twins"].items())
    assert any("-twin]" in twin for twin in seen["twins"]), "no parametrized public test in test_encoder.py"
