"""Mistakes are named on the file that holds them, the same way however the run is made.

A composite's tests run its file over the reference components, so a failure there is its own; its
integration test (the student's own components) names the failing component when the composite's
own code, run on the reference components, gives the reference's output (:mod:`autograder.mistakes.hybrid`). The answer depends neither on which exercises the run grades nor on the clock.
"""

import shutil
import time
from pathlib import Path

import pytest

from autograder import context, paths
from autograder.checks import expectations
from autograder.mistakes import catalog
from grading_runs import run_suites

REPO = Path(__file__).resolve().parents[1]
SEED = 5


def named(results: dict, exercise: str) -> dict[str, tuple]:
    """``{test id: (mistake, components_at_fault)}`` of the failing tests of ``exercise``."""
    return {t["extra_data"]["nodeid"]: (t["extra_data"].get("mistake"), t["extra_data"].get("components_at_fault"))
            for t in results["tests"] if t["tags"][0] == exercise and t["status"] == "failed"}


@pytest.fixture(scope="module")
def discarded_fill(tmp_path_factory) -> Path:
    """The reference with ``masks.py``'s masked fill thrown away (a correct encoder.py)."""
    folder = tmp_path_factory.mktemp("discarded") / "sub"
    shutil.copytree(paths.solutions_dir(), folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "masks.py").write_text(catalog.by_id("mask_fill_result_discarded").source(), encoding="utf-8")
    return folder


@pytest.mark.slow
def test_component_bug_is_named_on_the_component_alone_or_with_it(discarded_fill):
    """A component's mistake costs the composite its integration test only (its other tests run over
    the reference components), named on the component, whatever else the run grades."""
    alone = run_suites(discarded_fill, names=["encoder"], visibility=("public",), seed=SEED, training=False)
    both = run_suites(discarded_fill, names=["masks", "encoder"], visibility=("public",), seed=SEED,
                              training=False)
    encoder = named(alone, "encoder")
    assert encoder == {"public/test_encoder.py::test_with_your_own_components": ("mask_fill_result_discarded", ["masks"])}
    assert named(both, "encoder") == encoder          # the same names whatever else the run grades
    masks = named(both, "masks")
    assert masks and {m for m, _ in masks.values()} == {"mask_fill_result_discarded"}
    note = next(t["output"] for t in alone["tests"] if t["status"] == "failed")
    assert "Your encoder.py is right" in note and "lost to masks.py" in note


@pytest.mark.slow
def test_a_class_batch_names_what_a_lone_grading_names(discarded_fill, tmp_path):
    """The same submission and seed, graded alone in this process or in a two-worker class batch
    beside other students, name the same mistakes on the same tests."""
    from autograder.run import batch

    options = dict(names=["masks", "encoder"], visibility=("public",), seed=SEED, training=False)
    alone = run_suites(discarded_fill, **options)
    neighbour = tmp_path / "neighbour"
    shutil.copytree(paths.solutions_dir(), neighbour, ignore=shutil.ignore_patterns("__pycache__"))
    got = {}
    batch.grade_many([("neighbour", neighbour), ("student", discarded_fill)], tmp_path / "out", options=options,
                     workers=2, on_result=lambda sid, path, result: got.__setitem__(sid, result.to_gradescope()))
    for exercise in ("masks", "encoder"):
        assert named(got["student"], exercise) == named(alone, exercise) != {}
    assert named(got["neighbour"], "encoder") == {}


@pytest.mark.slow
def test_the_composites_own_mistake_is_still_named(tmp_path):
    folder = tmp_path / "sub"
    shutil.copytree(paths.solutions_dir(), folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "masks.py").write_text(catalog.by_id("mask_fill_result_discarded").source(), encoding="utf-8")
    (folder / "attention.py").write_text(catalog.by_id("attention_no_scaling").source(), encoding="utf-8")
    results = run_suites(folder, names=["attention"], visibility=("public",), seed=SEED, training=False)
    mistakes = {m for m, _ in named(results, "attention").values()}
    assert "attention_no_scaling" in mistakes   # found on attention.py run with the reference masks.py


@pytest.mark.slow
def test_sample_class_transformer_identical_to_alices_gets_no_transformer_mistake():
    """dana's transformer.py is alice's byte for byte; her attention and multi-head attention are wrong."""
    dana = REPO / "examples" / "sample_class" / "dana"
    assert (dana / "transformer.py").read_bytes() == (REPO / "examples" / "sample_class" / "alice" /
                                                      "transformer.py").read_bytes()
    results = run_suites(dana, names=["transformer"], visibility=("public",), seed=SEED, training=False)
    failing = named(results, "transformer")
    assert failing
    for mistake, culprits in failing.values():
        assert mistake is None or catalog.by_id(mistake).exercise != "transformer"
        assert set(culprits) == {"attention", "multi_head_attention"}


def test_naming_reads_no_clock(monkeypatch):
    """What is tried is bounded by a count of candidates, not by time: a machine so loaded that
    every clock reading jumps an hour names the same mistake."""
    mutant = catalog.by_id("pe_sin_cos_swapped")

    def run(impl):
        return impl.positional_encoding.sinusoidal_table(12, 8)

    got = run(mutant.impl())
    with context.running(context.TestContext(exercise="positional_encoding", seed=1)):
        idle = expectations.identify(run, got, atol=1e-5, rtol=1e-4)
        start = time.monotonic()
        ticks = iter(range(10**6))
        monkeypatch.setattr(time, "monotonic", lambda: start + 3600.0 * next(ticks))
        monkeypatch.setattr(time, "perf_counter", lambda: start + 3600.0 * next(ticks))
        loaded = expectations.identify(run, got, atol=1e-5, rtol=1e-4)
    assert idle is mutant and loaded is mutant
    assert expectations.MAX_CANDIDATES >= len(catalog.all_mutants())
