"""Isolation between exercises: a fresh process per exercise against the in-child restore (not a test).

One child serves all of a submission's public tests (and another its hidden tests). Before the
first test of another exercise the child must give up every trace of the earlier exercises' code.
Two ways were compared, side by side in one run, on a correct submission (the reference
solutions; no training; public and hidden tests), interleaved run by run:

``restore``   the ``fresh`` request: the child drops the student's modules and compares its whole
              module state with the snapshot taken before any student code
              (:mod:`autograder.child.state`; a child that reports what it cannot undo is replaced);
``process``   the child is replaced by a fresh one (a fork of the zygote, the clean template) at
              every change of exercise, the next one started ahead while the current exercise runs.

Printed per mode: the median wall seconds of a grading and the CPU seconds of the whole process
tree (this process and the zygote with every child it forked), with the ratio to ``restore``; and
the cost of one switch each way (a ``fresh`` round trip; a child from fork to ``hello``).

    python benchmarks/bench_isolation.py              # 5 gradings per mode
    python benchmarks/bench_isolation.py --runs 3 --exercise masks --exercise attention

The machine's load is printed with the figures: other work on the same cores slows them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder.run import grading  # noqa: E402
from autograder.sandbox import ChildProcess, Limits, zygote_parent  # noqa: E402
from autograder.sandbox import remote  # noqa: E402
from autograder.sandbox.remote import RemoteImpl  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def tree_cpu() -> float:
    """CPU seconds of this process and of the zygote, each with the children it has reaped."""
    total = 0.0
    pids = [os.getpid()]
    zygote = zygote_parent._current
    if zygote is not None and getattr(zygote, "proc", None) is not None:
        pids.append(zygote.proc.pid)
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(v) for v in fields[11:15]) / TICKS   # utime stime cutime cstime
    return total


REPLACED: dict[str, int] = {}   # per mode: children replaced at a change of exercise


def counted(method, mode: str):
    """``method`` (a ``fresh_worker``) counting the children it replaced under ``mode``."""
    def fresh_worker(self):
        before = self._child
        method(self)
        if self._child is not before and before is not None:
            REPLACED[mode] = REPLACED.get(mode, 0) + 1
    return fresh_worker


def process_per_exercise(self) -> None:
    """``RemoteImpl.fresh_worker`` replaced: a fresh child (started ahead) at every change of exercise."""
    self._settle()
    self.replaced_for = []
    self._worker_user = remote._CLEAN
    if self._child is not None:
        self._child.close()
        self._child = None
    self._modules.clear()
    ahead = getattr(self, "_bench_next", None)
    self._child = ahead if ahead is not None and ahead.proc.poll() is None else ChildProcess(self.submission, self.limits)
    self._gen += 1
    self._ready = False
    self._calls, self._types = {}, {}
    self._bench_next = ChildProcess(self.submission, self.limits)   # the next exercise's, started now
    self.reset(seed=self._seed)


def close_with_next(self, keep_spare: bool = False) -> None:
    """``RemoteImpl.close`` that also stops the child started ahead by :func:`process_per_exercise`."""
    ahead = getattr(self, "_bench_next", None)
    if ahead is not None:
        ahead.close()
        self._bench_next = None
    ORIGINAL_CLOSE(self, keep_spare)


ORIGINAL_CLOSE = RemoteImpl.close


def switch_costs(runs: int) -> tuple[float, float]:
    """Median seconds of one ``fresh`` round trip (after an exercise imported its module) and of one
    child from fork to ``hello``."""
    folder = REPO / "solutions"
    ChildProcess(folder, Limits()).close()
    starts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        child = ChildProcess(folder, Limits())
        child.wait_ready()
        starts.append(time.perf_counter() - t0)
        child.close()
    remote = RemoteImpl(folder)
    remote.start()
    fresh = []
    for _ in range(runs):
        remote.begin_test("multi_head_attention")
        remote.multi_head_attention.MultiHeadAttention(8, 2)
        t0 = time.perf_counter()
        remote.begin_test("masks")
        fresh.append(time.perf_counter() - t0)
        remote.masks.make_causal_mask(3)
    remote.close()
    return statistics.median(fresh), statistics.median(starts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="gradings per mode (default 5)")
    parser.add_argument("--exercise", action="append", default=None, help="exercises to grade (default: the nine "
                        "without training)")
    args = parser.parse_args()
    names = args.exercise or ["embedding", "positional_encoding", "masks", "attention", "multi_head_attention",
                              "feed_forward", "encoder", "decoder", "transformer", "rope"]
    original = RemoteImpl.fresh_worker
    modes = {"restore": counted(original, "restore"), "process": counted(process_per_exercise, "process")}
    RemoteImpl.close = close_with_next
    figures: dict[str, list[tuple[float, float]]] = {mode: [] for mode in modes}
    grading.grade_folder(REPO / "solutions", names=names, seed=1, training=False)   # warm: zygote, caches
    for run in range(args.runs):
        for mode, method in modes.items():
            RemoteImpl.fresh_worker = method
            cpu, t0 = tree_cpu(), time.perf_counter()
            results = grading.grade_folder(REPO / "solutions", names=names, seed=run + 1, training=False,
                                           visibility=("public", "hidden"))
            figures[mode].append((time.perf_counter() - t0, tree_cpu() - cpu))
            assert results.score == results.max_score, (mode, results.score, results.max_score)
    RemoteImpl.fresh_worker, RemoteImpl.close = original, ORIGINAL_CLOSE
    fresh, start = switch_costs(max(5, args.runs))
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; {len(names)} exercises, "
          f"public and hidden tests, {args.runs} gradings per mode")
    base_wall = statistics.median(w for w, _ in figures["restore"])
    base_cpu = statistics.median(c for _, c in figures["restore"])
    for mode, rows in figures.items():
        wall, cpu = statistics.median(w for w, _ in rows), statistics.median(c for _, c in rows)
        print(f"{mode:8s} wall {wall:6.2f} s (x{wall / base_wall:.2f})   cpu {cpu:6.2f} s (x{cpu / base_cpu:.2f})   "
              f"children replaced per grading: {REPLACED.get(mode, 0) / args.runs:.1f}")
    print(f"one switch: fresh round trip {fresh * 1000:.1f} ms; a child from fork to hello {start * 1000:.1f} ms")


if __name__ == "__main__":
    main()
