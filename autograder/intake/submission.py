"""A submission as the grader takes it in: a folder, a .zip or notebooks, bounded and made into modules.

:func:`prepared` yields a folder holding the submission's modules (``<exercise>.py``), whatever
form it came in; every read of student material here is bounded before it starts
(:mod:`autograder.intake.limits`). Raises :class:`SubmissionFormatError` for a submission the
kit cannot take.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from autograder.i18n import _
from autograder.intake import layout, limits, notebooks
from autograder.intake.untrusted import shown

MAX_ZIP_FILES = 2000  # entries of a zip, and modules of a submission
MAX_ZIP_RATIO = 200   # unpacked / packed size of a member over 1 MiB; source text packs 3-10 times
MAX_ZIP_NAME = 1024


def submission_files(folder: Path, suffixes: tuple[str, ...] = (".py",)) -> list[Path]:
    """The top-level regular files of a submission folder with these suffixes, sorted: never a
    symlink (it could point anywhere on the host), never a subfolder's file."""
    return [entry for entry in sorted(Path(folder).iterdir())
            if entry.suffix in suffixes and not entry.is_symlink() and entry.is_file()]


class SubmissionFormatError(ValueError):
    """The submission path is not a folder, .zip or notebook the kit can grade."""


@contextlib.contextmanager
def prepared(path: Path, notes: list[str] | None = None):
    """Yield a folder holding the submission's modules (``<exercise>.py`` at its top): the folder
    itself when it is graded as it is, else a temporary one with the modules under their
    exercises' names. Raises SubmissionFormatError.

    Which files are the modules, in which folder, is :func:`autograder.intake.layout.find`'s
    choice (near-miss names such as ``Attention.py`` or ``attention (1).py``, one folder level
    or two below the top, a zip's folders at any depth); notebooks named after an exercise
    (``masks.ipynb``) become modules (``masks.py``) through :mod:`autograder.intake.notebooks`,
    and a ``.py`` of the same name wins over its notebook. What was chosen, converted, removed or
    left out is appended to ``notes`` (warnings for the results).

    The work done here, in the trusted parent, is bounded before it starts: the raw files read
    (a .zip, notebooks) are at most ``limits.SUBMISSION_INTAKE_MAX_BYTES`` together, the graded
    code (top-level ``.py`` files, notebooks once converted) at most
    ``limits.SUBMISSION_CODE_MAX_BYTES`` (:func:`autograder.intake.limits.check_code_size`), and
    the folders searched at most ``layout.MAX_ENTRIES`` entries; sizes are taken from the file
    system before anything is read, so a sparse 32 GiB file costs nothing.
    """
    path = Path(path)
    notes = [] if notes is None else notes
    if path.is_dir():
        _check_code(path)
        found = _layout(path, layout.FOLDER_DEPTH)
        notes.extend(found.notes)
        if found.as_is:
            yield path
            return
        with tempfile.TemporaryDirectory(prefix="tkit-sub-") as tmp:
            _materialise(found, Path(tmp), notes)
            _check_code(Path(tmp))
            yield Path(tmp)
    elif path.suffix == ".zip" and path.is_file():
        with tempfile.TemporaryDirectory(prefix="tkit-sub-") as tmp:
            extract_zip(path, Path(tmp))
            found = _layout(Path(tmp), None)
            notes.extend(found.notes)
            _materialise(found, found.root, notes)
            _check_code(found.root)
            yield found.root
    elif path.suffix == ".ipynb" and path.is_file():
        _check_intake({path.name: path.stat().st_size})
        with tempfile.TemporaryDirectory(prefix="tkit-sub-") as tmp:
            name, exact = layout.exercise_of(path.name)
            if name is not None and not exact:
                notes.append(_("{file} was graded as {module} (name your file {module})").format(
                    file=shown(path.name), module=f"{name}.ipynb"))
            _convert_notebook(path, Path(tmp) / f"{name or path.stem}.py", notes)
            _check_code(Path(tmp))
            yield Path(tmp)
    elif not path.exists():
        raise SubmissionFormatError(_("submission {path} does not exist").format(path=shown(str(path))))
    else:
        raise SubmissionFormatError(_("submission {path} is not a folder, a .zip or a .ipynb file").format(
            path=shown(str(path))))


def _layout(folder: Path, depth: int | None) -> layout.Layout:
    try:
        return layout.find(folder, depth)
    except layout.TooManyEntries as exc:
        raise SubmissionFormatError(str(exc)) from None


def submission_root(folder: Path) -> Path:
    """The folder of ``folder`` (searched at any depth) that holds the modules (see
    :func:`autograder.intake.layout.find`). Raises SubmissionFormatError."""
    return _layout(Path(folder), None).root


def _check_code(folder: Path) -> None:
    """Refuse a submission whose graded code (the folder's top-level ``.py`` files, sizes from
    the file system) is over :data:`limits.SUBMISSION_CODE_MAX_BYTES`."""
    files = submission_files(folder)
    if len(files) > MAX_ZIP_FILES:
        raise SubmissionFormatError(_("{count} modules; the grader takes at most {limit}").format(
            count=len(files), limit=MAX_ZIP_FILES))
    try:
        limits.check_code_size({shown(p.name): p.stat().st_size for p in files})
    except limits.SubmissionTooLarge as exc:
        raise SubmissionFormatError(str(exc)) from None


