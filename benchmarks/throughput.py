"""The ``--throughput`` mode of ``bench_batch.py`` (not a test): the kit against two baselines,
measured one after the other in one run on the same cores, as ratios beside their targets.

- the kit: what ``tkit grade --workers W --no-pictures`` runs, in a fresh interpreter (public +
  hidden, no training tests) on a class of
  (a) N correct submissions and (b) a realistic mix of N (see :data:`MIX`); and on 2 correct
  submissions of ``masks`` alone (a bound on its fixed start-up: workers, zygotes, collection);
- the in-process baseline: a fresh interpreter per student running the kit's own public and
  hidden tests of the same exercises in-process, unsandboxed (``inprocess_baseline.py``),
  W at a time;
- ``python -c "import torch"`` N times, W at a time.

Ratios are printed beside the targets: kit wall <= 0.5x of N x import torch, >= 5x faster
than the in-process baseline, fixed start-up <= 1.5x one ``import torch``; beside each wall time,
the machine's busy CPU seconds (:func:`machine_cpu`). ``--rounds K`` repeats every row K times,
interleaved, and reports medians and each ratio's range.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
# a realistic end-of-course class: mostly correct, some with a bug, a few untouched or crashing
MIX = ("correct",) * 5 + ("onebug",) * 3 + ("untouched", "crashing")
IMPORT_TORCH = [sys.executable, "-c", "import torch"]


def machine_cpu() -> float | None:
    """CPU seconds every core of this machine has been busy since boot (``/proc/stat``: user,
    nice, system, irq, softirq), or None off Linux. Unlike a process's ``rusage`` it counts the
    sandboxed children too: the zygote that forks them is not waited for by this process."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:8]]
    except (OSError, ValueError):
        return None
    user, nice, system, _idle, _iowait, irq, softirq = fields
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def _timed(cmds: list[list[str]], workers: int) -> tuple[float, float | None]:
    """Wall seconds to run every command, ``workers`` at a time, and the machine's busy CPU
    seconds meanwhile (None off Linux; anything else running on the machine is counted too)."""
    cpu0, t0 = machine_cpu(), time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        for proc in pool.map(lambda c: subprocess.run(c, capture_output=True, text=True), cmds):
            if proc.returncode:
                raise RuntimeError(f"{proc.args[:3]} failed: {proc.stderr[-2000:]}")
    wall, cpu1 = time.perf_counter() - t0, machine_cpu()
    return wall, (cpu1 - cpu0 if cpu0 is not None and cpu1 is not None else None)


# what `tkit grade --no-pictures` runs (batch.grade_many), with training=False, which the command
# line does not offer: the transformer's hidden suite trains a model (see bench_training.py)
KIT = """import sys
from pathlib import Path
from autograder.run import batch
folder, out, workers, names = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
todo = [(p.name, p) for p in sorted(folder.iterdir())]
scores = {}
stats = batch.grade_many(todo, out, workers=workers, on_result=lambda sid, path, r: scores.update({sid: r.score}),
                         options=dict(names=names, seed=0, training=False))
assert stats.errors == 0, stats
import json
out.mkdir(parents=True, exist_ok=True)  # grade_many writes nothing itself
(out / "scores.json").write_text(json.dumps(scores))
from autograder.cli import leave
leave(0)  # as the tkit console script ends (autograder.cli.entry): no torch teardown
"""


def kit_timed(class_dir: Path, out: Path, exercises: list[str], workers: int) -> tuple[tuple, dict]:
    """``(wall seconds, machine CPU seconds)`` of a fresh interpreter grading ``class_dir`` as
    ``tkit grade`` does (no pictures, no training tests; see :func:`_timed`); and the mean score
    by kind."""
    shutil.rmtree(out, ignore_errors=True)
    wall = _timed([[sys.executable, "-c", KIT, str(class_dir), str(out), str(workers), *exercises]], 1)
    scores: dict[str, list[float]] = {}
    for sid, score in json.loads((out / "scores.json").read_text()).items():
        scores.setdefault(sid.split("_", 1)[1], []).append(score)
    return wall, {k: round(sum(v) / len(v), 1) for k, v in sorted(scores.items())}


ROWS = ("kit_correct", "kit_mix", "baseline", "torch")
LABELS = {"kit_correct": "tkit grade, all correct", "kit_mix": "tkit grade, realistic mix",
          "baseline": "in-process baseline, all correct"}


