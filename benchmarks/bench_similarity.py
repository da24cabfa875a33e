"""Similarity report benchmark: wall time of ``compare_class`` against class size (not a test).

Each synthetic student hands in all eleven exercises: the reference solution's code with about a
third of its solution lines replaced by statements of the student's own and a tenth more inserted
(so every pair shares much, the common-code filter has work to do), and one pair of students
copies one student's whole submission with renamed variables. The figures are measured in one
run, one class size after the other, each with 1 and then 2 worker processes:

    .venv/bin/python benchmarks/bench_similarity.py                  # classes of 25, 100 and 300
    .venv/bin/python benchmarks/bench_similarity.py --sizes 50 300 --workers 2

It prints, per class size and worker count: the wall seconds, the pairs compared, the CSV rows
and flagged pairs, and the machine's load (other work on the same cores slows the figures).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder import exercises, paths  # noqa: E402
from autograder.similarity import matcher  # noqa: E402

_SOLUTION = re.compile(r"(### BEGIN SOLUTION\n)(.*?)(\n\s*### END SOLUTION)", re.S)


def _own_statement(rng: random.Random, indent: str) -> str:
    name = f"v{rng.randrange(10**6)}"
    op = rng.choice(["+", "-", "*", "/", "@", "//"])
    call = rng.choice(["torch.relu", "torch.tanh", "math.sqrt", "float", "abs", "torch.ones", "len"])
    return f"{indent}{name} = {call}({rng.randrange(1000)}) {op} {rng.random():.3f}  # mine"


def _student_code(reference: str, rng: random.Random) -> str:
    def vary(match: re.Match) -> str:
        lines = []
        for line in match.group(2).split("\n"):
            indent = line[: len(line) - len(line.lstrip())]
            draw = rng.random()
            if draw < 0.33 and line.strip() and not line.rstrip().endswith((":", "(", ",")):
                lines.append(_own_statement(rng, indent))
            else:
                lines.append(line)
            if rng.random() < 0.1 and line.strip():
                lines.append(_own_statement(rng, indent))
        return match.group(1) + "\n".join(lines) + match.group(3)

    return _SOLUTION.sub(vary, reference)


def make_class(folder: Path, n: int, seed: int = 0) -> list[tuple[str, Path]]:
    """``n`` synthetic submission folders under ``folder``; students 1 and 2 copy student 0."""
    rng = random.Random(seed)
    refs = matcher.kit_sources(paths.solutions_dir())
    entries = []
    for i in range(n):
        sub = folder / f"s{i:03d}"
        sub.mkdir(parents=True)
        for name in exercises.NAMES:
            code = _student_code(refs[name], rng)
            if i in (1, 2):
                code = re.sub(r"\bv(\d+)\b", rf"renamed{i}_\1",
                              (folder / "s000" / f"{name}.py").read_text(encoding="utf-8"))
            (sub / f"{name}.py").write_text(code, encoding="utf-8")
        entries.append((sub.name, sub))
    return entries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[25, 100, 300])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")
    for n in args.sizes:
        with tempfile.TemporaryDirectory(prefix="tkit-simbench-") as tmp:
            entries = make_class(Path(tmp), n)
            for workers in args.workers:
                t0 = time.perf_counter()
                result = matcher.compare_class(entries, time_limit=None, workers=workers)
                wall = time.perf_counter() - t0
                pairs = len(exercises.NAMES) * (n * (n + 1) // 2)
                flagged = [p for p in result.pairs if p.flagged]
                print(f"class of {n:4d}, {workers} worker(s): {wall:7.1f} s  ({pairs} pairs and reference rows "
                      f"compared, {len(result.pairs)} CSV rows, {len(flagged)} flagged; "
                      f"load {os.getloadavg()[0]:.2f})", flush=True)


if __name__ == "__main__":
    main()
