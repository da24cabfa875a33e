"""Generate the student stubs in ``exercises/`` from the reference solutions in ``solutions/``.

A solution module marks its solution code with nbgrader's markers, each on its own line at the
indentation of the function body it sits in::

    def forward(self, x):
        \"\"\"Docstring (kept).\"\"\"
        ### BEGIN SOLUTION
        # HINT: add the table to x.
        # 힌트: x 에 표를 더하세요.
        return x + self.pe[:, : x.shape[1]]
        ### END SOLUTION

``generate_stub`` replaces every region by its hint lines, rewritten as ``# TODO: ...`` /
``# 할 일: ...``, followed by ``raise NotImplementedError("<exercise>: <Qualname> is not
implemented yet (아직 구현되지 않았습니다)")`` at the region's indentation. Everything outside the
regions is kept byte for byte. ``generate_exercises`` writes one stub per solution module (with a
one-line header comment) and ``check_in_sync`` tells which committed stubs differ from what
generation produces. ``tkit release`` uses the same functions.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

from autograder.exercises import STUB_NOT_IMPLEMENTED as NOT_IMPLEMENTED_NOTE

BEGIN_MARKER = "### BEGIN SOLUTION"
END_MARKER = "### END SOLUTION"
HINT_PREFIXES = {"# HINT:": "# TODO:", "# 힌트:": "# 할 일:"}
HEADER_TEMPLATE = (
    "# Generated from solutions/{name} by tkit; edit the TODOs below "
    "(tkit 이 solutions 에서 생성한 파일입니다. TODO 부분을 채우세요).\n"
)
_CODING_RE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+")


def _quote(text: str) -> str:
    """``text`` as a double-quoted Python string literal (non-ASCII characters kept as they are)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _function_extents(tree: ast.AST, lines: list[str]) -> list[tuple[int, int, int, str]]:
    """``(first_line, last_line, def_col, qualname)`` for every function in ``tree``.

    ``first_line`` is the line after the ``def`` line.

    ``last_line`` extends the function's last statement over the comment-only lines that follow
    it at a deeper indentation than the ``def`` (an ``### END SOLUTION`` marker sits there).
    """
    extents: list[tuple[int, int, int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qualname = prefix + child.name
                last = child.end_lineno or child.lineno
                while last < len(lines):
                    text = lines[last]  # 0-based index of the line after `last`
                    stripped = text.strip()
                    if not stripped:
                        last += 1
                        continue
                    indent = len(text) - len(text.lstrip())
                    if stripped.startswith("#") and indent > child.col_offset:
                        last += 1
                        continue
                    break
                # Trailing blank lines do not belong to the function.
                while last > child.lineno and not lines[last - 1].strip():
                    last -= 1
                extents.append((child.lineno + 1, last, child.col_offset, qualname))
                visit(child, qualname + ".<locals>.")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return extents


def generate_stub(source: str, exercise: str, filename: str | None = None) -> str:
    """Turn a solution module's source into the student stub's source.

    Every ``### BEGIN SOLUTION`` / ``### END SOLUTION`` region is replaced by the region's leading
    hint lines (``# HINT: ...`` becomes ``# TODO: ...``, ``# 힌트: ...`` becomes ``# 할 일: ...``)
    and ``raise NotImplementedError("<exercise>: <Qualname> is not implemented yet (아직 구현되지
    않았습니다)")`` at the region's indentation. ``Qualname`` is the enclosing function or method
    (``PositionalEncoding.forward``), found with ``ast`` from the marker's line. Everything outside
    the regions is kept byte for byte.

    Args:
        source: the text of ``solutions/<exercise>.py``.
        exercise: the exercise (module) name, e.g. ``"positional_encoding"``.
        filename: the name to use in error messages (default ``"<exercise>.py"``).

    Returns:
        The stub's source text (importable; it keeps every import of the solution).

    Raises:
        ValueError: naming the file and line, for a source that does not parse, a nested or
            unbalanced marker, a region outside a function, a region whose markers sit in
            different functions or at different indentations, or a result that does not compile.
    """
    name = filename or f"{exercise}.py"
    try:
        tree = ast.parse(source, filename=name)
    except SyntaxError as exc:
        raise ValueError(f"{name}:{exc.lineno}: cannot parse the solution: {exc.msg}") from exc
    # Keep line endings: split on "\n" only, so "\r\n" files keep their "\r".
    lines = source.split("\n")

    markers: list[tuple[int, str]] = []  # (1-based line, marker)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type != tokenize.COMMENT:
                continue
            text = tok.string.rstrip()
            if text in (BEGIN_MARKER, END_MARKER):
                if lines[tok.start[0] - 1].strip() != text:
                    raise ValueError(
                        f"{name}:{tok.start[0]}: {text!r} must stand alone on its own line"
                    )
                markers.append((tok.start[0], text))
            elif BEGIN_MARKER[4:] in text or END_MARKER[4:] in text:
                raise ValueError(
                    f"{name}:{tok.start[0]}: malformed solution marker {text!r}; "
                    f"use exactly {BEGIN_MARKER!r} or {END_MARKER!r}"
                )
    except tokenize.TokenError as exc:
        raise ValueError(f"{name}: cannot tokenize the solution: {exc}") from exc

    regions: list[tuple[int, int]] = []
    open_line: int | None = None
    for line_no, marker in markers:
        if marker == BEGIN_MARKER:
            if open_line is not None:
                raise ValueError(
                    f"{name}:{line_no}: nested {BEGIN_MARKER!r} "
                    f"(the region opened at line {open_line} is not closed)"
                )
            open_line = line_no
        else:
            if open_line is None:
                raise ValueError(f"{name}:{line_no}: unbalanced {END_MARKER!r} without a {BEGIN_MARKER!r}")
            regions.append((open_line, line_no))
            open_line = None
    if open_line is not None:
        raise ValueError(f"{name}:{open_line}: unbalanced {BEGIN_MARKER!r} is never closed by {END_MARKER!r}")

    extents = _function_extents(tree, lines)

    def enclosing(line_no: int) -> tuple[int, int, int, str] | None:
        best = None
        for extent in extents:
            first, last, _, _ = extent
            if first <= line_no <= last and (best is None or first >= best[0]):
                best = extent
        return best

    def indent_of(line_no: int) -> str:
        text = lines[line_no - 1]
        return text[: len(text) - len(text.lstrip())]

    out: list[str] = []
    cursor = 1  # next 1-based line to copy
    for begin, end in regions:
        func = enclosing(begin)
        if func is None:
            raise ValueError(f"{name}:{begin}: solution region is outside a function")
        if enclosing(end) != func:
            raise ValueError(
                f"{name}:{end}: {END_MARKER!r} is not in the same function as the "
                f"{BEGIN_MARKER!r} at line {begin} ({func[3]})"
            )
        indent = indent_of(begin)
        if indent_of(end) != indent:
            raise ValueError(
                f"{name}:{end}: {END_MARKER!r} is not at the indentation of the "
                f"{BEGIN_MARKER!r} at line {begin}"
            )
        if len(indent) <= func[2]:
            raise ValueError(f"{name}:{begin}: solution region is not inside the body of {func[3]}")
        eol = "\r" if lines[begin - 1].endswith("\r") else ""
        out.extend(lines[cursor - 1 : begin - 1])
        for line_no in range(begin + 1, end):
            stripped = lines[line_no - 1].strip()
            for prefix, todo in HINT_PREFIXES.items():
                if stripped.startswith(prefix):
                    out.append(indent + todo + stripped[len(prefix) :] + eol)
                    break
            else:
                break
        message = f"{exercise}: {func[3]} {NOT_IMPLEMENTED_NOTE}"
        out.append(f"{indent}raise NotImplementedError({_quote(message)})" + eol)
        cursor = end + 1
    out.extend(lines[cursor - 1 :])
    stub = "\n".join(out)
    try:
        compile(stub, name, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise ValueError(f"{name}:{exc.lineno}: the generated stub does not compile: {exc.msg}") from exc
    return stub


def stub_file_text(source: str, exercise: str, filename: str | None = None) -> str:
    """The full text of ``exercises/<exercise>.py``: a header comment plus ``generate_stub``.

    The one-line header says the file was generated from ``solutions/`` by ``tkit`` and that the
    student edits the TODOs. It goes first, after a shebang or encoding line if the source has one.

    Raises:
        ValueError: as ``generate_stub``.
    """
    stub = generate_stub(source, exercise, filename=filename)
    header = HEADER_TEMPLATE.format(name=f"{exercise}.py")
    parts = stub.split("\n")
    keep = 0
    while keep < min(2, len(parts)) and (
        (keep == 0 and parts[0].startswith("#!")) or _CODING_RE.match(parts[keep])
    ):
        keep += 1
    head = "".join(part + "\n" for part in parts[:keep])
    return head + header + "\n".join(parts[keep:])


def _solution_files(solutions_dir: Path) -> list[Path]:
    """The solution modules: ``solutions_dir/*.py`` not starting with ``_``, sorted by name."""
    return sorted(p for p in Path(solutions_dir).glob("*.py") if not p.name.startswith("_"))


def generate_exercises(solutions_dir: Path, out_dir: Path) -> list[Path]:
    """Write one stub per solution module into ``out_dir``.

    Every ``solutions_dir/*.py`` whose name does not start with ``_`` becomes
    ``out_dir/<same name>`` (created if needed), with a one-line header comment saying it was
    generated from ``solutions/`` by ``tkit`` and that the student edits the TODOs. Files are
    written as UTF-8 with the solution's line endings. Stubs that no longer have a solution are
    left alone (``check_in_sync`` reports them).

    Args:
        solutions_dir: the folder of reference solutions.
        out_dir: the folder to write the stubs into.

    Returns:
        The paths written, sorted by name.

    Raises:
        ValueError: from ``generate_stub``, naming the faulty file and line.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for path in _solution_files(solutions_dir):
        source = path.read_bytes().decode("utf-8")
        text = stub_file_text(source, path.stem, filename=str(path))
        target = out_dir / path.name
        target.write_bytes(text.encode("utf-8"))
        written.append(target)
    return written


def check_in_sync(solutions_dir: Path, exercises_dir: Path) -> list[str]:
    """Names of the stubs in ``exercises_dir`` that differ from what generation produces.

    A stub counts as out of sync when its text differs from ``stub_file_text`` of its solution,
    when it is missing, or when ``exercises_dir`` holds a ``*.py`` (not starting with ``_``) that
    has no solution.

    Args:
        solutions_dir: the folder of reference solutions.
        exercises_dir: the folder of committed stubs.

    Returns:
        Sorted file names (``"attention.py"``, ...); empty when everything is in sync.

    Raises:
        ValueError: from ``generate_stub`` when a solution is malformed.
    """
    exercises_dir = Path(exercises_dir)
    stale: list[str] = []
    expected_names = set()
    for path in _solution_files(solutions_dir):
        expected_names.add(path.name)
        expected = stub_file_text(path.read_bytes().decode("utf-8"), path.stem, filename=str(path))
        target = exercises_dir / path.name
        if not target.is_file() or target.read_bytes() != expected.encode("utf-8"):
            stale.append(path.name)
    if exercises_dir.is_dir():
        for path in exercises_dir.glob("*.py"):
            if not path.name.startswith("_") and path.name not in expected_names:
                stale.append(path.name)
    return sorted(stale)
