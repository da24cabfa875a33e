"""The pytest plugin that grades one submission (``-p autograder.plugin``).

Options: ``--submission DIR`` (required to grade), ``--tkit-seed N`` (hidden tests'
randomness; recorded in the results), ``--tkit-results FILE`` (results.json),
``--tkit-lang en|ko``, ``--tkit-call-timeout S``, ``--tkit-time-limit S`` (the whole submission's
bound, shared out among the exercises by points: see :mod:`autograder.timeshare`),
``--tkit-memory-limit BYTES`` (the child's memory cap), ``--tkit-error-log FILE`` (the
instructor-only log of grader errors; default: this process's stderr).

Public tests run first, in a child of their own; the hidden tests then run in a fresh child,
so nothing a student sees (a public test's outcome, what their code printed) can depend on
the hidden tests.

Markers:
    ``exercise(name)``  the exercise a test belongs to (usually a module-level ``pytestmark``);
    ``points(n)``       the points a test is worth;
    ``visibility(v)``   ``public`` or ``hidden``; by default the suite folder's name;
    ``training``        the test trains a model (slow; ``run_suites(training=False)`` skips it).

Fixtures: ``student`` (the submission, a :class:`RemoteImpl` running in a child),
``reference`` (the reference solutions, loaded here), ``seed`` (this test's seed,
derived from the run's seed and the test's id), ``rng`` (a ``torch.Generator`` seeded
with it), ``partial`` (award a fraction of the points from a passing test), ``attach``
(plot data for the reports, stored under the record's ``extra_data["figures"]``).

A test's name is the first line of its docstring; with ``--tkit-lang ko`` a later line
``ko: ...`` gives the Korean name.

The results follow Gradescope's results.json schema (``score``, ``execution_time``,
``output``, ``tests[]`` with ``name``, ``score``, ``max_score``, ``status``, ``output``,
``visibility``, ``tags`` whose first entry is the exercise), with the kit's extras in
``extra_data``.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from pathlib import Path

import pytest
import torch

from autograder import __version__, exercises, grader_errors, not_graded, testing, timeshare
from autograder.credit import Attachments, PartialCredit  # noqa: F401  (re-exported)
from autograder.i18n import _, set_language
from autograder.remote import RemoteImpl, SubmissionError
from autograder.sandbox import Limits
from autograder.textfiles import clean_text, write_json_atomic

SESSION_KEY = pytest.StashKey["GradingSession"]()
VISIBILITY = {"public": "visible", "hidden": "after_published"}
MAX_TEST_OUTPUT = 6000
PARENT_THREADS = 1  # torch intra-op threads of the grading process while it grades (see pytest_sessionstart)


def pytest_addoption(parser):
    group = parser.getgroup("tkit", "transformer-kit grading")
    group.addoption("--submission", dest="tkit_submission", default=None,
                    help="folder of the submission to grade")
    group.addoption("--tkit-seed", dest="tkit_seed", type=int, default=None,
                    help="seed of the hidden tests' random inputs (default: a fresh one)")
    group.addoption("--tkit-results", dest="tkit_results", default=None, help="write results.json here")
    group.addoption("--tkit-lang", dest="tkit_lang", default=None, help="en or ko")
    group.addoption("--tkit-call-timeout", dest="tkit_call_timeout", type=float, default=None,
                    help="seconds one call into the submission may take")
    group.addoption("--tkit-time-limit", dest="tkit_time_limit", type=float, default=timeshare.DEFAULT_TIME_LIMIT,
                    help="seconds the whole submission may take (each exercise gets its share by points)")
    group.addoption("--tkit-memory-limit", dest="tkit_memory_limit", type=int, default=None,
                    help="bytes of memory the submission's process may allocate")
    group.addoption("--tkit-error-log", dest="tkit_error_log", default=None,
                    help="append the details of grader errors to this instructor-only file")


def pytest_configure(config):
    config.addinivalue_line("markers", "exercise(name): the exercise this test grades")
    config.addinivalue_line("markers", "points(n): points this test is worth")
    config.addinivalue_line("markers", "visibility(v): public or hidden (default: the suite folder)")
    config.addinivalue_line("markers", "training: the test trains a model (left out by training=False)")
    submission = config.getoption("tkit_submission", None)
    if submission:
        limits = Limits()
        if config.getoption("tkit_call_timeout"):
            limits.call_timeout = config.getoption("tkit_call_timeout")
        if config.getoption("tkit_memory_limit"):
            limits.memory_bytes = config.getoption("tkit_memory_limit")
        session = GradingSession(
            Path(submission), seed=config.getoption("tkit_seed"), limits=limits,
            results_path=config.getoption("tkit_results"), lang=config.getoption("tkit_lang"),
            time_limit=config.getoption("tkit_time_limit"), error_log=config.getoption("tkit_error_log"))
        config.stash[SESSION_KEY] = session
        config.pluginmanager.register(session, "tkit-grading-session")


def _session(request) -> "GradingSession":
    try:
        return request.config.stash[SESSION_KEY]
    except KeyError:
        pytest.fail("these tests grade a submission: run them with --submission DIR", pytrace=False)


@pytest.fixture
def student(request):
    """The submission under test (runs in a child process)."""
    return _session(request).remote


@pytest.fixture
def reference():
    """The reference solutions (trusted, loaded in this process)."""
    from autograder import variants

    return variants.reference()


@pytest.fixture
def seed(request) -> int:
    """This test's seed: the run's seed mixed with the test's id."""
    return _session(request).test_seed(request.node.nodeid)