def _check_intake(sizes: dict[str, int]) -> None:
    """Refuse raw material (a .zip, notebooks) the parent would read over
    :data:`limits.SUBMISSION_INTAKE_MAX_BYTES` in all."""
    total, limit = sum(sizes.values()), limits.SUBMISSION_INTAKE_MAX_BYTES
    if total > limit:
        names = ", ".join(shown(n) for n in sorted(sizes, key=lambda n: -sizes[n])[:3])
        raise SubmissionFormatError(_(
            "{names}: {size} MB to read; the grader reads at most {limit} MB of a submission's files").format(
            names=names, size=total // 2**20, limit=limit // 2**20))


def _materialise(found: layout.Layout, dest: Path, notes: list[str]) -> None:
    """Put ``found``'s modules into ``dest`` as ``<exercise>.py`` (notebooks converted, near
    misses renamed: in place when ``dest`` is the layout's own folder, an unpacked zip; copied
    otherwise, with the folder's other top-level ``.py`` files, the student's helper modules)."""
    notebooks_ = {name: p for name, p in found.modules.items() if p.suffix.lower() == ".ipynb"}
    _check_intake({p.name: p.stat().st_size for p in notebooks_.values()})
    if dest != found.root:
        for entry in submission_files(found.root):
            if layout.exercise_of(entry.name)[0] is None:
                shutil.copyfile(entry, dest / entry.name)
    for name, source in found.modules.items():
        target = dest / f"{name}.py"
        if name in notebooks_:
            _convert_notebook(source, target, notes)
        elif source != target:
            data = source.read_bytes()
            if dest == found.root:
                source.unlink()   # a case-only rename on a case-insensitive file system
            target.write_bytes(data)


def _convert_notebook(nb_path: Path, out: Path, notes: list[str] | None = None) -> None:
    try:
        converted = notebooks.convert(nb_path)
    except notebooks.NotebookError as exc:
        raise SubmissionFormatError(shown(exc)) from None
    if notes is not None:
        notes.extend(converted.warnings)
    out.write_text(converted.source, encoding="utf-8")


def _check_member(zip_name: str, info: zipfile.ZipInfo) -> None:
    """Refuse a member whose name escapes the folder or is absurd, a link, or a compression
    ratio no source file has (a zip bomb)."""
    name = info.filename
    parts = PurePosixPath(name).parts
    unsafe = (name.startswith(("/", "\\")) or ".." in parts or "\0" in name or len(name) > MAX_ZIP_NAME
              or any(len(p.encode("utf-8", "surrogateescape")) > 255 for p in parts)
              or (info.external_attr >> 16) & 0o170000 == 0o120000)
    if unsafe:
        raise SubmissionFormatError(f"{zip_name}: unsafe member {shown(name[:200])!r}")
    if info.file_size > 2**20 and info.file_size > MAX_ZIP_RATIO * max(1, info.compress_size):
        raise SubmissionFormatError(f"{zip_name}: member {shown(name[:200])!r} unpacks to more than "
                                    f"{MAX_ZIP_RATIO} times its packed size")


def _copy_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, zip_name: str) -> None:
    """Copy one member, reading no more than the size it declares."""
    left = info.file_size
    with zf.open(info) as src, open(target, "wb") as out:
        while chunk := src.read(min(1 << 20, left + 1)):
            left -= len(chunk)
            if left < 0:
                raise SubmissionFormatError(f"{zip_name}: member {shown(info.filename[:200])!r} holds more "
                                            f"than the size it declares")
            out.write(chunk)


def extract_zip(zip_path: Path, dest: Path) -> None:
    """Extract ``.py``/``.ipynb`` members safely and with bounded work: the zip and its unpacked
    members each at most ``limits.SUBMISSION_INTAKE_MAX_BYTES``, at most ``MAX_ZIP_FILES``
    entries, no absolute paths, no ``..``, no links, no absurd names, no member packed more than
    ``MAX_ZIP_RATIO`` times, none larger than it declares (:func:`prepared` then converts the
    notebooks it grades). Raises SubmissionFormatError on a bad or
    oversize archive (names in messages shown with control characters escaped)."""
    zip_name = shown(zip_path.name)
    _check_intake({zip_path.name: zip_path.stat().st_size})
    try:
        with zipfile.ZipFile(zip_path) as zf:
            members = zf.infolist()
            if len(members) > MAX_ZIP_FILES:
                raise SubmissionFormatError(f"{zip_name}: more than {MAX_ZIP_FILES} files")
            wanted = [i for i in members if not i.is_dir() and i.filename.endswith((".py", ".ipynb"))]
            for info in wanted:
                _check_member(zip_name, info)
            _check_intake({f"{zip_path.name} (unpacked)": sum(i.file_size for i in wanted)})
            for info in wanted:
                target = dest.joinpath(*PurePosixPath(info.filename).parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                _copy_member(zf, info, target, zip_name)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, EOFError,
            zlib.error, IsADirectoryError, NotADirectoryError, FileExistsError) as exc:
        # corrupt, encrypted, unknown compression, member names that clash (a.py and a.py/b.py)
        raise SubmissionFormatError(f"{zip_name}: not a zip file the grader can read "
                                    f"({type(exc).__name__}: {shown(str(exc)[:200])})") from None
