"""Bounded work in the trusted parent: notebook cleaning is linear, --resume hashing and intake
read a bounded number of bytes, oversize or hostile material is refused with a clear error."""

import time
import tokenize
import zipfile

import pytest

from autograder.intake import limits, notebooks
from autograder.intake import submission
from autograder.intake.submission import SubmissionFormatError
from autograder.records import gradebook
from autograder.run import grading

from test_intake_notebooks import write_notebook

SPARSE = 32 * 2**30   # a sparse 32 GiB file: no disk used, 97 s to hash before the fix


def test_magic_cleaning_tokenizes_each_line_once(monkeypatch):
    n = 2000
    source = "\n".join(line for i in range(n) for line in (f"x{i} = {i}", "%time f()"))
    reads = []
    real = tokenize.generate_tokens

    def counting(readline):
        return real(lambda: reads.append(1) or readline())

    monkeypatch.setattr(tokenize, "generate_tokens", counting)
    notes = []
    cleaned = notebooks._clean_cell(source, "nb.ipynb", 1, notes)
    assert len(notes) == n and cleaned.count("pass  # removed") == n
    assert len(reads) <= 2 * n + 2   # linear: every line read once (re-tokenizing was ~n*n/2 = 4e6)


def test_magic_cleaning_still_sees_open_statements():
    source = "s = '''\n%not a magic\n'''\nx = (1,\n!not either\n)\ny = 1 + \\\n%no\n%time f()\n  %time g()"
    notes = []
    cleaned = notebooks._clean_cell(source, "nb.ipynb", 1, notes).split("\n")
    assert cleaned[1] == "%not a magic" and cleaned[4] == "!not either" and cleaned[7] == "%no"
    assert cleaned[8] == "pass  # removed: IPython magic or shell command"
    assert cleaned[9] == "  pass  # removed: IPython magic or shell command"
    assert ["line 9" in n for n in notes] == [True, False]


def test_a_16_kb_notebook_of_magics_converts_at_once(tmp_path):
    cell = "\n".join(["%time f()", "x = 1"] * 1000)   # ~16 KB; 98 s before the fix
    path = write_notebook(tmp_path / "positional_encoding.ipynb", [("code", cell)])
    t0 = time.monotonic()
    converted = notebooks.convert(path)
    assert time.monotonic() - t0 < 5
    assert len(converted.warnings) == 1000


def _sparse(path, size=SPARSE):
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def test_resume_hashing_does_not_read_a_sparse_32_gib_module(tmp_path):
    (tmp_path / "masks.py").write_text("X = 1\n")
    small = gradebook.content_hash(tmp_path)
    _sparse(tmp_path / "positional_encoding.py")
    t0 = time.monotonic()
    big = gradebook.content_hash(tmp_path)
    assert time.monotonic() - t0 < 2 and big != small
    assert gradebook.content_hash(tmp_path) == big          # stable between runs
    _sparse(tmp_path / "positional_encoding.py", SPARSE + 1)
    assert gradebook.content_hash(tmp_path) != big          # a change is seen
    _sparse(tmp_path / "big.zip")
    assert len(gradebook.content_hash(tmp_path / "big.zip")) == 64


def test_oversize_code_is_refused_naming_the_limit(tmp_path):
    folder = tmp_path / "sparse"
    folder.mkdir()
    _sparse(folder / "positional_encoding.py")
    t0 = time.monotonic()
    with pytest.raises(SubmissionFormatError, match=f"at most {limits.SUBMISSION_CODE_MAX_BYTES // 1024} KB"):
        with submission.prepared(folder):
            pass
    assert time.monotonic() - t0 < 2
    nb_folder = tmp_path / "notebook"   # converted code counts too
    nb_folder.mkdir()
    write_notebook(nb_folder / "masks.ipynb", [("code", "x = 1  # " + "y" * 600_000)])
    with pytest.raises(SubmissionFormatError, match="512 KB"):
        with submission.prepared(nb_folder):
            pass
    _sparse(nb_folder / "rope.ipynb", limits.SUBMISSION_INTAKE_MAX_BYTES + 1)   # raw notebooks too
    with pytest.raises(SubmissionFormatError, match=f"at most {limits.SUBMISSION_INTAKE_MAX_BYTES // 2**20} MB"):
        with submission.prepared(nb_folder):
            pass


def test_a_folder_of_too_many_modules_is_refused(tmp_path):
    for i in range(submission.MAX_ZIP_FILES + 1):
        (tmp_path / f"m{i}.py").touch()
    with pytest.raises(SubmissionFormatError, match=f"at most {submission.MAX_ZIP_FILES}"):
        with submission.prepared(tmp_path):
            pass


def test_hostile_zips_are_refused_with_names_shown_safely(tmp_path):
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("masks.py", "#" * (8 * 2**20))
    with pytest.raises(SubmissionFormatError, match="times its packed size"):
        submission.extract_zip(bomb, tmp_path / "x1")
    code = tmp_path / "code.zip"
    with zipfile.ZipFile(code, "w", zipfile.ZIP_STORED) as zf:
        for name in ("masks", "rope", "attention"):
            zf.writestr(f"sub/{name}.py", "x = 1  # " + "y" * 200_000)
    with pytest.raises(SubmissionFormatError, match="512 KB"):
        with submission.prepared(code):
            pass
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as zf:
        zf.writestr("\x1b[2J<b>x</b>/../../evil.py", "x = 1\n")
    with pytest.raises(SubmissionFormatError) as caught:
        submission.extract_zip(evil, tmp_path / "x2")
    assert "unsafe member" in str(caught.value) and "\x1b" not in str(caught.value) and "\\x1b" in str(caught.value)
    long_name = tmp_path / "long.zip"
    with zipfile.ZipFile(long_name, "w") as zf:
        zf.writestr("a" * 300 + ".py", "x = 1\n")
    with pytest.raises(SubmissionFormatError, match="unsafe member"):
        submission.extract_zip(long_name, tmp_path / "x3")
    clash = tmp_path / "clash.zip"
    with zipfile.ZipFile(clash, "w") as zf:
        zf.writestr("masks.py", "x = 1\n")
        zf.writestr("masks.py/rope.py", "x = 1\n")
    with pytest.raises(SubmissionFormatError, match="not a zip file the grader can read"):
        submission.extract_zip(clash, tmp_path / "x4")
