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
* The notebook edition's self-check cells (tag :data:`CHECK_TAG` in the cell's
  ``metadata.tags``) are left out, and so is the self-check call itself wherever a student put
  it (a copied cell loses its tag): top-level statements that import
  :data:`CHECK_MODULE` or call its ``check`` become ``pass`` (see :func:`_strip_check_calls`).
  So the graded module is exactly the exercise's cells. Cell metadata is student data: only a
  ``tags`` list's first :data:`MAX_TAGS` string entries and ``nbgrader``'s two flags, when they
  have the right types, are read.

Notebooks are graded outside the student's kernel: an nbgrader course's submissions go through
``tkit nbgrader grade`` (:mod:`autograder.exports.nbgrader_grading`), which uses this conversion.
"""

from __future__ import annotations

import ast
import re
import tokenize
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from autograder.i18n import _
from autograder.intake import limits

# Cell magics whose body IPython runs as Python code: keep the body, drop the magic line.
PYTHON_BODY_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
_MAGIC_LINE = re.compile(r"^\s*(?:[A-Za-z_][\w.]*\s*=\s*)?[%!]")
_HELP_LINE = re.compile(r"^\s*[?]{1,2}\s*[\w.]+\s*$|^\s*[\w.]+\s*[?]{1,2}\s*$")
# The notebook edition's self-check: the cell tag, and the module whose check() the cell calls.
CHECK_TAG = "tkit-check"
CHECK_MODULE = "autograder.notebook"
MAX_TAGS = 32   # tags read per cell (metadata is student data)
CHECK_REMOVED = "pass  # removed: tkit self-check"


class NotebookError(ValueError):
    """The file is not a notebook the kit can read (not JSON, not nbformat, not Python)."""


class NotebookWarning(UserWarning):
    """Something in a notebook was removed or ignored while turning it into a module."""


@dataclass
class Conversion:
    """The module source made from a notebook, and the warnings about what was removed."""

    source: str
    warnings: list[str] = field(default_factory=list)


class _StatementTracker:
    """Whether the lines fed so far end inside an open statement (a string, brackets or a
    backslash continuation), found by one pass of :mod:`tokenize` over the whole cell.

    The tokenizer pulls lines through :meth:`readline`, which asks ``decide(line, open)`` what
    to feed it: the cell is tokenized once, line by line, so cleaning is linear in its size
    (re-tokenizing the kept prefix for every magic line was quadratic). The last line fed
    closed its statement when the tokenizer ended it (NEWLINE, or NL outside brackets). A line
    the tokenizer rejects starts a fresh tokenizer at the next line, at statement level.
    """

    def __init__(self, lines: list[str], decide):
        self.lines = iter(lines)
        self.decide = decide
        self.kept: list[str] = []
        self._restart()

    def _restart(self) -> None:
        self.depth = 0          # open brackets
        self.rows = 0           # lines fed to the current tokenizer
        self.ended = 0          # the last of them whose line ended a statement (or was blank)

    def readline(self) -> str:
        line = next(self.lines, None)
        if line is None:
            return ""
        inside = self.rows > 0 and (self.depth > 0 or self.ended != self.rows)
        line = self.decide(line, inside)
        self.kept.append(line)
        self.rows += 1
        return line + "\n"

    def run(self) -> list[str]:
        """Feed every line; returns the lines as ``decide`` kept or replaced them."""
        while True:
            fed = len(self.kept)
            try:
                for tok in tokenize.generate_tokens(self.readline):
                    if tok.type == tokenize.OP and tok.string in "([{":
                        self.depth += 1
                    elif tok.type == tokenize.OP and tok.string in ")]}":
                        self.depth = max(0, self.depth - 1)
                    elif tok.type in (tokenize.NEWLINE, tokenize.NL):
                        self.ended = tok.start[0]
                return self.kept
            except (tokenize.TokenError, SyntaxError):   # IndentationError is a SyntaxError
                self._restart()
                if len(self.kept) == fed:   # nothing more was read: the lines are all fed
                    return self.kept


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
            notes.append(_("{where}: removed the cell magic {text}; its body is kept").format(
                where=where, text=repr(text)))
            lines[first] = ""
        else:
            notes.append(_("{where}: left out the whole cell, whose cell magic {text} is not Python").format(
                where=where, text=repr(text)))
            return None
    line_no = iter(range(1, len(lines) + 1))

    def decide(line: str, inside_statement: bool) -> str:
        i = next(line_no)
        if inside_statement or not (_MAGIC_LINE.match(line) or _HELP_LINE.match(line)):
            return line
        indent = line[: len(line) - len(line.lstrip())]
        where, text = _describe(name, cell_no, i, line)
        notes.append(_("{where}: removed the IPython magic or shell command {text}").format(
            where=where, text=repr(text)))
        return f"{indent}pass  # removed: IPython magic or shell command"

    kept = _StatementTracker(lines, decide).run()
    return "\n".join(kept + lines[len(kept):])


def _metadata(cell) -> dict:
    meta = cell.get("metadata") if isinstance(cell, dict) else None
    return meta if isinstance(meta, dict) else {}


def _is_grader_cell(cell) -> bool:
    meta = _metadata(cell).get("nbgrader")
    if not isinstance(meta, dict):
        return False
    return meta.get("grade") is True and meta.get("solution") is not True


def is_check_cell(cell) -> bool:
    """Whether the cell carries the notebook edition's self-check tag (:data:`CHECK_TAG`)."""
    tags = _metadata(cell).get("tags")
    if not isinstance(tags, list):
        return False
    return any(isinstance(tag, str) and tag == CHECK_TAG for tag in tags[:MAX_TAGS])


