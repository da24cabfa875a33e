"""The matcher's reach beyond single catalog mutants (:mod:`autograder.mistakes.matching`): two known
mistakes made in the same file are named together, and nothing is named that does not match."""

import tempfile
from pathlib import Path

import pytest

from autograder import validate
from autograder.i18n import using
from autograder.mistakes import catalog, matching
from grading_runs import run_suites

from conftest import SOLUTIONS_DIR

SEED = 20240


def _grade_with(mistake_ids, exercise):
    sources = {p.stem: p.read_text(encoding="utf-8") for p in SOLUTIONS_DIR.glob("*.py")}
    for mistake_id in mistake_ids:
        mutant = catalog.by_id(mistake_id)
        sources[mutant.target] = mutant.source(sources[mutant.target])
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in sources.items():
            (Path(tmp) / f"{name}.py").write_text(text, encoding="utf-8")
        return run_suites(Path(tmp), names=[exercise], seed=SEED, training=False)


def test_pairs_skip_two_conventions_and_respect_the_cap():
    own = catalog.for_exercises(["positional_encoding"])
    trials = matching.pair_trials(own)
    assert trials and all(len(applied) == 2 for _, applied in trials)
    assert all(not (a.convention and b.convention) for _, (a, b) in trials)
    names = {label.id for label, _ in trials}
    assert "pe_sin_cos_swapped+pe_positions_from_one" in names
    assert matching.pair_trials(own * 3) == []   # over MAX_PAIRED_MUTANTS: no quadratic search


def test_combined_names_both_mistakes_in_both_languages():
    first, second = catalog.by_id("pe_sin_cos_swapped"), catalog.by_id("pe_positions_from_one")
    both = catalog.Combined((first, second))
    assert both.id == "pe_sin_cos_swapped+pe_positions_from_one" and both.exercise == "positional_encoding"
    with using("en"):
        assert both.hint() == first.hint() + "; and " + second.hint()
    with using("ko"):
        assert both.hint() == first.hint() + " 그리고 " + second.hint() and first.hint() != first.hint_en
    assert not both.convention


@pytest.mark.slow
def test_two_mistakes_in_one_file_are_named_together():
    results = _grade_with(("pe_sin_cos_swapped", "pe_positions_from_one"), "positional_encoding")
    named = validate.named_mistakes(results, "positional_encoding")
    assert "pe_sin_cos_swapped+pe_positions_from_one" in named, named
    assert not {"pe_sin_cos_swapped", "pe_positions_from_one"} & set(named)   # neither alone explains it


@pytest.mark.slow
def test_a_fused_projection_under_another_name_is_named_by_its_shape():
    """The catalog's fused-QKV mutant calls its layer ``in_proj``; a student's ``qkv`` layer is not
    that output, but its shape ([3 * d_model, d_model], no q_proj) is the same convention."""
    source = catalog.by_id("mha_fused_qkv").source().replace("in_proj", "qkv")
    sources = {p.stem: p.read_text(encoding="utf-8") for p in SOLUTIONS_DIR.glob("*.py")}
    sources["multi_head_attention"] = source
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in sources.items():
            (Path(tmp) / f"{name}.py").write_text(text, encoding="utf-8")
        results = run_suites(Path(tmp), visibility=("public",), names=["multi_head_attention"], seed=SEED,
                                     training=False)
    named = {t["name"]: t["extra_data"].get("mistake") for t in results["tests"] if t["status"] == "failed"}
    projections = [mistake for test, mistake in named.items() if "q_proj, k_proj, v_proj" in test]
    assert projections == ["mha_fused_qkv"], named
    assert "Different convention" in next(t["output"] for t in results["tests"] if "q_proj, k_proj" in t["name"])


def test_closest_prefers_the_students_dtype_and_skips_matches_that_change_nothing():
    """A float 0/1 causal mask equals the bool one in values: the mutant that makes it float is
    named, never one that leaves make_causal_mask right (its output is the reference's)."""
    import torch

    right = torch.ones(4, 4, dtype=torch.bool).triu(1)
    got = right.float()
    untouched, floated, other = object(), object(), object()
    outputs = [(untouched, right.clone()), (floated, right.float()), (other, right.tril())]
    assert matching.closest(got, outputs, lambda: right, atol=1e-5, rtol=1e-4) is floated
    assert matching.closest(got, [(untouched, right.clone()), (other, right.tril())], lambda: right,
                            atol=1e-5, rtol=1e-4) is None
    # a float64 student with a real mistake is still named from values alone
    wrong = torch.tensor([1.0, 2.0], dtype=torch.float64)
    mistaken = object()
    assert matching.closest(wrong, [(untouched, torch.tensor([1.0, 3.0])), (mistaken, torch.tensor([1.0, 2.0]))],
                            lambda: torch.tensor([1.0, 3.0]), atol=1e-5, rtol=1e-4) is mistaken
    # a reference that cannot be computed never hides a match
    def broken():
        raise RuntimeError("no reference")

    assert matching.closest(wrong, [(mistaken, torch.tensor([1.0, 2.0]))], broken, atol=1e-5, rtol=1e-4) is mistaken
