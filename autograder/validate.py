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
  identity, a model that ignores its context, uniform attention..., hand-written or generated from
  templates by :mod:`autograder.mistakes.adversaries`) is graded the same way on its own exercise
  and may earn at most :data:`~autograder.mistakes.degenerate.MAX_SHARE` (20 %) of the points that
  ran there: with the training tests left out, of the non-training points, less the tests of a
  part whose values tests all train (the AutoEncoder's model: without them nothing pays by value);
* per exercise, code right only on the public inputs (:func:`check_memoriser`) may earn at most
  as much: the public tests' records of the reference merged with the hidden tests' and twins' of
  a generated adversary, paid by :func:`autograder.run.payment.apply`.

A mutant is first graded without the training tests (fast); only when that does not catch it
(and training is allowed) is it graded again with them. A patch that no longer applies to the
reference (:class:`autograder.mistakes.catalog.CatalogError`) is a failed check with that message.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from autograder import exercises, paths
from autograder.mistakes import catalog, degenerate
from autograder.results.model import Results, TestResult, as_results
from autograder.run import grading, payment, rubric


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


def judged(tests: list[TestResult], exercise: str, own: list[TestResult] | None = None) -> list[TestResult]:
    """The tests of ``exercise`` that count in a degenerate implementation's share: those of a part
    with a values test among ``tests`` that the implementation fails somewhere in ``own`` (its own
    records, default ``tests``). Left out: a part whose values tests all train (without them its other
    tests pay by their premises alone), and a part the implementation leaves right (a function it
    does not touch, e.g. ``train_autoencoder`` beside a degenerate model)."""
    own = tests if own is None else own
    valued = {payment.part_of(t) for t in tests if t.exercise == exercise and t.kind == rubric.VALUES}
    wrong = {payment.part_of(t) for t in own if t.exercise == exercise and t.kind == rubric.VALUES
             and not t.not_graded and t.score < t.max_score}
    return [t for t in tests if t.exercise == exercise and payment.part_of(t) in valued & wrong]


def _share_check(kind: str, label: str, exercise: str, what: str, tests: list[TestResult], training: bool,
                 t0: float, own: list[TestResult] | None = None) -> CheckResult:
    counted = judged(tests, exercise, own)
    ran = [t for t in tests if t.exercise == exercise]
    unvalued = {payment.part_of(t) for t in ran} - {payment.part_of(t) for t in ran if t.kind == rubric.VALUES}
    # "passes every value test" only where every part that ran had value tests (the AutoEncoder's model
    # part has none without training: it is not judged, whatever its loop does)
    if not counted and not unvalued and judged(tests, exercise, [dataclasses.replace(t, score=0.0) for t in tests]):
        return CheckResult(kind, label, exercise, False, 0.0, 0.0,
                           f"not degenerate: it passes every value test of {exercise} ({what})", time.monotonic() - t0)
    score = round(sum(t.score for t in counted), 4)
    max_score = round(sum(t.max_score for t in counted), 4)
    share = score / max_score if max_score else 0.0
    ok = share <= degenerate.MAX_SHARE + 1e-9
    over = "" if training else " of the non-training points"
    left = len([t for t in tests if t.exercise == exercise]) - len(counted)
    note = f", {left} test(s) of a part it leaves right or whose values tests train left out" if left else ""
    if max_score == 0:
        detail = f"not judged: no values test of {exercise} ran ({what})"
    elif ok:
        detail = f"{share:.0%}{over}{note} ({what})"
    else:
        passed = [t.name for t in counted if t.score > 0]
        detail = (f"earns {share:.0%}{over}{note}, more than {degenerate.MAX_SHARE:.0%} ({what}); "
                  f"tests that pay: {'; '.join(passed)}")
    return CheckResult(kind, label, exercise, ok, score, max_score, detail, time.monotonic() - t0)


def grade_degenerate(entry: degenerate.Degenerate, *, training: bool, seed: int) -> Results:
    """The results of one degenerate implementation, graded on its own exercise."""
    with tempfile.TemporaryDirectory(prefix="tkit-degenerate-") as tmp:
        write_degenerate(entry, Path(tmp))
        return grading.grade_folder(Path(tmp), names=[entry.exercise], seed=seed, training=training)


def check_degenerate(entry: degenerate.Degenerate, *, training: bool, seed: int) -> CheckResult:
    """Grade one degenerate implementation on its own exercise; it may earn at most
    :data:`degenerate.MAX_SHARE` of the points that ran (without training: the non-training ones;
    always less the tests of a part whose values tests did not run, :func:`judged`)."""
    t0 = time.monotonic()
    results = grade_degenerate(entry, training=training, seed=seed)
    return _share_check("degenerate", entry.id, entry.exercise, entry.what, results.tests, training, t0)


#: The generated adversary whose hidden results stand for "wrong off the public inputs".
MEMORISER_TEMPLATE = "fixed_random"


def check_memoriser(exercise: str, *, training: bool, seed: int) -> CheckResult:
    """Code right exactly on the public tests' inputs and wrong elsewhere: the reference's records of
    the public tests that have twins (the others draw the run's secret inputs), the other tests' and
    the twins' of the generated ``fixed_random`` adversary (wrong everywhere), paid together by :func:`autograder.run.payment.apply`. It may earn at most
    :data:`degenerate.MAX_SHARE` of the exercise."""
    t0 = time.monotonic()
    right = grading.grade_folder(paths.solutions_dir(), names=[exercise], seed=seed, training=training)
    wrong = grade_degenerate(degenerate.by_id(f"gen_{MEMORISER_TEMPLATE}_{exercise}"), training=training, seed=seed)
    twinned = {t.other.get(payment.TWIN_OF) for t in wrong.raw_tests}   # public tests on public inputs
    public = [t for t in right.raw_tests if t.exercise == exercise and not t.hidden and t.nodeid in twinned]
    hidden = [t for t in wrong.raw_tests if t.exercise == exercise and (t.hidden or t.nodeid not in twinned)]
    paid = payment.apply([dataclasses.replace(t, other=dict(t.other)) for t in public + hidden])
    return _share_check("memoriser", f"memoriser_{exercise}", exercise, "right on the public inputs only", paid,
                        training, t0, own=wrong.tests)


def _run_job(job: tuple) -> CheckResult:
    kind, arg, training, seed = job
    if kind == "reference":
        return check_reference(arg, training=training, seed=seed)
    if kind == "stubs":
        return check_stubs(arg, training=training, seed=seed)
    if kind == "degenerate":
        return check_degenerate(degenerate.by_id(arg), training=training, seed=seed)
    if kind == "memoriser":
        return check_memoriser(arg, training=training, seed=seed)
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
    jobs += [("memoriser", name, training, seed) for name in selected]
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
    in plan order): ok only when ok under every seed and, for a mutant, when its points do not move
    with the seed (a degenerate implementation's may, under the bar: its twins and hidden draws
    differ, and what it earns is bounded by the values gate, not by one draw);
    ``score`` is the lowest, ``detail`` names the seeds that failed or the points per seed."""
    seeds = sorted(runs)
    merged = []
    for column in zip(*(runs[s] for s in seeds)):
        first = column[0]
        scores = {s: r.score for s, r in zip(seeds, column)}
        failed = [f"seed {s}: {r.detail}" for s, r in zip(seeds, column) if not r.ok]
        moves = first.kind == "mutant" and len(set(scores.values())) > 1
        if moves:
            failed.append("points move with the seed: " + ", ".join(f"{v:g} (seed {s})" for s, v in scores.items()))
        merged.append(CheckResult(first.kind, first.label, first.exercise, not failed, min(scores.values()),
                                  first.max_score, "; ".join(failed), sum(r.seconds for r in column)))
    return merged
