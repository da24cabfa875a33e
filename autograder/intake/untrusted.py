"""Student-chosen text as data: ids as folder names, and text shown in reports, CSV and terminals.

A student id is whatever name a student gave their folder or zip; zip member names and notebook
text are theirs too. None of it may become a path beside the class files, a spreadsheet formula,
Markdown/HTML markup or a terminal escape sequence.

* :func:`safe_id` maps an id to a folder name made of ``a-z 0-9 . _ -`` and ``%XX`` escapes only
  (percent-encoding of each UTF-8 byte outside that set, upper-case letters included), so the
  mapping is reversible (:func:`real_id`), collision-free, the same on case-insensitive file
  systems (no two results differ only in case) and on Windows (no reserved device names, no
  trailing dot). :func:`submission_dir` is ``OUT/submissions/<safe id>/``; :func:`report_href`
  links to a report there from ``OUT/summary.html``.
* :func:`csv_cell` neutralises a CSV cell a spreadsheet would run as a formula (OWASP's
  CSV-injection rule: first character ``=``, ``+``, ``-``, ``@``, tab or carriage return), keeping
  numbers numbers; :func:`csv_text` writes a whole CSV file that way (``grades.csv``,
  ``similarity.csv``), quoting every cell that holds a line break.
* :func:`shown` makes text safe for a terminal or a log line (control characters, terminal
  escapes and bidirectional overrides written as visible ``\\x..`` escapes);
  :func:`markdown` additionally escapes Markdown and HTML markup.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
import unicodedata
from pathlib import Path
from urllib.parse import quote, unquote

SUBMISSIONS_FOLDER = "submissions"
SAFE_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789._-")
MAX_NAME = 120  # well under every file system's 255-byte name limit
WINDOWS_RESERVED = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)),
                              *(f"lpt{i}" for i in range(10))})
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>])")


def safe_id(student_id: str) -> str:
    """The folder name of ``student_id``: ``a-z 0-9 . _ -`` kept, every other UTF-8 byte (and a
    leading dot, a trailing dot, the first letter of a Windows device name) as ``%XX``.

    An encoding longer than ``MAX_NAME`` characters is cut and ends with ``~`` and 16 hex digits
    of the id's SHA-256 (``~`` never appears otherwise), so it stays unique; :func:`real_id`
    cannot invert that one, but the records keep the real id.

    Raises:
        ValueError: for an empty id.
    """
    if not student_id:
        raise ValueError("a student id cannot be empty")
    data = student_id.encode("utf-8", "surrogateescape")
    parts = [chr(b) if b in SAFE_BYTES else f"%{b:02X}" for b in data]
    if parts[0] == ".":
        parts[0] = "%2E"
    if parts[-1] == ".":
        parts[-1] = "%2E"
    if student_id.split(".")[0] in WINDOWS_RESERVED:
        parts[0] = f"%{data[0]:02X}"
    name = "".join(parts)
    if len(name) > MAX_NAME:
        digest = hashlib.sha256(data).hexdigest()[:16]
        cut = name[: MAX_NAME - 17]
        pct = cut.rfind("%", len(cut) - 2)   # never cut an escape in half
        name = f"{cut[:pct] if pct != -1 else cut}~{digest}"
    return name


def real_id(name: str) -> str:
    """The student id whose :func:`safe_id` is ``name`` (not for a cut ``~`` name: ValueError)."""
    if "~" in name:
        raise ValueError(f"{name!r} is a shortened id; the real one is in the gradebook")
    return unquote(name, errors="surrogateescape")


def submission_dir(out_dir: Path, student_id: str) -> Path:
    """``out_dir/submissions/<safe id>``: where a submission's results.json and feedback go."""
    return Path(out_dir) / SUBMISSIONS_FOLDER / safe_id(student_id)


def report_href(student_id: str, report: str = "feedback.html") -> str:
    """The relative link from ``OUT/summary.html`` to a submission's report: the folder name
    percent-encoded once more, as a URL needs (a browser would decode ``%41lice`` to ``Alice``)."""
    return f"{SUBMISSIONS_FOLDER}/{quote(safe_id(student_id), safe='')}/{report}"


def csv_cell(value) -> str:
    """A CSV cell that no spreadsheet runs as a formula: numbers (and number literals such as
    ``-1.5``) unchanged, any other text starting with ``= + - @``, tab or CR prefixed with ``'``
    (OWASP, "CSV Injection")."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{float(value):g}"
    text = "" if value is None else str(value)
    if text.startswith(FORMULA_STARTS) and not _NUMBER.match(text):
        return "'" + text
    return text


def csv_text(rows) -> str:
    """``rows`` (lists of cells, the header first) as CSV text: each cell through :func:`csv_cell`,
    lines ending in ``\\n``, and a cell holding a line break (``\\r`` included) quoted.

    The csv module quotes only the characters of its line terminator: with ``\\n`` alone, a cell
    ``x\\r=1+2`` is written bare, and a spreadsheet starts a new row, a formula, at the ``\\r``.
    So each row is written with ``\\r\\n`` (both quoted) and that terminator replaced by ``\\n``."""
    lines = []
    for row in rows:
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\r\n").writerow([csv_cell(cell) for cell in row])
        lines.append(buffer.getvalue()[:-2])
    return "".join(line + "\n" for line in lines)


def _visible(char: str) -> str:
    if char in "\n\t":
        return char
    if unicodedata.category(char) == "Cc" or char in _BIDI:
        code = ord(char)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    return char


def shown(text, *, one_line: bool = True) -> str:
    """``text`` with control characters (ESC, CR, BEL, C1 controls ...) and bidirectional
    overrides written as ``\\x1b``/``\\u202e`` escapes; with ``one_line`` newlines and tabs too."""
    out = "".join(_visible(c) for c in str(text))
    if one_line:
        out = out.replace("\n", "\\n").replace("\t", "\\t")
    return out


def markdown(text, *, one_line: bool = True) -> str:
    """``text`` for Markdown: :func:`shown`, then ``& < >`` as HTML entities and Markdown's
    punctuation backslash-escaped, so it renders as the literal text and never as markup."""
    out = shown(text, one_line=one_line)
    out = out.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN_SPECIAL.sub(r"\\\1", out)
