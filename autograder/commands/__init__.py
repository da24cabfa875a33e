"""The ``tkit`` sub-commands, one module each, each exposing a click command ``command``.

Rule: a command module imports only click and light modules at its top; torch,
pytest and the grading engine are imported inside the command's function, so that
``tkit --help`` (which imports every command module) stays fast. Options several commands
share are declared once in :mod:`autograder.commands.options`.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import click

from autograder.intake.untrusted import shown


def student_id(path: Path) -> str:
    """The student id of a hand-in: its name without a ``.zip``/``.ipynb`` suffix, in Unicode's
    composed form (NFC): macOS writes file names decomposed (NFD), so one student's name can
    arrive in either form."""
    return unicodedata.normalize("NFC", path.stem if path.is_file() else path.name)


def class_entries(class_dir: Path) -> list[tuple[str, Path]]:
    """``(student id, path)`` for every entry of a class folder: sub-folders (holding .py files or
    notebooks named after the exercises) and .zip files; the id is :func:`student_id`. Hidden
    entries (``.x``, ``_x``) and README files are skipped silently; any other file is skipped
    with a warning on stderr (a lone notebook cannot say which exercise it is)."""
    entries = []
    for entry in sorted(class_dir.iterdir()):
        if entry.name.startswith((".", "_")) or entry.name.upper().startswith("README"):
            continue
        if entry.is_dir() or entry.suffix == ".zip":
            entries.append((student_id(entry), entry))
        else:
            click.echo(f"skipping {shown(entry.name)}: a submission is a folder or a .zip", err=True)
    return entries


def submission_list(submissions, class_dir: Path | None, verb: str = "grade") -> list[tuple[str, Path]]:
    """``(student id, path)`` of the SUBMISSIONS arguments and of every entry of ``class_dir``
    (:func:`class_entries`), ids as :func:`student_id` makes them: what ``tkit grade`` and ``tkit
    similarity`` work on.

    Raises:
        click.UsageError: nothing to ``verb`` (an empty ``class_dir`` is named), or two entries
            with the same student id, which names each id and the entries (written with
            ``ascii()``, so two spellings that look alike, composed and decomposed, are told apart).
    """
    todo = [(student_id(p), p) for p in submissions]
    if class_dir is not None:
        todo += class_entries(class_dir)
    if not todo and class_dir is not None:
        raise click.UsageError(f"--class-dir {shown(str(class_dir))} holds no submissions "
                               "(a submission is a folder or a .zip)")
    if not todo:
        raise click.UsageError(f"give submissions to {verb} or --class-dir")
    by_id: dict[str, list[Path]] = {}
    for sid, path in todo:
        by_id.setdefault(sid, []).append(path)
    clashes = {sid: found for sid, found in by_id.items() if len(found) > 1}
    if clashes:
        raise click.UsageError("two submissions have the same student id: " + "; ".join(
            f"{shown(sid)} ({', '.join(ascii(p.name) for p in found)})" for sid, found in sorted(clashes.items()))
            + " (ids are compared in Unicode's composed form, NFC; rename one of them)")
    return todo
