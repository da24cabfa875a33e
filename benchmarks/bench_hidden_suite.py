"""Hidden-suite benchmark: one full hidden-suite grading run of the reference solutions without
the training tests, and one public + hidden run, next to ``python -c "import torch"`` measured in
the same run (not a test).

Target: the hidden-suite run takes at most 3 s more than the torch import (the run
includes the parent's pytest session and the sandboxed child, whose own torch import overlaps the
parent's work). The public + hidden figure is printed for information. Each figure is the median of ``--repeat`` runs; the machine's load is printed with them,
since other work on the same cores slows both.

    .venv/bin/python benchmarks/bench_hidden_suite.py
    .venv/bin/python benchmarks/bench_hidden_suite.py --repeat 3 --seed 7
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def time_torch_import() -> float:
    """Wall seconds of a fresh ``python -c "import torch"``."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    return time.perf_counter() - t0


def time_grading(seed: int, visibility: tuple[str, ...]) -> tuple[float, dict]:
    """Wall seconds of a fresh process grading ``solutions/`` on every test of ``visibility`` but
    the training ones (``grade_folder(..., training=False)``), and its score line. Like ``tkit check``
    and ``tkit grade``, it starts the sandbox's zygote before importing torch itself."""
    code = ("import json, sys; from autograder.sandbox import zygote_parent; zygote_parent.prestart(); "
            "from autograder import paths; from autograder.run import grading; "
            "r = grading.grade_folder(paths.solutions_dir(), seed=int(sys.argv[1]), training=False, "
            f"visibility={visibility!r}).to_gradescope(); "
            "print(json.dumps({'score': r['score'], 'max': r['extra_data']['max_score'], "
            "'tests': len(r['tests'])}))")
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, str(seed)], check=True, capture_output=True, text=True,
                         cwd=REPO)
    elapsed = time.perf_counter() - t0
    import json

    return elapsed, json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs of each measurement (median shown)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the hidden tests")
    args = parser.parse_args()
    runs = {("hidden",): [], ("public", "hidden"): []}
    imports, summaries = [], {}
    for _ in range(args.repeat):
        imports.append(time_torch_import())
        for visibility, times in runs.items():
            elapsed, summaries[visibility] = time_grading(args.seed, visibility)
            times.append(elapsed)
    torch_s = statistics.median(imports)
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f'python -c "import torch":               {torch_s:6.2f} s')
    for visibility, times in runs.items():
        grade_s, summary = statistics.median(times), summaries[visibility]
        label = "+".join(visibility)
        target = "  (target <= 3 s)" if visibility == ("hidden",) else ""
        print(f"{label + ' suites, no training:':<40}{grade_s:6.2f} s  ({summary['tests']} tests, "
              f"reference {summary['score']:g}/{summary['max']:g}); {grade_s - torch_s:5.2f} s on top of "
              f"the torch import{target}")


if __name__ == "__main__":
    main()
