"""Rewrite the files derived from the exercises: the stubs in ``exercises/`` (from ``solutions/``,
see :mod:`autograder.exports.stubs`) and the points table of ``README.md`` (``tkit list --markdown``).

Run after adding or changing an exercise (see CONTRIBUTING.md): ``python scripts/update_derived.py``.
``tests/test_exports_stubs.py`` and ``tests/test_exercises.py`` fail while either is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

from click.testing import CliRunner

from autograder.cli import main as tkit
from autograder.exports.stubs import generate_exercises

ROOT = Path(__file__).resolve().parents[1]
TABLE_HEADER = "| exercise | points | in public tests | in hidden tests |"


def replace_table(readme: str, table: str) -> str:
    """``readme`` with its points table (the lines from :data:`TABLE_HEADER` to the next line
    that does not start with ``|``) replaced by ``table``. ValueError when there is none."""
    lines = readme.split("\n")
    start = lines.index(TABLE_HEADER)  # ValueError: no table
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "\n".join(lines[:start] + table.strip("\n").split("\n") + lines[end:])


def main() -> int:
    root = ROOT
    written = generate_exercises(root / "solutions", root / "exercises")
    result = CliRunner().invoke(tkit, ["list", "--markdown"])
    if result.exit_code != 0:
        print(result.output, file=sys.stderr)
        return 1
    readme = root / "README.md"
    readme.write_text(replace_table(readme.read_text(encoding="utf-8"), result.output), encoding="utf-8")
    print(f"wrote {len(written)} stubs in exercises/ and the points table of README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
