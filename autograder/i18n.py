"""Student-facing text in English and Korean, through gettext.

One path for every message the engine produces at run time: ``_("...")`` translates into
the current language, falling back to the English msgid when a catalog lacks it, and
``with using(lang):`` sets that language for a block (every ``tkit`` command enters it for its
``--lang``; the grading plugin for ``GradingOptions.lang``). Text an author wrote in both
languages (catalog hints, exercise titles, suite messages) is picked with :func:`authored`. The
catalogs are ``autograder/locale/<lang>/LC_MESSAGES/tkit.po`` (compiled to ``.mo``).
"""

from __future__ import annotations

import contextlib
import contextvars
import gettext
import locale
import os
from functools import lru_cache
from pathlib import Path
from typing import Iterator

DOMAIN = "tkit"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
LANGUAGES = ("en", "ko")
_current: contextvars.ContextVar[str] = contextvars.ContextVar("tkit_lang", default="")


def default_language() -> str:
    """``TKIT_LANG``, else ``ko`` when the locale is Korean, else ``en``."""
    env = os.environ.get("TKIT_LANG")
    if env in LANGUAGES:
        return env
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return "ko" if value.lower().startswith("ko") else "en"
    try:
        loc = locale.getlocale()[0] or ""
    except ValueError:
        loc = ""
    return "ko" if loc.lower().startswith("ko") else "en"


def check_language(lang: str | None) -> str | None:
    """``lang`` when it is one of :data:`LANGUAGES` or None (the default); raises ValueError."""
    if lang is not None and lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {', '.join(LANGUAGES)}, got {lang!r}")
    return lang


@contextlib.contextmanager
def using(lang: str | None) -> Iterator[str]:
    """Translate ``_()`` calls into ``lang`` ('en' or 'ko'; None or '' = the language around the
    block, at the outermost :func:`default_language`) inside the block, restoring the previous
    language after it; yields the language in use. Raises ValueError for another language
    (before the block runs)."""
    token = _current.set(check_language(lang or None) or _current.get())
    try:
        yield language()
    finally:
        _current.reset(token)


def set_language(lang: str | None) -> str | None:
    """Use ``lang`` for later ``_()`` calls in this context, without a block to end it (for an
    interactive session; code with a scope uses :func:`using`). Returns the previous setting.
    Raises ValueError for another language."""
    previous = _current.get() or None
    _current.set(check_language(lang or None) or "")
    return previous


def language() -> str:
    """The current language: the innermost :func:`using`'s, else :func:`default_language`."""
    return _current.get() or default_language()


def authored(en: str, ko: str) -> str:
    """``en`` or ``ko``, whichever is the current language: for text an author wrote in both
    languages (catalog hints, exercise titles), which no catalog translates."""
    return ko if language() == "ko" else en


@lru_cache(maxsize=None)
def _translations(lang: str) -> gettext.NullTranslations:
    return gettext.translation(DOMAIN, localedir=str(LOCALE_DIR), languages=[lang], fallback=True)


def _(message: str) -> str:
    """Translate ``message`` into the current language."""
    return _translations(language()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural form of a message for ``n``, in the current language."""
    return _translations(language()).ngettext(singular, plural, n)