def _check_names(tree) -> tuple[set[str], set[str]]:
    """(names bound to :data:`CHECK_MODULE`, names bound to its ``check``) by the imports of ``tree``."""
    modules, checks = set(), set()
    parent, _dot, leaf = CHECK_MODULE.rpartition(".")
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == CHECK_MODULE:
                    modules.add(alias.asname or CHECK_MODULE)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            for alias in node.names:
                if node.module == parent and alias.name == leaf:
                    modules.add(alias.asname or leaf)
                elif node.module == CHECK_MODULE and alias.name == "check":
                    checks.add(alias.asname or "check")
    return modules, checks


def _is_check_statement(node, modules: set[str], checks: set[str]) -> bool:
    """An import of the self-check module, or a call of its ``check`` (maybe assigned)."""
    parent = CHECK_MODULE.rpartition(".")[0]
    if isinstance(node, ast.Import):
        return all(a.name == CHECK_MODULE for a in node.names)
    if isinstance(node, ast.ImportFrom):
        return node.level == 0 and (node.module == CHECK_MODULE or (
            node.module == parent and all(a.name == CHECK_MODULE.rpartition(".")[2] for a in node.names)))
    if isinstance(node, (ast.Expr, ast.Assign)) and isinstance(node.value, ast.Call):
        func = node.value.func
        if isinstance(func, ast.Name):
            return func.id in checks
        if isinstance(func, ast.Attribute) and func.attr == "check":
            try:
                owner = ast.unparse(func.value)
            except Exception:   # noqa: BLE001 - an odd tree is simply not a check call
                return False
            return owner in modules or owner == CHECK_MODULE
    return False


def _only_check(code: str) -> bool:
    """Whether a cleaned cell holds nothing but removed self-check statements and comments."""
    lines = [line.strip() for line in code.split("\n")]
    return CHECK_REMOVED in lines and all(not line or line.startswith("#") for line in lines
                                          if line != CHECK_REMOVED)


