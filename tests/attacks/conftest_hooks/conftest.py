"""Attack: a conftest.py whose hooks turn every failure into a pass and add points."""
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None


def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.points(1000))
