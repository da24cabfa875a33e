"""The student edition of the kit (``tkit release --out DIR``).

The edition holds what a student needs to do the exercises and self-check them:

* ``exercises/``: the stubs, generated from ``solutions/`` by :mod:`autograder.exports.stubs` (the same
  code path as the committed ``exercises/``);
* the public suites (``autograder/suites/public/``, ``pytest.ini``) and the engine modules they
  and the student commands (:data:`STUDENT_COMMANDS`) import, found by following the
  ``autograder`` imports of their source (:func:`engine_modules`), plus the child package;
* ``autograder/cli.py`` (``tkit --help`` lists only the student commands) with the ``cli.py``
  shim, ``setup.py`` (the same packaging as the kit's: templates, data and stubs as package
  data), a ``pyproject.toml`` and a bilingual ``README.md`` rendered from ``templates/release/``;
* the exercise contract (``exercises/README.md``), the shipped MNIST test set with its licence
  (``datasets/mnist/``), and the report templates;
* with ``notebooks=True`` (``--notebooks``), the notebook edition beside them: ``notebooks/<exercise>.ipynb``,
  made from the stubs and the contract by :mod:`autograder.exports.notebook_edition`, each ending in a
  self-check cell (:mod:`autograder.notebook`).

It never holds solution code, hidden suites, the mistake catalog or the degenerate implementations
(:data:`INSTRUCTOR_ONLY`): :func:`reference_material` scans a written edition for them, and :func:`build_edition` refuses
to finish when the scan finds anything.
"""

from __future__ import annotations

import ast
import re
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

from autograder import __version__, cli, exercises, paths
from autograder.exports import stubs

# tkit sub-commands a student uses; their modules are shipped when they exist.
STUDENT_COMMANDS = ("check", "list", "data", "doctor")
# Engine roots besides the commands: the pytest plugin and what grading calls lazily.
ENGINE_ROOTS = ("autograder.cli", "autograder.run.plugin", "autograder.intake.notebooks", "autograder.mistakes.implementations",
                "autograder.notebook")
# Paths (relative to the kit root) that are reference-only and never shipped.
INSTRUCTOR_ONLY = ("solutions", "autograder/mistakes/catalog", "autograder/mistakes/degenerate.py",
                   "autograder/suites/hidden")
# Runtime dependencies that only instructor commands import (``tkit similarity``): not in the
# edition's pyproject.toml (tests/test_exports_release.py checks that no shipped module imports them).
INSTRUCTOR_DEPENDENCIES = ("copydetect",)
# Non-Python files shipped beside the modules, as glob patterns relative to the kit root.
DATA_FILES = ("autograder/suites/pytest.ini", "autograder/locale/**/*.mo", "autograder/locale/**/*.po",
              "datasets/*.json", "datasets/*.md", "datasets/mnist/*.gz", "datasets/mnist/README.md",
              "datasets/mnist/MD5SUMS", "exercises/README.md", "docs/DESIGN.md",
              "cli.py", "setup.py",
              "templates/*.html", "templates/*.md")  # report templates (tkit check --html); not subfolders
# The kit's own top-level folders, which --out may not point into.
KIT_FOLDERS = frozenset({"autograder", "solutions", "exercises", "templates", "tests", "datasets",
                         "examples", ".git", ".venv"})
# A solution region shorter than this (stripped) is too generic to look for verbatim.
MIN_REGION_CHARS = 24


class ReleaseError(Exception):
    """The edition cannot be written (the output folder is in the way, or reference material leaked)."""


@dataclass
class Edition:
    """What :func:`build_edition` wrote: the folder and the files in it (relative paths)."""

    root: Path
    files: list[str]