def _parse(code: str, needles: tuple[str, ...] = ("autograder", "check")):
    """The syntax tree of a cell that may hold a self-check statement (it mentions a ``needle``),
    else None: a cell over :data:`limits.MODULE_MAX_BYTES` (graded code that large is refused
    anyway) or one that does not parse. Parsing is thus bounded like the rest of the intake."""
    if not any(n in code for n in needles) or len(code) > limits.MODULE_MAX_BYTES:
        return None
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def notebook_check_names(codes) -> tuple[set[str], set[str]]:
    """The names bound to the self-check module and to its ``check`` by the imports of any of
    the cells ``codes`` (the set-up cell imports ``tkit`` that a later cell calls)."""
    modules, checks = set(), set()
    for code in codes:
        tree = _parse(code, ("autograder",))
        if tree is not None:
            found = _check_names(tree)
            modules |= found[0]
            checks |= found[1]
    return modules, checks


def _strip_check_calls(code: str, names: tuple[set[str], set[str]] = (frozenset(), frozenset())) -> str:
    """``code`` with its top-level self-check statements (see :func:`_is_check_statement`) made
    ``pass`` at the same lines; ``names``: the module and ``check`` names other cells bound.
    Unchanged when it does not parse (grading reports that)."""
    tree = _parse(code)
    if tree is None:
        return code
    modules, checks = _check_names(tree)
    modules, checks = modules | set(names[0]), checks | set(names[1])
    lines = code.split("\n")
    for node in tree.body:
        if _is_check_statement(node, modules, checks) and node.col_offset == 0:
            first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
            lines[first] = CHECK_REMOVED
            for i in range(first + 1, last + 1):
                lines[i] = ""
    return "\n".join(lines)


def _cell_source(cell: dict) -> str:
    source = cell.get("source", "")
    if isinstance(source, list):
        return "".join(s for s in source if isinstance(s, str))
    return source if isinstance(source, str) else ""


def convert(path: Path) -> Conversion:
    """Read the notebook at ``path`` and join its code cells into a module source.

    Args:
        path: a ``.ipynb`` file (nbformat 4, or 3 which is upgraded).

    Returns:
        A :class:`Conversion`: ``source`` is the code cells in order, separated by blank
        lines, with IPython magics and shell escapes replaced by ``pass`` (a cell magic that
        is not Python drops its cell), nbgrader test cells and self-check cells left out, and
        self-check statements elsewhere made ``pass``; ``warnings`` has one
        message per removal (in the current language, :mod:`autograder.i18n`), naming the notebook, the cell (1-based, counting every
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
        raise NotebookError(_("{name}: not a readable Jupyter notebook ({error})").format(
            name=path.name, error=f"{type(exc).__name__}: {exc}")) from None
    meta = nb.get("metadata") if isinstance(nb.get("metadata"), dict) else {}
    kernelspec, info = meta.get("kernelspec"), meta.get("language_info")
    language = ((kernelspec.get("language") if isinstance(kernelspec, dict) else None)
                or (info.get("name") if isinstance(info, dict) else None) or "python")
    if not isinstance(language, str) or language.lower() != "python":
        language = language[:40] if isinstance(language, str) else type(language).__name__
        raise NotebookError(_("{name}: the notebook's kernel language is {language}, not Python").format(
            name=path.name, language=repr(language)))
    notes: list[str] = []
    parts: list[str] = []
    cells = nb.get("cells") if isinstance(nb.get("cells"), list) else []
    code_cells = [(n, c, _cell_source(c)) for n, c in enumerate(cells, start=1)   # n counts every cell
                  if isinstance(c, dict) and c.get("cell_type") == "code"]
    names = notebook_check_names(source for _n, _c, source in code_cells)
    for cell_no, cell, source in code_cells:
        if _is_grader_cell(cell) or is_check_cell(cell):
            continue
        code = _clean_cell(source, path.name, cell_no, notes)
        if code is not None:
            code = _strip_check_calls(code, names)
        if code is not None and code.strip() and not _only_check(code):
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
