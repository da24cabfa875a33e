"""The one rule for the contract's error messages: name the argument and the offending values.

The contract asks a bad argument to raise ``ValueError`` "with a message that names the argument
and the values". Any wording that does so is right (``key width 6 != query width 4`` as much as
``query and key must have the same last dimension d_k, got ... 4 ... 6``): the suites check
messages only through :func:`message_problem`, by way of :func:`expect_raises` (``names=...,
values=...``; re-exported by :mod:`.expectations`), never against the reference's wording.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from autograder.i18n import _
from autograder.mistakes.comparison import Mismatch
from autograder.sandbox.errors import SubmissionError


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


def expect_raises(call: Callable[[], Any], error: str | tuple[str, ...] = "ValueError", *, what: str,
                  names: tuple[str, ...] = (), values: tuple = (), match: str | None = None) -> str:
    """Assert that ``call()`` (usually a student call) raises ``error`` (an exception class
    name, or a tuple of names any of which will do); returns its message.

    The contract asks only that a bad argument's message name the argument and the values:
    with ``names`` (the argument's names and its dimension's names, e.g. ``("d_k", "query",
    "key")``) and ``values`` (the offending values, e.g. ``(4, 6)``), any message that
    contains one of ``names`` and every one of ``values`` passes (see :func:`message_problem`),
    whatever its wording. ``match`` (a regular expression) is for a message the contract
    words itself; contract errors use ``names``/``values``.

    From the child the exception arrives as a SubmissionError of kind ``exception``
    (with ``error_type`` and ``error_message``); locally it is the exception itself.
    """
    errors = (error,) if isinstance(error, str) else tuple(error)
    error = " or ".join(errors)
    try:
        call()
    except SubmissionError as exc:
        if exc.kind == "bad_return":   # it returned (a value of the wrong kind) instead of raising
            raise Mismatch(_("{what} should raise {error}, but it returned normally").format(
                what=what, error=error)) from None
        if exc.kind != "exception":
            raise
        if exc.error_type not in errors:
            raise Mismatch(_("{what} should raise {error}; instead: {message}").format(
                what=what, error=error, message=exc.message.split("\n")[0])) from None
        message = exc.error_message
    except Exception as exc:  # a local (trusted) implementation
        if type(exc).__name__ not in errors:
            raise
        message = str(exc)
    else:
        raise Mismatch(_("{what} should raise {error}, but it returned normally").format(what=what, error=error))
    if names or values:
        problem = message_problem(message, names, values)
        if problem:
            raise Mismatch(_("{what} raised {error}, but its message should name {problem}; got: {message}")
                           .format(what=what, error=error, problem=problem, message=message))
    if match is not None:
        if not re.search(match, message):
            raise Mismatch(_("{what} raised {error}, but its message should mention {match!r}; got: {message}")
                           .format(what=what, error=error, match=match, message=message))
    return message

