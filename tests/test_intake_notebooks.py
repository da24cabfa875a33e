"""Notebook submissions: conversion through nbformat, removed magics reported, graded like .py."""

import json
import warnings
import zipfile

import nbformat
import pytest
from click.testing import CliRunner
from nbformat import v4

from autograder import cli
from autograder.i18n import using
from autograder.intake import notebooks
from autograder.intake import submission
from autograder.run import grading

from conftest import SOLUTIONS_DIR


def write_notebook(path, cells, language="python"):
    """Write a notebook whose cells are ``("code"|"markdown", source[, metadata])`` tuples."""
    made = []
    for kind, source, *meta in cells:
        make = v4.new_code_cell if kind == "code" else v4.new_markdown_cell
        made.append(make(source, metadata=meta[0] if meta else {}))
    nb = v4.new_notebook(cells=made)
    nb.metadata["kernelspec"] = {"name": "x", "display_name": "x", "language": language}
    nbformat.write(nb, str(path))
    return path


def test_code_cells_are_joined_and_markdown_and_grader_cells_left_out(tmp_path):
    grader = {"nbgrader": {"grade": True, "solution": False, "locked": True, "points": 1, "grade_id": "t",
                           "schema_version": 3}}
    solution = {"nbgrader": {"grade": False, "solution": True, "locked": False, "grade_id": "s",
                             "schema_version": 3}}
    nb = write_notebook(tmp_path / "masks.ipynb", [
        ("markdown", "# Title\n%not code"),
        ("code", "import math\n"),
        ("code", "def f(x):\n    return math.sqrt(x)", solution),
        ("code", "from autograder.intake.notebooks import grade_notebook_exercise\ngrade_notebook_exercise('masks')",
         grader),
    ])
    result = notebooks.convert(nb)
    assert result.source == "import math\n\ndef f(x):\n    return math.sqrt(x)\n"
    assert result.warnings == []


def test_magics_and_shell_escapes_become_pass_with_a_warning_naming_cell_and_line(tmp_path):
    nb = write_notebook(tmp_path / "masks.ipynb", [
        ("markdown", "intro"),
        ("code", "%matplotlib inline\nimport torch\nfiles = !ls\nif True:\n    %time y = 1\ntorch.ones?"),
        ("code", 'text = """\n%d items\n!important\n"""\nvalue = 10 % 3'),
    ])
    result = notebooks.convert(nb)
    lines = result.source.split("\n")
    assert lines[:6] == [
        "pass  # removed: IPython magic or shell command",
        "import torch",
        "pass  # removed: IPython magic or shell command",
        "if True:",
        "    pass  # removed: IPython magic or shell command",
        "pass  # removed: IPython magic or shell command",
    ]
    # a '%' or '!' inside a string or an expression is code, not a magic
    assert 'text = """\n%d items\n!important\n"""\nvalue = 10 % 3' in result.source
    compile(result.source, "masks.py", "exec")
    assert len(result.warnings) == 4
    assert result.warnings[0].startswith("masks.ipynb, cell 2, line 1: removed the IPython magic")
    assert "'%matplotlib inline'" in result.warnings[0]
    with using("ko"):   # the warnings are in the current language
        assert "IPython 매직 또는 셸 명령 '%matplotlib inline'을(를) 제거했습니다" in notebooks.convert(nb).warnings[0]
    assert result.warnings[2].startswith("masks.ipynb, cell 2, line 5:") and "'%time y = 1'" in result.warnings[2]
    assert "'torch.ones?'" in result.warnings[3]


def test_cell_magics_keep_a_python_body_and_drop_other_cells(tmp_path):
    nb = write_notebook(tmp_path / "masks.ipynb", [
        ("code", "%%time\nx = 1"),
        ("code", "%%bash\necho hi"),
        ("code", "%%writefile other.py\nprint('no')"),
        ("code", "y = 2"),
    ])
    result = notebooks.convert(nb)
    assert result.source == "\nx = 1\n\ny = 2\n"
    assert len(result.warnings) == 3
    assert "cell 1, line 1: removed the cell magic '%%time'" in result.warnings[0]
    assert "cell 2, line 1: left out the whole cell" in result.warnings[1] and "'%%bash'" in result.warnings[1]
    assert "cell 3" in result.warnings[2]


def test_notebook_to_source_issues_notebook_warnings(tmp_path):
    nb = write_notebook(tmp_path / "masks.ipynb", [("code", "!pip install torch\nx = 1")])
    with pytest.warns(notebooks.NotebookWarning, match=r"cell 1, line 1.*'!pip install torch'"):
        source = notebooks.notebook_to_source(nb)
    assert source == "pass  # removed: IPython magic or shell command\nx = 1\n"


