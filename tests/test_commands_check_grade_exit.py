"""What ``tkit check`` and ``tkit grade`` say and return when there is nothing they can grade."""

from __future__ import annotations

import shutil

import pytest
from click.testing import CliRunner

from autograder import cli, paths


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
    assert "none of the 2 submission(s) could be graded" in run.output
    assert (tmp_path / "out" / "grades.csv").is_file()   # the records are still written
