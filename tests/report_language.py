"""The language checker of the rendered reports (used by tests/test_reports_language.py).

A report in English must hold no Hangul at all. A report in Korean must hold no English
*sentence* outside what is not the kit's to translate. Definitions:

* **visible text**: for HTML, the text between tags with ``<style>``, ``<script>``, ``<code>`` and
  attributes (picture data URIs) left out, entities decoded; for Markdown, the text with inline
  code spans (backticks) left out. Fenced blocks and ``<pre>`` are *kept*: they hold the
  engine's messages, which are the kit's text.
* **not the kit's text** (left out before the check): student-provided text (student ids),
  Python's own words about the student's code (``SomethingError: ...`` to the end of the line,
  a syntax error's detail after its colon, traceback lines, source lines quoted with 8 or more
  spaces of indentation).
* **a plain English word**: a whitespace-separated token that, without surrounding punctuation,
  is 2+ ASCII lowercase letters (an apostrophe allowed: ``student's``), with no digit, ``_``,
  ``.``, ``(``, ``[``, ``=``, ``/`` or ``:`` in the token (those are identifiers, calls, shapes,
  paths), and is not one of :data:`TERMS` or an exercise name.
* **an English sentence**: :data:`RUN` or more plain English words in a row, where a token ending
  in ``,`` ``;`` ``:`` ``.`` ``)`` or starting with ``(`` closes the run after (or before) it.
"""

from __future__ import annotations

import html
import re

from autograder import exercises

HANGUL = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]")
RUN = 3
# English technical terms the Korean catalog keeps as they are (each also a PyTorch name)
TERMS = frozenset({"dropout", "eval", "train", "softmax", "argmax", "bias", "dtype", "shape", "mask",
                   "teacher", "forcing", "float", "true", "false", "none"} | set(exercises.NAMES))
_WORD = re.compile(r"^[a-z][a-z']*[a-z]$")
_IDENT = re.compile(r"[0-9_.(\[=/:<>{}*+]")
_PY_ERROR = re.compile(r"\b[A-Z][A-Za-z]*(?:Error|Exception|Warning|Interrupt|Exit)\b:.*$")
_SYNTAX_DETAIL = re.compile(r"(syntax error in .*?, line \d+|줄에 문법 오류가 있습니다): .*$")
_TRACEBACK = re.compile(r"^\s*(Traceback \(most recent call last\):|File \".*\", line \d+)")


def visible_html(text: str) -> str:
    """The visible text of an HTML report (see the module docstring)."""
    text = re.sub(r"(?is)<(style|script|code)\b.*?</\1>", " ", text)
    text = re.sub(r"(?s)<!--.*?-->", " ", text)
    text = re.sub(r"(?s)<[^>]*>", " ", text)
    return html.unescape(text)


def visible_markdown(text: str) -> str:
    """The text of a Markdown report without its inline code spans (fences kept)."""
    out = []
    for line in text.splitlines():
        if line.strip().startswith("```"):
            continue
        out.append(re.sub(r"`+[^`]*`+", " ", line))
    return "\n".join(out)


def kit_text(text: str, students=()) -> str:
    """``text`` without what is not the kit's to translate (see the module docstring)."""
    lines = []
    for line in text.splitlines():
        if _TRACEBACK.match(line) or re.match(r"^ {8,}\S", line):
            continue
        line = _SYNTAX_DETAIL.sub(r"\1", line)
        line = _PY_ERROR.sub(" ", line)
        for student in students:
            line = re.sub(rf"(?<![\w-]){re.escape(student)}(?![\w-])", " ", line)
        lines.append(line)
    return "\n".join(lines)


def _plain(token: str) -> bool:
    core = token.strip(",;:.!?\"'()[]*").strip()
    return bool(_WORD.match(core)) and not _IDENT.search(token.strip(",;:.!?)")) and core not in TERMS


def english_sentences(text: str, run: int = RUN) -> list[str]:
    """The English sentences of ``text`` (runs of ``run`` plain English words, see above)."""
    found = []
    for line in text.splitlines():
        words: list[str] = []
        for token in line.split():
            if token.startswith("(") and words:
                if len(words) >= run:
                    found.append(" ".join(words))
                words = []
            if _plain(token):
                words.append(token)
            else:
                if len(words) >= run:
                    found.append(" ".join(words))
                words = []
            if token[-1] in ",;:.)" and words:
                if len(words) >= run:
                    found.append(" ".join(words))
                words = []
        if len(words) >= run:
            found.append(" ".join(words))
    return found


def hangul(text: str) -> list[str]:
    """The lines of ``text`` that hold Hangul."""
    return [line.strip() for line in text.splitlines() if HANGUL.search(line)]


def problems(text: str, lang: str, kind: str, students=()) -> list[str]:
    """What is in the wrong language in a report of ``kind`` ('html', 'md' or 'console')
    written in ``lang``: Hangul lines for 'en', English sentences for 'ko'."""
    visible = {"html": visible_html, "md": visible_markdown}.get(kind, lambda t: t)(text)
    if lang == "en":
        return hangul(visible)
    return english_sentences(kit_text(visible, students))
