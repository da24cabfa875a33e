"""One submission's results: the kit's one model of results.json.

:class:`Results` (with its :class:`TestResult` entries and an :class:`ExerciseScore` per
exercise) is what the reports, the gradebook, grades.csv, the console and the exports read, by
attribute. On disk it is Gradescope's results.json schema, unchanged: :meth:`Results.to_gradescope`
writes it, :meth:`Results.from_json` reads it back (files of earlier kit versions too: unknown
keys are kept and written back as they were). The kit's own fields live in ``extra_data``
(:data:`RESULT_EXTRAS`, :data:`TEST_EXTRAS`).

A hidden test's record holds only what may reach a student (:mod:`autograder.results.withheld`
seals it); what its hidden computation gave (its output, named mistake, duration, ...) is in
its ``withheld`` field, and the submission's total time in the results' ``withheld``: the
instructor's side, written only by ``to_gradescope(instructor=True)`` (the gradebook), under
``extra_data["withheld"]``, never into results.json, the feedback or Gradescope.

Gradescope's schema: ``score``, ``execution_time``, ``output``, ``visibility``,
``stdout_visibility``, ``tests[]`` with ``name``, ``score``, ``max_score``, ``status``
(``passed``/``failed``), ``output``, ``visibility`` (``visible``/``after_published``) and
``tags`` (the kit's: ``[exercise, "public"|"hidden"|"setup"]``)
(https://gradescope-autograders.readthedocs.io/en/latest/specs/).

This module imports neither torch nor pytest: exporting grades.csv or rendering reports
must stay cheap (``tests/test_results_model.py`` checks it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from autograder import __version__, exercises

HIDDEN = "after_published"   # Gradescope's visibility of a hidden test
VISIBILITY = {"public": "visible", "hidden": HIDDEN}   # the suite folder -> Gradescope's visibility

# the kit's typed fields in a test's ``extra_data`` (absent when None)
TEST_EXTRAS = ("nodeid", "duration", "kind", "mistake", "convention", "failure", "not_graded",
               "components_at_fault", "failing_components", "figures", "counterexample", "served")
WITHHELD = "withheld"   # extra_data key of the instructor-only part (to_gradescope(instructor=True) only)
# the kit's typed fields in the submission's ``extra_data`` (absent when None)
RESULT_EXTRAS = ("kit_version", "seed", "max_score", "exercises", "submission", "child", "warnings",
                 "not_graded", "figures", "figure_problems", "error")


def _extras(obj, names: tuple[str, ...]) -> dict:
    out = {name: getattr(obj, name) for name in names if getattr(obj, name) is not None}
    out.update(obj.other)
    return out


def _split(extra: dict | None, names: tuple[str, ...]) -> tuple[dict, dict]:
    """``(typed fields, the other keys)`` of an ``extra_data`` dict."""
    extra = dict(extra or {})
    return {name: extra.pop(name) for name in names if name in extra}, extra


@dataclass
class TestResult:
    """One test's entry (``tests[]``). ``score``/``max_score`` are points (floats); ``status`` is
    ``passed`` or ``failed``; ``tags[0]`` is the exercise. Typed ``extra_data`` fields: ``nodeid``,
    ``duration`` (s), ``mistake`` (a catalog id), ``convention``, ``failure`` (a SubmissionError
    kind), ``not_graded`` (the reason the grader could not judge it), ``components_at_fault``,
    ``failing_components``, ``figures`` (plot data), ``counterexample`` (a hidden failure's mistake
    on a kit-fixed public input, ``{"what", "line"}``), ``served`` (a composite's test run over the
    reference's components: which); ``other`` keeps any other key.

    ``signature`` (a wrong output's fingerprint, :func:`autograder.mistakes.comparison.signature`)
    is instructor-side: :meth:`to_gradescope` never writes it (results.json, feedback and
    Gradescope reach students); the gradebook keeps it in its ``tests`` table. ``withheld``
    (a hidden test's own fields, :mod:`autograder.results.withheld`) is instructor-side too:
    written by ``to_gradescope(instructor=True)`` only."""

    __test__ = False   # not a pytest test class

    name: str
    score: float
    max_score: float
    status: str = "failed"
    output: str | None = None
    visibility: str | None = None
    tags: list[str] | None = None
    nodeid: str | None = None
    duration: float | None = None
    kind: str | None = None
    mistake: str | None = None
    convention: Any = None
    failure: str | None = None
    not_graded: str | None = None
    components_at_fault: Any = None
    failing_components: list[str] | None = None
    figures: dict | None = None
    # a hidden failure's mistake shown on a kit-fixed public input: {"what", "line"}
    # (autograder.run.counterexample_run; computed with no hidden input)
    counterexample: dict | None = None
    # a composite's test run over the reference's components: their exercise names (autograder.sandbox.served)
    served: list[str] | None = None
    other: dict = field(default_factory=dict)
    signature: str | None = field(default=None, repr=False)   # instructor-side: never in to_gradescope
    withheld: dict | None = field(default=None, repr=False)   # instructor-side: a hidden test's own fields

    @property
    def exercise(self) -> str:
        """The exercise the test grades (``tags[0]``; '' without tags)."""
        return self.tags[0] if self.tags else ""

    @property
    def hidden(self) -> bool:
        """Whether students see the test only after the grades are published."""
        return self.visibility == HIDDEN

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def instructor_mistake(self) -> str | None:
        """The mistake the test itself named (a sealed hidden test's withheld one), for the
        instructor's reports, the gradebook and ``tkit validate``."""
        return self.withheld.get("mistake") if self.withheld is not None else self.mistake

    def to_gradescope(self, instructor: bool = False) -> dict:
        """The test's entry in Gradescope's schema; ``instructor``: with ``extra_data["withheld"]``."""
        out: dict = {"name": self.name, "score": self.score, "max_score": self.max_score, "status": self.status}
        for key in ("output", "visibility", "tags"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        extra = _extras(self, TEST_EXTRAS)
        if instructor and self.withheld is not None:
            extra[WITHHELD] = self.withheld
        if extra:
            out["extra_data"] = extra
        return out

    @classmethod
    def from_json(cls, data: dict) -> "TestResult":
        """A test entry of a results.json (missing points read as 0, a missing status as failed)."""
        typed, other = _split(data.get("extra_data"), TEST_EXTRAS + (WITHHELD,))
        return cls(name=str(data.get("name", "")), score=float(data.get("score", 0.0)),
                   max_score=float(data.get("max_score", 0.0)), status=str(data.get("status", "failed")),
                   output=data.get("output"), visibility=data.get("visibility"),
                   tags=list(data["tags"]) if isinstance(data.get("tags"), list) else None,
                   **typed, other=other)


@dataclass
class ExerciseScore:
    """One exercise's points in ``extra_data["exercises"]`` and how many of its tests were not graded."""

    score: float = 0.0
    max_score: float = 0.0
    not_graded: int = 0

    def to_json(self) -> dict:
        out = {"score": self.score, "max_score": self.max_score}
        if self.not_graded:
            out["not_graded"] = self.not_graded
        return out

    @classmethod
    def from_json(cls, data: dict) -> "ExerciseScore":
        return cls(float(data.get("score", 0.0)), float(data.get("max_score", 0.0)), int(data.get("not_graded", 0)))


@dataclass
class Results:
    """A submission's results. ``score`` (points), ``execution_time`` (s), ``output`` (the
    summary line), ``tests``. Typed ``extra_data`` fields: ``kit_version``, ``seed``,
    ``max_score``, ``exercises`` (name -> :class:`ExerciseScore`), ``submission``, ``child``
    (the sandbox's report), ``warnings`` (what preparing the submission changed), ``not_graded``
    (exercises the grader could not judge), ``figures``/``figure_problems`` (the report pictures'
    data, and why one is missing), ``error`` (why the submission could not be graded at all).
    ``withheld`` is instructor-side (``{"execution_time": the whole run's seconds}`` when hidden
    tests ran: ``execution_time`` then counts the public tests only); see :meth:`to_gradescope`."""

    score: float = 0.0
    execution_time: float | None = None
    output: str | None = None
    visibility: str | None = None
    stdout_visibility: str | None = None
    tests: list[TestResult] = field(default_factory=list)
    kit_version: str | None = None
    seed: int | None = None
    max_score: float | None = None
    exercises: dict[str, ExerciseScore] | None = None
    submission: str | None = None
    child: dict | None = None
    warnings: list[str] | None = None
    not_graded: list[str] | None = None
    figures: dict | None = None
    figure_problems: dict | None = None
    error: str | None = None
    other: dict = field(default_factory=dict)
    top: dict = field(default_factory=dict)   # unknown top-level keys, kept as they were
    withheld: dict | None = field(default=None, repr=False)   # instructor-side (see the class docstring)
    # in-process only, never written: the test records before autograder.run.payment (twins
    # included), for tkit validate's memoriser check
    raw_tests: list[TestResult] = field(default_factory=list, repr=False, compare=False)

    def to_gradescope(self, instructor: bool = False) -> dict:
        """The results.json dict (Gradescope's schema, the kit's fields in ``extra_data``): what a
        student may see. ``instructor``: also the withheld parts (``extra_data["withheld"]`` of
        the results and of each sealed hidden test), for the instructor's gradebook only."""
        out: dict = {"score": self.score}
        for key in ("execution_time", "output", "visibility", "stdout_visibility"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        out.update(self.top)
        out["tests"] = [t.to_gradescope(instructor) for t in self.tests]
        extra = _extras(self, RESULT_EXTRAS)
        if self.exercises is not None:
            extra["exercises"] = {name: e.to_json() for name, e in self.exercises.items()}
        if instructor and self.withheld is not None:
            extra[WITHHELD] = self.withheld
        out["extra_data"] = extra
        return out

    @property
    def total_time(self) -> float | None:
        """The whole run's seconds, hidden tests included (instructor-side; ``execution_time``
        when nothing was withheld)."""
        return (self.withheld or {}).get("execution_time", self.execution_time)

    @classmethod
    def from_json(cls, data: dict) -> "Results":
        """Results from a results.json dict. Raises ValueError when ``data`` is not one (no
        ``score`` or ``tests``). Reads the ``error`` of earlier gradebooks (a top-level key) too."""
        if not isinstance(data, dict) or "score" not in data or not isinstance(data.get("tests"), list):
            raise ValueError("not a results.json of the kit: it lacks 'score' or 'tests'")
        typed, other = _split(data.get("extra_data"), RESULT_EXTRAS + (WITHHELD,))
        if isinstance(typed.get("exercises"), dict):
            typed["exercises"] = {n: ExerciseScore.from_json(e) for n, e in typed["exercises"].items()}
        known = {"score", "execution_time", "output", "visibility", "stdout_visibility", "tests", "extra_data", "error"}
        if data.get("error") and not typed.get("error"):
            typed["error"] = str(data["error"])
        return cls(score=float(data["score"]), execution_time=data.get("execution_time"), output=data.get("output"),
                   visibility=data.get("visibility"), stdout_visibility=data.get("stdout_visibility"),
                   tests=[TestResult.from_json(t) for t in data["tests"]], **typed, other=other,
                   top={k: v for k, v in data.items() if k not in known})

    def exercise(self, name: str) -> ExerciseScore | None:
        """The points of exercise ``name`` (None when the results do not hold it)."""
        return (self.exercises or {}).get(name)


def as_results(value) -> Results:
    """``value`` as :class:`Results` (a results.json dict is read with :meth:`Results.from_json`)."""
    return value if isinstance(value, Results) else Results.from_json(value)


def error_results(message: str, submission: str = "", *, names=None, with_tests: bool = False) -> Results:
    """The results of a submission that could not be graded at all (a broken zip, an unreadable
    notebook): zero points out of the selected exercises' (``names``; None: all), the reason in
    ``output`` and ``error``. ``with_tests``: one failed zero-point test per exercise (Gradescope
    then shows each exercise's points)."""
    selected = list(names) if names else list(exercises.NAMES)
    tests = [TestResult(name=f"{n}: the submission could be graded", score=0.0,
                        max_score=float(exercises.get(n).points), status="failed", output=message,
                        visibility="visible", tags=[n, "setup"]) for n in selected] if with_tests else []
    max_score = float(sum(exercises.get(n).points for n in selected))
    return Results(score=0.0, execution_time=0.0, output=message, visibility="visible", stdout_visibility="hidden",
                   tests=tests, kit_version=__version__, max_score=max_score, exercises={},
                   submission=submission, warnings=[], error=message)
