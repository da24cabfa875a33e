"""What a collected suite item says of itself: its name in reports (:func:`describe_test`, with
its :func:`parameters`), its grading metadata (:func:`item_meta`, from its markers and folder) and
the run's order (:func:`public_first`). Re-exported by :mod:`autograder.run.plugin`."""

from __future__ import annotations

import pytest

from autograder import exercises
from autograder.i18n import authored
from autograder.results.model import VISIBILITY
from autograder.run import rubric, twins


def describe_test(func, fallback: str) -> str:
    """A test's name in reports, in the current language (the run's, entered at session start):
    the first line of its docstring, or, in Korean, the line starting with ``ko:`` when there is
    one (English first line otherwise); ``fallback`` without a docstring."""
    lines = [line.strip() for line in (getattr(func, "__doc__", None) or "").strip().splitlines()]
    if not lines or not lines[0]:
        return fallback
    korean = [line[3:].strip() for line in lines[1:] if line.lower().startswith("ko:") and line[3:].strip()]
    return authored(lines[0], korean[0] if korean else lines[0])


def parameters(item) -> str:
    """The parameters of a parametrized test, `` (norm_first=True)``, for its name in reports: every
    test's name is unique in the kit (the parameters' values are code, the same in every language);
    '' for a test without."""
    params = getattr(getattr(item, "callspec", None), "params", None)
    if not params:
        return ""
    return " (" + ", ".join(f"{name}={value!r}" for name, value in params.items()) + ")"


def item_meta(item) -> dict:
    """A graded test's ``exercise``, ``points``, ``visibility``, ``kind``, ``twin_of`` (the public
    test a twin copies, else None) and ``description`` (its name in the current language), from its
    markers and suite folder.

    A test without a ``kind()`` marker is a ``values`` test (the kit's own suites declare every
    test's kind: ``tests/test_suites_markers.py``).

    Raises:
        pytest.UsageError: the test lacks an ``exercise()`` or ``points()`` marker, its kind is not
            one of :data:`autograder.run.rubric.KINDS`, or its visibility is neither public nor hidden.
    """
    exercise = rubric.marker_arg(item, "exercise")
    points = rubric.marker_arg(item, "points")
    kind = rubric.marker_arg(item, "kind") or rubric.VALUES
    if exercise not in exercises.BY_NAME or not isinstance(points, (int, float)) or kind not in rubric.KINDS:
        raise pytest.UsageError(f"{item.nodeid}: every graded test needs exercise() and points() markers "
                                f"(and a kind() among {sorted(rubric.KINDS)})")
    visibility = rubric.visibility_of(item)
    if visibility not in VISIBILITY:
        raise pytest.UsageError(f"{item.nodeid}: visibility must be public or hidden")
    return {"exercise": exercise, "points": float(points), "visibility": visibility, "kind": kind,
            "part": rubric.marker_arg(item, "part"), "twin_of": twins.twin_of(item),
            "description": describe_test(item.obj, item.name) + parameters(item)}


def public_first(items: list, meta: dict) -> None:
    """Sort ``items`` in place: the public tests first, each group in its collected order."""
    items.sort(key=lambda item: meta[item.nodeid]["visibility"] != "public")
