"""Thin shim for ``python cli.py ...`` from a checkout: the ``tkit`` command lives in
:mod:`autograder.cli` (the installed entry point is ``autograder.cli:main``)."""

from autograder.cli import COMMANDS, main  # noqa: F401  (re-exported for old imports)

if __name__ == "__main__":
    main()
