"""The kit as Python users get it: self-contained (no folder beside the checkout is read), built
into a wheel from a fresh copy of the repository, installed (not editable) into a fresh venv and
run from a folder outside the checkout, for the instructor kit and the student edition.

The expensive test grades the sample class with the installed wheel and no data folder given,
and checks each student's total against the table in ``examples/sample_class/README.md``.
"""

import csv
import hashlib
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from autograder import mnist
from autograder.exports import release

from conftest import REPO_ROOT
from kit_venv import build_wheel, make_wheel_venv

SAMPLE_README = REPO_ROOT / "examples" / "sample_class" / "README.md"
T10K = ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")


def clean_env() -> dict:
    """The environment of a new user: no kit root, no data folder, no PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("TKIT_ROOT", "TKIT_DATA_DIR", "PYTHONPATH")}
    env.update(COLUMNS="120", TKIT_LANG="en")
    return env


def readme_totals() -> tuple[int, dict[str, float]]:
    """``(seed, {student: total})`` from the sample class README's totals table."""
    text = SAMPLE_README.read_text(encoding="utf-8")
    table = text.split("<!-- sample-class-totals", 1)[1]
    seed = int(re.search(r"\| student \| total \(seed (\d+)\) \|", table).group(1))
    rows = re.findall(r"^\| (\w+) \| ([\d.]+) \|$", table, flags=re.M)
    return seed, {student: float(total) for student, total in rows}


