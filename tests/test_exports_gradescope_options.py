"""The Gradescope export's choices: each test's visibility (hidden tests ``after_published`` by
default, any test settable by a rule) and the training checks' held-out figures as leaderboard
entries, only when asked for and never left in a test's record."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from autograder.exports import gradescope
from autograder.records.class_run import ClassRecords
from autograder.results.model import Results
from autograder.run import credit
from conftest import SOLUTIONS_DIR
from results_dicts import record, results as results_dict


def _results() -> Results:
    tests = [record("masks", "public one", nodeid="public/test_masks.py::test_a"),
             record("masks", "hidden one", hidden=True, nodeid="hidden/test_masks.py::test_b"),
             record("autoencoder", "learns", nodeid="public/test_autoencoder.py::test_learns_mnist",
                    figures={"leaderboard": {"title": "AutoEncoder: held-out MSE", "value": 0.021, "order": "asc"},
                             "ae_reconstructions": {"inputs": [[0.0]]}}),
             record("transformer", "reverses", hidden=True, nodeid="hidden/test_transformer__training.py::test_rev",
                    figures={"leaderboard": {"title": "Transformer: held-out exact match", "value": 0.8}})]
    for test, tag in zip(tests, ("public", "hidden", "public", "hidden")):
        test["tags"].append(tag)
    return Results.from_json(results_dict(tests))


def test_visibility_rules_set_each_tests_visibility_the_last_match_winning():
    results = _results()
    gradescope.apply_visibility(results, gradescope.parse_visibility([]))
    assert [t.visibility for t in results.tests] == ["visible", "after_published", "visible", "after_published"]
    rules = gradescope.parse_visibility(["hidden=after_due_date", "masks=hidden", "public/test_masks.py::*=visible",
                                         "*held-out*=after_published"])
    gradescope.apply_visibility(results, rules)
    assert [t.visibility for t in results.tests] == ["visible", "hidden", "visible", "after_due_date"]
    for bad in ("hidden", "hidden=later", "=visible"):
        with pytest.raises(ValueError, match="PATTERN=VISIBILITY"):
            gradescope.parse_visibility([bad])


def test_leaderboard_entries_are_taken_out_of_the_test_records():
    results = _results()
    assert credit.take_leaderboard(results) == [
        {"name": "AutoEncoder: held-out MSE", "value": 0.021, "order": "asc"},
        {"name": "Transformer: held-out exact match", "value": 0.8}]
    assert "leaderboard" not in json.dumps(results.to_gradescope())
    assert results.tests[2].figures == {"ae_reconstructions": {"inputs": [[0.0]]}} and results.tests[3].figures is None


def test_the_class_records_never_keep_a_leaderboard_figure(tmp_path):
    records = ClassRecords(tmp_path, options={"names": None}, lang="en")
    try:
        records.plan([], resume=False)
        (tmp_path / "ann").mkdir()
        records.on_result("ann", tmp_path / "ann", _results())
    finally:
        records.close()
    assert "leaderboard" not in (records.student_folder("ann") / "results.json").read_text(encoding="utf-8")


def test_the_options_travel_in_run_autograder_quoted(tmp_path):
    scripts = gradescope.render_scripts(["masks"], visibility=["hidden/test_masks.py::test b*=hidden"],
                                        with_leaderboard=True)
    line = scripts["run_autograder"].strip().splitlines()[-1]
    assert line.endswith("--exercise masks --visibility 'hidden/test_masks.py::test b*=hidden' --leaderboard")
    (tmp_path / "run_autograder").write_text(scripts["run_autograder"])
    subprocess.run(["bash", "-n", str(tmp_path / "run_autograder")], check=True)
    with pytest.raises(ValueError, match="PATTERN=VISIBILITY"):
        gradescope.build_zip(tmp_path / "a.zip", ["masks"], visibility=["masks=soon"])


@pytest.mark.slow   # a grading run
def test_run_autograder_applies_the_rules_to_a_real_grading(tmp_path):
    (tmp_path / "submission" / "hw").mkdir(parents=True)   # handed in inside a folder, under a near-miss name
    shutil.copyfile(SOLUTIONS_DIR / "embedding.py", tmp_path / "submission" / "hw" / "Embedding.py")
    data = gradescope.run_autograder(tmp_path, ["embedding"], seed=3, visibility=["hidden=after_due_date"])
    assert data["score"] == 5 and "leaderboard" not in data
    assert {t["visibility"] for t in data["tests"] if t["tags"][1] == "hidden"} == {"after_due_date"}
    assert {t["visibility"] for t in data["tests"] if t["tags"][1] == "public"} == {"visible"}
    assert json.loads((tmp_path / "results" / "results.json").read_text(encoding="utf-8")) == data


def test_the_form_the_training_tests_attach_reaches_the_leaderboard():
    """The suites call ``attach("leaderboard", title=..., value=..., order=...)`` (``name`` is the
    figure's own argument); what they attach becomes Gradescope's ``name``."""
    attach = credit.Attachments()
    attach("leaderboard", title="AutoEncoder: held-out MSE", value=0.02, order="asc")
    results = _results()
    results.tests[0].figures = attach.figures
    assert credit.take_leaderboard(results)[0] == {"name": "AutoEncoder: held-out MSE", "value": 0.02, "order": "asc"}
