"""The notebook edition as a student uses it: ``tkit release --notebooks``, then the edition's
notebooks executed headless in a real kernel (nbclient + ipykernel), their self-check cells
reporting inline; and a submitted notebook graded like the same code in a ``.py`` file."""

import json
import os
import shutil

import nbformat

import pytest
from click.testing import CliRunner

from autograder import cli, exercises
from autograder.exports import notebook_edition, release
from autograder.intake import notebooks
from autograder.mistakes import catalog

from conftest import SOLUTIONS_DIR

CHECKED = "positional_encoding"   # one exercise keeps the kernel runs to about a minute


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("edition") / "kit"
    release.build_edition(out, notebooks=True)
    return out


def test_the_edition_has_one_notebook_per_exercise_with_tagged_set_up_and_check_cells(edition):
    folder = edition / notebook_edition.FOLDER
    assert sorted(p.stem for p in folder.glob("*.ipynb")) == sorted(exercises.NAMES)
    assert all((edition / "autograder" / "notebook" / f).is_file() for f in ("__init__.py", "kernel.py", "report.py"))
    for name in exercises.NAMES:
        nb = nbformat.read(str(folder / f"{name}.ipynb"), as_version=4)
        nbformat.validate(nb)
        intro = nb.cells[0].source
        assert "## English" in intro and "## 한국어" in intro and "(약속: 이름과 모양)" in intro
        assert exercises.get(name).title_ko in intro
        tagged = [c for c in nb.cells if notebooks.is_check_cell(c)]
        assert [c.source.splitlines()[-1] for c in tagged] == ["import autograder.notebook as tkit",
                                                                f'tkit.check("{name}")']
        assert nb.cells[-1] is tagged[-1]
        code = [c.source for c in nb.cells if c.cell_type == "code" and not notebooks.is_check_cell(c)]
        assert "# TODO" in "".join(code) and "NotImplementedError" in "".join(code)
        stub = (edition / "exercises" / f"{name}.py").read_text(encoding="utf-8")
        assert all(block in stub for block in code)
        # graded: exactly the stub's code cells (the set-up and self-check cells are not)
        graded = notebooks.convert(folder / f"{name}.ipynb").source
        assert graded == "\n\n".join(code) + "\n"
        compile(graded, name, "exec")
    readme = (edition / "README.md").read_text(encoding="utf-8")
    assert 'tkit.check("positional_encoding")' in readme and "%pip install" in readme
    intro = nbformat.read(str(folder / "positional_encoding.ipynb"), as_version=4).cells[0].source
    assert "PE[pos, 2i]   = sin(pos / 10000^(2i / d_model))" in intro and "section 3.5" in intro
    assert "`[1, max_len, d_model]`" in intro   # the shapes, from the contract


def test_the_reference_scan_reads_notebook_cells(edition, tmp_path):
    copy = tmp_path / "kit"
    shutil.copytree(edition / notebook_edition.FOLDER, copy / notebook_edition.FOLDER)
    assert release.reference_material(copy, SOLUTIONS_DIR) == []
    path = copy / notebook_edition.FOLDER / "masks.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    nb.cells[2].source = (SOLUTIONS_DIR / "masks.py").read_text(encoding="utf-8").replace("### BEGIN SOLUTION", "")
    nbformat.write(nb, str(path))
    assert "\\n" in path.read_text(encoding="utf-8")   # JSON escapes the code: a raw scan would miss it
    problems = release.reference_material(copy, SOLUTIONS_DIR)
    assert problems == ["notebooks/masks.ipynb: holds solution code from solutions/masks.py"]


def with_code(nb, source):
    """The notebook with its exercise cells replaced by one cell holding ``source``."""
    cells = [c for c in nb.cells if c.cell_type == "markdown" or notebooks.is_check_cell(c)]
    code = nbformat.v4.new_code_cell(source)
    code["id"] = "student-code"
    cells.insert(2, code)
    nb = nbformat.from_dict(dict(nb, cells=cells))
    return nb


def execute(edition, name, nb, monkeypatch, lang_call=None, saved=None, folder=None):
    """Save ``saved`` (default: ``nb``) as ``<name>.ipynb`` in ``folder`` (default: the edition's
    notebooks; None saves nothing when a folder is given) and run ``nb`` in a fresh kernel there,
    as a student would; returns the check cell's rich output."""
    from nbclient import NotebookClient

    if lang_call:
        nb.cells[-1].source = nb.cells[-1].source.replace(f'tkit.check("{name}")', lang_call)
    if folder is None:
        folder = edition / notebook_edition.FOLDER
        nbformat.write(saved or nb, str(folder / f"{name}.ipynb"))
    monkeypatch.setenv("PYTHONPATH", str(edition))   # the edition's autograder, as after pip install
    monkeypatch.setenv("TKIT_LANG", "en")
    for var in ("JPY_SESSION_NAME",):
        monkeypatch.delenv(var, raising=False)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute()
    outputs = nb.cells[-1].outputs
    assert outputs, "the check cell showed nothing"
    rich = [o for o in outputs if o.output_type in ("execute_result", "display_data")]
    assert rich, outputs
    return rich[-1]["data"]


