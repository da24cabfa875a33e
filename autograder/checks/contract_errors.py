"""The one rule for the contract's error messages: name the argument and the offending values.

The contract asks a bad argument to raise ``ValueError`` "with a message that names the argument
and the values". Any wording that does so is right (``key width 6 != query width 4`` as much as
``query and key must have the same last dimension d_k, got ... 4 ... 6``): the suites check
messages only through :func:`message_problem` (via ``autograder.checks.expectations.expect_raises(names=...,
values=...)``), never against the reference's wording.
"""

from __future__ import annotations

import re

from autograder.i18n import _


def _word(name: str) -> str:
    """A regular expression for ``name`` as a whole word (an optional plural ``s``); spaces in
    ``name`` match any run of spaces, underscores or dots (``key width`` matches ``key_width``)."""
    parts = [re.escape(part) for part in name.split()]
    return r"(?<![A-Za-z0-9_])" + r"[\s_.]+".join(parts) + r"s?(?![A-Za-z0-9_])"


def _number(value) -> str:
    """A regular expression for ``value`` written as a number in a message (``6``, ``6.0``,
    ``-1``, ``1.5``), not as part of a longer number."""
    if isinstance(value, float) and value.is_integer():
        text = rf"{int(value)}(?:\.0+)?"
    elif isinstance(value, int):
        text = rf"{re.escape(str(value))}(?:\.0+)?"
    else:
        text = re.escape(repr(value))
    return r"(?<![\d.])" + text + r"(?![\d]|\.\d)"


def message_problem(message: str, names: tuple[str, ...], values: tuple = ()) -> str | None:
    """Why an error ``message`` does not name the argument and the offending values, or None
    when it does: it must contain one of ``names`` as a word (case-insensitive; the argument's
    names and its dimension's names, e.g. ``d_k``, ``query``, ``key``) and every one of
    ``values`` as a number (``6`` in ``key width 6``, ``(1, 5, 6)`` or ``d_k=6``; ``6.0`` too).
    The problem is said in the current language."""
    if names and not any(re.search(_word(n), message, re.IGNORECASE) for n in names):
        return _("the argument (one of {names})").format(names=", ".join(names))
    missing = [v for v in values if not re.search(_number(v), message)]
    if missing:
        return _("the offending values ({values})").format(values=", ".join(str(v) for v in values))
    return None
