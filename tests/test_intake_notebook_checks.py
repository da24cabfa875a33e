"""Notebook intake grades exactly the exercise's cells: the edition's self-check cells (tagged
``tkit-check``) and the check call itself, wherever a student copied it, are left out; hostile
cell metadata is read only as far as its types allow."""

import json

import nbformat
import pytest
from nbformat import v4

from autograder.intake import notebooks


def write(path, cells, **nb_meta):
    made = []
    for kind, source, *meta in cells:
        make = v4.new_code_cell if kind == "code" else v4.new_markdown_cell
        made.append(make(source, metadata=meta[0] if meta else {}))
    nb = v4.new_notebook(cells=made)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata.update(nb_meta)
    nbformat.write(nb, str(path))
    return path


CHECK = 'import autograder.notebook as tkit\ntkit.check("masks")'


def test_tagged_check_cells_are_left_out(tmp_path):
    nb = write(tmp_path / "masks.ipynb", [
        ("code", "X = 1"),
        ("code", CHECK, {"tags": ["tkit-check"]}),
        ("code", "print('anything')  # a tagged cell is dropped whatever it holds", {"tags": ["x", "tkit-check"]}),
        ("code", "Y = 2"),
    ])
    result = notebooks.convert(nb)
    assert result.source == "X = 1\n\nY = 2\n"
    assert result.warnings == []


@pytest.mark.parametrize("cell", [
    CHECK,
    '# check my work\nimport autograder.notebook as tkit\nresult = tkit.check("masks", lang="ko")',
    'from autograder import notebook\nnotebook.check(\n    "masks",\n)',
    'from autograder.notebook import check as c\nc("masks")',
    'import autograder.notebook\nautograder.notebook.check("masks")',
])
def test_a_copied_check_cell_without_its_tag_is_left_out_too(tmp_path, cell):
    nb = write(tmp_path / "masks.ipynb", [("code", "X = 1"), ("code", cell), ("code", "Y = 2")])
    assert notebooks.convert(nb).source == "X = 1\n\nY = 2\n"


def test_a_check_call_inside_exercise_code_becomes_pass_at_its_lines(tmp_path):
    nb = write(tmp_path / "masks.ipynb", [
        ("code", 'import torch\nimport autograder.notebook as tkit\n\ndef f():\n    return 1\n'
                 'tkit.check(\n    "masks")\nZ = f()'),
    ])
    source = notebooks.convert(nb).source
    assert source.split("\n") == ["import torch", notebooks.CHECK_REMOVED, "", "def f():", "    return 1",
                                  notebooks.CHECK_REMOVED, "", "Z = f()", ""]
    compile(source, "masks.py", "exec")


def test_other_calls_named_check_and_nested_ones_are_student_code(tmp_path):
    code = ('import other as tkit\ntkit.check("masks")\n'       # another module's check
            'def check(x):\n    return x\ncheck(1)\n'            # the student's own check()
            'if True:\n    import autograder.notebook as nb\n')  # not top level: left alone
    nb = write(tmp_path / "masks.ipynb", [("code", code)])
    assert notebooks.convert(nb).source == code


def test_a_cell_that_does_not_parse_is_kept_as_it_is(tmp_path):
    nb = write(tmp_path / "masks.ipynb", [("code", "import autograder.notebook as tkit\ndef broken(:")])
    assert notebooks.convert(nb).source == "import autograder.notebook as tkit\ndef broken(:\n"


@pytest.mark.parametrize("metadata", [
    {"tags": "tkit-check"},                       # a string, not a list
    {"tags": [["tkit-check"]]},                   # nested
    {"tags": [{"x": 1}, 3, None]},
    {"tags": ["x"] * notebooks.MAX_TAGS + ["tkit-check"]},   # past the bound: not read
    {"nbgrader": "grade"},
    {"nbgrader": {"grade": "yes", "solution": False}},        # not a boolean
    {"nbgrader": ["grade"]},
])
def test_hostile_metadata_is_read_only_as_far_as_its_types_allow(tmp_path, metadata):
    path = tmp_path / "masks.ipynb"   # written as raw JSON: nbformat's writer would refuse some
    raw = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
           "cells": [{"id": "c0", "cell_type": "code", "source": "X = 1", "metadata": metadata, "outputs": [],
                      "execution_count": None}]}
    path.write_text(json.dumps(raw), encoding="utf-8")
    assert notebooks.convert(path).source == "X = 1\n"


@pytest.mark.parametrize("notebook_meta, cells", [
    ({"kernelspec": "python", "language_info": ["x"]}, [{"cell_type": "code", "source": "X = 1", "metadata": []}]),
    ({}, [{"cell_type": "code", "source": ["Y", " = 2"], "metadata": {"tags": 5}}]),
    ({}, ["not a cell", {"cell_type": "code", "source": {"a": 1}, "metadata": {}}]),
    ({"kernelspec": {"language": "R" * 10_000}}, [{"cell_type": "code", "source": "X = 1", "metadata": {}}]),
    ({}, [{"cell_type": "code", "source": "(" * 100_000, "metadata": {}}]),
])
def test_a_hostile_notebook_is_converted_or_refused_with_one_short_error(tmp_path, notebook_meta, cells):
    path = tmp_path / "masks.ipynb"
    for n, cell in enumerate(cells):
        if isinstance(cell, dict):
            cell.update(id=f"c{n}", outputs=[], execution_count=None)
    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": notebook_meta, "cells": cells}),
                    encoding="utf-8")
    try:
        source = notebooks.convert(path).source
    except notebooks.NotebookError as exc:
        assert len(str(exc)) < 400
    else:
        assert isinstance(source, str)


def test_a_check_call_whose_import_is_in_another_cell_is_left_out(tmp_path):
    nb = write(tmp_path / "masks.ipynb", [
        ("code", "import autograder.notebook as tkit", {"tags": ["tkit-check"]}),
        ("code", "X = 1\ntkit.check('masks')"),
        ("code", "tkit.check('masks', lang='ko')"),
    ])
    assert notebooks.convert(nb).source == f"X = 1\n{notebooks.CHECK_REMOVED}\n"


def test_cells_over_the_module_limit_are_not_parsed_for_check_calls(tmp_path):
    from autograder.intake import limits

    big = "import autograder.notebook as tkit\ntkit.check('masks')\n" + "x = 1\n" * (limits.MODULE_MAX_BYTES // 6)
    nb = write(tmp_path / "masks.ipynb", [("code", big)])
    assert notebooks.convert(nb).source == big   # kept as it is; the code-size limit refuses it later


def test_a_copied_set_up_cell_without_its_tag_is_left_out(tmp_path):
    nb = write(tmp_path / "masks.ipynb", [("code", "# set-up\nimport autograder.notebook as tkit"), ("code", "X = 1")])
    assert notebooks.convert(nb).source == "X = 1\n"
