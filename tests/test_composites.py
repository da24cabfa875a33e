"""Charge once: a composite exercise (one with components, ``autograder.exercises`` ``depends``) earns its
points from the student's composite file over the reference components, except one integration test.

The suites' side: every composite has exactly one test marked ``integration``, public (it must run in the
student edition too, on public inputs: its named component is never a hidden-input channel) and worth at
most 10 % of the exercise; no other exercise has one. The grading side is in tests/test_served_components.py.
"""

import pytest

from autograder import exercises
from autograder.run import rubric

MAX_SHARE = 0.10


@pytest.fixture(scope="module")
def suite_tests():
    return rubric.collect()


def test_every_composite_has_one_public_integration_test(suite_tests):
    found = {}
    for t in suite_tests:
        if t.integration:
            found.setdefault(t.exercise, []).append(t)
    composites = {e.name for e in exercises.EXERCISES if e.depends}
    assert set(found) == composites, "integration tests belong to the composites, one each"
    for name, tests in found.items():
        assert len(tests) == 1, f"{name}: {[t.nodeid for t in tests]}"
        test = tests[0]
        assert test.visibility == "public", test.nodeid
        assert 0 < test.points <= MAX_SHARE * exercises.get(name).points + 1e-9, (test.nodeid, test.points)
