"""Batch grading benchmark: prints figures measured side by side in one run (not a test).

(a) per-submission start-up overhead of a sandboxed child (warm zygote: fork, namespaces,
    private root, privilege drop, ``hello``) against ``python -c "import torch"``; target <= 0.2;
(b) wall time of grading N submissions (a mix of correct, buggy, untouched and crashing;
    no training checks) on W workers; target <= 60 s for 100 on 2 workers;
(c) peak memory of the whole batch (this process, the workers, the zygote they share and its
    children) and its share per worker, as RSS (counts pages shared between processes once per
    process) and PSS (shared pages split); target <= 1.5 GB per worker. The zygote is the batch's,
    not a worker's (see ``autograder.run.batch``), so only the whole tree counts it right.

    .venv/bin/python benchmarks/bench_batch.py                       # 100 submissions, 2 workers
    .venv/bin/python benchmarks/bench_batch.py --n 20 --exercise positional_encoding
    .venv/bin/python benchmarks/bench_batch.py --profile --n 3      # where a test's time goes
    .venv/bin/python benchmarks/bench_batch.py --throughput --n 40  # against two baselines (throughput.py)

The machine's load is printed with the figures: other work on the same cores slows them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from autograder.run import batch  # noqa: E402
from autograder.sandbox import ChildProcess, Limits  # noqa: E402
import proctree  # noqa: E402  (benchmarks/, beside this script)


def time_import_torch(runs: int) -> float:
    """Median wall seconds of ``python -c "import torch"`` in a fresh interpreter."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import torch"], check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def time_child_startup(runs: int, folder: Path) -> float:
    """Median wall seconds from asking for a child to its ``hello`` and back to it being gone."""
    ChildProcess(folder, Limits()).close()  # the zygote's own start (import torch) is paid once
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        child = ChildProcess(folder, Limits())
        child.wait_ready()
        child.close()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def make_class(folder: Path, n: int, exercises: list[str],
               kinds=("correct", "buggy", "untouched", "crashing")) -> list[tuple[str, Path]]:
    """``n`` submissions cycling through ``kinds``: correct, buggy (a sign flipped in the first
    ``return`` of every exercise), onebug (that flip in one exercise, a different one from
    student to student), untouched stub and crashing (``os._exit(3)`` at import)."""
    todo = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        sub = folder / f"s{i:03d}_{kind}"
        sub.mkdir(parents=True)
        for k, name in enumerate(exercises):
            text = (REPO / ("exercises" if kind == "untouched" else "solutions") / f"{name}.py").read_text()
            if kind == "buggy" or (kind == "onebug" and k == i % len(exercises)):
                text = text.replace("    return ", "    return -", 1)
            elif kind == "crashing":
                text = "import os\nos._exit(3)\n" + text
            (sub / f"{name}.py").write_text(text)
        todo.append((sub.name, sub))
    return todo


def _memory(pid: int) -> tuple[int, int]:
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1]) * 1024
    except OSError:
        pass
    return rss, pss


class MemorySampler(threading.Thread):
    """Samples, every ``interval`` s, the RSS and PSS (bytes) summed over this process's whole tree
    (workers, the shared zygote, the children), keeping the peaks."""

    def __init__(self, interval: float = 0.2):
        super().__init__(daemon=True)
        self.interval = interval
        self.peak_rss = self.peak_pss = 0
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            totals = [_memory(p) for p in proctree.process_tree(os.getpid())]
            self.peak_rss = max(self.peak_rss, sum(t[0] for t in totals))
            self.peak_pss = max(self.peak_pss, sum(t[1] for t in totals))
            self.stop.wait(self.interval)


NINE = ["embedding", "positional_encoding", "masks", "attention", "multi_head_attention", "feed_forward",
        "encoder", "decoder", "transformer"]  # the non-training exercises


