"""What ``tkit check`` and ``tkit grade`` say and return when there is nothing they can grade."""

from __future__ import annotations

import csv
import shutil

import pytest
from click.testing import CliRunner

from autograder import cli, exercises, paths


def test_check_refuses_a_folder_without_exercise_files_in_one_line(tmp_path):
    (tmp_path / "notes.txt").write_text("my notes\n")
    run = CliRunner().invoke(cli.main, ["check", "--path", str(tmp_path), "--lang", "en"])
    assert run.exit_code == 1
    assert run.output.strip().splitlines() == [
        f"Error: {tmp_path} holds no exercise files (such as positional_encoding.py or positional_encoding.ipynb)"]


@pytest.mark.slow   # a grading run
def test_check_says_which_folder_it_checks(tmp_path):
    shutil.copyfile(paths.solutions_dir() / "masks.py", tmp_path / "masks.py")
    run = CliRunner().invoke(cli.main, ["check", "masks", "--path", str(tmp_path), "--lang", "en"])
    assert run.exit_code == 0, run.output
    assert run.output.splitlines()[0] == f"Checking {tmp_path}"


def test_grade_fails_when_no_submission_could_be_graded(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    for sid in ("ann", "ben"):
        (folder / f"{sid}.zip").write_bytes(b"this is not a zip file")
    run = CliRunner().invoke(cli.main, ["grade", "--class-dir", str(folder), "--out", str(tmp_path / "out"),
                                        "--exercise", "masks", "--workers", "1", "--no-pictures"])
    assert run.exit_code == 1, run.output
    assert "2 of 2 submission(s) could not be graded: ann, ben" in run.output
    assert (tmp_path / "out" / "grades.csv").is_file()   # the records are still written


@pytest.mark.slow   # a grading run
def test_an_unreadable_hand_in_is_not_graded_never_a_zero(tmp_path):
    folder = tmp_path / "class"
    (folder / "ann").mkdir(parents=True)
    shutil.copyfile(paths.solutions_dir() / "masks.py", folder / "ann" / "masks.py")
    (folder / "badzip.zip").write_bytes(b"PK\x03\x04 truncated")
    out = tmp_path / "out"
    run = CliRunner().invoke(cli.main, ["grade", "--class-dir", str(folder), "--out", str(out), "--exercise", "masks",
                                        "--public-only", "--workers", "1", "--no-pictures", "--seed", "1"])
    assert run.exit_code == 1, run.output
    assert run.output.strip().splitlines()[-1] == ("Error: 1 of 2 submission(s) could not be graded: badzip (not "
                                                   "graded in grades.csv, the reason in its not_graded_reason column)")
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    assert rows["ann"]["masks"] == "5" and rows["ann"]["total"] == "5" and rows["ann"]["not_graded"] == ""
    bad = rows["badzip"]
    assert {bad[name] for name in exercises.NAMES} == {""} and bad["total"] == "" and bad["not_graded"] == "all"
    assert bad["not_graded_reason"].startswith("badzip.zip: not a zip file the grader can read")
    summary = (out / "summary.html").read_text(encoding="utf-8")
    assert summary.count("badzip.zip: not a zip file") == 2   # "could not be graded" and its roster row, not a third time
    feedback = (out / "submissions" / "badzip" / "feedback.md").read_text(encoding="utf-8")
    assert "```text\nbadzip.zip: not a zip file the grader can read" in feedback and "\\." not in feedback
