"""Where a grading test's time goes: the ``--profile`` mode of ``bench_batch.py`` (not a test).

Grades ``n`` copies of a correct submission in this process (one after the other, after one
warm-up grading that is not counted) under :mod:`cProfile`, then prints a table of the
inclusive seconds spent in a few entry points, per student and per test:

- ``pytest`` per-test machinery: a test's whole protocol (setup, call, teardown, reports)
  less the test bodies and the plugin's own setup hook;
- child round trips (``ChildProcess.request``: the parent's wait for the child, which includes
  the student's code running there) and the parent's side of their serialisation
  (``wire`` encode/pack and decode/unpack);
- the reference and the expected values computed in the parent (test bodies less their
  round trips and mistake search);
- resets between tests (``RemoteImpl.reset``), fixtures, child starts, mistake search
  (``checks.expectations.identify``, ``diagnosis.name``: only failing tests pay it).

Rows nest (a round trip is part of a test body): read them as "of which". cProfile slows
Python-heavy rows (pytest's machinery most), so the un-profiled wall per student is printed too.
"""

from __future__ import annotations

import cProfile
import pstats
import time
from pathlib import Path

# (label, [(file suffix, function name), ...]): inclusive time of the entry points, summed
ROWS = [
    ("whole grading (grade_folder)", [("autograder/run/grading.py", "grade_folder")]),
    ("  collection (import suites, markers)", [("_pytest/main.py", "perform_collect")]),
    ("  per-test protocol (runtestprotocol)", [("_pytest/runner.py", "runtestprotocol")]),
    ("    trusted computations cached (memo fingerprints, copies)", [("autograder/memo.py", "*")]),
    ("    plugin setup hook (reset, seed)", [("autograder/run/plugin.py", "pytest_runtest_setup")]),
    ("      resets between tests", [("autograder/sandbox/remote.py", "reset")]),
    ("      child starts (fresh child)", [("autograder/sandbox/remote.py", "start")]),
    ("    fixtures (student, seed, rng...)", [("_pytest/fixtures.py", "pytest_fixture_setup")]),
    ("    test bodies (pyfunc_call)", [("_pytest/python.py", "pytest_pyfunc_call")]),
    ("      round trips (RemoteImpl._request)", [("autograder/sandbox/remote.py", "_request")]),
    ("        wait on child (ChildProcess.receive)", [("autograder/sandbox/process.py", "receive")]),
    ("        parent encode (wire.Encoder.encode, pack)", [("autograder/child/wire.py", "encode"),
                                                       ("autograder/child/wire.py", "pack")]),
    ("        parent decode (wire.decode, unpack)", [("autograder/child/wire.py", "decode"),
                                                     ("autograder/child/wire.py", "unpack")]),
    ("      reference modules loaded (variants.reference)", [("autograder/mistakes/implementations.py", "reference")]),
    ("      expected values in parent (weights/oracles/formulas)", [("autograder/checks/weights.py", "*"),
                                                                  ("autograder/checks/oracles.py", "*"),
                                                                  ("autograder/checks/formulas.py", "*")]),
    ("      compare()", [("autograder/mistakes/comparison.py", "compare")]),
    ("      mistake search (identify, diagnosis.name)", [("autograder/checks/expectations.py", "identify"),
                                                       ("autograder/mistakes/diagnosis.py", "name")]),
    ("      hybrid children (blame)", [("autograder/mistakes/hybrid.py", "blame")]),
    ("  results and report building", [("autograder/run/scoring.py", "build_results"),
                                       ("autograder/run/scoring.py", "record_test")]),
]


def _inclusive(stats: pstats.Stats, targets: list[tuple[str, str]]) -> float:
    """Summed cumulative seconds of the functions named (``*``: every function of that file
    called from outside it). Recursion is counted once, as cProfile does."""
    total = 0.0
    for (filename, _line, func), (_cc, _nc, _tt, ct, callers) in stats.stats.items():
        for suffix, name in targets:
            if not filename.replace("\\", "/").endswith(suffix):
                continue
            if name == func:
                total += ct
            elif name == "*":  # only calls from other files, so nested calls are not counted twice
                total += sum(v[3] for (cf, _l, _f), v in callers.items() if not cf.endswith(suffix))
    return total


def profile(grade, n: int) -> None:
    """Run ``grade()`` once to warm up, then ``n`` times plain and ``n`` times under cProfile;
    ``grade`` returns the results dict of one student. Prints the table."""
    results = grade()
    tests = len(results.get("tests", []))
    t0 = time.perf_counter()
    for _ in range(n):
        grade()
    plain = (time.perf_counter() - t0) / n
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    for _ in range(n):
        grade()
    prof.disable()
    profiled = (time.perf_counter() - t0) / n
    stats = pstats.Stats(prof)
    print(f"profile: {n} correct submissions graded in this process, {tests} tests each, "
          f"score {results.get('score')}/{results.get('max_score', '?')}")
    print(f"un-profiled wall per student {plain:.2f} s ({plain / max(tests, 1) * 1000:.1f} ms per test); "
          f"under cProfile {profiled:.2f} s (rows below are cProfile seconds, inflated ~{profiled / plain:.1f}x)")
    print(f"{'where the time goes (rows nest)':58} {'s/student':>10} {'ms/test':>8} {'share':>6}")
    whole = _inclusive(stats, ROWS[0][1]) or 1.0
    for label, targets in ROWS:
        secs = _inclusive(stats, targets) / n
        print(f"{label:58} {secs:10.3f} {secs / max(tests, 1) * 1000:8.1f} {secs * n / whole:6.0%}")
    stats.sort_stats("tottime")
    print("top functions by own time (cProfile):")
    for (filename, line, func), (_cc, nc, tt, _ct, _callers) in sorted(
            stats.stats.items(), key=lambda kv: -kv[1][2])[:12]:
        print(f"  {tt / n:7.3f} s/student {nc // n:7d} calls  {Path(filename).name}:{line} {func}")
