"""Packaging of the kit's folders (the metadata is in ``pyproject.toml``).

The ``autograder`` package is installed as usual. The folders beside it that the kit reads at
run time (``templates/``, ``datasets/``, ``exercises/`` and, in the instructor kit only,
``solutions/``) become package data under ``autograder/_kit/`` in a wheel or a non-editable
``pip install .``, where :mod:`autograder.paths` finds them with :mod:`importlib.resources`.
Nothing is installed under a generic top-level name (the ``tkit`` entry point is
``autograder.cli:entry``; ``cli.py`` stays a shim in the source tree). The same file ships in
the student edition, which has no ``solutions/``: absent folders are skipped.
"""

from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).resolve().parent
# folder beside autograder/ -> the package-data patterns installed from it
KIT_FOLDERS = {
    "templates": ["*.html", "*.md", "*/*.j2"],
    "datasets": ["*.json", "*.md", "mnist/*.gz", "mnist/*.md", "mnist/MD5SUMS"],
    "exercises": ["*.py", "*.md"],
    "solutions": ["*.py", "*.md"],
}
present = {name: patterns for name, patterns in KIT_FOLDERS.items() if (HERE / name).is_dir()}

setup(
    packages=find_packages(include=["autograder", "autograder.*"])
    + [f"autograder._kit.{name}" for name in present],
    package_dir={"": ".", **{f"autograder._kit.{name}": name for name in present}},
    package_data={
        "autograder": ["suites/pytest.ini", "suites/README.md", "suites/public/*.py",
                       "suites/hidden/*.py", "locale/*/LC_MESSAGES/*"],
        **{f"autograder._kit.{name}": patterns for name, patterns in present.items()},
    },
)
