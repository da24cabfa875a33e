"""Which files of a hand-in are the exercise modules, as students name and nest them.

Students hand in ``Attention.py``, ``attention (1).py`` (a second download), ``attention -
Copy.py``, ``multi-head-attention.py``, or a folder ``hw/src/`` inside their folder or zip. The
grader needs ``attention.py`` at the top of one folder. :func:`find` decides, for a hand-in
folder (or an unpacked zip), which folder holds the modules and which file is each exercise's:

* the **folder**: the hand-in's top when it holds any exercise file, else the folder below it
  (at most :data:`FOLDER_DEPTH` levels for a folder; any depth in an unpacked zip, whose size
  is bounded already) holding the most exercises, the shallowest on a tie. Folders whose name
  starts with ``.`` or ``__`` (``.git``, ``__MACOSX``, ``__pycache__``) are never looked into,
  links never followed, and at most :data:`MAX_ENTRIES` entries are looked at in all;
* each **exercise's file** in that folder: ``<exercise>.py``, else ``<exercise>.ipynb``, else a
  near miss (:func:`exercise_of`: case, Unicode form, ``-``/space for ``_``, a copy suffix such
  as `` (1)``, ``-copy``, `` - Copy``, ``copy 2``), ``.py`` before ``.ipynb``. Two near misses
  of one exercise and no exact name: neither is taken (the grader does not guess), and a note
  says why.

Every choice other than the exact name at the top is a note (the results' ``warnings``, shown in
the feedback): what was graded as what, and what was left out. :func:`content_hash` hashes what
the layout chooses, so ``--resume`` sees a change wherever the grader reads.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from autograder import exercises
from autograder.i18n import _
from autograder.intake import limits
from autograder.intake.untrusted import shown

SUFFIXES = (".py", ".ipynb")
FOLDER_DEPTH = 2      # a folder hand-in: its top, a folder in it, and one more level
MAX_ENTRIES = 2000    # directory entries looked at while searching a hand-in
NOTED_EXTRA = 5       # ignored files named in a note, at most
_COPY_SUFFIX = re.compile(r"(?:[\s_-]*\(\d{1,3}\)|[\s_-]+copy(?:[\s_-]*\(?\d{1,3}\)?)?)$", re.IGNORECASE)


class TooManyEntries(ValueError):
    """A hand-in folder holds more entries than the search looks at."""


def _folded(stem: str) -> str:
    text = unicodedata.normalize("NFC", stem).casefold().strip()
    return re.sub(r"[\s-]+", "_", text)


def exercise_of(filename: str) -> tuple[str | None, bool]:
    """``(exercise, exact)`` for a file name: ``("attention", True)`` for ``attention.py``,
    ``("attention", False)`` for a near miss (``Attention.py``, ``attention (1).py``,
    ``attention - Copy.ipynb``, ``Multi-Head-Attention.py``), ``(None, False)`` for anything else
    (not ``.py``/``.ipynb``, or no exercise's name)."""
    path = Path(filename)
    if path.suffix.lower() not in SUFFIXES:
        return None, False
    if path.stem in exercises.BY_NAME and path.suffix in SUFFIXES:
        return path.stem, True
    stem = path.stem
    while True:   # "attention - Copy (2)": both suffixes
        cut = _COPY_SUFFIX.sub("", stem)
        if cut == stem or not cut:
            break
        stem = cut
    name = _folded(stem)
    return (name, False) if name in exercises.BY_NAME else (None, False)


@dataclass
class Layout:
    """Where a hand-in's modules are: ``root`` (the folder chosen), ``modules`` (exercise -> its
    file in ``root``, ``.py`` or ``.ipynb``), ``notes`` (what was chosen other than the exact name
    at the top, and what was left out; text for the student, names shown as data)."""

    top: Path
    root: Path
    modules: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def as_is(self) -> bool:
        """Whether the hand-in's top folder is graded as it is: every module there under its
        exact ``.py`` name (nothing to rename, convert or copy)."""
        return self.root == self.top and all(p.name == f"{ex}.py" for ex, p in self.modules.items())


def _regular(entry: os.DirEntry) -> bool:
    return entry.is_file(follow_symlinks=False)


def _folders(top: Path, depth: int | None) -> list[tuple[Path, list[os.DirEntry]]]:
    """``(folder, its regular .py/.ipynb files)`` for ``top`` and its folders down to ``depth``
    levels (None: any), breadth first, links never followed. Raises :class:`TooManyEntries`."""
    found, queue, seen = [], [(top, 0)], 0
    while queue:
        folder, level = queue.pop(0)
        files = []
        with os.scandir(folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                seen += 1
                if seen > MAX_ENTRIES:
                    raise TooManyEntries(_("more than {limit} files and folders in the submission; the grader "
                                           "looks at {limit} at most").format(limit=MAX_ENTRIES))
                if entry.is_dir(follow_symlinks=False):
                    if not entry.name.startswith((".", "__")) and (depth is None or level < depth):
                        queue.append((Path(entry.path), level + 1))
                elif _regular(entry) and Path(entry.name).suffix.lower() in SUFFIXES:
                    files.append(entry)
        found.append((folder, files))
    return found


def _choose(files: list[os.DirEntry], notes: list[str]) -> dict[str, Path]:
    """exercise -> file among one folder's ``files`` (exact ``.py``, exact ``.ipynb``, near-miss
    ``.py``, near-miss ``.ipynb``), notes for near misses taken and near misses refused."""
    ranked: dict[str, dict[tuple[bool, bool], list[Path]]] = {}
    for entry in files:
        name, exact = exercise_of(entry.name)
        if name is not None:
            kind = (not exact, Path(entry.name).suffix.lower() != ".py")
            ranked.setdefault(name, {}).setdefault(kind, []).append(Path(entry.path))
    chosen = {}
    for name in exercises.NAMES:
        kinds = ranked.get(name)
        if not kinds:
            continue
        best_kind = min(kinds)
        best = kinds[best_kind]
        if best_kind[0] and len(best) > 1:
            notes.append(_("{files}: several files could be {module}; none was graded as it. Hand in one "
                           "file named {module}").format(files=", ".join(shown(p.name) for p in best),
                                                         module=f"{name}.py"))
            continue
        chosen[name] = best[0]
        if best_kind[0]:
            notes.append(_("{file} was graded as {module} (name your file {module})").format(
                file=shown(best[0].name), module=f"{name}{best[0].suffix.lower()}"))
        others = [p for kind, paths in sorted(kinds.items()) if kind != best_kind for p in paths]
        if others:
            notes.append(_("{notebook}: ignored, {module} is graded instead").format(
                notebook=", ".join(shown(p.name) for p in others), module=shown(best[0].name)))
    return chosen


def _count(files: list[os.DirEntry]) -> int:
    return len({exercise_of(e.name)[0] for e in files} - {None})


def find(top: Path, depth: int | None = FOLDER_DEPTH) -> Layout:
    """The :class:`Layout` of the hand-in folder ``top`` (see the module's text); ``depth``:
    folder levels searched below it (None: any, for an unpacked zip, where one folder holding
    everything is how zips are made and is taken without a note). Raises :class:`TooManyEntries`."""
    top = Path(top)
    with os.scandir(top) as entries:
        top_files = [e for e in entries if _regular(e) and Path(e.name).suffix.lower() in SUFFIXES]
    folders = [(top, top_files)] if _count(top_files) else _folders(top, depth)
    root, files = max(folders, key=lambda item: _count(item[1]))   # max keeps the first (shallowest) of a tie
    layout = Layout(top=top, root=root)
    wrapper = depth is None and root.parent == top and len([f for f, _ in folders if f.parent == top]) == 1
    if root != top and files and not wrapper:
        layout.notes.append(_("the modules were graded from the folder {folder} of the submission").format(
            folder=shown(root.relative_to(top).as_posix() + "/")))
    layout.modules = _choose(files, layout.notes)
    _note_left_out(layout, folders)
    return layout


def _note_left_out(layout: Layout, folders) -> None:
    """A note naming exercise files in other folders than the one graded (at most NOTED_EXTRA)."""
    others = [Path(e.path).relative_to(layout.top).as_posix() for folder, files in folders
              if folder != layout.root for e in files if exercise_of(e.name)[0] is not None]
    if others:
        listed = ", ".join(shown(p) for p in others[:NOTED_EXTRA]) + (", ..." if len(others) > NOTED_EXTRA else "")
        layout.notes.append(_("{files}: not graded, only the modules of one folder are").format(files=listed))


def content_hash(path: Path) -> str:
    """SHA-256 of what the grader reads from a hand-in: a file's bytes (a ``.zip``, a notebook),
    or, for a folder, its :func:`find` root's ``.py``/``.ipynb`` files (path from the hand-in's
    top and bytes, sorted; never a link). Files are read in chunks.

    The bytes read are bounded: when the files are over ``limits.SUBMISSION_INTAKE_MAX_BYTES``
    together (sizes from the file system), their names, sizes and modification times are hashed
    instead. Grading refuses such a hand-in anyway (a clear error for that student); ``--resume``
    regrades it when one of those changes. A folder too large to search hashes its refusal.

    Raises:
        FileNotFoundError: ``path`` does not exist.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"submission {path} does not exist")
    if path.is_file():
        files, names = [path], [path.name]
    else:
        try:
            layout = find(path)
        except TooManyEntries as exc:
            return hashlib.sha256(str(exc).encode()).hexdigest()
        files = sorted(p for p in layout.root.iterdir() if p.suffix.lower() in SUFFIXES and p.is_file()
                       and not p.is_symlink())
        names = [p.relative_to(path).as_posix() for p in files]
    stats = [f.stat() for f in files]
    oversize = sum(st.st_size for st in stats) > limits.SUBMISSION_INTAKE_MAX_BYTES
    if path.is_file() and not oversize:
        return _file_digest(path).hexdigest()
    digest = hashlib.sha256()
    for name, file, st in zip(names, files, stats):
        digest.update(name.encode("utf-8", "surrogateescape") + b"\0")
        if oversize:
            digest.update(f"oversize {st.st_size} {st.st_mtime_ns}".encode() + b"\0")
        else:
            digest.update(_file_digest(file).digest())
    return digest.hexdigest()


def _file_digest(path: Path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest
