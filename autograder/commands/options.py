"""The click options several ``tkit`` commands share, declared once.

Each is a decorator factory: ``@lang_option()``, ``@seed_option(help=...)``,
``@exercise_option("Grade")``, ``@data_dir_option()``, ``@workers_option(...)``,
``@class_dir_option(...)``, ``@time_limit_option()``. Values are checked by the validators of :mod:`autograder.options`
(the same that check a :class:`autograder.options.GradingOptions`), so a bad ``--seed`` or an
unknown ``--exercise`` is refused alike everywhere; :func:`grading_options` turns an
:class:`autograder.options.OptionsError` into click's usage error naming the option.

``--lang`` is honoured by every command: its callback enters :func:`autograder.i18n.using`
for the rest of the command (``ctx.with_resource``), so every ``_()`` message is in it.
Light imports only (``tkit --help`` imports every command module).
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from autograder import i18n

# GradingOptions field -> the option that sets it (for error messages)
PARAM_HINTS = {"names": "--exercise", "seed": "--seed", "lang": "--lang", "visibility": "--public-only",
               "time_limit": "--time-limit"}


def _enter_language(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    ctx.with_resource(i18n.using(value))
    return value


def lang_option(help: str = "Language of the messages."):
    """``--lang en|ko`` [default: TKIT_LANG, else the locale]: the command runs in that language."""
    return click.option("--lang", type=click.Choice(list(i18n.LANGUAGES)), default=None, help=help,
                        callback=_enter_language)


def _check(field: str):
    def callback(ctx: click.Context, param: click.Parameter, value):
        from autograder import options

        try:
            options.CHECKS[field](value)
        except ValueError as exc:
            raise click.BadParameter(str(exc), ctx=ctx, param=param) from None
        return value
    return callback


def seed_option(default: int | None = None, help: str = "Seed of the hidden tests (default: a fresh one per run)."):
    """``--seed N`` (a whole number from 0 to 2**63 - 1)."""
    return click.option("--seed", type=int, default=default, show_default=default is not None, help=help,
                        callback=_check("seed"))


def exercise_option(verb: str = "Grade", default_all: bool = False, help: str | None = None):
    """``--exercise NAME`` (repeatable; the value is the tuple ``names``), checked against the
    exercises; its help says "``verb`` only this exercise" unless ``help`` is given."""
    tail = "; default all" if default_all else ""
    return click.option("--exercise", "names", multiple=True, callback=_check("names"),
                        help=help or f"{verb} only this exercise (repeatable{tail}).")


def time_limit_option(help: str = ("Seconds one submission's tests may take in all; each exercise gets "
                                   "its share by points [default: 1300].")):
    """``--time-limit S`` (a positive number of seconds; None = the default of
    :class:`autograder.options.GradingOptions`)."""
    return click.option("--time-limit", type=float, default=None, help=help, callback=_check("time_limit"))


def data_dir_option(help: str = ("Folder holding the MNIST IDX files for the AutoEncoder's training tests "
                                 "[default: TKIT_DATA_DIR, then datasets/mnist; see `tkit data mnist`]."),
                    exists: bool = True):
    """``--data-dir DIR`` (must exist unless ``exists`` is false; see :func:`use_data_dir`)."""
    return click.option("--data-dir", type=click.Path(exists=exists, file_okay=False, path_type=Path),
                        default=None, help=help)


def workers_option(help: str = "Grade this many submissions in parallel [default: the machine's cores]."):
    """``--workers N`` (at least 1; None = the machine's cores)."""
    return click.option("--workers", type=click.IntRange(min=1), default=None, help=help)


def class_dir_option(help: str = "Grade every entry of this folder; each entry's name is the student id."):
    """``--class-dir DIR`` (an existing folder)."""
    return click.option("--class-dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
                        default=None, help=help)


def use_data_dir(data_dir: Path | None) -> None:
    """Point the MNIST loader (here and in any worker spawned after) at ``data_dir``."""
    if data_dir is not None:  # read by autograder.mnist when the AutoEncoder's tests load MNIST
        os.environ["TKIT_DATA_DIR"] = str(data_dir.resolve())


def grading_options(hints: dict[str, str] | None = None, **fields):
    """``GradingOptions(**fields)``; an invalid one raises click.BadParameter naming the option
    that set it (``hints`` overrides :data:`PARAM_HINTS`, e.g. ``{"names": "EXERCISE"}``)."""
    from autograder.options import GradingOptions, OptionsError

    try:
        return GradingOptions(**fields)
    except OptionsError as exc:
        raise click.BadParameter(str(exc), param_hint={**PARAM_HINTS, **(hints or {})}.get(exc.field)) from None
