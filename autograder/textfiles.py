"""Text that leaves the kit: control characters removed, files written atomically."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean_text(text: str) -> str:
    """``text`` without control characters but newline and tab: what a submission printed or
    raised reaches terminals, Markdown and LMS comments, where escape sequences (ANSI colours,
    window titles, clear-screen) must not act."""
    return _CONTROL.sub("\N{REPLACEMENT CHARACTER}", text)


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
