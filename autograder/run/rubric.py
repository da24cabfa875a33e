"""What the grading suites hold, read from their pytest markers without running a test.

:func:`collect` runs pytest's collection (``--collect-only``, in this process, with the grading
run's own ini file) over the suite files and returns one :class:`SuiteTest` per test item.
``tkit list`` shows the public/hidden point split from it; the kit's tests check that the
points add up to :mod:`autograder.exercises`.

Every test also says what it checks, with ``pytest.mark.kind(k)``, one of :data:`KINDS`: the
``values`` tests compare outputs with the formula, an oracle or the reference on inputs where
constant, context-free or copying code differs; every other kind (names, shapes, errors,
properties, edge cases) is paid only as far as its exercise's ``values`` tests pass
(:mod:`autograder.run.payment`). A public test runs again among the hidden tests as its *twin*,
on fresh draws of the same kind, unless it carries ``pytest.mark.no_twin(reason)``
(:mod:`autograder.run.twins`).
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder import paths

VALUES = "values"
#: What a test checks (its ``kind`` marker) -> what that means. Every kind but ``values`` is
#: *gated*: paid as far as the exercise's ``values`` tests pass.
KINDS = {
    VALUES: "the output's values against the formula, an oracle or the reference, on inputs where constant, "
            "context-free or copying code differs",
    "names": "attribute names and the state dict's structure",
    "shapes": "shapes, dtypes and ranges of the output",
    "errors": "the contract's argument errors",
    "property": "a property of the output itself (invariance, equivariance, determinism, causality, the greedy loop)",
    "edge": "an edge case (one query and one key, one token, batch 1, length 1) where normalised or copying code is exact",
    "convention": "values where the contract names another convention as common (the rows of padded queries): "
                  "gated, and left out of the values fraction, so the other convention costs this test only",
}


@dataclass(frozen=True)
class SuiteTest:
    """One collected test: its node id, markers and the fixtures it requests.

    ``exercise``/``points``/``kind`` are ``None`` when the marker is missing; ``visibility`` is the
    ``visibility`` marker or the suite folder's name (``public``/``hidden``); ``no_twin`` the reason
    a public test has no hidden twin (None: it has one); ``part`` the part of its exercise the test is
    gated with (None: the whole exercise).
    """

    nodeid: str
    path: Path
    exercise: str | None
    points: float | None
    visibility: str
    training: bool
    fixtures: tuple[str, ...]
    integration: bool = False   # a composite's test over the student's own components (autograder.sandbox.served)
    kind: str | None = None
    no_twin: str | None = None
    part: str | None = None


class _Collector:
    def __init__(self):
        self.items: list[SuiteTest] = []
        self.errors: list[str] = []

    def pytest_collection_finish(self, session):
        for item in session.items:
            self.items.append(SuiteTest(
                nodeid=item.nodeid, path=Path(str(item.path)),
                exercise=marker_arg(item, "exercise"), points=marker_arg(item, "points"),
                visibility=visibility_of(item),
                training=item.get_closest_marker("training") is not None,
                fixtures=tuple(getattr(item, "fixturenames", ())),
                integration=item.get_closest_marker("integration") is not None,
                kind=marker_arg(item, "kind"), no_twin=marker_arg(item, "no_twin"),
                part=marker_arg(item, "part")))

    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append(f"{report.nodeid}: {report.longreprtext[-2000:]}")


def marker_arg(item, name):
    """The first argument of the closest ``name`` marker of the pytest ``item`` (None without one)."""
    marker = item.get_closest_marker(name)
    return marker.args[0] if marker is not None and marker.args else None


def visibility_of(item) -> str:
    """``public`` or ``hidden`` (or what else a marker says): the ``visibility`` marker, else the
    suite folder's name."""
    return marker_arg(item, "visibility") or Path(str(item.path)).parent.name


def collect(files: list[Path] | None = None, plugins: tuple = ()) -> list[SuiteTest]:
    """Collect the tests of ``files`` (default: every ``test_*.py`` of the public and hidden suites);
    ``plugins`` join the collection (e.g. one that adds the twins, :mod:`autograder.run.twins`).

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
        pytest.main(args, plugins=[*plugins, collector])
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