def fresh_copy(dest: Path) -> Path:
    """What a fresh clone of this checkout holds (tracked and new, non-ignored files), copied to
    ``dest``: ignored files (a downloaded MNIST, build folders, venvs) are left behind."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO_ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = REPO_ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def tkit(bin_dir: Path, *args, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([str(bin_dir / "tkit"), *args], cwd=cwd, env=clean_env(), capture_output=True,
                          text=True, timeout=timeout)


# -- self-contained: cheap, static --------------------------------------------------------------


def test_mnist_test_set_ships_in_the_kit_and_is_the_default():
    folder = REPO_ROOT / "datasets" / "mnist"
    sums = dict(reversed(line.split()) for line in (folder / "MD5SUMS").read_text().splitlines())
    assert sorted(sums) == sorted(T10K)
    for name in T10K:
        assert hashlib.md5((folder / name).read_bytes()).hexdigest() == sums[name]
        assert mnist.manifest()["files"][name[:-3]]["md5_gz"] == sums[name]
    licence = (folder / "README.md").read_text(encoding="utf-8")
    assert "CC BY-SA 3.0" in licence and "Corinna Cortes" in licence and "Burges" in licence
    env = os.environ.pop("TKIT_DATA_DIR", None)
    try:
        assert mnist.search_dirs() == [REPO_ROOT / "datasets" / "mnist"]
        assert mnist.locate("test") == {"images": folder / T10K[0], "labels": folder / T10K[1]}
    finally:
        if env is not None:
            os.environ["TKIT_DATA_DIR"] = env


def test_nothing_reads_a_folder_beside_the_kit():
    """No module, test or benchmark looks for ``../shared`` (the course's first drafts and data)."""
    pattern = re.compile(r"""\.\./shared|parent\s*/\s*["']shared["']|["']shared["']\s*/\s*["']datasets""")
    offenders = [p.relative_to(REPO_ROOT).as_posix()
                 for folder in ("autograder", "tests", "benchmarks", "scripts")
                 for p in (REPO_ROOT / folder).rglob("*.py")
                 if p != Path(__file__) and pattern.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_the_docs_live_in_the_repository_with_working_relative_links():
    docs = ["README.md", "exercises/README.md", "docs/DESIGN.md", "datasets/mnist/README.md",
            "examples/sample_class/README.md"]
    for doc in docs:
        text = (REPO_ROOT / doc).read_text(encoding="utf-8")
        assert "../shared" not in text, doc
        for link in re.findall(r"\]\(([^)#\s]+)\)", text):
            if not link.startswith(("http://", "https://")):
                assert (REPO_ROOT / doc).parent.joinpath(link).resolve().exists(), f"{doc}: {link}"
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert "](exercises/README.md)" in readme and "](docs/DESIGN.md)" in readme


def test_masked_softmax_hint_and_docstring_agree_on_the_fill_value():
    """The stub's TODO says what its docstring says: the finite finfo.min, not -inf."""
    stub = (REPO_ROOT / "exercises" / "masks.py").read_text(encoding="utf-8")
    body = stub.split("def masked_softmax", 1)[1].split("\ndef ", 1)[0]
    docstring, code = body.split('"""')[1], body.split('"""')[2]
    todo = [line for line in code.splitlines() if line.strip().startswith("# TODO")]
    assert "finfo(scores.dtype).min" in docstring and "instead of ``-inf``" in docstring
    assert todo and "torch.finfo(scores.dtype).min (not -inf" in todo[0]


def test_the_sample_class_readme_states_the_totals():
    seed, totals = readme_totals()
    assert seed > 0 and sorted(totals) == ["alice", "bob", "chen", "dana", "eve", "farid"]
    assert totals["alice"] == 100 and totals["bob"] == 0


# -- the instructor kit's wheel ------------------------------------------------------------------


@pytest.fixture(scope="module")
def kit_wheel(tmp_path_factory):
    """The instructor kit's wheel, built from a fresh copy of the checkout (no ../shared beside it)."""
    root = tmp_path_factory.mktemp("clone")
    source = fresh_copy(root / "repo")
    return build_wheel(source, root / "dist"), source


@pytest.mark.slow
def test_the_wheel_holds_one_package_with_its_data(kit_wheel):
    wheel, _ = kit_wheel
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"autograder"}  # no generic top-level module (cli, datasets, templates...)
    for member in ("autograder/cli.py", "autograder/_kit/templates/summary.html",
                   "autograder/_kit/templates/gradescope/run_autograder.j2", "autograder/_kit/datasets/manifest.json",
                   "autograder/_kit/datasets/mnist/README.md", "autograder/_kit/exercises/masks.py",
                   "autograder/_kit/exercises/README.md", "autograder/_kit/solutions/masks.py",
                   "autograder/suites/hidden/test_masks.py", "autograder/locale/ko/LC_MESSAGES/tkit.mo",
                   *(f"autograder/_kit/datasets/mnist/{n}" for n in T10K)):
        assert member in names, member
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "tkit = autograder.cli:entry" in zipfile.ZipFile(wheel).read(entry).decode()


@pytest.mark.slow
def test_the_installed_wheel_checks_and_grades_the_sample_class(kit_wheel, tmp_path):
    """From a folder outside the checkout, with no data folder: the packaged data and stubs are
    used, and the sample class gets exactly the README's totals for its seed."""
    wheel, source = kit_wheel
    bin_dir = make_wheel_venv(tmp_path / "venv", wheel)
    work = tmp_path / "elsewhere"
    work.mkdir()
    site = next((tmp_path / "venv" / "lib").glob("python*/site-packages"))

    data = tkit(bin_dir, "data", "mnist", "--verify", cwd=work)
    assert data.returncode == 0, data.stdout + data.stderr
    assert str(site / "autograder" / "_kit" / "datasets" / "mnist" / T10K[0]) in data.stdout

    check = tkit(bin_dir, "check", "embedding", cwd=work)   # the packaged, untouched stubs
    assert check.returncode == 1 and check.stdout.splitlines()[-1].startswith(
        "0 of 3 tests passed, 3 not implemented yet, 0 failed."), check.stdout + check.stderr

    seed, totals = readme_totals()
    out = tmp_path / "out"
    grade = tkit(bin_dir, "grade", "--class-dir", str(source / "examples" / "sample_class"), "--out", str(out),
                 "--seed", str(seed), "--workers", "2", "--no-pictures", cwd=work, timeout=900)
    assert grade.returncode == 0, grade.stdout + grade.stderr
    with (out / "grades.csv").open(encoding="utf-8") as f:
        got = {row["student_id"]: float(row["total"]) for row in csv.DictReader(f)}
    assert got == totals, f"regrade and update {SAMPLE_README} if grading changed on purpose"
    summary = (out / "summary.html").read_text(encoding="utf-8")
    for student in totals:   # the roster's name links to the student's report
        link = re.search(rf'<tr><td><a href="([^"]*)">{student}</a></td>', summary)
        assert link and (out / link.group(1)).is_file(), student


# -- the student edition's wheel -----------------------------------------------------------------


@pytest.mark.slow
def test_the_student_editions_wheel_checks_from_anywhere(tmp_path):
    edition = release.build_edition(tmp_path / "student").root
    bin_dir = make_wheel_venv(tmp_path / "venv", build_wheel(edition, tmp_path / "dist"))
    work = tmp_path / "elsewhere"
    work.mkdir()
    site = next((tmp_path / "venv" / "lib").glob("python*/site-packages"))
    assert not (site / "autograder" / "_kit" / "solutions").exists()
    assert not (site / "autograder" / "suites" / "hidden").exists()
    assert (site / "autograder" / "_kit" / "exercises" / "README.md").is_file()

    data = tkit(bin_dir, "data", "mnist", cwd=work)
    assert data.returncode == 0 and str(site / "autograder" / "_kit" / "datasets" / "mnist") in data.stdout

    check = tkit(bin_dir, "check", "masks", cwd=work)
    assert check.returncode == 1 and check.stdout.splitlines()[-1].startswith(
        "0 of 7 tests passed, 7 not implemented yet, 0 failed."), check.stdout + check.stderr
    # a student's own folder is checked when run there
    (work / "exercises").mkdir()
    shutil.copyfile(REPO_ROOT / "solutions" / "masks.py", work / "exercises" / "masks.py")
    mine = tkit(bin_dir, "check", "masks", cwd=work)
    assert mine.returncode == 0 and mine.stdout.splitlines()[-1] == "7 of 7 tests passed, 0 not implemented yet, 0 failed.", \
        mine.stdout + mine.stderr
