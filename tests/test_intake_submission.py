"""Preparing a submission folder for grading (:mod:`autograder.intake.submission`)."""

from pathlib import Path

from autograder.intake import submission

REPO = Path(__file__).resolve().parent.parent


def test_symlinks_are_never_followed_even_beside_a_notebook(tmp_path):
    import nbformat

    
    folder = tmp_path / "linky"
    folder.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    nbformat.write(nb, folder / "masks.ipynb")
    (folder / "positional_encoding.py").symlink_to(REPO / "solutions" / "positional_encoding.py")
    with submission.prepared(folder) as prepared:
        assert sorted(p.name for p in prepared.iterdir()) == ["masks.py"]
