"""Grading many submissions: the loop behind ``tkit grade``.

:func:`grade_many` grades ``(student id, path)`` pairs, in this process (``workers=1``) or in
a pool of worker processes, and reports each finished one to
``on_result(student_id, path, results_or_error)`` in this process, in the order they finish;
it never stops on a bad submission. Each worker is long-lived: it has torch (and the kit's
reference solutions) imported once and a warm zygote (:mod:`autograder.sandbox.zygote_parent`) that
forks a fresh sandboxed child per submission; where it can, the batch imports torch once for
all workers and starts one zygote they share (see :func:`_start_pool`).

A ``rich`` progress bar with an ETA goes to stderr. Ctrl-C stops the batch at once: nothing
more is started, the workers and their children are killed, the unfinished submissions are
left without a results.json (they are written atomically), and :class:`Interrupted` is raised
after every finished result was reported. :func:`shard` picks a deterministic slice of a
class for one job of a scheduler array (Slurm, a Kubernetes indexed Job).
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from autograder.i18n import _
from autograder.intake.untrusted import shown
from autograder.options import GradingOptions

Todo = list[tuple[str, Path]]
ERROR_LOG_NAME = "grader-errors.log"  # the instructor-only details of grader errors, in the output folder


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped the batch; ``done`` submissions were finished and reported, of ``total``."""

    def __init__(self, done: int, total: int):
        super().__init__(f"interrupted after {done} of {total} submission(s)")
        self.done = done
        self.total = total


class GradingError(RuntimeError):
    """The grader itself failed on one submission (not the submission's fault); the batch goes on."""


@dataclass
class BatchStats:
    """What :func:`grade_many` did: counts and wall time in seconds."""

    total: int = 0
    done: int = 0
    errors: int = 0
    workers: int = 1
    seconds: float = 0.0
    per_submission: list[float] = field(default_factory=list)


def default_workers() -> int:
    """The CPUs this process may run on (``os.sched_getaffinity``), else ``os.cpu_count()``."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` -> ``(K, N)`` with ``0 <= K < N`` (0-based, like ``SLURM_ARRAY_TASK_ID`` with
    ``--array=0-(N-1)`` and Kubernetes' ``JOB_COMPLETION_INDEX``). Raises ValueError."""
    parts = text.split("/")
    try:
        k, n = (int(p) for p in parts)
    except ValueError:
        raise ValueError(f"a shard is K/N with whole numbers, e.g. 0/4; got {text!r}") from None
    if n < 1 or not 0 <= k < n:
        raise ValueError(f"a shard K/N needs N >= 1 and 0 <= K < N (0-based); got {text!r}")
    return k, n


def shard(todo: Todo, k: int, n: int) -> Todo:
    """Shard ``k`` of ``n``: every ``n``-th submission, sorted by student id, starting at ``k``.
    The ``n`` shards are disjoint, cover the class and differ in size by at most one."""
    if n < 1 or not 0 <= k < n:
        raise ValueError(f"shard {k}/{n}: need n >= 1 and 0 <= k < n")
    return sorted(todo, key=lambda item: item[0])[k::n]


def grade_one(path: Path, options: GradingOptions):
    """Grade one submission as ``options`` ask; returns its
    :class:`autograder.results.model.Results` (it crosses the worker boundary as it is, pickled),
    the :class:`submission.SubmissionFormatError`, or a :class:`GradingError` for a grader failure.
    Nothing is written here: results.json is written once, in the main process, by ``on_result``."""
    from autograder.intake import submission
    from autograder.run import grading  # here, not at the top: workers start their zygote first

    try:
        return grading.grade_submission(path, options)
    except submission.SubmissionFormatError as exc:
        return exc
    except Exception as exc:  # a grader bug on one submission must not end the batch
        return GradingError(f"the grader failed on this submission: {type(exc).__name__}: {exc}")