@pytest.mark.slow
def test_untouched_reference_and_mistaken_notebooks_in_a_real_kernel(edition, monkeypatch, tmp_path):
    name = CHECKED
    folder = edition / notebook_edition.FOLDER
    stub_nb = nbformat.read(str(folder / f"{name}.ipynb"), as_version=4)

    # untouched: every cell runs (the stubs raise only when called), the check says "not implemented yet"
    untouched = nbformat.from_dict(stub_nb)
    where = nbformat.v4.new_code_cell("import autograder\nprint(autograder.__file__)")
    where["id"] = "where"
    untouched.cells.insert(2, where)
    data = execute(edition, name, untouched, monkeypatch, saved=stub_nb)   # that cell is not saved
    assert untouched.cells[2].outputs[0]["text"].strip() == str(edition / "autograder" / "__init__.py")
    assert "not implemented yet" in data["text/plain"]
    assert "0/5" in data["text/plain"]
    assert "tkit-check-report" in data["text/html"] and "not implemented yet" in data["text/html"]
    assert "<html" not in data["text/html"] and "<body" not in data["text/html"]

    # the reference pasted in: every public test passes
    reference = (SOLUTIONS_DIR / f"{name}.py").read_text(encoding="utf-8")
    data = execute(edition, name, with_code(stub_nb, reference), monkeypatch)
    assert "5 of 5 tests passed" in data["text/plain"], data["text/plain"]

    # the reference run but not saved: the saved (untouched) file is checked, and the note says so
    data = execute(edition, name, with_code(stub_nb, reference), monkeypatch, saved=stub_nb)
    assert "not implemented yet" in data["text/plain"]
    assert "sinusoidal_table, PositionalEncoding: the kernel runs another version than the saved notebook " \
           f"{name}.ipynb" in data["text/plain"]
    assert "Save the notebook (Ctrl+S)" in data["text/html"]

    # a catalog mistake, checked in Korean where no saved notebook is found (as in Colab): the
    # kernel's definitions are checked, and the cell names the mistake
    mutant = catalog.by_id("pe_sin_cos_swapped")
    elsewhere = tmp_path / "colab"
    elsewhere.mkdir()
    data = execute(edition, name, with_code(stub_nb, mutant.source()), monkeypatch,
                   lang_call=f'tkit.check("{name}", lang="ko")', folder=elsewhere)
    assert "이 커널의 정의(sinusoidal_table, PositionalEncoding)를 점검했습니다" in data["text/plain"]
    assert "pe_sin_cos_swapped" in data["text/plain"] and "pe_sin_cos_swapped" in data["text/html"]
    assert "sin 과 cos 가 바뀌었습니다" in data["text/html"]
    assert "통과" in data["text/plain"]


@pytest.mark.slow
def test_a_composite_notebook_imports_and_is_checked_with_the_component_notebooks(edition, monkeypatch):
    """encoder.ipynb's cells import multi_head_attention and feed_forward from their notebooks in
    the kernel, and its check takes them (and theirs) from the same folder."""
    nb = nbformat.read(str(edition / notebook_edition.FOLDER / "encoder.ipynb"), as_version=4)
    data = execute(edition, "encoder", nb, monkeypatch)
    assert "not implemented yet" in data["text/plain"] and "0/7" in data["text/plain"]
    assert "components not found" not in data["text/plain"]


def test_a_submitted_edition_notebook_is_graded_like_the_same_code_in_a_py_file(edition, tmp_path):
    name = "feed_forward"
    stub_nb = nbformat.read(str(edition / notebook_edition.FOLDER / f"{name}.ipynb"), as_version=4)
    source = catalog.by_id("ffn_dropout_missing").source()   # a mistake some value tests do not see: some points
    nb_dir, py_dir = tmp_path / "nb" / "alice", tmp_path / "py" / "alice"
    nb_dir.mkdir(parents=True)
    py_dir.mkdir(parents=True)
    nbformat.write(with_code(stub_nb, source), str(nb_dir / f"{name}.ipynb"))
    (py_dir / f"{name}.py").write_text(source, encoding="utf-8")
    scores = []
    for folder in (nb_dir, py_dir):
        out = folder.parent / "out"
        run = CliRunner().invoke(cli.main, ["grade", str(folder), "--out", str(out), "--exercise", name,
                                            "--seed", "5", "--no-pictures", "--workers", "1"])
        assert run.exit_code == 0, run.output
        results = json.loads((out / "submissions" / "alice" / "results.json").read_text(encoding="utf-8"))
        scores.append((results["score"], [(t["name"], t["status"], t["score"]) for t in results["tests"]]))
    assert scores[0] == scores[1]
    assert 0 < scores[0][0] < exercises.get(name).points   # a mistake: some points, not all


