"""Where the kit's folders are.

The kit root is the folder holding ``autograder/`` (a source checkout or an editable
install); ``TKIT_ROOT`` overrides it. A student edition has no ``solutions/``, no
hidden suite and no catalog: the functions for those return ``None`` there.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def kit_root() -> Path:
    """The kit's top folder (``TKIT_ROOT`` or the parent of ``autograder/``)."""
    env = os.environ.get("TKIT_ROOT")
    return Path(env).resolve() if env else PACKAGE_DIR.parent


def _optional(path: Path) -> Path | None:
    return path if path.is_dir() else None


def solutions_dir() -> Path | None:
    """``solutions/``: the reference solutions, or None in a student edition."""
    return _optional(kit_root() / "solutions")


def exercises_dir() -> Path:
    """``exercises/``: the student stubs."""
    return kit_root() / "exercises"


def suites_dir() -> Path:
    """``autograder/suites``: ``public/`` and (instructor edition only) ``hidden/``."""
    return PACKAGE_DIR / "suites"


def templates_dir() -> Path:
    """``templates/``: jinja2 templates of the reports and exports."""
    return kit_root() / "templates"


def datasets_dir() -> Path:
    """``datasets/``: the data manifest and data the kit makes or downloads."""
    return kit_root() / "datasets"
