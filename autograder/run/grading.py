"""Grading one submission: prepare its folder, run the suites under pytest, return results.

:func:`grade_submission` is what ``tkit grade`` and ``tkit check`` call for each
submission. It runs :func:`pytest.main` in this process with the kit's plugin and
its own ini file, with conftest files, the cache provider, third-party plugin
autoloading and ``PYTEST_ADDOPTS`` switched off, so nothing in the submission or the
environment changes how the trusted parent runs. Student code runs only in the
child the plugin starts.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from autograder import exercises, paths
from autograder.i18n import using
from autograder.intake.submission import SubmissionFormatError, prepared  # noqa: F401  (raised through)
from autograder.options import GradingOptions
from autograder.results.model import Results
from autograder.run import pytest_session


def suite_files(visibility=("public", "hidden"), names=None) -> list[Path]:
    """The suite files to run, in exercise order: ``suites/<vis>/test_<exercise>.py`` and
    ``suites/<vis>/test_<exercise>__<topic>.py`` (e.g. ``test_transformer__training.py``)."""
    selected = list(names) if names else list(exercises.NAMES)
    for name in selected:
        exercises.get(name)  # ValueError on an unknown name
    files = []
    for name in exercises.NAMES:
        if name not in selected:
            continue
        for vis in ("public", "hidden"):
            if vis not in visibility:
                continue
            folder = paths.suites_dir() / vis
            files += [p for p in (folder / f"test_{name}.py",) if p.is_file()]
            files += sorted(folder.glob(f"test_{name}__*.py"))
    return files


def grade_folder(submission: Path, options: GradingOptions | None = None, **changes) -> Results:
    """Run the suites on a prepared submission folder as ``options`` ask (a
    :class:`autograder.options.GradingOptions`; ``changes`` are fields set on it, e.g.
    ``grade_folder(folder, names=["masks"], seed=3)``); returns its
    :class:`~autograder.results.model.Results`.

    ``time_limit`` (seconds, default 1300) bounds the time spent in tests: each exercise gets
    its share by points (:mod:`autograder.sandbox.timeshare`). ``memory_limit`` (bytes) caps the child's
    memory (:class:`autograder.sandbox.Limits`). Grader errors are detailed in ``error_log``
    (instructor-only; default: stderr), never in the results.

    ``training=False`` leaves out the tests marked ``training`` (they train a model).
    ``options.pictures``: also collect the report pictures' data, from the same child at the end of the
    run (:func:`autograder.reports.pictures.collect_from_session`; no points).
    ``files`` replaces the kit's suites by these test files (the kit's own tests use a small
    suite of their own); ``visibility`` and ``names`` then select nothing.

    Raises:
        autograder.options.OptionsError: an invalid option (a ValueError).
        ValueError: no test suites selected.
    """
    options = GradingOptions.of(options, **changes)
    files = list(options.files) if options.files is not None else suite_files(options.visibility, options.names)
    if not files:
        raise ValueError("no test suites selected")
    if pytest_session.warm_enabled() and not options.verbose:  # a batch worker: one session for all
        return pytest_session.grade_warm(Path(submission), options, files)
    from autograder.run import plugin  # imports torch: only when a submission is graded here

    args = pytest_session.pytest_args(options, files) + pytest_session.OUTPUT_ARGS
    session = plugin.GradingSession(Path(submission), options)
    watcher = _Interrupts()
    sink = io.StringIO()
    with pytest_session.clean_pytest_env():
        if options.verbose:
            code = pytest.main(args, plugins=[session, watcher])
        else:
            with contextlib.redirect_stdout(sink):
                code = pytest.main(args, plugins=[session, watcher])
    if watcher.interrupted:  # Ctrl-C: partial results must not be recorded as a grade
        raise KeyboardInterrupt
    if code == pytest.ExitCode.INTERRUPTED:  # pytest also says so when a suite file fails to import
        raise RuntimeError(f"the test suites could not be collected:\n{sink.getvalue()[-3000:]}")
    if session.results is None:
        raise RuntimeError(f"the test suites did not run (pytest exit code {code}):\n{sink.getvalue()[-3000:]}")
    return session.results


class _Interrupts:
    """Notes a Ctrl-C during the run (pytest reports it as an exit code shared with other causes)."""

    interrupted: bool = False

    def pytest_keyboard_interrupt(self, excinfo):
        self.interrupted = True


def grade_submission(path: Path, options: GradingOptions | None = None, **changes) -> Results:
    """Grade the submission at ``path`` (folder, .zip or .ipynb); returns its
    :class:`~autograder.results.model.Results` (pictures' data included when ``options.pictures``).
    Nothing is written: the caller writes results.json, once (``tkit grade``:
    :meth:`autograder.records.class_run.ClassRecords.on_result`). ``options`` (and ``changes`` to
    it) go to :func:`grade_folder`; the messages of preparing the submission are in
    ``options.lang`` too.

    ``results.warnings`` lists what preparing the submission removed or ignored (IPython magics
    in notebooks, a notebook shadowed by its ``.py``); they are also appended to
    ``results.output``. Raises :class:`SubmissionFormatError` for a submission the kit cannot
    read, OptionsError (a ValueError) for invalid options."""
    options = GradingOptions.of(options, **changes)
    notes: list[str] = []
    with using(options.lang), prepared(Path(path), notes) as folder:
        results = grade_folder(folder, options)
    results.submission = str(path)
    results.warnings = notes
    if notes:
        results.output = "\n".join([results.output or "", *(f"warning: {n}" for n in notes)])
    return results