@pytest.fixture
def rng(seed):
    """A torch.Generator seeded with this test's seed."""
    import torch

    return torch.Generator().manual_seed(seed)


@pytest.fixture
def partial(request) -> PartialCredit:
    """Partial credit for this test (see :class:`PartialCredit`)."""
    credit = PartialCredit()
    _session(request).partials[request.node.nodeid] = credit
    return credit


@pytest.fixture
def attach(request) -> Attachments:
    """Attach plot data to this test's record (see :class:`Attachments`)."""
    attachments = Attachments()
    _session(request).attachments[request.node.nodeid] = attachments
    return attachments


def describe_test(func, fallback: str, lang: str | None) -> str:
    """A test's name in reports: the first line of its docstring, or, in Korean, the line
    starting with ``ko:`` when there is one (English first line otherwise)."""
    lines = [line.strip() for line in (getattr(func, "__doc__", None) or "").strip().splitlines()]
    if not lines or not lines[0]:
        return fallback
    from autograder.i18n import language

    if (lang or language()) == "ko":
        for line in lines[1:]:
            if line.lower().startswith("ko:") and line[3:].strip():
                return line[3:].strip()
    return lines[0]


def _marker_arg(item, name):
    marker = item.get_closest_marker(name)
    return marker.args[0] if marker is not None and marker.args else None


