"""Student-facing text in English and Korean, through gettext.

``_("...")`` translates into the current language (``set_language("ko")``, or the
``--lang`` option), falling back to the English msgid when a catalog lacks it. The
catalogs are ``autograder/locale/<lang>/LC_MESSAGES/tkit.po`` (compiled to ``.mo``).
"""

from __future__ import annotations

import contextvars
import gettext
import locale
import os
from functools import lru_cache
from pathlib import Path

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


def set_language(lang: str | None) -> str | None:
    """Use ``lang`` ('en' or 'ko'; None = the default) for later ``_()`` calls.

    Returns the previous setting, so a caller can restore it with ``set_language(previous)``.
    Raises ValueError for another language.
    """
    if lang is not None and lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {LANGUAGES}, got {lang!r}")
    previous = _current.get() or None
    _current.set(lang or "")
    return previous


def language() -> str:
    return _current.get() or default_language()


@lru_cache(maxsize=None)
def _translations(lang: str) -> gettext.NullTranslations:
    return gettext.translation(DOMAIN, localedir=str(LOCALE_DIR), languages=[lang], fallback=True)


def _(message: str) -> str:
    """Translate ``message`` into the current language."""
    return _translations(language()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural form of a message for ``n``, in the current language."""
    return _translations(language()).ngettext(singular, plural, n)
