"""Running the suites under pytest: the arguments, and one session that grades many submissions.

:func:`pytest_args` is the command line of every grading run (the kit's own ini file, its
plugin, conftest files, the cache provider and third-party autoloading off).
:func:`autograder.run.grading.grade_folder` runs it with :func:`pytest.main` once per submission.

A batch worker grades dozens of submissions with the same options, and configuring pytest and
collecting the suites' ~100 tests cost ~50-70 ms each time, per submission. With :func:`keep_warm`,
the worker keeps one :class:`SuiteRunner` instead: ``pytest.main`` runs once, in a thread of its
own, and its ``pytest_runtestloop`` (the hook pytest-xdist's workers implement the same way)
takes one submission at a time from :meth:`SuiteRunner.grade`, runs every collected test on it
with a fresh :class:`autograder.run.plugin.GradingSession` (its own children, seed and records:
nothing of one submission reaches the next) and hands back its results. The tests run exactly
as in a session of their own: pytest sets each one up and tears it down again (``nextitem`` is
None after the last test, so nothing outlives a submission), and the run's seed gives each test
the same inputs. A runner is kept for one set of collection options at a time
(:func:`collection_key`); an error in the grader's own code ends it (the next submission starts
a fresh one).
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import warnings
from pathlib import Path

from pytest import hookimpl as pytest_hookimpl

from autograder import paths
from autograder.options import GradingOptions

OUTPUT_ARGS = ["-q", "--tb=no"]  # a run of its own: pytest's terminal output, kept for error messages


def pytest_args(options: GradingOptions, files: list[Path]) -> list[str]:
    """The pytest command line that runs ``files`` with the kit's plugin module, without output
    options. Of ``options`` only what collection depends on is read (``training``); the rest
    reaches the plugin with the :class:`autograder.run.plugin.GradingSession` built from them."""
    suites = paths.suites_dir()
    inside = all(suites in f.resolve().parents for f in files)
    rootdir = str(suites) if inside else os.path.commonpath([str(f.resolve().parent) for f in files])
    args = [str(f) for f in files] + [
        "-c", str(suites / "pytest.ini"), "--rootdir", rootdir,
        "-p", "autograder.run.plugin", "--noconftest", "-p", "no:cacheprovider", "-p", "no:stepwise", "-p", "no:logging",
        "-p", "no:unraisableexception",  # its gc.collect() costs ~0.3 s; no student code runs here
        "-p", "no:threadexception",  # a hook around each phase of each test, for threads no test starts here
        "-W", "ignore",
    ]
    if not options.training:
        args += ["-m", "not training"]
    return args


@contextlib.contextmanager
def clean_pytest_env():
    """While pytest reads its configuration: no ``PYTEST_ADDOPTS``/``PYTEST_PLUGINS`` of the
    caller's, and no third-party plugin autoloading."""
    saved = {k: os.environ.get(k) for k in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")}
    os.environ.pop("PYTEST_ADDOPTS", None)
    os.environ.pop("PYTEST_PLUGINS", None)
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def collection_key(options: GradingOptions, files: list[Path]) -> tuple:
    """What a runner's collection depends on: the suite files and whether training tests run.
    Everything else (seed, language, limits, where results go) belongs to each submission."""
    return (tuple(str(f) for f in files), bool(options.training))


class SuiteRunner:
    """One pytest session, configured and collected once, that grades submissions one at a time
    (see the module docstring). :meth:`grade` blocks until the submission is graded.

    Raises:
        RuntimeError: the suites could not be collected (the collection errors are in the
            message), or the session ended (see :attr:`alive`).
    """

    def __init__(self, options: GradingOptions, files: list[Path]):
        self.key = collection_key(options, files)
        self._jobs: queue.Queue = queue.Queue()
        self._results: queue.Queue = queue.Queue()
        self._ready = threading.Event()
        self.collect_errors: list[str] = []
        self.exit_code = None
        self.error: BaseException | None = None
        # no terminal output, no per-test capture of this process's output and no per-test warning
        # filters (the loop ignores warnings itself): no code of a submission runs in this process,
        # and these cost ~10 % of its time per test
        args = pytest_args(options, files) + ["-p", "no:terminal", "--capture=no", "-p", "no:warnings"]
        self._thread = threading.Thread(target=self._main, args=(args,), name="tkit-suites", daemon=True)
        with clean_pytest_env():  # read while configuring: restored once collection is done
            self._thread.start()
            self._ready.wait()
        if not self.alive:
            detail = "\n".join(self.collect_errors)[-3000:] or repr(self.error or self.exit_code)
            raise RuntimeError(f"the test suites could not be collected:\n{detail}")

    @property
    def alive(self) -> bool:
        """Whether the session still takes submissions."""
        return self._thread.is_alive() and self.error is None

    def _main(self, args: list[str]) -> None:
        try:
            import pytest

            self.exit_code = pytest.main(args, plugins=[_Loop(self)])
        except BaseException as exc:  # noqa: BLE001 - reported to the caller of grade()
            self.error = exc
        finally:
            self._ready.set()

    def grade(self, folder: Path, options: GradingOptions):
        """Grade the prepared submission ``folder`` as ``options`` ask (its seed, language, limits);
        returns its :class:`autograder.results.model.Results`. Raises what the grader raised (the runner
        is then closed)."""
        if not self.alive:
            raise RuntimeError("the grading session has ended")
        self._jobs.put((Path(folder), options))
        while True:
            try:
                ok, value = self._results.get(timeout=1.0)
            except queue.Empty:
                if not self._thread.is_alive():
                    raise RuntimeError(f"the grading session ended unexpectedly ({self.error!r})") from None
                continue
            if ok:
                return value
            raise value

    def close(self) -> None:
        """End the session (pytest finishes it; the thread exits)."""
        if self._thread.is_alive():
            self._jobs.put(None)
            self._thread.join(timeout=30)


class _Loop:
    """The runner's pytest plugin: public tests first (once), then submissions one at a time."""

    def __init__(self, runner: SuiteRunner):
        self.runner = runner
        self.collected: list = []  # the tests in collection order (the results list them so)

    def pytest_configure(self, config):
        # what --tb=no gives a run of its own (pytest's terminal plugin, which defines that option,
        # is off here): a failing test's report without the source of every frame of its traceback
        config.option.tbstyle = "no"

    def pytest_collectreport(self, report):
        if report.failed:
            self.runner.collect_errors.append(f"{report.nodeid}: {report.longreprtext[-2000:]}")

    @pytest_hookimpl(trylast=True)  # after -m deselection, as the plugin's own hook
    def pytest_collection_modifyitems(self, session, config, items):
        from autograder.run import plugin, twins

        twins.add(items)
        self.collected = list(items)
        plugin.public_first(items, {item.nodeid: plugin.item_meta(item) for item in items})

    def pytest_runtestloop(self, session):
        runner = self.runner
        if session.testsfailed or runner.collect_errors:  # a suite did not import: grade nothing
            runner.error = RuntimeError("collection failed")
            runner._ready.set()
            return True
        runner._ready.set()
        with warnings.catch_warnings():  # what -W ignore does in a run of its own
            warnings.simplefilter("ignore")
            while True:
                job = runner._jobs.get()
                if job is None:
                    return True
                try:
                    runner._results.put((True, _grade(session, self.collected, *job)))
                except BaseException as exc:  # noqa: BLE001 - the grader's own failure: this runner ends
                    runner.error = exc
                    runner._results.put((False, exc))
                    return True


def _grade(session, collected: list, folder: Path, options: GradingOptions):
    """Every collected test of ``session`` (run public first; ``collected``: in collection order)
    on ``folder`` with a fresh grading session; its results."""
    from autograder.run import plugin

    config = session.config
    grading = plugin.GradingSession(folder, options)
    config.pluginmanager.register(grading, plugin.SESSION_NAME)  # its pytest_configure stashes it
    try:
        grading.open()
        items = session.items
        grading.describe(collected)
        grading.prepare(items)
        for i, item in enumerate(items):
            config.hook.pytest_runtest_protocol(item=item, nextitem=items[i + 1] if i + 1 < len(items) else None)
        grading.finish()
        return grading.results
    except BaseException:
        grading.abort()
        raise
    finally:
        config.pluginmanager.unregister(grading)
        del config.stash[plugin.SESSION_KEY]


_WARM = {"enabled": False, "runner": None}
_WARM_LOCK = threading.Lock()


def keep_warm(enabled: bool = True) -> None:
    """In this process (a batch worker), grade through one :class:`SuiteRunner` kept between
    submissions instead of a pytest session each (see the module docstring)."""
    _WARM["enabled"] = enabled
    if not enabled:
        close_warm()


def warm_enabled() -> bool:
    """Whether :func:`keep_warm` is on in this process."""
    return _WARM["enabled"]


def grade_warm(folder: Path, options: GradingOptions, files: list[Path]):
    """Grade ``folder`` through this process's kept runner (started, or replaced when the
    collection options changed or it ended); returns its results."""
    with _WARM_LOCK:
        runner = _WARM["runner"]
        if runner is None or not runner.alive or runner.key != collection_key(options, files):
            if runner is not None:
                runner.close()
            runner = _WARM["runner"] = None
            runner = _WARM["runner"] = SuiteRunner(options, files)
        try:
            return runner.grade(folder, options)
        finally:
            if not runner.alive:
                runner.close()
                _WARM["runner"] = None


def close_warm() -> None:
    """Close this process's kept runner, if any."""
    with _WARM_LOCK:
        runner, _WARM["runner"] = _WARM["runner"], None
    if runner is not None:
        runner.close()