class GradingSession:
    """Collects one submission's results while pytest runs the suites.

    ``time_limit`` (seconds) bounds the time the submission's child may take: each exercise
    may take its share (:mod:`autograder.timeshare`) in its own tests, so an exercise that
    exhausts its share never costs another one time. ``error_log`` is the instructor-only
    file for grader errors."""

    def __init__(self, submission: Path, *, seed: int | None = None, limits: Limits | None = None,
                 results_path: str | None = None, lang: str | None = None,
                 time_limit: float = timeshare.DEFAULT_TIME_LIMIT,
                 error_log: str | None = None):
        self.submission = submission
        self.seed = seed if seed is not None else secrets.randbelow(2**31)
        self.remote = RemoteImpl(submission, limits)
        self.results_path = results_path
        self.lang = lang
        self.time_limit = time_limit
        self.meta: dict[str, dict] = {}
        self.records: dict[str, dict] = {}
        self.partials: dict[str, PartialCredit] = {}
        self.attachments: dict[str, Attachments] = {}
        self.results: dict | None = None
        self.error_log = error_log
        self._phase = "public"
        self._t0 = time.monotonic()

    def test_seed(self, nodeid: str) -> int:
        digest = hashlib.sha256(f"{self.seed}:{nodeid}".encode()).digest()
        return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF

    # -- hooks -------------------------------------------------------------------
    def pytest_sessionstart(self, session):
        self._previous_lang = set_language(self.lang)
        # The parent's torch work (references, expected values, mutants) is on tiny tensors: one
        # intra-op thread, as in the child. With several, each op waits at a barrier for a thread
        # the other workers' processes keep off the cores (measured: 2.5-4x slower per student
        # with 2 workers on 2 cores; see benchmarks/bench_batch.py --profile).
        self._previous_threads = torch.get_num_threads()
        torch.set_num_threads(PARENT_THREADS)
        testing.CURRENT.start_run()
        testing.CURRENT.run_seed = self.seed
        self._t0 = time.monotonic()
        self.remote.start()

    @pytest.hookimpl(trylast=True)  # after -m/-k deselection: deselected tests are not part of the grade
    def pytest_collection_modifyitems(self, session, config, items):
        for item in items:
            exercise = _marker_arg(item, "exercise")
            points = _marker_arg(item, "points")
            if exercise not in exercises.BY_NAME or not isinstance(points, (int, float)):
                raise pytest.UsageError(f"{item.nodeid}: every graded test needs exercise() and points() markers")
            visibility = _marker_arg(item, "visibility") or Path(str(item.path)).parent.name
            if visibility not in VISIBILITY:
                raise pytest.UsageError(f"{item.nodeid}: visibility must be public or hidden")
            self.meta[item.nodeid] = {"exercise": exercise, "points": float(points),
                                      "visibility": visibility,
                                      "description": describe_test(item.obj, item.name, self.lang)}
        items.sort(key=lambda item: self.meta[item.nodeid]["visibility"] != "public")  # stable: public first
        self.remote.set_budgets(timeshare.shares((m["exercise"] for m in self.meta.values()), self.time_limit),
                                self.time_limit)
        if {"public", "hidden"} <= {m["visibility"] for m in self.meta.values()}:
            self.remote.prepare_spare()  # the hidden tests' child starts while the public tests run

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        meta = self.meta.get(item.nodeid, {})
        testing.CURRENT.exercise = meta.get("exercise")
        testing.CURRENT.visibility = meta.get("visibility")
        testing.CURRENT.nodeid = item.nodeid
        testing.CURRENT.seed = self.test_seed(item.nodeid)
        testing.CURRENT.graded.add(meta.get("exercise"))
        testing.CURRENT.student = self.remote
        self.remote.reset(seed=testing.CURRENT.seed)  # the previous test's handles go too
        if meta.get("visibility") == "hidden" and self._phase == "public":
            self._phase = "hidden"   # a fresh child: nothing of the public tests' state carries over
            self.remote.close(keep_spare=True)
            self.remote.start()
        self.remote.begin_test(meta.get("exercise"))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if item.nodeid not in self.meta:
            return
        if report.when == "call" or (report.failed and item.nodeid not in self.records) or \
                (report.when == "setup" and report.skipped):
            self.records[item.nodeid] = self._record(item, call, report)

    def pytest_runtest_teardown(self, item):
        testing.CURRENT.exercise = None
        testing.CURRENT.visibility = None

    def pytest_sessionfinish(self, session, exitstatus):
        testing.CURRENT.end_run()
        self.remote.close()
        self.results = self.build_results()
        if self.results_path:
            write_json_atomic(Path(self.results_path), self.results)
        set_language(getattr(self, "_previous_lang", None))
        torch.set_num_threads(getattr(self, "_previous_threads", torch.get_num_threads()))

    # -- results -----------------------------------------------------------------
    def _record(self, item, call, report) -> dict:
        meta = self.meta[item.nodeid]
        points = meta["points"]
        extra: dict = {"nodeid": item.nodeid, "duration": round(report.duration, 4)}
        if report.passed:
            credit = self.partials.get(item.nodeid)
            fraction = credit.fraction if credit else 1.0
            score = round(points * fraction, 4)
            status = "passed" if fraction >= 1.0 else "failed"
            output = credit.note if credit else ""
        elif report.skipped:
            score, status = 0.0, "failed"
            output = _("this test was skipped: {reason}").format(reason=report.longrepr[-1]
                                                                 if isinstance(report.longrepr, tuple) else "")
        else:
            score, status = 0.0, "failed"
            output = self._explain(call.excinfo, extra)
        attachments = self.attachments.get(item.nodeid)
        if attachments is not None and attachments.figures:
            extra["figures"] = attachments.figures
        output = clean_text(output)
        if len(output) > MAX_TEST_OUTPUT:
            output = output[:MAX_TEST_OUTPUT] + "\n...[truncated]"
        return {
            "name": f"{meta['exercise']}: {meta['description']}",
            "score": score,
            "max_score": points,
            "status": status,
            "output": output,
            "visibility": VISIBILITY[meta["visibility"]],
            "tags": [meta["exercise"], meta["visibility"]],
            "extra_data": extra,
        }

    def _explain(self, excinfo, extra: dict) -> str:
        if excinfo is None:
            return _("failed")
        exc = excinfo.value
        if isinstance(exc, testing.Mismatch):
            if exc.mistake is not None:
                extra["mistake"] = exc.mistake.id
                testing.CURRENT.named.setdefault(exc.mistake.exercise, set()).add(exc.mistake.id)
                extra["convention"] = exc.mistake.convention
            text = str(exc)
            blamed, culprits = testing.CURRENT.blamed.get(testing.CURRENT.nodeid, (None, ()))
            if blamed:   # the composite's own code was right on the reference components
                extra["components_at_fault"] = list(culprits) or True
                text += "\n" + _("Your {file} gives the expected result with the reference's components: the "
                                  "difference comes from {modules}.").format(
                    file=f"{blamed}.py", modules=", ".join(f"{c}.py" for c in culprits) or _("the modules it imports"))
            return self._with_printed(text, self.remote.test_output)
        if isinstance(exc, SubmissionError):
            extra["failure"] = exc.kind
            return self._with_printed(exc.message, exc.output or self.remote.test_output)
        if isinstance(exc, AssertionError):
            return self._with_printed(str(exc) or _("failed"), self.remote.test_output)
        reason = not_graded.reason_for(exc)
        if reason:   # a grader-side problem (missing data): not the student's failure
            extra[not_graded.KEY] = reason
            return not_graded.message()
        extra[not_graded.KEY] = grader_errors.NOT_GRADED_REASON  # details go to the instructor's log only
        return grader_errors.record(exc, nodeid=extra["nodeid"], submission=str(self.submission),
                                    log_path=self.error_log)

    @staticmethod
    def _with_printed(text: str, printed: str) -> str:
        """A failing test's message, followed by what the submission printed during the test."""
        if printed.strip():
            text += "\n" + _("Your code printed:") + "\n" + printed.rstrip()
        return text

    def build_results(self) -> dict:
        tests = [self.records.get(nodeid) or self._not_run(nodeid) for nodeid in self.meta]
        failing = {}
        for t in tests:
            if t["status"] == "failed" and not not_graded.reason(t):
                failing[t["tags"][0]] = failing.get(t["tags"][0], 0) + 1
        for t in tests:
            if t["status"] != "failed" or not_graded.reason(t):
                continue
            deps = [d for d in exercises.get(t["tags"][0]).depends if failing.get(d)]
            if deps:
                t["extra_data"]["failing_components"] = deps
                t["output"] += "\n" + _("Note: this exercise uses your {deps}, which fail their own tests; "
                                        "fix those first.").format(deps=", ".join(f"{d}.py" for d in deps))
        per_exercise: dict[str, dict] = {}
        for t in tests:
            entry = per_exercise.setdefault(t["tags"][0], {"score": 0.0, "max_score": 0.0})
            entry["score"] = round(entry["score"] + t["score"], 4)
            entry["max_score"] = round(entry["max_score"] + t["max_score"], 4)
        score = round(sum(t["score"] for t in tests), 4)
        max_score = round(sum(t["max_score"] for t in tests), 4)
        results = {
            "score": score,
            "execution_time": round(time.monotonic() - self._t0, 3),
            "output": _("{score} of {max} points").format(score=f"{score:g}", max=f"{max_score:g}"),
            "visibility": "visible",
            "stdout_visibility": "hidden",
            "tests": tests,
            "extra_data": {
                "kit_version": __version__,
                "seed": self.seed,
                "max_score": max_score,
                "exercises": per_exercise,
                "submission": str(self.submission),
                "child": self.remote.info,
            },
        }
        not_graded.summarize(results)
        return results

    def _not_run(self, nodeid: str) -> dict:
        meta = self.meta[nodeid]
        return {"name": f"{meta['exercise']}: {meta['description']}", "score": 0.0,
                "max_score": meta["points"], "status": "failed", "output": _("not run"),
                "visibility": VISIBILITY[meta["visibility"]], "tags": [meta["exercise"], meta["visibility"]],
                "extra_data": {"nodeid": nodeid}}
