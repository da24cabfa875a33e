"""The nbgrader course, run through the real nbgrader: generate_assignment, autograde, then the
kit's grading outside the students' kernels (``tkit nbgrader grade``) writing nbgrader's gradebook."""

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from click.testing import CliRunner

import cli
from autograder import exercises
from autograder.exports import nbgrader, release, stubs

from conftest import SOLUTIONS_DIR

pytestmark = pytest.mark.slow

ASSIGNMENT = "ps1"
EXERCISE = "embedding"  # cheap, no components


def run_nbgrader(course, *args):
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    env.pop("TKIT_ROOT", None)
    run = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = tmp_path_factory.mktemp("course")
    nbgrader.build_course(course, ASSIGNMENT, [EXERCISE])
    return course


def test_source_notebooks_carry_nbgrader_metadata(course, tmp_path):
    written = nbgrader.build_course(tmp_path, "full", ["encoder"])
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
        assert "tkit nbgrader grade" in nb.cells[2].source and "import" not in nb.cells[2].source
        assert nb.cells[1].source.count(stubs.BEGIN_MARKER) >= 1
        ids += [c.metadata.nbgrader["grade_id"] for c in nb.cells] + [c.id for c in nb.cells]
    assert len(set(ids)) == len(ids) // 2 and all(c in ids for c in ("encoder-tests", "masks-solution"))
    config = (tmp_path / "nbgrader_config.py").read_text(encoding="utf-8")
    assert 'c.CourseDirectory.course_id = "transformer-kit"' in config and "c.Execute.timeout" in config


def test_generate_assignment_removes_every_solution(course):
    run_nbgrader(course, "generate_assignment", ASSIGNMENT)
    released = course / "release" / ASSIGNMENT / f"{EXERCISE}.ipynb"
    nb = nbformat.read(str(released), as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    assert stubs.BEGIN_MARKER not in text and "raise NotImplementedError()" in text
    regions = [body for name, body in release.solution_regions(SOLUTIONS_DIR) if name == f"{EXERCISE}.py"]
    assert regions and not any(body.strip() in text for body in regions)
    assert "# HINT:" in text  # hints stay for the student


# A student cell that takes over grading in its own kernel: it replaces the kit's old in-kernel
# grading function and rewrites the test cell into its full points. Against the old test cell
# (``grade_notebook_exercise(...)`` run in the kernel) an untouched stub earned full marks.
TAKEOVER = """

import sys as _sys, types as _types
_fake = _types.ModuleType("autograder.intake.notebooks")
_fake.grade_notebook_exercise = lambda *args, **kwargs: {points}
_sys.modules["autograder.intake.notebooks"] = _fake
get_ipython().input_transformers_post.append(
    lambda lines: ["{points}\\n"] if any("transformer-kit" in line for line in lines) else lines)
"""


def _submit(course, released, student, solution=None, suffix=""):
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    nb = nbformat.read(str(released), as_version=4)
    cell = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")][0]
    cell.source = (solution if solution is not None else cell.source) + suffix
    nbformat.write(nb, str(folder / released.name))


def _scores(course) -> dict[str, float]:
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {s: gb.find_submission(ASSIGNMENT, s).score for s in ("alice", "bob", "mallory")}


def test_the_kit_grades_outside_the_kernel_and_a_kernel_takeover_scores_zero(course):
    released = course / "release" / ASSIGNMENT / f"{EXERCISE}.ipynb"
    if not released.exists():
        run_nbgrader(course, "generate_assignment", ASSIGNMENT)
    points = exercises.get(EXERCISE).points
    _submit(course, released, "alice", (SOLUTIONS_DIR / f"{EXERCISE}.py").read_text(encoding="utf-8"))
    _submit(course, released, "bob")
    _submit(course, released, "mallory", suffix=TAKEOVER.format(points=float(points)))

    run_nbgrader(course, "autograde", ASSIGNMENT)
    # in the kernel, the test cell only records (0 for everyone) and the takeover wins: nbgrader's
    # own result cannot be trusted, which is why the kit grades outside it
    assert _scores(course) == {"alice": 0, "bob": 0, "mallory": points}

    run = CliRunner().invoke(cli.main, ["nbgrader", "grade", "--course-dir", str(course),
                                        "--assignment", ASSIGNMENT, "--workers", "1", "--seed", "5"])
    assert run.exit_code == 0, run.output
    assert _scores(course) == {"alice": points, "bob": 0, "mallory": 0}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        grade = gb.find_grade(f"{EXERCISE}-tests", EXERCISE, ASSIGNMENT, "alice")
        assert (grade.manual_score, grade.needs_manual_grade) == (points, False)
    assert (course / "tkit" / ASSIGNMENT / "submissions" / "alice" / "feedback.html").is_file()
    assert (course / "tkit" / ASSIGNMENT / "grades.csv").is_file()


def test_tkit_grades_a_submission_that_nbgrader_never_autograded(course):
    released = course / "release" / ASSIGNMENT / f"{EXERCISE}.ipynb"
    if not released.exists():
        run_nbgrader(course, "generate_assignment", ASSIGNMENT)
    _submit(course, released, "carol", (SOLUTIONS_DIR / f"{EXERCISE}.py").read_text(encoding="utf-8"))
    run = CliRunner().invoke(cli.main, ["nbgrader", "grade", "--course-dir", str(course),
                                        "--assignment", ASSIGNMENT, "--workers", "1"])
    assert run.exit_code == 0, run.output
    points = exercises.get(EXERCISE).points
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        assert gb.find_submission(ASSIGNMENT, "carol").score == points
        if (course / "submitted" / "alice").is_dir():   # graded by the test above: a rerun changes nothing
            assert gb.find_submission(ASSIGNMENT, "alice").score == points
