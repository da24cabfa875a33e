"""The ``--throughput`` mode of ``bench_batch.py`` (not a test): the kit against two baselines,
measured one after the other in one run on the same cores (issue 16's targets).

- the kit: what ``tkit grade --workers W --no-pictures`` runs, in a fresh interpreter (public +
  hidden, no training tests) on a class of
  (a) N correct submissions and (b) a realistic mix of N (see :data:`MIX`); and on 2 correct
  submissions of ``masks`` alone (a bound on its fixed start-up: workers, zygotes, collection);
- the in-process baseline: a fresh interpreter per student running the kit's own public and
  hidden tests of the same exercises in-process, unsandboxed (``inprocess_baseline.py``),
  W at a time;
- ``python -c "import torch"`` N times, W at a time.

Ratios are printed beside the targets: kit wall <= 0.5x of N x import torch, >= 5x faster
than the in-process baseline, fixed start-up <= 1.5x one ``import torch``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
# a realistic end-of-course class: mostly correct, some with a bug, a few untouched or crashing
MIX = ("correct",) * 5 + ("onebug",) * 3 + ("untouched", "crashing")


def _timed(cmds: list[list[str]], workers: int) -> float:
    """Wall seconds to run every command, ``workers`` at a time."""
    t0 = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        for proc in pool.map(lambda c: subprocess.run(c, capture_output=True, text=True), cmds):
            if proc.returncode:
                raise RuntimeError(f"{proc.args[:3]} failed: {proc.stderr[-2000:]}")
    return time.perf_counter() - t0


# what `tkit grade --no-pictures` runs (batch.grade_many), with training=False, which the command
# line does not offer: the transformer's hidden suite trains a model (see bench_training.py)
KIT = """import sys
from pathlib import Path
from autograder import batch
folder, out, workers, names = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
todo = [(p.name, p) for p in sorted(folder.iterdir())]
stats = batch.grade_many(todo, out, workers=workers, on_result=lambda *a: None,
                         options=dict(names=names, seed=0, training=False))
assert stats.errors == 0, stats
from autograder.cli import leave
leave(0)  # as the tkit console script ends (autograder.cli.entry): no torch teardown
"""


def kit_wall(class_dir: Path, out: Path, exercises: list[str], workers: int) -> tuple[float, dict]:
    """Wall seconds of a fresh interpreter grading ``class_dir`` as ``tkit grade`` does (no
    pictures, no training tests); and the mean score by kind."""
    wall = _timed([[sys.executable, "-c", KIT, str(class_dir), str(out), str(workers), *exercises]], 1)
    scores: dict[str, list[float]] = {}
    for path in (out / "submissions").glob("*/results.json"):
        kind = path.parent.name.split("_", 1)[1]
        scores.setdefault(kind, []).append(json.loads(path.read_text())["score"])
    return wall, {k: round(sum(v) / len(v), 1) for k, v in sorted(scores.items())}


def run(make_class, tmp: Path, n: int, exercises: list[str], workers: int) -> None:
    """Measure and print the table (``make_class(folder, n, exercises, kinds)`` builds a class)."""
    print(f"throughput: {n} submissions, {len(exercises)} exercises, {workers} workers, "
          f"load average before {os.getloadavg()[0]:.2f}")
    correct = make_class(tmp / "correct", n, exercises, ("correct",))
    make_class(tmp / "mix", n, exercises, MIX)
    make_class(tmp / "two", 2, ["masks"], ("correct",))
    torch_wall = _timed([[sys.executable, "-c", "import torch"]] * n, workers)
    startup, _ = kit_wall(tmp / "two", tmp / "out-two", ["masks"], workers)
    kit_correct, scores_c = kit_wall(tmp / "correct", tmp / "out-correct", exercises, workers)
    kit_mix, scores_m = kit_wall(tmp / "mix", tmp / "out-mix", exercises, workers)
    base = [[sys.executable, str(HERE / "inprocess_baseline.py"), str(path), *exercises] for _, path in correct]
    base_correct = _timed(base, workers)
    one_torch = _timed([[sys.executable, "-c", "import torch"]], 1)
    rows = [("tkit grade, all correct", kit_correct), ("tkit grade, realistic mix", kit_mix),
            ("in-process baseline, all correct", base_correct), (f"{n} x import torch", torch_wall)]
    print(f"{'':36} {'wall s':>8} {'s/student':>10} {'/ import torch':>15} {'/ kit correct':>14}")
    for label, wall in rows:
        print(f"{label:36} {wall:8.1f} {wall / n:10.2f} {wall / torch_wall:15.2f} {wall / kit_correct:14.2f}")
    print(f"mean score by kind: all correct {scores_c}; mix {scores_m}")
    print(f"targets: kit (all correct) / import torch = {kit_correct / torch_wall:.2f} (<= 0.5); "
          f"in-process baseline / kit = {base_correct / kit_correct:.2f} (>= 5); "
          f"fixed start-up <= {startup:.2f} s = {startup / one_torch:.2f} x one import torch "
          f"({one_torch:.2f} s) (<= 1.5)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
