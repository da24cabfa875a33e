"""What the grading suites hold, read from their pytest markers without running a test.

:func:`collect` runs pytest's collection (``--collect-only``, in this process, with the grading
run's own ini file) over the suite files and returns one :class:`SuiteTest` per test item.
``tkit list`` shows the public/hidden point split from it; the kit's tests check that the
points add up to :mod:`autograder.exercises`.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder import paths


@dataclass(frozen=True)
class SuiteTest:
    """One collected test: its node id, markers and the fixtures it requests.

    ``exercise``/``points`` are ``None`` when the marker is missing; ``visibility`` is the
    ``visibility`` marker or the suite folder's name (``public``/``hidden``).
    """

    nodeid: str
    path: Path
    exercise: str | None
    points: float | None
    visibility: str
    training: bool
    fixtures: tuple[str, ...]
    integration: bool = False   # a composite's test over the student's own components (autograder.sandbox.served)


class _Collector:
    def __init__(self):
        self.items: list[SuiteTest] = []
        self.errors: list[str] = []

    def pytest_collection_finish(self, session):
        for item in session.items:
            self.items.append(SuiteTest(
                nodeid=item.nodeid, path=Path(str(item.path)),
                exercise=_arg(item, "exercise"), points=_arg(item, "points"),
                visibility=_arg(item, "visibility") or Path(str(item.path)).parent.name,
                training=item.get_closest_marker("training") is not None,
                fixtures=tuple(getattr(item, "fixturenames", ())),
                integration=item.get_closest_marker("integration") is not None))

    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append(f"{report.nodeid}: {report.longreprtext[-2000:]}")


def _arg(item, name):
    marker = item.get_closest_marker(name)
    return marker.args[0] if marker is not None and marker.args else None


def collect(files: list[Path] | None = None) -> list[SuiteTest]:
    """Collect the tests of ``files`` (default: every ``test_*.py`` of the public and hidden suites).

    Raises:
        RuntimeError: a suite file fails to import or collect (the message holds pytest's report).
    """
    if files is None:
        files = sorted(p for vis in ("public", "hidden") for p in (paths.suites_dir() / vis).glob("test_*.py"))
    if not files:
        return []
    collector = _Collector()
    args = [str(f) for f in files] + ["--collect-only", "-q", "-c", str(paths.suites_dir() / "pytest.ini"),
                                      "--rootdir", str(paths.suites_dir()), "-p", "autograder.run.plugin",
                                      "--noconftest", "-p", "no:cacheprovider"]
    with contextlib.redirect_stdout(io.StringIO()):
        pytest.main(args, plugins=[collector])
    if collector.errors:
        raise RuntimeError("the suites do not collect:\n" + "\n".join(collector.errors))
    return collector.items


def points_split(tests: list[SuiteTest]) -> dict[str, dict[str, float]]:
    """``{exercise: {"public": points, "hidden": points}}`` over the collected tests."""
    split: dict[str, dict[str, float]] = {}
    for test in tests:
        entry = split.setdefault(test.exercise, {"public": 0.0, "hidden": 0.0})
        entry[test.visibility] = round(entry.get(test.visibility, 0.0) + float(test.points or 0.0), 6)
    return split
