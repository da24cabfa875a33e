"""Grading one submission: prepare its folder, run the suites under pytest, return results.

:func:`grade_submission` is what ``tkit grade`` and ``tkit check`` call for each
submission. It runs :func:`pytest.main` in this process with the kit's plugin and
its own ini file, with conftest files, the cache provider, third-party plugin
autoloading and ``PYTEST_ADDOPTS`` switched off, so nothing in the submission or the
environment changes how the trusted parent runs. Student code runs only in the
child the plugin starts.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

import pytest

from autograder import exercises, paths
from autograder.plugin import SESSION_KEY, write_json_atomic
from autograder.sandbox import submission_files

MAX_ZIP_BYTES = 64 * 1024**2
MAX_ZIP_FILES = 2000


class SubmissionFormatError(ValueError):
    """The submission path is not a folder, .zip or notebook the kit can grade."""


def suite_files(visibility=("public", "hidden"), names=None) -> list[Path]:
    """The suite files to run, in exercise order: ``suites/<vis>/test_<exercise>.py`` and
    ``suites/<vis>/test_<exercise>__<topic>.py`` (e.g. ``test_transformer__training.py``)."""
    selected = list(names) if names else list(exercises.NAMES)
    for name in selected:
        exercises.get(name)  # ValueError on an unknown name
    files = []
    for name in exercises.NAMES:
        if name not in selected:
            continue
        for vis in ("public", "hidden"):
            if vis not in visibility:
                continue
            folder = paths.suites_dir() / vis
            files += [p for p in (folder / f"test_{name}.py",) if p.is_file()]
            files += sorted(folder.glob(f"test_{name}__*.py"))
    return files


@contextlib.contextmanager
def _clean_pytest_env():
    saved = {k: os.environ.get(k) for k in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")}
    os.environ.pop("PYTEST_ADDOPTS", None)
    os.environ.pop("PYTEST_PLUGINS", None)
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_suites(submission: Path, *, visibility=("public", "hidden"), names=None, seed: int | None = None,
               lang: str | None = None, call_timeout: float | None = None, time_limit: float | None = None,
               training: bool = True, verbose: bool = False, files: list[Path] | None = None,
               memory_limit: int | None = None, error_log: Path | None = None) -> dict:
    """Run the suites on a prepared submission folder; returns the results dict.

    ``time_limit`` (seconds, default 1300) bounds the time spent in tests: each exercise gets
    its share by points (:mod:`autograder.timeshare`). ``memory_limit`` (bytes) caps the child's
    memory (:class:`autograder.sandbox.Limits`). Grader errors are detailed in ``error_log``
    (instructor-only; default: stderr), never in the results.

    ``training=False`` leaves out the tests marked ``training`` (they train a model).
    ``files`` replaces the kit's suites by these test files (the kit's own tests use a small
    suite of their own); ``visibility`` and ``names`` then select nothing.
    """
    files = [Path(f) for f in files] if files is not None else suite_files(visibility, names)
    if not files:
        raise ValueError("no test suites selected")
    suites = paths.suites_dir()
    inside = all(suites in f.resolve().parents for f in files)
    rootdir = str(suites) if inside else os.path.commonpath([str(f.resolve().parent) for f in files])
    args = [str(f) for f in files] + [
        "-c", str(paths.suites_dir() / "pytest.ini"), "--rootdir", rootdir,
        "-p", "autograder.plugin", "--noconftest", "-p", "no:cacheprovider", "-p", "no:stepwise", "-p", "no:logging",
        "-p", "no:unraisableexception",  # its gc.collect() costs ~0.3 s; no student code runs here
        "--submission", str(submission), "-q", "--tb=no", "-W", "ignore",
    ]
    if seed is not None:
        args += ["--tkit-seed", str(seed)]
    if lang:
        args += ["--tkit-lang", lang]
    if call_timeout:
        args += ["--tkit-call-timeout", str(call_timeout)]
    if time_limit:
        args += ["--tkit-time-limit", str(time_limit)]
    if memory_limit:
        args += ["--tkit-memory-limit", str(int(memory_limit))]
    if error_log:
        args += ["--tkit-error-log", str(error_log)]
    if not training:
        args += ["-m", "not training"]
    grabber = _ResultGrabber()
    sink = io.StringIO()
    with _clean_pytest_env():
        if verbose:
            code = pytest.main(args, plugins=[grabber])
        else:
            with contextlib.redirect_stdout(sink):
                code = pytest.main(args, plugins=[grabber])
    if grabber.interrupted:  # Ctrl-C: partial results must not be recorded as a grade
        raise KeyboardInterrupt
    if code == pytest.ExitCode.INTERRUPTED:  # pytest also says so when a suite file fails to import
        raise RuntimeError(f"the test suites could not be collected:\n{sink.getvalue()[-3000:]}")
    if grabber.results is None:
        raise RuntimeError(f"the test suites did not run (pytest exit code {code}):\n{sink.getvalue()[-3000:]}")
    return grabber.results


class _ResultGrabber:
    """Takes the results from the plugin's session at the end of the run."""

    results: dict | None = None
    interrupted: bool = False

    def pytest_keyboard_interrupt(self, excinfo):
        self.interrupted = True

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        sess = session.config.stash.get(SESSION_KEY, None)
        if sess is not None:
            self.results = sess.results


