"""Text that leaves the kit: control characters shown as escapes, files written atomically."""

from __future__ import annotations

import json
import os
from pathlib import Path

from autograder.intake.untrusted import shown


def clean_text(text: str) -> str:
    """``text`` with its control characters but newline and tab, and bidirectional overrides,
    written as visible ``\\x1b``/``\\u202e`` escapes (:func:`autograder.intake.untrusted.shown`, the
    rule for student ids too): what a submission printed or raised reaches terminals, Markdown
    and LMS comments, where escape sequences (ANSI colours, window titles, clear-screen) must not
    act and reordered text must not hide what it says."""
    return shown(text, one_line=False)


def write_json_atomic(path: Path, data: dict) -> None:
    """Write ``data`` as JSON through a temporary file and a rename."""
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False))


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file and a rename, so a reader
    never sees half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
