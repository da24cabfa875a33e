"""The ``tkit`` sub-commands, one module each, each exposing a click command ``command``.

Rule: a command module imports only click and light modules at its top; torch,
pytest and the grading engine are imported inside the command's function, so that
``tkit --help`` (which imports every command module) stays fast. Options several commands
share are declared once in :mod:`autograder.commands.options`.
"""

from __future__ import annotations

from pathlib import Path

import click

from autograder.intake.untrusted import shown


def class_entries(class_dir: Path) -> list[tuple[str, Path]]:
    """``(student id, path)`` for every entry of a class folder: sub-folders (holding .py files or
    notebooks named after the exercises) and .zip files; the id is the entry's name without its
    suffix. Hidden entries (``.x``, ``_x``) and README files are skipped silently; any other file
    is skipped with a warning on stderr (a lone notebook cannot say which exercise it is)."""
    entries = []
    for entry in sorted(class_dir.iterdir()):
        if entry.name.startswith((".", "_")) or entry.name.upper().startswith("README"):
            continue
        if entry.is_dir() or entry.suffix == ".zip":
            entries.append((entry.stem if entry.is_file() else entry.name, entry))
        else:
            click.echo(f"skipping {shown(entry.name)}: a submission is a folder or a .zip", err=True)
    return entries


def submission_list(submissions, class_dir: Path | None, verb: str = "grade") -> list[tuple[str, Path]]:
    """``(student id, path)`` of the SUBMISSIONS arguments (the id is the name without its suffix)
    and of every entry of ``class_dir`` (:func:`class_entries`): what ``tkit grade`` and ``tkit
    similarity`` work on.

    Raises:
        click.UsageError: nothing to ``verb`` (an empty ``class_dir`` is named), or two entries with the same student id (the ids
            shown with control characters escaped: they are student-chosen).
    """
    todo = [(p.stem if p.is_file() else p.name, p) for p in submissions]
    if class_dir is not None:
        todo += class_entries(class_dir)
    if not todo and class_dir is not None:
        raise click.UsageError(f"--class-dir {shown(str(class_dir))} holds no submissions "
                               "(a submission is a folder or a .zip)")
    if not todo:
        raise click.UsageError(f"give submissions to {verb} or --class-dir")
    ids = [sid for sid, _ in todo]
    if len(set(ids)) != len(ids):
        raise click.UsageError("two submissions have the same student id: " +
                               ", ".join(sorted({shown(i) for i in ids if ids.count(i) > 1})))
    return todo
