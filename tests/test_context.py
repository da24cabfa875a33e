"""The running test's context (:mod:`autograder.context`): scoped to a test, missing outside one."""

import pytest

from autograder import context


def test_the_running_test_context_is_scoped_and_missing_outside_a_test():
    assert context.current(required=False) is None
    with pytest.raises(context.NoTestRunning, match="no graded test is running"):
        context.current()
    run = context.RunState(seed=5)
    outer = context.TestContext(exercise="masks", nodeid="a", seed=1, visibility="public", run=run)
    with context.running(outer):
        inner = context.TestContext(exercise="attention", nodeid="b", run=run)
        with context.running(inner):
            assert context.current() is inner and context.current().run.seed == 5
        assert context.current() is outer
    assert context.current(required=False) is None
