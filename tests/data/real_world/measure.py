"""Grade each real-style implementation of this folder on its own exercise (public and hidden tests,
no training) and say whether the expected mistake is named (MANIFEST.json: ``name: [exercise, id, ...]``;
with several ids, each must be named, the first one first; with none, a legitimate implementation: full
marks and nothing named).

    python tests/data/real_world/measure.py [KIT_ROOT]

KIT_ROOT (default: this checkout) is the kit whose ``autograder`` grades: pass an older checkout to
measure "before". Prints one line per implementation and the count named right.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def measure(kit_root: Path, seed: int = 20240901) -> list[tuple[str, str, list[str], list[str], float, float]]:
    """``[(name, exercise, expected ids, named ids, score, max), ...]`` for every entry of MANIFEST.json."""
    sys.path.insert(0, str(kit_root))
    from autograder import paths
    from autograder.run import grading

    rows = []
    manifest = json.loads((HERE / "MANIFEST.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        for name, (exercise, *expected) in manifest.items():
            folder = Path(tmp) / name
            shutil.copytree(paths.solutions_dir(), folder, ignore=shutil.ignore_patterns("__pycache__"))
            for source in (HERE / name).glob("*.py"):
                shutil.copy(source, folder / source.name)
            results = grading.grade_folder(folder, None, names=[exercise], seed=seed, training=False).to_gradescope()
            tests = [t for t in results["tests"] if t["tags"][0] == exercise]
            named = list(dict.fromkeys(t["extra_data"].get("mistake") for t in tests
                                       if t["status"] == "failed" and t["extra_data"].get("mistake")))
            rows.append((name, exercise, expected, named, sum(t["score"] for t in tests),
                         sum(t["max_score"] for t in tests)))
    return rows


if __name__ == "__main__":
    root = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else HERE.parents[2]
    right = 0
    rows = measure(root)
    first = 0
    for name, exercise, expected, named, score, top in rows:
        if not expected:   # legitimate code
            ok = score == top and not named
            right, first = right + ok, first + ok
            print(f"{'ok ' if ok else 'MISS'} {name:30} {exercise:22} {score:g}/{top:g} legitimate; named "
                  f"{', '.join(named) or 'nothing'}")
            continue
        ok = all(e in named for e in expected)
        right += ok
        first += bool(named) and named[0] == expected[0]
        print(f"{'ok ' if ok else 'MISS'} {name:30} {exercise:22} {score:g}/{top:g} expected {', '.join(expected)}; "
              f"named {', '.join(named) or 'nothing'}")
    print(f"{first} of {len(rows)} named first")
    print(f"{right} of {len(rows)} named right")
