"""The nbgrader course, run through the real nbgrader: generate_assignment, then autograde."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder import exercises, export_nbgrader, release, stubs

from conftest import SOLUTIONS_DIR

ASSIGNMENT = "ps1"
EXERCISE = "embedding"  # cheap, no components


def nbgrader(course, *args):
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    env.pop("TKIT_ROOT", None)
    run = subprocess.run([str(Path(sys.executable).parent / "nbgrader"), *args], cwd=course, env=env,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = tmp_path_factory.mktemp("course")
    export_nbgrader.build_course(course, ASSIGNMENT, [EXERCISE])
    return course


def test_source_notebooks_carry_nbgrader_metadata(course, tmp_path):
    written = export_nbgrader.build_course(tmp_path, "full", ["encoder"])
    names = [p.stem for p in written if p.suffix == ".ipynb"]
    assert names == ["masks", "attention", "multi_head_attention", "feed_forward", "encoder"]
    ids = []
    for path in written[1:]:
        nb = nbformat.read(str(path), as_version=4)
        nbformat.validate(nb)
        kinds = [(c.cell_type, c.metadata.nbgrader["locked"], c.metadata.nbgrader["solution"],
                  c.metadata.nbgrader["grade"]) for c in nb.cells]
        assert kinds == [("markdown", True, False, False), ("code", False, True, False), ("code", True, False, True)]
        assert nb.cells[2].metadata.nbgrader["points"] == exercises.get(path.stem).points
        assert f'grade_notebook_exercise("{path.stem}")' in nb.cells[2].source
        assert nb.cells[1].source.count(stubs.BEGIN_MARKER) >= 1
        ids += [c.metadata.nbgrader["grade_id"] for c in nb.cells] + [c.id for c in nb.cells]
    assert len(set(ids)) == len(ids) // 2 and all(c in ids for c in ("encoder-tests", "masks-solution"))
    config = (tmp_path / "nbgrader_config.py").read_text(encoding="utf-8")
    assert 'c.CourseDirectory.course_id = "transformer-kit"' in config and "c.Execute.timeout" in config


def test_generate_assignment_removes_every_solution(course):
    nbgrader(course, "generate_assignment", ASSIGNMENT)
    released = course / "release" / ASSIGNMENT / f"{EXERCISE}.ipynb"
    nb = nbformat.read(str(released), as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    assert stubs.BEGIN_MARKER not in text and "raise NotImplementedError()" in text
    regions = [body for name, body in release.solution_regions(SOLUTIONS_DIR) if name == f"{EXERCISE}.py"]
    assert regions and not any(body.strip() in text for body in regions)
    assert "# HINT:" in text  # hints stay for the student


def test_autograde_gives_full_marks_to_the_reference_and_zero_to_the_untouched_notebook(course):
    released = course / "release" / ASSIGNMENT / f"{EXERCISE}.ipynb"
    if not released.exists():
        nbgrader(course, "generate_assignment", ASSIGNMENT)
    for student in ("alice", "bob"):
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        shutil.copyfile(released, folder / released.name)
    nb = nbformat.read(str(course / "submitted" / "alice" / ASSIGNMENT / released.name), as_version=4)
    solution = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
    solution[0].source = (SOLUTIONS_DIR / f"{EXERCISE}.py").read_text(encoding="utf-8")
    nbformat.write(nb, str(course / "submitted" / "alice" / ASSIGNMENT / released.name))

    nbgrader(course, "autograde", ASSIGNMENT)

    points = exercises.get(EXERCISE).points
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        alice = gb.find_submission(ASSIGNMENT, "alice")
        bob = gb.find_submission(ASSIGNMENT, "bob")
        assert (alice.score, alice.max_score) == (points, points)
        assert (bob.score, bob.max_score) == (0, points)