def _module_file(module: str, root: Path) -> Path | None:
    """The file of ``autograder.x.y`` under ``root``: ``x/y.py`` or ``x/y/__init__.py``."""
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported_modules(path: Path) -> set[str]:
    """Every ``autograder...`` module that ``path`` imports anywhere (top level or in functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "autograder")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] == "autograder":
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)  # submodules, if they are
    return found


def _is_instructor_only(relative: Path) -> bool:
    text = relative.as_posix()
    return any(text == p or text.startswith(p + "/") for p in INSTRUCTOR_ONLY)


def engine_modules(kit_root: Path | None = None) -> list[Path]:
    """The engine's ``.py`` files the student edition needs, relative to the kit root.

    Starts from the student commands' modules, :data:`ENGINE_ROOTS` and the public suites,
    and follows their ``autograder`` imports (including imports inside functions). Parent
    packages' ``__init__.py`` and the whole child package come along; instructor-only
    modules (:data:`INSTRUCTOR_ONLY`) are never followed, so code that needs them must
    cope with their absence.
    """
    root = Path(kit_root or paths.kit_root())
    todo = [f"autograder.commands.{_command_module(c)}" for c in STUDENT_COMMANDS] + list(ENGINE_ROOTS)
    todo += ["autograder.child"]
    seen_files: set[Path] = set()
    queue: list[Path] = sorted((root / "autograder/suites/public").glob("*.py"))
    seen_modules: set[str] = set()
    while todo or queue:
        if todo:
            module = todo.pop()
            if module in seen_modules:
                continue
            seen_modules.add(module)
            parts = module.split(".")
            todo += [".".join(parts[:i]) for i in range(1, len(parts))]
            file = _module_file(module, root)
            if file is None:
                continue
            queue.append(file)
        else:
            file = queue.pop()
            rel = file.relative_to(root)
            if file in seen_files or _is_instructor_only(rel):
                continue
            seen_files.add(file)
            todo += sorted(_imported_modules(file))
    child = root / "autograder" / "child"
    seen_files.update(p for p in child.rglob("*.py") if "__pycache__" not in p.parts)
    return sorted(f.relative_to(root) for f in seen_files if not _is_instructor_only(f.relative_to(root)))


def _command_module(name: str) -> str:
    """The module of a ``tkit`` sub-command, from ``cli.COMMANDS`` (``list`` -> ``list_exercises``)."""
    return cli.COMMANDS[name][0].rsplit(".", 1)[-1]


def _data_files(root: Path) -> list[Path]:
    files = {p for pattern in DATA_FILES for p in root.glob(pattern) if p.is_file()}
    return sorted(p.relative_to(root) for p in files)


def _render(template: str, **context) -> str:
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(paths.templates_dir())),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.get_template(template).render(**context)


def kit_dependencies(kit_root: Path | None = None) -> list[str]:
    """The runtime ``dependencies`` of the kit's ``pyproject.toml`` that the edition needs: all
    but :data:`INSTRUCTOR_DEPENDENCIES` (requirement strings, e.g. ``"torch>=2.2"``)."""
    root = Path(kit_root or paths.kit_root())
    data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    return [dep for dep in data["project"]["dependencies"]
            if re.split(r"[\s<>=!~;\[(]", dep, maxsplit=1)[0].lower() not in INSTRUCTOR_DEPENDENCIES]


def _check_out(out: Path, root: Path) -> None:
    """ReleaseError when writing (or replacing) ``out`` would touch the kit itself."""
    if out == root or out in root.parents:
        raise ReleaseError(f"--out {out} would replace the kit at {root}; choose another folder")
    if root in out.parents and out.relative_to(root).parts[0] in KIT_FOLDERS:
        raise ReleaseError(f"--out {out} is inside the kit's own {out.relative_to(root).parts[0]}/; "
                           "choose a new folder")


def build_edition(out: Path, *, force: bool = False, notebooks: bool = False) -> Edition:
    """Write the student edition into ``out`` (see the module docstring).

    Args:
        out: the folder to create. It must not exist or be empty, unless ``force``, which
            deletes it first.
        force: replace an existing ``out``.
        notebooks: also write the notebook edition, ``out/notebooks/<exercise>.ipynb``.

    Returns:
        An :class:`Edition` listing the files written.

    Raises:
        ReleaseError: when ``out`` is in the way or the finished edition holds reference
            material (the folder is then deleted).
        FileNotFoundError: when this kit has no ``solutions/`` to make the stubs from
            (a student edition cannot make another one).
    """
    root = paths.kit_root()
    solutions = paths.solutions_dir()
    if solutions is None:
        raise FileNotFoundError("no solutions/ here: run tkit release from the instructor kit")
    out = Path(out).resolve()
    _check_out(out, root)
    if out.exists() and any(out.iterdir()):
        if not force:
            raise ReleaseError(f"{out} exists and is not empty; use --force to replace it")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    for rel in engine_modules(root) + _data_files(root):
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / rel, out / rel)
    public = out / "autograder" / "suites" / "public"
    public.mkdir(parents=True, exist_ok=True)
    for suite in sorted((root / "autograder" / "suites" / "public").glob("*.py")):
        shutil.copyfile(suite, public / suite.name)
    stubs.generate_exercises(solutions, out / "exercises")
    if notebooks:
        from autograder.exports import notebook_edition

        notebook_edition.write_notebooks(out / "exercises", out / "exercises" / "README.md",
                                         out / notebook_edition.FOLDER)
    context = dict(version=__version__, dependencies=kit_dependencies(root), exercises=exercises.EXERCISES,
                   total=exercises.total_points(), notebooks=notebooks)
    (out / "pyproject.toml").write_text(_render("release/pyproject.toml.j2", **context), encoding="utf-8")
    (out / "README.md").write_text(_render("release/README.md.j2", **context), encoding="utf-8")
    problems = reference_material(out, solutions)
    if problems:
        shutil.rmtree(out)
        raise ReleaseError("the edition would ship reference material:\n" + "\n".join(problems))
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    return Edition(out, files)


def solution_regions(solutions_dir: Path) -> list[tuple[str, str]]:
    """``(file name, region body)`` for every ``### BEGIN SOLUTION`` region of the solutions,
    the body being the lines between the markers without the hint comments."""
    regions = []
    for path in sorted(Path(solutions_dir).glob("*.py")):
        body: list[str] | None = None
        for line in path.read_text(encoding="utf-8").splitlines():
            stripped = line.strip()
            if stripped == stubs.BEGIN_MARKER:
                body = []
            elif stripped == stubs.END_MARKER and body is not None:
                regions.append((path.name, "\n".join(body)))
                body = None
            elif body is not None and not stripped.startswith(tuple(stubs.HINT_PREFIXES)):
                body.append(line)
    return regions


def _cell_sources(text: str) -> str:
    """The sources of a notebook's cells, one after another ('' when it is not notebook JSON)."""
    import json

    try:
        data = json.loads(text)
    except ValueError:
        return ""
    cells = data.get("cells") if isinstance(data, dict) else None
    parts = []
    for cell in cells if isinstance(cells, list) else []:
        source = cell.get("source", "") if isinstance(cell, dict) else ""
        parts.append("".join(source) if isinstance(source, list) else str(source))
    return "\n".join(parts)


