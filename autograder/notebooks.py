"""Jupyter notebook submissions: turn ``<exercise>.ipynb`` into the module ``<exercise>.py``.

A student may hand in notebooks named after the exercises (``masks.ipynb``) instead of
modules. :func:`convert` reads one with :mod:`nbformat` and joins its code cells into a
module source, which is then graded exactly like a ``.py`` file holding the same code:

* IPython syntax that is not Python is removed, each removal reported as a warning that
  names the cell and the line: line magics (``%timeit f()``, ``x = %time f()``), shell
  escapes (``!pip install x``, ``files = !ls``) and help lines (``f?``) become ``pass`` at
  the same indentation (so line numbers and blocks stay valid); a cell magic (``%%...``)
  keeps its body when IPython runs the body as Python (``%%time``, ``%%capture`` ...)
  and drops the cell otherwise (``%%bash``, ``%%writefile`` ...).
* nbgrader's autograder test cells (metadata ``nbgrader.grade`` true and
  ``nbgrader.solution`` false) are left out: they are the grader's code, not the student's.

:func:`grade_notebook_exercise` is what the test cells of an nbgrader course call
(see :mod:`autograder.export_nbgrader`).
"""

from __future__ import annotations

import io
import re
import tokenize
import warnings
from dataclasses import dataclass, field
from pathlib import Path

# Cell magics whose body IPython runs as Python code: keep the body, drop the magic line.
PYTHON_BODY_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
_MAGIC_LINE = re.compile(r"^\s*(?:[A-Za-z_][\w.]*\s*=\s*)?[%!]")
_HELP_LINE = re.compile(r"^\s*[?]{1,2}\s*[\w.]+\s*$|^\s*[\w.]+\s*[?]{1,2}\s*$")


class NotebookError(ValueError):
    """The file is not a notebook the kit can read (not JSON, not nbformat, not Python)."""


class NotebookWarning(UserWarning):
    """Something in a notebook was removed or ignored while turning it into a module."""


@dataclass
class Conversion:
    """The module source made from a notebook, and the warnings about what was removed."""

    source: str
    warnings: list[str] = field(default_factory=list)


def _inside_open_statement(prefix: list[str]) -> bool:
    """True when the Python lines ``prefix`` end inside a string, brackets or a continuation,
    so the next line is not a statement of its own (and cannot be an IPython magic)."""
    text = "\n".join(prefix) + "\n"
    try:
        for _tok in tokenize.generate_tokens(io.StringIO(text).readline):
            pass
    except tokenize.TokenError:
        return True
    except (IndentationError, SyntaxError):
        return False
    return bool(prefix) and prefix[-1].rstrip().endswith("\\")


def _describe(name: str, cell_no: int, line_no: int | None, text: str) -> tuple[str, str]:
    """``("<notebook>, cell N, line M", stripped text)`` for a warning message."""
    where = f"{name}, cell {cell_no}" + (f", line {line_no}" if line_no else "")
    return where, text.strip()


def _clean_cell(source: str, name: str, cell_no: int, notes: list[str]) -> str | None:
    """The Python code of one code cell (magics removed), or None to drop the cell."""
    lines = source.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        magic = lines[first].strip()[2:].split()[0] if lines[first].strip()[2:].split() else ""
        where, text = _describe(name, cell_no, first + 1, lines[first])
        if magic in PYTHON_BODY_CELL_MAGICS:
            notes.append(f"{where}: removed the cell magic {text!r}; its body is kept "
                         f"(셀 매직을 제거하고 본문은 남겼습니다)")
            lines[first] = ""
        else:
            notes.append(f"{where}: left out the whole cell, whose cell magic {text!r} is not Python "
                         f"(파이썬이 아닌 셀 매직이 있는 셀 전체를 제외했습니다)")
            return None
    kept: list[str] = []
    for i, line in enumerate(lines):
        if (_MAGIC_LINE.match(line) or _HELP_LINE.match(line)) and not _inside_open_statement(kept):
            indent = line[: len(line) - len(line.lstrip())]
            where, text = _describe(name, cell_no, i + 1, line)
            notes.append(f"{where}: removed the IPython magic or shell command {text!r} "
                         f"(IPython 매직 또는 셸 명령을 제거했습니다)")
            kept.append(f"{indent}pass  # removed: IPython magic or shell command")
        else:
            kept.append(line)
    return "\n".join(kept)