def test_unsaved_kernel_definitions_are_named():
    from autograder import notebook

    saved = "def f():\n    return 1\n\n\nclass C:\n    pass\n"
    ns = {}
    exec(compile("def f():\n    return 2\n", "<cell>", "exec"), ns)   # no source: not judged
    assert notebook.unsaved_definitions(saved, {"f": ns["f"]}) == []
    assert notebook.unsaved_definitions(saved, {"f": notebook.unsaved_definitions}) == []  # not __main__


def test_a_kernel_without_a_saved_notebook_is_checked_on_its_definitions(tmp_path, monkeypatch):
    import linecache

    from autograder import notebook

    cell = "import math\n\ndef make_causal_mask(size, device=None):\n    return math.pi\n"
    filename = "<ipython-input-1>"
    linecache.cache[filename] = (len(cell), None, cell.splitlines(True), filename)
    ns = {"__name__": "__main__"}
    exec(compile(cell, filename, "exec"), ns)
    history = ["", "import autograder.notebook as tkit", cell]
    source, found = notebook.kernel_module("masks", ns, history)
    assert found == ["make_causal_mask"]
    assert source.startswith("import math\n") and "return math.pi" in source
    assert "autograder.notebook" not in source
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    assert notebook.find_notebook("masks") is None
    with pytest.raises(FileNotFoundError):
        notebook.find_notebook("masks", tmp_path / "nope.ipynb")


def test_the_saved_notebook_is_found_from_the_front_end_or_the_working_folder(tmp_path, monkeypatch):
    from autograder import notebook

    work, other = tmp_path / "work", tmp_path / "other"
    work.mkdir()
    other.mkdir()
    for folder in (work, other):
        (folder / "masks.ipynb").write_text("{}", encoding="utf-8")
    monkeypatch.chdir(work)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    assert notebook.find_notebook("masks") == work / "masks.ipynb"
    monkeypatch.setenv("JPY_SESSION_NAME", str(other / "masks.ipynb"))   # absolute: Jupyter Server
    assert notebook.find_notebook("masks") == other / "masks.ipynb"
    monkeypatch.setenv("JPY_SESSION_NAME", "course/masks.ipynb")         # relative to the server's root
    assert notebook.find_notebook("masks") == work / "masks.ipynb"
    monkeypatch.setenv("JPY_SESSION_NAME", str(other / "scratch.ipynb"))  # another notebook: not this exercise's
    assert notebook.find_notebook("masks") == work / "masks.ipynb"
    assert notebook.find_notebook("masks", other / "masks.ipynb") == other / "masks.ipynb"


def test_the_kernel_imports_a_component_from_its_notebook_without_the_check_cells(tmp_path, monkeypatch):
    import sys

    from autograder import notebook

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import autograder.notebook as tkit", metadata={"tags": ["tkit-check"]}),
        nbformat.v4.new_code_cell("def make_padding_mask(ids, pad_id=0):\n    return ids == pad_id"),
        nbformat.v4.new_code_cell('tkit.check("masks")'),   # would recurse if it ran on import
    ])
    nbformat.write(nb, str(tmp_path / "masks.ipynb"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "masks", raising=False)
    # a kernel has no masks.py on its path (other tests of this process may have put solutions/ there)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if not os.path.exists(os.path.join(p or ".", "masks.py"))])
    assert sum(isinstance(f, notebook.NotebookFinder) for f in sys.meta_path) == 1
    try:
        import masks
        assert masks.make_padding_mask(3, 3) is True
        assert masks.__file__ == str(tmp_path / "masks.ipynb")
    finally:
        sys.modules.pop("masks", None)


def test_a_comment_after_a_function_s_last_line_is_not_an_unsaved_change():
    """The reference's own cells end functions with ``### END SOLUTION``: ``inspect`` keeps that
    comment, the saved file's segment does not, and every such student was told to save (seen
    running the edition's notebook headless with the reference's code pasted in and saved)."""
    import linecache

    from autograder import notebook

    cell = "def f():\n    return 1\n    # done\n"
    saved = "import torch\n\n\ndef f():\n    return 1\n    # done\n"
    filename = "<ipython-input-tkit-comment>"
    linecache.cache[filename] = (len(cell), None, cell.splitlines(True), filename)
    ns = {"__name__": "__main__"}
    exec(compile(cell, filename, "exec"), ns)
    assert notebook.unsaved_definitions(saved, {"f": ns["f"]}) == []
    edited = "def f():\n    return 2\n"
    linecache.cache[filename] = (len(edited), None, edited.splitlines(True), filename)
    exec(compile(edited, filename, "exec"), ns)
    assert notebook.unsaved_definitions(saved, {"f": ns["f"]}) == ["f"]
