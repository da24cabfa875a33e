"""The kernel's side of the notebook self-check: where the saved notebook is, what the kernel
defines (and whether it differs from the saved file), and importing the student's other
notebooks (:class:`NotebookFinder`). See :mod:`autograder.notebook`."""

from __future__ import annotations

import ast
import importlib.abc
import importlib.util
import inspect
import linecache
import os
import sys
import textwrap
from pathlib import Path

from autograder import exercises
from autograder.i18n import _


def _ipython():
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def user_ns() -> dict:
    shell = _ipython()
    return getattr(shell, "user_ns", None) or {}


def find_notebook(exercise: str, notebook=None) -> Path | None:
    """The saved notebook of ``exercise`` (see the module docstring), or None."""
    if notebook is not None:
        path = Path(notebook).expanduser()
        if not path.is_file():
            raise FileNotFoundError(_("no notebook at {path}").format(path=path))
        return path.resolve()
    candidates = []
    vsc = user_ns().get("__vsc_ipynb_file__")
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
    """``code`` as its syntax tree (comments, blank lines and layout do not count: ``inspect``
    keeps a comment after a function's last line, the saved file's segment ends at the last
    statement), or its stripped lines when it does not parse."""
    try:
        return ast.dump(ast.parse(textwrap.dedent(code)))
    except (SyntaxError, ValueError):
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
    names = notebooks.notebook_check_names(history)
    for cell in history:
        cell = notebooks._strip_check_calls(cell or "", names)
        try:
            tree = ast.parse(cell)
        except (SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                code = ast.get_source_segment(cell, node) or ""
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