def _is_grader_cell(cell) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(meta.get("grade")) and not meta.get("solution")


def convert(path: Path) -> Conversion:
    """Read the notebook at ``path`` and join its code cells into a module source.

    Args:
        path: a ``.ipynb`` file (nbformat 4, or 3 which is upgraded).

    Returns:
        A :class:`Conversion`: ``source`` is the code cells in order, separated by blank
        lines, with IPython magics and shell escapes replaced by ``pass`` (a cell magic that
        is not Python drops its cell) and nbgrader test cells left out; ``warnings`` has one
        bilingual message per removal, naming the notebook, the cell (1-based, counting every
        cell) and the line.

    Raises:
        NotebookError: when the file cannot be read as a notebook, or its kernel language is
            not Python.
    """
    import nbformat

    path = Path(path)
    try:
        nb = nbformat.read(str(path), as_version=4)
    except Exception as exc:  # nbformat raises several types (NotJSONError, KeyError, ...)
        raise NotebookError(f"{path.name}: not a readable Jupyter notebook ({type(exc).__name__}: {exc}) "
                            f"(읽을 수 없는 노트북입니다)") from None
    language = (nb.metadata.get("kernelspec", {}).get("language")
                or nb.metadata.get("language_info", {}).get("name") or "python")
    if language.lower() != "python":
        raise NotebookError(f"{path.name}: the notebook's kernel language is {language!r}, not Python "
                            f"(파이썬 노트북이 아닙니다)")
    notes: list[str] = []
    parts: list[str] = []
    for cell_no, cell in enumerate(nb.cells, start=1):
        if cell.cell_type != "code":
            continue
        if _is_grader_cell(cell):
            continue
        code = _clean_cell(cell.source, path.name, cell_no, notes)
        if code is not None and code.strip():
            parts.append(code.rstrip("\n"))
    source = "\n\n".join(parts) + "\n" if parts else ""
    return Conversion(source, notes)


def notebook_to_source(path) -> str:
    """The module source of the notebook at ``path`` (see :func:`convert`); each removal is
    also issued as a :class:`NotebookWarning`. Raises NotebookError like :func:`convert`."""
    result = convert(Path(path))
    for note in result.warnings:
        warnings.warn(note, NotebookWarning, stacklevel=2)
    return result.source


def grade_notebook_exercise(exercise: str, folder=".", *, lang: str | None = None) -> float:
    """Grade ``exercise`` from the notebooks (or modules) in ``folder``; returns its points.

    This is the body of an nbgrader autograder test cell: it runs the kit's suites (public,
    plus hidden where this installation has them) on the student's ``<exercise>.ipynb``, its
    sibling notebooks supplying the components, and returns the score scaled to the
    exercise's points in ``autograder/exercises.py`` (nbgrader takes a numeric cell result as
    partial credit). It prints the failing tests on stdout (never stderr, which nbgrader
    counts as a failure).

    Raises:
        ValueError: for an unknown exercise name.
    """
    import contextlib
    import sys

    from autograder import exercises, grading

    points = exercises.get(exercise).points
    visibility = ("public", "hidden") if grading.suite_files(("hidden",), [exercise]) else ("public",)
    with warnings.catch_warnings(), contextlib.redirect_stderr(sys.stdout):
        warnings.simplefilter("ignore")
        results = grading.grade_submission(Path(folder), visibility=visibility, names=[exercise], lang=lang)
    max_score = results["extra_data"]["max_score"]
    for note in results["extra_data"].get("warnings", []):
        print(f"warning: {note}")
    for test in results["tests"]:
        mark = "PASS" if test["status"] == "passed" else "FAIL"
        print(f"[{mark}] {test['name']} ({test['score']:g}/{test['max_score']:g})")
        if test["status"] != "passed" and test["visibility"] == "visible" and test.get("output"):
            print("       " + test["output"].replace("\n", "\n       "))
    return round(points * results["score"] / max_score, 4) if max_score else 0.0
