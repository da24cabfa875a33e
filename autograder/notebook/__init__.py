"""Self-check inside a Jupyter notebook: ``import autograder.notebook as tkit; tkit.check("masks")``.

:func:`check` runs one exercise's public tests on the code of the notebook's exercise cells,
exactly as ``tkit check <exercise> --path FOLDER`` does (it runs that command in a fresh
process: the sandbox, the suites and the reports are the same; nothing is graded in the
kernel, whose state the student's cells may have changed), and returns a :class:`CheckReport`
that Jupyter shows as rich output (``_repr_html_``: the table, the failures with the named
mistake and its hint, the pictures) and a terminal as plain text.

Which code is checked:

* **The saved notebook**, when it is found: ``notebook=`` (a path), else the path the front end
  gives the kernel (VS Code's ``__vsc_ipynb_file__``, Jupyter Server's ``JPY_SESSION_NAME``),
  else ``<exercise>.ipynb`` in the kernel's working folder. It is converted by the grader's own
  intake (:mod:`autograder.intake.notebooks`: the set-up and self-check cells left out), so the
  check sees exactly what ``tkit grade`` will grade. When a function or class that the kernel
  has defined differs from the saved one (the student ran an edited cell without saving), the
  saved file is still what is checked, and the report says which definitions differ and to
  save (Ctrl+S) and check again: the file is what is handed in.
* **The kernel's definitions**, when no saved notebook is found (Colab keeps notebooks in
  Drive, out of the kernel's reach): the source of each of the exercise's names that the
  kernel defines (``inspect.getsource``, which IPython keeps per cell), after the ``import``
  statements of the cells run so far (IPython's ``In``); the report says so.

Composite exercises (encoder, decoder, transformer) import the student's components by module
name: the check takes ``<component>.py`` or ``<component>.ipynb`` from the notebook's folder.
Importing this module also lets the kernel import them the same way (``from masks import
make_padding_mask`` runs ``masks.ipynb``'s exercise cells) through :class:`NotebookFinder`.

Modules: :mod:`.kernel` (finding the notebook, the kernel's definitions, the finder) and
:mod:`.report` (:class:`CheckReport`). In: the kernel and the saved notebook. Out: a report.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder import exercises, i18n
from autograder.i18n import _
from autograder.notebook.kernel import (NotebookFinder, find_notebook, install_finder, kernel_module,
                                        unsaved_definitions, user_ns)
from autograder.notebook.report import CheckReport

__all__ = ["check", "CheckReport", "NotebookFinder", "find_notebook", "kernel_module", "unsaved_definitions"]


def _component_files(exercise: str, folder: Path | None) -> tuple[list[Path], list[str]]:
    """The component files a composite needs from ``folder`` (``.py`` wins), and those missing."""
    found, missing = [], []
    for dep in exercises.get(exercise).depends:
        candidates = [folder / f"{dep}.py", folder / f"{dep}.ipynb"] if folder else []
        path = next((p for p in candidates if p.is_file()), None)
        if path is None:
            missing.append(dep)
        else:
            found.append(path)
    return found, missing


def _kit_pythonpath() -> str:
    """A PYTHONPATH under which a fresh interpreter imports this same ``autograder`` package."""
    here = str(Path(__file__).resolve().parents[2])
    rest = os.environ.get("PYTHONPATH", "")
    return here + (os.pathsep + rest if rest else "")


def run_check(folder: Path, exercise: str, *, lang: str | None, seed: int, pictures: bool,
              timeout: float | None) -> tuple[object, str]:
    """Run ``tkit check EXERCISE --path FOLDER`` in a fresh process; ``(Results or None, error)``."""
    from autograder.results.model import Results

    out = folder.parent / "results.json"
    command = [sys.executable, "-m", "autograder.cli", "check", exercise, "--path", str(folder),
               "--json", str(out), "--seed", str(seed)]
    if lang:
        command += ["--lang", lang]
    if pictures:
        command += ["--html", str(folder.parent / "report.html")]
    env = dict(os.environ, PYTHONPATH=_kit_pythonpath())
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=str(folder.parent), stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, _("the check took more than {seconds} s").format(seconds=timeout)
    if not out.is_file():
        tail = (done.stderr or done.stdout or "").strip().splitlines()[-5:]
        return None, "\n".join(tail) or f"exit status {done.returncode}"
    return Results.from_json(json.loads(out.read_text(encoding="utf-8"))), ""


def check(exercise: str, *, notebook=None, lang: str | None = None, seed: int = 0, pictures: bool = True,
          verbose: bool = False, timeout: float | None = None) -> CheckReport:
    """Run the public tests of ``exercise`` on this notebook's code (see the module docstring).

    Args:
        exercise: the exercise's name (``"positional_encoding"``).
        notebook: the saved notebook to check [default: found from the kernel, else
            ``<exercise>.ipynb`` in the working folder, else the kernel's definitions].
        lang: ``"ko"`` for Korean, ``"en"`` for English [default: ``TKIT_LANG``, then the locale].
        seed: the seed of the random inputs, as ``tkit check --seed``.
        pictures: draw the report's pictures (a PE heatmap, attention weights, ...).
        verbose: the text report shows every failing test's message (as ``tkit check -v``).
        timeout: seconds before the check is given up [default: none].

    Returns:
        A :class:`CheckReport`; Jupyter shows it when it is the cell's last expression. It never
        raises for the student's code: a failing, unfinished or broken exercise is a report.

    Raises:
        ValueError: for an unknown exercise or language.
    """
    exercise = exercises.get(exercise).name
    lang = i18n.check_language(lang)
    report = CheckReport(exercise, lang=lang, verbose=verbose)
    with i18n.using(lang):
        path = find_notebook(exercise, notebook)
        with tempfile.TemporaryDirectory(prefix="tkit-nbcheck-") as tmp:
            folder = Path(tmp) / "submission"
            folder.mkdir()
            if path is not None:
                from autograder.intake import notebooks

                report.source = "notebook"
                shutil.copyfile(path, folder / f"{exercise}.ipynb")
                try:
                    saved = notebooks.convert(path).source
                except notebooks.NotebookError:
                    saved = ""
                differ = unsaved_definitions(saved, user_ns())
                if differ:
                    report.notes.append(_(
                        "{names}: the kernel runs another version than the saved notebook {file}, which is "
                        "what was checked (and what is graded). Save the notebook (Ctrl+S) and check again."
                    ).format(names=", ".join(differ), file=path.name))
                components, missing = _component_files(exercise, path.parent)
            else:
                report.source = "kernel"
                ns = user_ns()
                history = [c for c in ns.get("In", []) if isinstance(c, str)]
                source, found = kernel_module(exercise, ns, history)
                (folder / f"{exercise}.py").write_text(source, encoding="utf-8")
                report.notes.append(_(
                    "no saved notebook {file} found: checked this kernel's definitions ({names}). "
                    "Pass notebook=\"path/to/{file}\" to check the file you hand in."
                ).format(file=f"{exercise}.ipynb", names=", ".join(found) or "-"))
                components, missing = _component_files(exercise, Path.cwd())
            for file in components:
                shutil.copyfile(file, folder / file.name)
            if missing:
                report.notes.append(_("components not found beside the notebook: {names}").format(
                    names=", ".join(f"{m}.ipynb" for m in missing)))
            report.results, report.error = run_check(folder, exercise, lang=lang, seed=seed,
                                                     pictures=pictures, timeout=timeout)
    return report


install_finder()
