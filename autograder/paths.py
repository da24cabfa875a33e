"""Where the kit's folders are.

Two layouts, one set of functions:

* a **source tree** (a checkout, a student edition folder, or an editable install of either):
  the kit root is the folder holding ``autograder/``, with ``templates/``, ``datasets/``,
  ``exercises/`` and (instructor kit only) ``solutions/`` beside it;
* an **installed kit** (``pip install .`` or a wheel): those folders are package data inside
  the package, under ``autograder/_kit/`` (see ``pyproject.toml``), found with
  :mod:`importlib.resources`; nothing is looked for next to ``site-packages``.

``TKIT_ROOT`` overrides the kit root in both. A student edition has no ``solutions/``, no
hidden suite and no catalog: the functions for those return ``None`` there.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
# The package-data folder of an installed kit (absent in a source tree).
INSTALLED_DATA = "_kit"


def installed_data_dir() -> Path | None:
    """``autograder/_kit`` of an installed kit (via :mod:`importlib.resources`), or None in a
    source tree, where the folders sit beside ``autograder/``."""
    folder = resources.files("autograder") / INSTALLED_DATA
    return Path(str(folder)) if folder.is_dir() else None


def kit_root() -> Path:
    """The kit's top folder: ``TKIT_ROOT``, else the installed package data
    (:func:`installed_data_dir`), else the parent of ``autograder/``."""
    env = os.environ.get("TKIT_ROOT")
    if env:
        return Path(env).resolve()
    return installed_data_dir() or PACKAGE_DIR.parent


def _optional(path: Path) -> Path | None:
    return path if path.is_dir() else None


def solutions_dir() -> Path | None:
    """``solutions/``: the reference solutions, or None in a student edition."""
    return _optional(kit_root() / "solutions")


def exercises_dir() -> Path:
    """``exercises/``: the student stubs (in an installed kit, the untouched copies)."""
    return kit_root() / "exercises"


def suites_dir() -> Path:
    """``autograder/suites``: ``public/`` and (instructor edition only) ``hidden/``."""
    return PACKAGE_DIR / "suites"


def templates_dir() -> Path:
    """``templates/``: jinja2 templates of the reports and exports."""
    return kit_root() / "templates"


def datasets_dir() -> Path:
    """``datasets/``: the data manifest, the shipped MNIST test set (``datasets/mnist/``) and
    data the kit downloads."""
    return kit_root() / "datasets"