def run(make_class, tmp: Path, n: int, exercises: list[str], workers: int, rounds: int = 1) -> None:
    """Measure and print the table (``make_class(folder, n, exercises, kinds)`` builds a class).

    ``rounds`` > 1 measures every row once per round, in an order rotated from round to round,
    and gives each figure as the median over the rounds, each target ratio as the median of
    the ratios within a round (its rows measured minutes apart) with their range: on a shared
    machine one run's ratio drifts by 10-25 %, and a target met in one run of several is not met."""
    print(f"throughput: {n} submissions, {len(exercises)} exercises, {workers} workers, {rounds} round(s), "
          f"load average before {os.getloadavg()[0]:.2f}")
    correct = make_class(tmp / "correct", n, exercises, ("correct",))
    make_class(tmp / "mix", n, exercises, MIX)
    make_class(tmp / "two", 2, ["masks"], ("correct",))
    base = [[sys.executable, str(HERE / "inprocess_baseline.py"), str(path), *exercises] for _, path in correct]
    measure = {
        "kit_correct": lambda: kit_timed(tmp / "correct", tmp / "out-correct", exercises, workers),
        "kit_mix": lambda: kit_timed(tmp / "mix", tmp / "out-mix", exercises, workers),
        "baseline": lambda: (_timed(base, workers), None),
        "torch": lambda: (_timed([IMPORT_TORCH] * n, workers), None),
    }
    results: list[dict] = []  # per round: row -> (wall, cpu)
    scores: dict = {}
    startups = []
    for r in range(rounds):
        got = {}
        for row in ROWS[r % len(ROWS):] + ROWS[:r % len(ROWS)]:
            got[row], sc = measure[row]()
            if sc is not None:
                scores[row] = sc
        startups.append((kit_timed(tmp / "two", tmp / "out-two", ["masks"], workers)[0][0],
                         _timed([IMPORT_TORCH], 1)[0]))
        results.append(got)
        if rounds > 1:
            print(f"  round {r + 1}: " + ", ".join(f"{row} {got[row][0]:.1f} s" for row in ROWS), flush=True)
    _print_table(results, startups, n, scores)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _print_table(results: list[dict], startups: list[tuple], n: int, scores: dict) -> None:
    wall = {row: _median(r[row][0] for r in results) for row in ROWS}
    cpu = {row: _median(r[row][1] for r in results) for row in ROWS}
    print(f"{'':36} {'wall s':>8} {'s/student':>10} {'/ import torch':>15} {'/ kit correct':>14} "
          f"{'CPU s/student':>14}")
    for row in ROWS:
        label = LABELS.get(row, f"{n} x import torch")
        per_cpu = f"{cpu[row] / n:14.2f}" if cpu[row] is not None else f"{'-':>14}"
        print(f"{label:36} {wall[row]:8.1f} {wall[row] / n:10.2f} {wall[row] / wall['torch']:15.2f} "
              f"{wall[row] / wall['kit_correct']:14.2f} {per_cpu}")
    print(f"mean score by kind: all correct {scores.get('kit_correct')}; mix {scores.get('kit_mix')}")

    def ratio(name, values, target):
        spread = f" (range {min(values):.2f}-{max(values):.2f} over {len(values)} rounds)" if len(values) > 1 else ""
        return f"{name} = {statistics.median(values):.2f}{spread} ({target})"

    print("targets: " + "; ".join([
        ratio("kit (all correct) / import torch", [r["kit_correct"][0] / r["torch"][0] for r in results], "<= 0.5"),
        ratio("in-process baseline / kit", [r["baseline"][0] / r["kit_correct"][0] for r in results], ">= 5"),
        ratio("fixed start-up / one import torch", [s / t for s, t in startups], "<= 1.5"),
    ]) + f" (start-up {_median(s for s, _ in startups):.2f} s, one import torch {_median(t for _, t in startups):.2f} s)")
    if None not in (cpu["baseline"], cpu["kit_correct"]):
        print(f"the same in machine CPU seconds (steal and idle cores left out): in-process baseline / kit = "
              f"{cpu['baseline'] / cpu['kit_correct']:.2f}; kit {cpu['kit_correct'] / n:.2f} CPU s per correct "
              f"student, its fixed start-up included")