@contextlib.contextmanager
def prepared(path: Path, notes: list[str] | None = None):
    """Yield a folder holding the submission's modules: the folder itself, or a
    temporary one with a .zip's (or notebooks') contents. Raises SubmissionFormatError.

    Notebooks named after an exercise (``masks.ipynb``) become modules (``masks.py``)
    through :mod:`autograder.notebooks`; a ``.py`` of the same name wins over its notebook.
    What the conversion removed or ignored is appended to ``notes`` (warnings for the results).
    """
    path = Path(path)
    notes = [] if notes is None else notes
    if path.is_dir():
        if _notebooks_to_convert(path):
            with tempfile.TemporaryDirectory(prefix="tkit-sub-") as tmp:
                _copy_with_notebooks(path, Path(tmp), notes)
                yield Path(tmp)
            return
        yield path
    elif path.suffix == ".zip" and path.is_file():
        with tempfile.TemporaryDirectory(prefix="tkit-sub-") as tmp:
            extract_zip(path, Path(tmp), notes)
            yield _submission_root(Path(tmp))
    elif path.suffix == ".ipynb" and path.is_file():
        with tempfile.TemporaryDirectory(prefix="tkit-sub-") as tmp:
            _convert_notebook(path, Path(tmp) / f"{path.stem}.py", notes)
            yield Path(tmp)
    elif not path.exists():
        raise SubmissionFormatError(f"submission {path} does not exist")
    else:
        raise SubmissionFormatError(f"submission {path} is not a folder, a .zip or a .ipynb file")


MAX_NOTEBOOK_BYTES = 32 * 1024**2  # outputs (plots) make notebooks large; their code is capped later


def _notebooks_to_convert(folder: Path) -> list[Path]:
    """The notebooks of ``folder`` named after an exercise that have no ``.py`` beside them
    (regular files only, never symlinks; see :func:`autograder.sandbox.submission_files`)."""
    return [nb for nb in submission_files(folder, (".ipynb",))
            if nb.stem in exercises.BY_NAME and not (folder / f"{nb.stem}.py").exists()
            and nb.stat().st_size <= MAX_NOTEBOOK_BYTES]


def _copy_with_notebooks(src: Path, dest: Path, notes: list[str]) -> None:
    """The folder's modules (regular files only) plus its notebooks converted to modules."""
    for entry in submission_files(src):
        shutil.copyfile(entry, dest / entry.name)
        if entry.with_suffix(".ipynb").is_file():
            notes.append(f"{entry.stem}.ipynb: ignored, {entry.name} is graded instead "
                         f"({entry.name} 파일을 대신 채점합니다)")
    for nb in _notebooks_to_convert(src):
        _convert_notebook(nb, dest / f"{nb.stem}.py", notes)


def _convert_notebook(nb_path: Path, out: Path, notes: list[str] | None = None) -> None:
    from autograder import notebooks

    try:
        converted = notebooks.convert(nb_path)
    except notebooks.NotebookError as exc:
        raise SubmissionFormatError(str(exc)) from None
    if notes is not None:
        notes.extend(converted.warnings)
    out.write_text(converted.source, encoding="utf-8")


def _submission_root(folder: Path) -> Path:
    """The folder inside an extracted zip that holds the modules (zips often wrap one folder)."""
    names = set(exercises.NAMES)
    candidates = [folder] + sorted(p for p in folder.rglob("*") if p.is_dir() and "__MACOSX" not in p.parts)
    best = max(candidates, key=lambda d: sum((d / f"{n}.py").is_file() or (d / f"{n}.ipynb").is_file()
                                             for n in names))
    return best


def extract_zip(zip_path: Path, dest: Path, notes: list[str] | None = None) -> None:
    """Extract ``.py``/``.ipynb`` members safely (no absolute paths, no ``..``, no links,
    bounded size and count); notebooks named after an exercise become modules (their
    warnings go to ``notes``). Raises SubmissionFormatError on a bad archive."""
    try:
        with zipfile.ZipFile(zip_path) as zf:
            members = zf.infolist()
            if len(members) > MAX_ZIP_FILES:
                raise SubmissionFormatError(f"{zip_path.name}: more than {MAX_ZIP_FILES} files")
            total = 0
            for info in members:
                name = info.filename
                if info.is_dir() or not name.endswith((".py", ".ipynb")):
                    continue
                parts = Path(name).parts
                if name.startswith("/") or ".." in parts or (info.external_attr >> 16) & 0o170000 == 0o120000:
                    raise SubmissionFormatError(f"{zip_path.name}: unsafe member {name!r}")
                total += info.file_size
                if total > MAX_ZIP_BYTES:
                    raise SubmissionFormatError(f"{zip_path.name}: more than {MAX_ZIP_BYTES // 2**20} MB unpacked")
                target = dest.joinpath(*parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)
            for nb in sorted(dest.rglob("*.ipynb")):
                if nb.stem in exercises.BY_NAME and not nb.with_suffix(".py").exists():
                    _convert_notebook(nb, nb.with_suffix(".py"), notes)
    except zipfile.BadZipFile as exc:
        raise SubmissionFormatError(f"{zip_path.name}: not a valid zip file ({exc})") from None


def grade_submission(path: Path, out_dir: Path | None = None, **options) -> dict:
    """Grade the submission at ``path`` (folder, .zip or .ipynb) and, with ``out_dir``,
    write ``out_dir/results.json``. ``options`` go to :func:`run_suites`.

    ``results["extra_data"]["warnings"]`` lists what preparing the submission removed or
    ignored (IPython magics in notebooks, a notebook shadowed by its ``.py``); they are
    also appended to ``results["output"]``."""
    notes: list[str] = []
    with prepared(Path(path), notes) as folder:
        results = run_suites(folder, **options)
    results["extra_data"]["submission"] = str(path)
    results["extra_data"]["warnings"] = notes
    if notes:
        results["output"] = "\n".join([results["output"], *(f"warning: {n}" for n in notes)])
    if out_dir is not None:
        write_json_atomic(Path(out_dir) / "results.json", results)
    return results
