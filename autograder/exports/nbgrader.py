"""An nbgrader course from the kit (``tkit export nbgrader --course-dir DIR``).

Writes ``DIR/nbgrader_config.py`` (from ``templates/nbgrader/``) and one source notebook per
exercise, ``DIR/source/<assignment>/<exercise>.ipynb``, with nbgrader's cell metadata
(schema version 3, https://nbgrader.readthedocs.io/en/stable/contributor_guide/metadata.html):

1. instructions (markdown, read-only: ``locked``), in English and Korean;
2. the solution cell (``solution``): ``solutions/<exercise>.py`` with its
   ``### BEGIN SOLUTION`` / ``### END SOLUTION`` regions intact, so ``nbgrader
   generate_assignment`` replaces each region by a stub (the region's hint comments are moved
   above its begin marker first, so students keep them);
3. the test cell (``grade``, ``locked``, ``points`` = the exercise's points), which only
   records that the kit grades the exercise (its value, 0, is a placeholder). Nothing is graded
   in the student's kernel, where a student cell could replace any grading code: ``tkit
   nbgrader grade`` (:mod:`autograder.exports.nbgrader_grading`) grades the submitted notebooks with the
   sandboxed engine and writes each test cell's points into nbgrader's gradebook.

Grade ids and cell ids are ``<exercise>-instructions``, ``<exercise>-solution`` and
``<exercise>-tests``: unique within the course. An assignment holds the chosen exercises and the
components they import (a composite needs the student's own components).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from autograder import exercises, paths
from autograder.exports import stubs

NBGRADER_SCHEMA_VERSION = 3
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
COURSE_ID = "transformer-kit"
CELL_TIMEOUT_S = 1800  # nbgrader runs the students' cells (an autoencoder notebook may train)


def with_components(names) -> list[str]:
    """``names`` plus every exercise they import, in exercise order (all exercises when empty).

    Raises:
        ValueError: for an unknown exercise name.
    """
    wanted = set()
    for name in names or exercises.NAMES:
        wanted.add(exercises.get(name).name)
        wanted.update(exercises.get(name).depends)
    return [n for n in exercises.NAMES if n in wanted]


def hoist_hints(source: str) -> str:
    """Move the hint comments that open each solution region above its ``### BEGIN SOLUTION``
    line, so they survive nbgrader's ClearSolutions (which drops the whole region)."""
    lines = source.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == stubs.BEGIN_MARKER:
            j = i + 1
            while j < len(lines) and lines[j].strip().startswith(tuple(stubs.HINT_PREFIXES)):
                j += 1
            out.extend(lines[i + 1: j])
            out.append(lines[i])
            i = j
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


def _meta(*, grade: bool, solution: bool, locked: bool, grade_id: str, points: float | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked,
            "schema_version": NBGRADER_SCHEMA_VERSION, "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def _environment():
    import jinja2

    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(paths.templates_dir() / "nbgrader")),
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


def exercise_notebook(name: str, assignment: str):
    """The source notebook of exercise ``name`` (an ``nbformat.NotebookNode``).

    Raises:
        ValueError: for an unknown exercise.
        FileNotFoundError: when this kit has no ``solutions/``.
    """
    import nbformat.v4 as v4

    ex = exercises.get(name)
    solutions = paths.solutions_dir()
    if solutions is None:
        raise FileNotFoundError("no solutions/ here: export the course from the instructor kit")
    source = (solutions / f"{name}.py").read_text(encoding="utf-8")
    env = _environment()
    context = dict(ex=ex, assignment=assignment, points=f"{ex.points:g}",
                   components=[exercises.get(d) for d in ex.depends])
    cells = [
        v4.new_markdown_cell(env.get_template("instructions.md.j2").render(**context),
                             metadata=_meta(grade=False, solution=False, locked=True,
                                            grade_id=f"{name}-instructions")),
        v4.new_code_cell(hoist_hints(source).rstrip("\n"),
                         metadata=_meta(grade=False, solution=True, locked=False, grade_id=f"{name}-solution")),
        v4.new_code_cell(env.get_template("test_cell.py.j2").render(**context).rstrip("\n"),
                         metadata=_meta(grade=True, solution=False, locked=True, grade_id=f"{name}-tests",
                                        points=float(ex.points))),
    ]
    for cell, suffix in zip(cells, ("instructions", "solution", "tests")):
        cell["id"] = f"{name}-{suffix}"
    nb = v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def build_course(course_dir: Path, assignment: str = "transformer", names=None, *, force: bool = False) -> list[Path]:
    """Write ``nbgrader_config.py`` and ``source/<assignment>/<exercise>.ipynb`` into ``course_dir``.

    Args:
        course_dir: the course folder (created if needed; an existing ``nbgrader_config.py``
            there is replaced).
        assignment: the assignment's name (a folder name: letters, digits, ``-`` and ``_``).
        names: exercises to include (default all); the components they import come along.
        force: replace an existing ``source/<assignment>/``.

    Returns:
        The files written.

    Raises:
        ValueError: an unknown exercise or a bad assignment name.
        FileExistsError: ``source/<assignment>/`` exists and ``force`` is not set.
        FileNotFoundError: this kit has no ``solutions/``.
    """
    import nbformat

    if not assignment or not all(c.isalnum() or c in "-_" for c in assignment):
        raise ValueError(f"the assignment name must be letters, digits, '-' or '_', got {assignment!r}")
    selected = with_components(names)
    course_dir = Path(course_dir)
    folder = course_dir / "source" / assignment
    if folder.exists():
        if not force:
            raise FileExistsError(f"{folder} exists; use --force to replace it")
        shutil.rmtree(folder)
    notebooks = [(name, exercise_notebook(name, assignment)) for name in selected]
    folder.mkdir(parents=True)
    written = []
    config = course_dir / "nbgrader_config.py"
    config.write_text(_environment().get_template("nbgrader_config.py.j2").render(
        course_id=COURSE_ID, timeout=CELL_TIMEOUT_S), encoding="utf-8")
    written.append(config)
    for name, nb in notebooks:
        nbformat.validate(nb)
        path = folder / f"{name}.ipynb"
        nbformat.write(nb, str(path))
        written.append(path)
    return written
