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
"""

from __future__ import annotations

import ast
import html
import importlib.abc
import importlib.util
import inspect
import json
import linecache
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from autograder import exercises, i18n
from autograder.i18n import _

__all__ = ["check", "CheckReport", "NotebookFinder"]


def _ipython():
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def _user_ns() -> dict:
    shell = _ipython()
    return getattr(shell, "user_ns", None) or {}


# --- finding the code -------------------------------------------------------------------------

def find_notebook(exercise: str, notebook=None) -> Path | None:
    """The saved notebook of ``exercise`` (see the module docstring), or None."""
    if notebook is not None:
        path = Path(notebook).expanduser()
        if not path.is_file():
            raise FileNotFoundError(_("no notebook at {path}").format(path=path))
        return path.resolve()
    candidates = []
    vsc = _user_ns().get("__vsc_ipynb_file__")
    if isinstance(vsc, str):
        candidates.append(Path(vsc))
    session = os.environ.get("JPY_SESSION_NAME", "")
    if session.endswith(".ipynb"):
        candidates += [Path(session), Path.cwd() / Path(session).name]
    candidates.append(Path.cwd() / f"{exercise}.ipynb")
    for path in candidates:
        if path.is_absolute() and path.is_file() and path.stem == exercise:
            return path.resolve()
    return None


def _definitions(source: str) -> dict[str, str]:
    """name -> source of each top-level function and class of ``source`` (empty if it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    return {node.name: ast.get_source_segment(source, node) or ""
            for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def _kernel_source(obj) -> str | None:
    """The source of a function or class the kernel defined, or None. A class defined in a cell
    has no file for ``inspect`` before Python 3.13: it is found through one of its methods, in
    the cell IPython keeps in :mod:`linecache`."""
    try:
        return textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        pass
    if not isinstance(obj, type):
        return None
    for member in vars(obj).values():
        func = getattr(member, "__func__", None) or getattr(member, "fget", None) or member
        code = getattr(func, "__code__", None)
        if code is None:
            continue
        text = "".join(linecache.getlines(code.co_filename))
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == obj.__name__ \
                    and node.lineno <= code.co_firstlineno <= (node.end_lineno or node.lineno):
                return textwrap.dedent(ast.get_source_segment(text, node) or "") or None
    return None


def _normal(code: str) -> str:
    return "\n".join(line.rstrip() for line in code.strip().splitlines())


def unsaved_definitions(saved_source: str, namespace: dict) -> list[str]:
    """The top-level functions and classes of ``saved_source`` that ``namespace`` (the kernel's)
    defines from other code: edited and run, not saved."""
    differ = []
    for name, code in _definitions(saved_source).items():
        obj = namespace.get(name)
        if obj is None or getattr(obj, "__module__", None) != "__main__":
            continue
        kernel = _kernel_source(obj)
        if kernel is not None and _normal(kernel) != _normal(code):
            differ.append(name)
    return differ


def _stub_names(exercise: str) -> list[str]:
    """The exercise's top-level names (functions, classes, aliases), from the kit's stub."""
    from autograder import paths

    stub = paths.exercises_dir() / f"{exercise}.py"
    tree = ast.parse(stub.read_text(encoding="utf-8"))
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return names


def kernel_module(exercise: str, namespace: dict, history: list[str]) -> tuple[str, list[str]]:
    """``(module source, names found)`` from the kernel: the top-level imports of the cells run
    so far (``history``, IPython's ``In``; self-check statements left out), then the source of
    each of the exercise's names that ``namespace`` defines (an alias as ``name = other``)."""
    from autograder.intake import notebooks

    imports: list[str] = []
    for cell in history:
        try:
            tree = ast.parse(notebooks._strip_check_calls(cell or ""))
        except (SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                code = ast.get_source_segment(notebooks._strip_check_calls(cell), node) or ""
                if code and code not in imports and "autograder.notebook" not in code:
                    imports.append(code)
    parts, found = ["\n".join(imports)] if imports else [], []
    for name in _stub_names(exercise):
        obj = namespace.get(name)
        if obj is None:
            continue
        if getattr(obj, "__name__", name) != name and getattr(obj, "__name__", None) in namespace:
            parts.append(f"{name} = {obj.__name__}")
            found.append(name)
            continue
        code = _kernel_source(obj) if getattr(obj, "__module__", None) == "__main__" else None
        if code:
            parts.append(code.rstrip("\n"))
            found.append(name)
    return "\n\n\n".join(parts) + "\n", found


# --- the report -----------------------------------------------------------------------------

_CSS_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")


def _scoped_css(css: str, scope: str) -> str:
    """The report's stylesheet with every selector under ``scope`` (``body``/``main``/``:root``
    become the scope itself), so the page around the output keeps its own styles."""
    def rule(match):
        selectors = []
        for sel in match.group(1).split(","):
            sel = sel.strip()
            if sel in (":root", "body", "main", "*"):
                selectors.append(scope if sel != "*" else f"{scope} *")
            else:
                selectors.append(f"{scope} {sel}")
        return f"{', '.join(selectors)} {{{match.group(2)}}}"

    out, rest = [], css
    media = re.compile(r"(@media[^{]+)\{((?:[^{}]*\{[^{}]*\})*)\s*\}")
    pos = 0
    for m in media.finditer(rest):
        out.append(_CSS_RULE.sub(rule, rest[pos:m.start()]))
        out.append(f"{m.group(1)}{{{_CSS_RULE.sub(rule, m.group(2))}}}")
        pos = m.end()
    out.append(_CSS_RULE.sub(rule, rest[pos:]))
    return "".join(out)


@dataclass
class CheckReport:
    """One :func:`check` run: ``results`` (a :class:`~autograder.results.model.Results`, or None
    when the check could not run), ``notes`` (what the student should know about the code that
    was checked), ``error`` (why it could not run). Shown as HTML in Jupyter, text elsewhere."""

    exercise: str
    results: object = None
    notes: list[str] = field(default_factory=list)
    error: str = ""
    lang: str | None = None
    source: str = ""   # "notebook" (the saved file) or "kernel" (the kernel's definitions)

    @property
    def passed(self) -> bool:
        """Whether every public test of the exercise passed."""
        return self.results is not None and bool(self.results.tests) and all(t.passed for t in self.results.tests)

    @property
    def score(self) -> float:
        return float(self.results.score) if self.results is not None else 0.0

    def text(self) -> str:
        """The plain-text report: what ``tkit check`` prints (no colour)."""
        from io import StringIO

        from rich.console import Console

        from autograder.reports.console import print_results

        buffer = StringIO()
        with i18n.using(self.lang):
            lines = [_("Note: {note}").format(note=n) for n in self.notes]
            if self.error or self.results is None:
                lines.append(_("The self-check could not run: {error}").format(error=self.error))
                return "\n".join(lines) + "\n"
            console = Console(file=buffer, width=100, color_system=None, force_terminal=False,
                              force_jupyter=False, highlight=False)
            print_results(self.results, console=console)
        return "\n".join(lines + [buffer.getvalue().rstrip("\n")]) + "\n"

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer, cycle):   # IPython's plain-text display
        printer.text(self.text())

    def _repr_html_(self) -> str:
        from autograder.reports import render

        scope = "tkit-check-report"
        with i18n.using(self.lang):
            notes = "".join('<p class="tkit-note">' + html.escape(_("Note: {note}").format(note=n)) + "</p>"
                            for n in self.notes)
            if self.error or self.results is None:
                message = html.escape(_("The self-check could not run: {error}").format(error=self.error))
                return f'<div class="{scope}">{notes}<pre>{message}</pre></div>'
            page = render.render_feedback(self.results, "html", self_check=True, lang=self.lang)
        style = re.search(r"<style>(.*?)</style>", page, flags=re.S)
        main = re.search(r"<main>(.*?)</main>", page, flags=re.S)
        css = _scoped_css(style.group(1), f".{scope}") if style else ""
        body = main.group(1) if main else html.escape(self.text())
        note_css = f".{scope} .tkit-note {{ background: #fff8c5; border: 1px solid #d4a72c; padding: 6px 10px; }}"
        return f'<div class="{scope}"><style>{css}\n{note_css}</style>{notes}{body}</div>'


# --- the check ------------------------------------------------------------------------------

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
    here = str(Path(__file__).resolve().parent.parent)
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
          timeout: float | None = None) -> CheckReport:
    """Run the public tests of ``exercise`` on this notebook's code (see the module docstring).

    Args:
        exercise: the exercise's name (``"positional_encoding"``).
        notebook: the saved notebook to check [default: found from the kernel, else
            ``<exercise>.ipynb`` in the working folder, else the kernel's definitions].
        lang: ``"ko"`` for Korean, ``"en"`` for English [default: ``TKIT_LANG``, then the locale].
        seed: the seed of the random inputs, as ``tkit check --seed``.
        pictures: draw the report's pictures (a PE heatmap, attention weights, ...).
        timeout: seconds before the check is given up [default: none].

    Returns:
        A :class:`CheckReport`; Jupyter shows it when it is the cell's last expression. It never
        raises for the student's code: a failing, unfinished or broken exercise is a report.

    Raises:
        ValueError: for an unknown exercise or language.
    """
    exercise = exercises.get(exercise).name
    lang = i18n.check_language(lang)
    report = CheckReport(exercise, lang=lang)
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
                differ = unsaved_definitions(saved, _user_ns())
                if differ:
                    report.notes.append(_(
                        "{names}: the kernel runs another version than the saved notebook {file}, which is "
                        "what was checked (and what is graded). Save the notebook (Ctrl+S) and check again."
                    ).format(names=", ".join(differ), file=path.name))
                components, missing = _component_files(exercise, path.parent)
            else:
                report.source = "kernel"
                ns = _user_ns()
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


# --- importing the student's other notebooks in the kernel ------------------------------------

class NotebookFinder(importlib.abc.MetaPathFinder):
    """Imports an exercise module from ``<exercise>.ipynb`` in the working folder when no
    ``<exercise>.py`` is found first (it sits last on ``sys.meta_path``): the module is the
    notebook's exercise cells, as the grader converts them (self-check cells left out)."""

    def find_spec(self, fullname, path=None, target=None):
        if path is not None or fullname not in exercises.BY_NAME:
            return None
        file = Path.cwd() / f"{fullname}.ipynb"
        if not file.is_file():
            return None
        return importlib.util.spec_from_loader(fullname, _NotebookLoader(file), origin=str(file))


class _NotebookLoader(importlib.abc.Loader):
    def __init__(self, file: Path):
        self.file = file

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        from autograder.intake import notebooks

        source = notebooks.convert(self.file).source
        module.__file__ = str(self.file)
        exec(compile(source, str(self.file), "exec"), module.__dict__)


def install_finder() -> None:
    """Put one :class:`NotebookFinder` at the end of ``sys.meta_path`` (idempotent)."""
    if not any(isinstance(f, NotebookFinder) for f in sys.meta_path):
        sys.meta_path.append(NotebookFinder())


install_finder()
