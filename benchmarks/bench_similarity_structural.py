"""The structural matcher's cost beside copydetect's, against class size (not a test).

The class is synthetic, ``bench_similarity.make_class``'s with one change: a line is replaced or
followed by a student's own statement only where it is a whole simple statement, so every module
still parses (``make_class``'s cuts split multi-line statements: 90 % of its modules are syntax
errors, which cost the structural matcher nothing). Every student hands in all eleven exercises,
the reference with about a third of those lines replaced by statements of their own and a tenth
more inserted; students 1 and 2 copy student 0 with renamed variables.
Both matchers run in this process, one exercise after the other (1 worker; ``tkit similarity``
shares exercises among worker processes, each running both), on the same modules read once:

    python benchmarks/bench_similarity_structural.py                 # classes of 25, 100 and 300
    python benchmarks/bench_similarity_structural.py --sizes 300

Prints per class size: copydetect's seconds (fingerprints + pairs), the structural matcher's
(features + pairs), the pairs each flags among the students and the machine's load.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_similarity  # noqa: E402

from autograder import exercises, paths  # noqa: E402
from autograder.similarity import matcher, structural  # noqa: E402


def _single_line_statements(code: str) -> set[int]:
    """Line numbers (1-based) holding one whole simple statement of ``code``."""
    import ast

    compound = (ast.If, ast.For, ast.While, ast.With, ast.Try, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)
    return {n.lineno for n in ast.walk(ast.parse(code))
            if isinstance(n, ast.stmt) and not isinstance(n, compound) and n.lineno == n.end_lineno}


def _student_code(reference: str, rng) -> str:
    whole = _single_line_statements(reference)

    def vary(match) -> str:
        first = reference.count("\n", 0, match.start(2)) + 1
        lines = []
        for number, line in enumerate(match.group(2).split("\n"), start=first):
            indent = line[: len(line) - len(line.lstrip())]
            ok = number in whole
            lines.append(bench_similarity._own_statement(rng, indent) if ok and rng.random() < 0.33 else line)
            if ok and rng.random() < 0.1:
                lines.append(bench_similarity._own_statement(rng, indent))
        return match.group(1) + "\n".join(lines) + match.group(3)

    return bench_similarity._SOLUTION.sub(vary, reference)


def make_class(folder: Path, n: int):
    """``bench_similarity.make_class`` with every module parsing (see the module's text)."""
    bench_similarity._student_code = _student_code
    return bench_similarity.make_class(folder, n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[25, 100, 300])
    args = parser.parse_args()
    stubs = matcher.kit_sources(paths.exercises_dir())
    refs = matcher.kit_sources(paths.solutions_dir())
    print(f"load average before: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")
    for n in args.sizes:
        with tempfile.TemporaryDirectory(prefix="tkit-structbench-") as tmp:
            sources, refused = matcher.read_class(make_class(Path(tmp), n))
        assert not refused, refused
        import ast

        broken = 0
        for mods in sources.values():
            for code in mods.values():
                try:
                    ast.parse(code)
                except SyntaxError:
                    broken += 1
        times = {"copydetect": 0.0, "structural": 0.0}
        flagged = {"copydetect": set(), "structural": set()}
        for name in exercises.NAMES:
            codes = {sid: mods[name] for sid, mods in sources.items()}
            codes[""] = refs[name]
            t0 = time.perf_counter()
            pairs: list = []
            matcher._pairs_of(name, matcher.exercise_fingerprints(name, codes, stubs.get(name), n),
                              matcher._Deadline(None), pairs)
            t1 = time.perf_counter()
            feats = structural.exercise_features(codes, stubs.get(name), n)
            spairs = structural.exercise_pairs(name, feats)
            t2 = time.perf_counter()
            times["copydetect"] += t1 - t0
            times["structural"] += t2 - t1
            flagged["copydetect"] |= {(p.student_a, p.student_b, name) for p in pairs if p.flagged and p.student_b}
            flagged["structural"] |= {(p.student_a, p.student_b, name) for p in spairs if p.flagged and p.student_b}
        print(f"class of {n:4d} (synthetic, 11 exercises, {len(exercises.NAMES) * n * (n - 1) // 2} student pairs): "
              f"copydetect {times['copydetect']:6.1f} s ({len(flagged['copydetect'])} flagged), "
              f"structural {times['structural']:6.1f} s ({len(flagged['structural'])} flagged); "
              f"load {os.getloadavg()[0]:.2f}; {broken} modules do not parse)", flush=True)
        for kind in ("copydetect", "structural"):
            others = sorted(k for k in flagged[kind] if not {k[0], k[1]} <= {"s000", "s001", "s002"})
            if others:
                print(f"  {kind} flags outside the planted copies: {len(others)}, e.g. {others[:3]}")


if __name__ == "__main__":
    main()