def profile_mode(n: int, exercises: list[str], kind: str = "correct") -> None:
    """``--profile``: the table of :mod:`grading_profile` for ``n`` submissions of ``kind``
    (see :func:`make_class`), in this process with a pytest session each (cProfile sees only this
    thread, and a batch worker's kept session runs in a thread of its own: its saving, the
    configuration and collection, is the "collection" row here); the cache of trusted
    computations is warm after the first submission (its counts are printed)."""
    import grading_profile
    from autograder import memo
    from autograder.run import grading

    with tempfile.TemporaryDirectory(prefix="tkit-profile-") as tmp:
        (sub,) = make_class(Path(tmp) / "class", 1, exercises, (kind,))
        grading_profile.profile(lambda: grading.grade_folder(sub[1], names=exercises, seed=0, training=False), n)
    print(f"cache of trusted computations (autograder.memo): {memo.stats()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=100, help="submissions to grade (default 100)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--exercise", action="append", default=None,
                        help="exercise(s) graded (default: positional_encoding and embedding)")
    parser.add_argument("--runs", type=int, default=3, help="repetitions of the import-torch timing")
    parser.add_argument("--profile", action="store_true",
                        help="grade --n correct submissions in this process and print where a test's time goes")
    parser.add_argument("--kind", default="correct",
                        choices=("correct", "buggy", "onebug", "untouched", "crashing"),
                        help="--profile: which kind of submission (default correct)")
    parser.add_argument("--throughput", action="store_true",
                        help="kit (all correct, a mix) vs in-process baseline and N x import torch, "
                             "nine exercises by default")
    parser.add_argument("--rounds", type=int, default=1,
                        help="--throughput: measure every row this many times, interleaved, and report medians")
    args = parser.parse_args()
    if args.profile:
        return profile_mode(args.n, args.exercise or NINE, args.kind)
    if args.throughput:
        import throughput

        with tempfile.TemporaryDirectory(prefix="tkit-throughput-") as tmp:
            return throughput.run(make_class, Path(tmp), args.n, args.exercise or NINE, args.workers,
                                  args.rounds)
    exercises = args.exercise or ["positional_encoding", "embedding"]
    print(f"machine: {os.cpu_count()} CPUs, load average before: {os.getloadavg()[0]:.2f} "
          "(other work on these cores slows every figure)")
    with tempfile.TemporaryDirectory(prefix="tkit-bench-") as tmp:
        tmp = Path(tmp)
        (tmp / "empty").mkdir()
        torch_s = time_import_torch(args.runs)
        child_s = time_child_startup(20, tmp / "empty")
        print(f"(a) python -c 'import torch': {torch_s:.2f} s (median of {args.runs}); "
              f"sandboxed child start+hello+stop: {child_s * 1000:.0f} ms (median of 20); "
              f"ratio {child_s / torch_s:.3f} (target <= 0.2)")
        todo = make_class(tmp / "class", args.n, exercises)
        sampler = MemorySampler()
        sampler.start()
        done = []
        stats = batch.grade_many(todo, tmp / "out", workers=args.workers,
                                 options=dict(names=exercises, seed=0, training=False),
                                 on_result=lambda sid, path, r: done.append((sid, r)))
        sampler.stop.set()
        sampler.join()
        scores = {}
        for sid, r in done:
            kind = sid.split("_", 1)[1]
            scores.setdefault(kind, []).append(None if isinstance(r, Exception) else r.score)
        print(f"(b) {args.n} submissions ({', '.join(exercises)}, public+hidden, no training) on "
              f"{stats.workers} workers: {stats.seconds:.1f} s wall, {stats.errors} grader errors "
              f"(target <= 60 s for 100 on 2); mean score by kind: "
              + ", ".join(f"{k} {statistics.mean(v):.2f}" for k, v in sorted(scores.items())
                          if None not in v))
        gb = 1024**3
        print(f"(c) peak memory of the batch (this process, workers, zygote, children): RSS "
              f"{sampler.peak_rss / gb:.2f} GB, PSS {sampler.peak_pss / gb:.2f} GB; per worker: PSS "
              f"{sampler.peak_pss / stats.workers / gb:.2f} GB (target <= 1.5 GB)")
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        shutil.rmtree(tmp / "out", ignore_errors=True)


if __name__ == "__main__":
    main()