def _report(on_result: Callable, sid: str, path: Path, result) -> None:
    """Call ``on_result``; a failure there (a report, a picture, the gradebook) is printed and
    the batch goes on, so one submission can never stop the others' grading."""
    try:
        on_result(sid, path, result)
    except Exception as exc:  # noqa: BLE001 - whatever a report step raises
        import sys
        import traceback

        print(f"{shown(sid)}: recording the result failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        traceback.print_exc(file=sys.stderr)


def _init_worker(tmp_root: str, shared=None, counter=None) -> None:
    """A worker's start: ignore Ctrl-C, exit with the batch, a private temporary folder, and its
    zygote: a socket of the batch's ``shared`` zygote (the ``counter``-th worker takes socket
    ``counter``), else one of its own started now (a spawned worker, or one that replaced a dead
    worker)."""
    from autograder.run import pytest_session
    from autograder.sandbox import zygote_parent  # here: a worker's first act is starting its zygote

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process handles Ctrl-C
    pytest_session.keep_warm()  # one pytest session (configured and collected once) for all its submissions
    _exit_with_parent(os.getppid())
    tempfile.tempdir = tempfile.mkdtemp(prefix=f"w{os.getpid()}-", dir=tmp_root)
    index = None
    if shared is not None:
        with counter.get_lock():
            index, counter.value = counter.value, counter.value + 1
    if index is not None and index < len(shared.socks) and shared.socks[index].fileno() >= 0:
        zygote_parent.adopt(shared, index)
    else:
        zygote_parent.prestart()  # its import of torch overlaps this worker's own


def _start_pool(workers: int, tmp_root: str):
    """The pool of ``workers`` processes and the zygote they share (None when they each start
    their own).

    Where this process has not imported torch yet (``tkit grade``), one zygote is started for
    every worker and, while it imports torch, this process imports torch and the grading code
    once; the workers are then forked, inheriting both: two imports of torch in all instead of
    two per worker, and workers that end with ``os._exit`` rather than a torch teardown.
    Elsewhere (torch already imported, and perhaps its thread pools started, which a fork does
    not carry over) the workers are spawned fresh and start their own zygotes."""
    import sys

    if "torch" in sys.modules:
        ctx = multiprocessing.get_context("spawn")
        return ctx.Pool(workers, initializer=_init_worker, initargs=(tmp_root,)), None
    from autograder.sandbox import zygote_parent

    shared = zygote_parent.start_shared(workers)
    preload()  # while the zygote imports torch too: inherited by every worker
    gc.freeze()  # what is loaded now lives for the batch: no collection scans it again (nor copies its pages)

    ctx = multiprocessing.get_context("fork")
    counter = ctx.Value("i", 0)
    try:
        pool = ctx.Pool(workers, initializer=_init_worker, initargs=(tmp_root, shared, counter))
    except BaseException:
        if shared is not None:
            shared.close()
        raise
    if shared is not None:
        shared.release_clients()
    return pool, shared


def preload() -> None:
    """Import what every grading run imports (pytest, torch, the plugin, the suite-author API and
    the checks the suites use), so that the workers forked after it do not each import them again.
    Nothing of a submission is read and no thread is started."""
    from autograder.checks import expectations  # noqa: F401  (plugin imports torch)
    from autograder.run import grading, plugin  # noqa: F401  (plugin imports torch)
    from autograder.checks import (formulas, inputs, mistaken, oracles, seq2seq,  # noqa: F401
                                     weights)


def _exit_with_parent(parent: int, every: float = 0.5) -> None:
    """Exit this worker soon after the batch's process dies (``kill -9``, an OOM kill), instead of
    grading on for no one; its zygote sees the pipe close and takes the sandboxed children down."""
    import threading

    def watch():
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(1)

    threading.Thread(target=watch, name="tkit-parent-watch", daemon=True).start()


def _work(job: tuple[str, Path, GradingOptions]) -> tuple[str, Path, object, float]:
    sid, path, options = job
    t0 = time.monotonic()
    result = grade_one(path, options)
    return sid, path, result, time.monotonic() - t0


def _in_process(todo: Todo, options: GradingOptions) -> Iterator[tuple[str, Path, object, float]]:
    for sid, path in todo:
        yield _work((sid, path, options))


def _in_pool(pool, todo: Todo, options: GradingOptions) -> Iterator[tuple[str, Path, object, float]]:
    jobs = [(sid, path, options) for sid, path in todo]
    yield from pool.imap_unordered(_work, jobs, chunksize=1)


def grade_many(todo: Todo, out_dir: Path, *, options: GradingOptions | dict | None = None,
               on_result: Callable[[str, Path, object], None], workers: int | None = 1,
               progress: bool = False) -> BatchStats:
    """Grade each submission; ``on_result`` records it (``tkit grade``:
    :class:`autograder.records.class_run.ClassRecords`, which writes
    ``out_dir/submissions/<safe id>/results.json``).

    ``options`` (a :class:`autograder.options.GradingOptions`, or a mapping of its fields) go to
    :func:`autograder.run.grading.grade_submission`, with the error log in ``out_dir`` unless they
    name one (every worker gets the same frozen value). ``on_result`` is called in
    this process as each submission finishes, with its
    :class:`~autograder.results.model.Results`, or the exception when the
    submission could not be graded (:class:`submission.SubmissionFormatError`, :class:`GradingError`).
    ``workers``: parallel worker processes (``None``: :func:`default_workers`; 1: grade in this
    process). ``progress``: show a progress bar with an ETA on stderr. Raises
    :class:`Interrupted` on Ctrl-C, after reporting every finished submission, and
    :class:`autograder.options.OptionsError` (a ValueError) for invalid options, before grading.
    """
    workers = default_workers() if workers is None else int(workers)
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    out_dir = Path(out_dir)
    options = GradingOptions.of(options)
    if options.error_log is None:
        options = options.replace(error_log=out_dir / ERROR_LOG_NAME)
    stats = BatchStats(total=len(todo), workers=min(workers, max(1, len(todo))))
    t0 = time.monotonic()
    tmp_root = tempfile.mkdtemp(prefix="tkit-batch-")
    pool = shared = None
    bar = _Bar(len(todo), progress)
    finished = False
    try:
        if stats.workers > 1:
            pool, shared = _start_pool(stats.workers, tmp_root)
            results = _in_pool(pool, todo, options)
        else:
            results = _in_process(todo, options)
        with bar:
            for sid, path, result, seconds in results:
                stats.done += 1
                stats.errors += isinstance(result, Exception)
                stats.per_submission.append(seconds)
                _report(on_result, sid, path, result)
                bar.advance(sid)
        finished = True
    except KeyboardInterrupt:
        raise Interrupted(stats.done, stats.total) from None
    finally:
        if pool is not None:
            if finished:
                pool.close()  # idle workers exit and stop their zygotes
            else:
                pool.terminate()  # SIGTERM: each worker's zygote sees EOF and takes its children down
            pool.join()
        if shared is not None:
            shared.close()
        shutil.rmtree(tmp_root, ignore_errors=True)
        stats.seconds = time.monotonic() - t0
    return stats


class _Bar:
    """A rich progress bar on stderr (or nothing when ``enabled`` is false)."""

    def __init__(self, total: int, enabled: bool):
        self.progress = None
        if enabled:
            from rich.console import Console
            from rich.markup import escape
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)

            self.progress = Progress(TextColumn(escape(_("grading"))), BarColumn(), MofNCompleteColumn(),
                                     TimeElapsedColumn(), TextColumn(escape(_("ETA"))), TimeRemainingColumn(),
                                     TextColumn("{task.description}"), console=Console(stderr=True))
            self.task = self.progress.add_task("", total=total)

    def __enter__(self):
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(self, *exc):
        if self.progress is not None:
            self.progress.stop()

    def advance(self, sid: str) -> None:
        if self.progress is not None:
            from rich.markup import escape

            self.progress.update(self.task, advance=1, description=escape(shown(sid)))
