"""Thin shim for ``python cli.py ...`` from a checkout: the ``tkit`` command lives in
:mod:`autograder.cli` (the installed entry point is ``autograder.cli:entry``)."""

from autograder.cli import COMMANDS, entry, main  # noqa: F401  (re-exported for old imports)

if __name__ == "__main__":
    entry()
