"""A new exercise is cheap: what can be derived from the registry is, and
CONTRIBUTING.md lists the files a new exercise touches by hand (at most 6), each of which
exists for every exercise today.

The stubs (``exercises/``) are checked by tests/test_exports_stubs.py, the suites' points by
tests/test_suites_markers.py; here the README's points table and CONTRIBUTING.md.
"""

import importlib.util
import re
from pathlib import Path

from click.testing import CliRunner

from autograder import exercises
from autograder.cli import main as tkit
from autograder.commands.list_exercises import markdown_table

ROOT = Path(__file__).resolve().parents[1]


def _update_derived():
    spec = importlib.util.spec_from_file_location("update_derived", ROOT / "scripts" / "update_derived.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_points_table_is_what_tkit_list_prints():
    result = CliRunner().invoke(tkit, ["list", "--markdown"])
    assert result.exit_code == 0, result.output
    table = result.output.strip()
    assert table.count("\n") == len(exercises.EXERCISES) + 2 and "| **total** | **100** |" in table
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert table in readme, "README.md's points table is stale: run `python scripts/update_derived.py`"


def test_markdown_table_splits_points_and_marks_bonus():
    registry = (exercises.Exercise("a", "A", "가", 7.5), exercises.Exercise("b", "B (bonus)", "나", 2.5))
    assert markdown_table(registry, {"a": 5}).split("\n")[2:] == [
        "| a | 7.5 | 5 | 2.5 |", "| b (bonus) | 2.5 | 0 | 2.5 |", "| **total** | **10** | **5** | **5** |"]


def test_update_derived_replaces_only_the_table():
    module = _update_derived()
    readme = f"# kit\n\n{module.TABLE_HEADER}\n| --- |\n| old | 1 |\n\nafter\n"
    assert module.replace_table(readme, f"{module.TABLE_HEADER}\n| new | 2 |\n") == \
        f"# kit\n\n{module.TABLE_HEADER}\n| new | 2 |\n\nafter\n"


def test_contributing_lists_at_most_six_files_that_exist_for_every_exercise():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text.split("## Files a new exercise touches", 1)[1].split("\n## ", 1)[0]
    files = re.findall(r"^\d+\. `([^`]+)`", section, flags=re.MULTILINE)
    assert 4 <= len(files) <= 6, files
    for pattern in files:
        for name in exercises.NAMES:
            path = ROOT / pattern.replace("<name>", name)
            assert path.is_file(), f"CONTRIBUTING.md lists {pattern}, but {path.relative_to(ROOT)} is missing"
