"""Grade the sample class under several seeds and report every mark that moves.

    python scripts/sample_class_seeds.py --seeds 1-20 --out /tmp/seeds [--workers 2]

Each seed's ``grades.csv`` goes to ``OUT/seed-N/``; the report lists, per student and exercise,
the marks seen when they are not all the same (the kit's claim: the sample class grades the same
under every seed). Exits 1 when a mark moves.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def seeds_of(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def grade(seed: int, out: Path, workers: int) -> dict[tuple[str, str], str]:
    folder = out / f"seed-{seed}"
    if not (folder / "grades.csv").is_file():
        subprocess.run([sys.executable, str(ROOT / "cli.py"), "grade", "--class-dir", str(ROOT / "examples" / "sample_class"),
                        "--out", str(folder), "--seed", str(seed), "--no-pictures", "--workers", str(workers)],
                       check=True, stdout=subprocess.DEVNULL)
    with open(folder / "grades.csv", newline="", encoding="utf-8") as handle:
        return {(row["student_id"], column): value for row in csv.DictReader(handle)
                for column, value in row.items() if column not in ("student_id", "not_graded")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1-20")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    marks: dict[tuple[str, str], dict[int, str]] = {}
    for seed in seeds_of(args.seeds):
        for key, value in grade(seed, args.out, args.workers).items():
            marks.setdefault(key, {})[seed] = value
        print(f"seed {seed} graded", flush=True)
    moving = {key: seen for key, seen in marks.items() if len(set(seen.values())) > 1}
    for (student, column), seen in sorted(moving.items()):
        print(f"{student} {column}: " + ", ".join(f"{v} (seed {s})" for s, v in seen.items()))
    print(f"{len(moving)} mark(s) move over {len(seeds_of(args.seeds))} seeds")
    return 1 if moving else 0


if __name__ == "__main__":
    sys.exit(main())
