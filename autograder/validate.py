"""``tkit validate``: prove the suites right, the way CI does.

Three kinds of check, each a full grading run through :func:`autograder.run.grading.grade_folder`
(so through the sandboxed child, exactly as a student's submission):

* the reference solutions (``solutions/``) must score full marks on the selected exercises;
* the untouched stubs (``exercises/``) must score 0;
* every catalog mutant (:func:`autograder.mistakes.catalog.all_mutants`) is graded as a submission, a copy
  of ``solutions/`` with ``solutions/<m.target>.py`` replaced by ``m.source()``, on its own
  exercise only; it must lose points there, and a failing test must name it
  (``extra_data["mistake"] == m.id``);
* every degenerate implementation (:mod:`autograder.mistakes.degenerate`: a constant, zeros, the
  identity, a model that ignores its context, uniform attention...) is graded the same way on its
  own exercise and may earn at most :data:`~autograder.mistakes.degenerate.MAX_SHARE` (20 %) of
  the points that ran there: with the training tests left out, of the non-training points.

A mutant is first graded without the training tests (fast); only when that does not catch it
(and training is allowed) is it graded again with them. A patch that no longer applies to the
reference (:class:`autograder.mistakes.catalog.CatalogError`) is a failed check with that message.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from autograder import exercises, paths
from autograder.mistakes import catalog, degenerate
from autograder.results.model import Results, as_results
from autograder.run import grading


@dataclass
class CheckResult:
    """The outcome of one validation check.

    ``kind`` is ``reference``, ``stubs``, ``mutant`` or ``degenerate``; ``label`` the mutant's or
    degenerate implementation's id (or the kind); ``score``/``max_score`` the points on the graded
    exercises (for a mutant or a degenerate implementation: on its own exercise); ``detail`` says why a check failed (empty when it passed); ``seconds`` its wall time.
    """

    kind: str
    label: str
    exercise: str
    ok: bool
    score: float
    max_score: float
    detail: str
    seconds: float


def exercise_score(results: Results, name: str) -> tuple[float, float]:
    """``(score, max_score)`` of exercise ``name`` in the results (0, 0 when it has no tests)."""
    entry = results.exercise(name)
    return (entry.score, entry.max_score) if entry else (0.0, 0.0)


def named_mistakes(results: Results | dict, name: str) -> list[str]:
    """The mistakes named by the failing tests of exercise ``name``, in test order (a hidden
    test's own, which its student-facing record withholds)."""
    return [t.instructor_mistake for t in as_results(results).tests
            if t.exercise == name and t.status == "failed" and t.instructor_mistake]


def check_reference(names: list[str], *, training: bool, seed: int) -> CheckResult:
    """The reference must get every point of ``names`` (all 100 when every exercise and the
    training tests are included)."""
    t0 = time.monotonic()
    results = grading.grade_folder(paths.solutions_dir(), names=names, seed=seed, training=training)
    score, max_score = results.score, results.max_score or 0.0
    expected = sum(exercises.get(n).points for n in names)
    problems = [f"{t.name}: {t.output.splitlines()[0] if t.output else 'failed'}"
                for t in results.tests if not t.passed]
    if training and abs(max_score - expected) > 1e-9:
        problems.insert(0, f"the suites hold {max_score:g} points, exercises.py says {expected:g}")
    return CheckResult("reference", "reference", ",".join(names) if len(names) < len(exercises.NAMES) else "all",
                       not problems, score, max_score, "; ".join(problems[:5]), time.monotonic() - t0)


def check_stubs(names: list[str], *, training: bool, seed: int) -> CheckResult:
    """The untouched stubs must score 0."""
    t0 = time.monotonic()
    results = grading.grade_folder(paths.exercises_dir(), names=names, seed=seed, training=training)
    passed = [t.name for t in results.tests if t.score > 0]
    detail = ("tests that give the stubs points: " + "; ".join(passed[:5])) if passed else ""
    return CheckResult("stubs", "stubs", ",".join(names) if len(names) < len(exercises.NAMES) else "all",
                       not passed, results.score, results.max_score or 0.0, detail,
                       time.monotonic() - t0)


def write_mutant(mutant: catalog.Mutant, dest: Path) -> None:
    """Fill ``dest`` with the reference modules, ``<mutant.target>.py`` replaced by the mutant.
    Raises CatalogError when the patch no longer applies."""
    source = mutant.source()
    for path in sorted(paths.solutions_dir().glob("*.py")):
        shutil.copyfile(path, dest / path.name)
    (dest / f"{mutant.target}.py").write_text(source, encoding="utf-8")


def _mutant_verdict(mutant: catalog.Mutant, results: Results) -> tuple[bool, float, float, str]:
    score, max_score = exercise_score(results, mutant.exercise)
    named = named_mistakes(results, mutant.exercise)
    if max_score == 0:
        return False, score, max_score, f"no tests of {mutant.exercise} ran"
    if score >= max_score:
        return False, score, max_score, "loses no points"
    if mutant.id not in named:
        return False, score, max_score, "not named; failing tests name " + (", ".join(dict.fromkeys(named))
                                                                             or "no mistake")
    return True, score, max_score, ""


def check_mutant(mutant: catalog.Mutant, *, training: bool, seed: int) -> CheckResult:
    """Grade one mutant on its own exercise; it must lose points there and be named."""
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tkit-mutant-") as tmp:
        try:
            write_mutant(mutant, Path(tmp))
        except catalog.CatalogError as exc:
            return CheckResult("mutant", mutant.id, mutant.exercise, False, 0.0, 0.0,
                               f"the patch no longer applies: {exc}", time.monotonic() - t0)
        results = grading.grade_folder(Path(tmp), names=[mutant.exercise], seed=seed, training=False)
        ok, score, max_score, detail = _mutant_verdict(mutant, results)
        if not ok and training:
            results = grading.grade_folder(Path(tmp), names=[mutant.exercise], seed=seed, training=True)
            ok, score, max_score, detail = _mutant_verdict(mutant, results)
    return CheckResult("mutant", mutant.id, mutant.exercise, ok, score, max_score, detail, time.monotonic() - t0)


def write_degenerate(entry: degenerate.Degenerate, dest: Path) -> None:
    """Fill ``dest`` with the reference modules, ``<entry.target>.py`` replaced by the degenerate one."""
    for path in sorted(paths.solutions_dir().glob("*.py")):
        shutil.copyfile(path, dest / path.name)
    (dest / f"{entry.target}.py").write_text(entry.source(), encoding="utf-8")


def check_degenerate(entry: degenerate.Degenerate, *, training: bool, seed: int) -> CheckResult:
    """Grade one degenerate implementation on its own exercise; it may earn at most
    :data:`degenerate.MAX_SHARE` of the points that ran (without training: the non-training ones)."""
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tkit-degenerate-") as tmp:
        write_degenerate(entry, Path(tmp))
        results = grading.grade_folder(Path(tmp), names=[entry.exercise], seed=seed, training=training)
    score, max_score = exercise_score(results, entry.exercise)
    share = score / max_score if max_score else 0.0
    ok = max_score > 0 and share <= degenerate.MAX_SHARE + 1e-9
    over = "" if training else " of the non-training points"
    if max_score == 0:
        detail = f"no tests of {entry.exercise} ran"
    elif ok:
        detail = f"{share:.0%}{over} ({entry.what})"
    else:
        passed = [t.name for t in results.tests if t.exercise == entry.exercise and t.score > 0]
        detail = (f"earns {share:.0%}{over}, more than {degenerate.MAX_SHARE:.0%} ({entry.what}); "
                  f"tests that pay: {'; '.join(passed)}")
    return CheckResult("degenerate", entry.id, entry.exercise, ok, score, max_score, detail,
                       time.monotonic() - t0)


def _run_job(job: tuple) -> CheckResult:
    kind, arg, training, seed = job
    if kind == "reference":
        return check_reference(arg, training=training, seed=seed)
    if kind == "stubs":
        return check_stubs(arg, training=training, seed=seed)
    if kind == "degenerate":
        return check_degenerate(degenerate.by_id(arg), training=training, seed=seed)
    return check_mutant(catalog.by_id(arg), training=training, seed=seed)


def plan(names: Iterable[str] | None = None, *, training: bool = True, seed: int = 0) -> list[tuple]:
    """The checks to run: reference, stubs, then each mutant and each degenerate implementation of
    the selected exercises.

    Raises:
        ValueError: an unknown exercise name, or no ``solutions/`` in this edition.
    """
    selected = [n for n in exercises.NAMES if not names or n in set(names)]
    for name in names or ():
        exercises.get(name)
    if paths.solutions_dir() is None:
        raise ValueError("tkit validate needs the reference solutions (solutions/), which this edition lacks")
    jobs = [("reference", selected, training, seed), ("stubs", selected, training, seed)]
    jobs += [("mutant", m.id, training, seed) for m in catalog.for_exercises(selected)]
    jobs += [("degenerate", d.id, training, seed) for d in degenerate.for_exercises(selected)]
    return jobs


def validate(names: Iterable[str] | None = None, *, training: bool = True, seed: int = 0, jobs: int = 1,
             on_result: Callable[[CheckResult], None] | None = None) -> list[CheckResult]:
    """Run every check of :func:`plan`, ``jobs`` at a time (separate processes when > 1);
    ``on_result`` sees each result as it arrives. Returns the results in plan order."""
    todo = plan(names, training=training, seed=seed)
    results: list[CheckResult] = []
    if jobs <= 1:
        for job in todo:
            results.append(_run_job(job))
            if on_result:
                on_result(results[-1])
        return results
    import multiprocessing

    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        for result in pool.map(_run_job, todo):
            results.append(result)
            if on_result:
                on_result(result)
    return results


def across_seeds(runs: dict[int, list[CheckResult]]) -> list[CheckResult]:
    """One result per check from the same plan run under several seeds (``{seed: results}``, each
    in plan order): ok only when ok under every seed and, for a mutant or a degenerate
    implementation (code that is wrong everywhere), when its points do not move with the seed;
    ``score`` is the lowest, ``detail`` names the seeds that failed or the points per seed."""
    seeds = sorted(runs)
    merged = []
    for column in zip(*(runs[s] for s in seeds)):
        first = column[0]
        scores = {s: r.score for s, r in zip(seeds, column)}
        failed = [f"seed {s}: {r.detail}" for s, r in zip(seeds, column) if not r.ok]
        moves = first.kind in ("mutant", "degenerate") and len(set(scores.values())) > 1
        if moves:
            failed.append("points move with the seed: " + ", ".join(f"{v:g} (seed {s})" for s, v in scores.items()))
        merged.append(CheckResult(first.kind, first.label, first.exercise, not failed, min(scores.values()),
                                  first.max_score, "; ".join(failed), sum(r.seconds for r in column)))
    return merged