def test_unreadable_or_non_python_notebooks_raise_a_clear_error(tmp_path):
    bad = tmp_path / "masks.ipynb"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(notebooks.NotebookError, match=r"masks.ipynb: not a readable Jupyter notebook"):
        notebooks.convert(bad)
    r_nb = write_notebook(tmp_path / "rope.ipynb", [("code", "x <- 1")], language="R")
    with pytest.raises(notebooks.NotebookError, match=r"rope.ipynb: the notebook's kernel language is 'R'"):
        notebooks.convert(r_nb)
    with pytest.raises(submission.SubmissionFormatError, match="not a readable Jupyter notebook"):
        with submission.prepared(tmp_path):
            pass


def reference_notebook(path, module):
    """The reference ``module`` as a notebook: one cell per top-level block, plus magics."""
    source = (SOLUTIONS_DIR / f"{module}.py").read_text(encoding="utf-8")
    blocks = [("code", block) for block in source.split("\n\n\n")]
    cells = [("markdown", f"# {module}"), ("code", "%load_ext autoreload\n%autoreload 2")] + blocks
    cells += [("code", "!nvidia-smi"), ("code", "%%capture\nprint('demo')")]
    return write_notebook(path, cells)


def test_prepared_converts_exercise_notebooks_and_a_py_file_wins(tmp_path):
    (tmp_path / "masks.py").write_text("X = 'py'\n", encoding="utf-8")
    write_notebook(tmp_path / "masks.ipynb", [("code", "X = 'notebook'")])
    write_notebook(tmp_path / "rope.ipynb", [("code", "%time Y = 1")])
    write_notebook(tmp_path / "scratch.ipynb", [("code", "Z = 1")])
    notes = []
    with submission.prepared(tmp_path, notes) as folder:
        assert sorted(p.name for p in folder.iterdir()) == ["masks.py", "rope.py"]
        assert (folder / "masks.py").read_text(encoding="utf-8") == "X = 'py'\n"
        assert (folder / "rope.py").read_text(encoding="utf-8").startswith("pass  # removed")
    assert any("masks.ipynb: ignored, masks.py is graded instead" in n for n in notes)
    assert any("rope.ipynb, cell 1, line 1" in n for n in notes)


def test_zipped_notebooks_in_a_folder_are_found(tmp_path):
    nb = write_notebook(tmp_path / "masks.ipynb", [("code", "%pwd\nX = 1")])
    archive = tmp_path / "sub.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(nb, "alice/masks.ipynb")
    notes = []
    with submission.prepared(archive, notes) as folder:
        assert folder.name == "alice"
        assert (folder / "masks.py").read_text(encoding="utf-8") == \
            "pass  # removed: IPython magic or shell command\nX = 1\n"
    assert notes and "masks.ipynb, cell 1, line 1" in notes[0]


def test_a_notebook_is_graded_exactly_like_the_py_file_with_the_same_code(tmp_path):
    py_dir = tmp_path / "py"
    py_dir.mkdir()
    (py_dir / "embedding.py").write_text((SOLUTIONS_DIR / "embedding.py").read_text(encoding="utf-8"),
                                         encoding="utf-8")
    nb_dir = tmp_path / "nb"
    nb_dir.mkdir()
    reference_notebook(nb_dir / "embedding.ipynb", "embedding")
    by_py = grading.grade_submission(py_dir, visibility=("public",), names=["embedding"], seed=3).to_gradescope()

    out = tmp_path / "nb.json"
    run = CliRunner().invoke(cli.main, ["check", "embedding", "--path", str(nb_dir), "--json", str(out)])
    by_nb = json.loads(out.read_text(encoding="utf-8"))

    assert run.exit_code == 0, run.output
    assert by_py["tests"], "the embedding suite has no public tests"
    assert by_nb["score"] == by_py["score"] == by_py["extra_data"]["max_score"]
    strip = [(t["name"], t["status"], t["score"], t["max_score"]) for t in by_py["tests"]]
    assert [(t["name"], t["status"], t["score"], t["max_score"]) for t in by_nb["tests"]] == strip
    assert by_py["extra_data"]["warnings"] == []
    warned = by_nb["extra_data"]["warnings"]
    assert len(warned) == 4  # %load_ext, %autoreload, !nvidia-smi, %%capture
    assert "'!nvidia-smi'" in warned[2] and "'%%capture'" in warned[3]
    assert "warning: embedding.ipynb, cell 2, line 1" in run.output
    assert "warning: embedding.ipynb, cell 2, line 1" in by_nb["output"]


def test_a_broken_notebook_fails_like_the_broken_py_file(tmp_path):
    nb_dir = tmp_path / "nb"
    nb_dir.mkdir()
    write_notebook(nb_dir / "embedding.ipynb", [("code", "import torch\n"), ("code", "def broken(:\n    pass")])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # grading reports through results, not through warnings
        results = grading.grade_submission(nb_dir, visibility=("public",), names=["embedding"], seed=3).to_gradescope()
    assert results["score"] == 0
    assert all(t["status"] == "failed" for t in results["tests"])
    assert "embedding.py" in results["tests"][0]["output"] and "line 3" in results["tests"][0]["output"]