def reference_material(edition: Path, solutions_dir: Path | None = None) -> list[str]:
    """Reasons the folder ``edition`` is not fit for students (empty when it is fit).

    Looks for instructor-only paths (:data:`INSTRUCTOR_ONLY`), any file holding nbgrader's
    solution marker, and, given ``solutions_dir``, the code of any solution region (at least
    :data:`MIN_REGION_CHARS` characters) copied verbatim into a file (a notebook's cell sources
    are scanned too, not only its JSON text).
    """
    edition = Path(edition)
    problems = []
    files = [p for p in edition.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    for p in files:
        rel = p.relative_to(edition)
        if _is_instructor_only(rel):
            problems.append(f"{rel.as_posix()}: instructor-only path")
    regions = [(name, body) for name, body in solution_regions(solutions_dir)
               if len(body.strip()) >= MIN_REGION_CHARS] if solutions_dir else []
    for p in files:
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        rel = p.relative_to(edition).as_posix()
        if p.suffix == ".ipynb":   # JSON escapes the cells' code: scan their sources as well
            text += "\n" + _cell_sources(text)
        if stubs.BEGIN_MARKER in text:
            problems.append(f"{rel}: holds the solution marker {stubs.BEGIN_MARKER!r}")
        for name, body in regions:
            if body in text:
                problems.append(f"{rel}: holds solution code from solutions/{name}")
                break
    return problems
