"""Mistake ids wherever they are looked up: combined (``a+b``), unknown, empty, several at once.

A composite's mistake search names two of an exercise's own mistakes together as ``"a+b"``
(:mod:`autograder.mistakes.matching`); every reader of an id (the catalog, the probes, the reports,
the plugin's explanation) must take it, and an id the catalog lacks, without a crash.
The slow test grades the two public decoders that made the Transformer's training check crash
(``KeyError``: 5 Transformer points "not graded") through that check.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder import exercises
from autograder.checks import probes
from autograder.mistakes import catalog
from autograder.mistakes.catalog import Combined
from autograder.reports import render, summary
from autograder.run import scoring

REPO = Path(__file__).resolve().parent.parent
POST_LN_ONLY = ("decoder_always_post_ln", "decoder_pre_ln_missing_final_norm")
PRE_LN_UNBIASED = ("decoder_always_pre_ln", "decoder_layernorm_unbiased")


def test_a_combined_id_is_looked_up_as_its_parts():
    combined = catalog.by_id("+".join(POST_LN_ONLY))
    assert isinstance(combined, Combined)
    assert [p.id for p in combined.parts] == list(POST_LN_ONLY)
    assert combined.id == "+".join(POST_LN_ONLY) and combined.exercise == "decoder"
    assert catalog.parts_of("decoder_always_post_ln+decoder_always_post_ln") == (catalog.by_id("decoder_always_post_ln"),)
    for bad in ("no_such_mistake", "decoder_always_post_ln+no_such_mistake", "", "+"):
        with pytest.raises(KeyError):
            catalog.by_id(bad)
        assert catalog.find(bad) is None
    assert catalog.find(None) is None


def test_every_reader_takes_combined_unknown_and_empty_ids():
    combined = "+".join(PRE_LN_UNBIASED)
    assert scoring.known_mistake(combined).id == combined
    for bad in ("no_such_mistake", "", None, "a+b"):
        assert scoring.known_mistake(bad) is None
    view = render._mistake(combined)
    assert view["id"] == combined and catalog.by_id("decoder_layernorm_unbiased").hint() in view["hint"]
    assert render._mistake("no_such_mistake") == {"id": "no_such_mistake", "hint": "", "convention": False}
    assert summary._mistake_exercise(combined) == "decoder" and summary._mistake_exercise("a+b") == ""
    assert probes.for_mistake("mask_padding_inverted+no_such_mistake") is None
    pair = "pe_sin_cos_swapped+pe_positions_from_one"
    if all(catalog.find(part) for part in pair.split("+")):
        assert probes.for_mistake(pair) is not None


def _submission(folder: Path, ids: tuple[str, ...]) -> Path:
    """The reference solutions with ``ids`` applied to their decoder.py (a public decoder's mistakes)."""
    folder.mkdir(parents=True)
    for path in (REPO / "solutions").glob("*.py"):
        shutil.copyfile(path, folder / path.name)
    text = None
    for mistake_id in ids:
        text = catalog.by_id(mistake_id).source(text)
    (folder / "decoder.py").write_text(text)
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("ids", [POST_LN_ONLY, PRE_LN_UNBIASED], ids=["post_ln_only", "pre_ln_unbiased_std"])
def test_a_decoders_combined_mistakes_grade_the_transformer_training_check(tmp_path, ids):
    """Each decoder is named as its combination, and the Transformer's tests, its training check
    included, are all graded: none "not graded", the Transformer keeps all but its integration point."""
    from grading_runs import run_suites

    results = run_suites(_submission(tmp_path / "s", ids), names=["decoder", "transformer"], seed=20240901,
                         visibility=("public", "hidden"), training=True, pictures=False)
    assert not results["extra_data"].get("not_graded"), results["extra_data"].get("not_graded")
    assert not [t["name"] for t in results["tests"] if t.get("extra_data", {}).get("not_graded")]
    decoder_mistakes = {t["extra_data"].get("mistake") for t in results["tests"]
                        if t["tags"][0] == "decoder" and t["status"] == "failed" and t["tags"][1] == "public"}
    assert "+".join(ids) in decoder_mistakes
    training = [t for t in results["tests"] if t["tags"][0] == "transformer" and "grader" in t["name"]]
    assert len(training) >= 2
    assert results["extra_data"]["exercises"]["transformer"]["score"] >= exercises.get("transformer").points - 1
