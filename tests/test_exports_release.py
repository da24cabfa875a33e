"""The student edition: nothing reference-only in it, and it installs and self-checks on its own."""

import os
import subprocess

import pytest
from click.testing import CliRunner

from autograder import cli
from autograder.exports import release, stubs

from conftest import REPO_ROOT, SOLUTIONS_DIR
from kit_venv import make_venv

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("edition") / "student"
    run = CliRunner().invoke(cli.main, ["release", "--out", str(out)])
    assert run.exit_code == 0, run.output
    assert f"to {out}" in run.output
    return out


def test_the_edition_has_stubs_public_suites_and_the_cli(edition):
    assert (edition / "cli.py").is_file() and (edition / "pyproject.toml").is_file()
    assert (edition / "autograder" / "suites" / "pytest.ini").is_file()
    public = sorted(p.name for p in (REPO_ROOT / "autograder" / "suites" / "public").glob("*.py"))
    assert public and sorted(p.name for p in (edition / "autograder/suites/public").glob("*.py")) == public
    stubs_written = sorted(p.name for p in (edition / "exercises").glob("*.py"))
    assert stubs_written == sorted(p.name for p in SOLUTIONS_DIR.glob("*.py") if not p.name.startswith("_"))
    for name in stubs_written:  # the same code path as the committed exercises/
        expected = stubs.stub_file_text((SOLUTIONS_DIR / name).read_text(encoding="utf-8"), name[:-3])
        assert (edition / "exercises" / name).read_text(encoding="utf-8") == expected
    readme = (edition / "README.md").read_text(encoding="utf-8")
    assert "tkit check" in readme and "자가 점검" in readme
    # the contract, the design, the MNIST test set with its licence, and how the data is found
    for doc in ("exercises/README.md", "docs/DESIGN.md", "datasets/mnist/README.md", "datasets/manifest.json"):
        assert (edition / doc).read_bytes() == (REPO_ROOT / doc).read_bytes(), doc
    for name in ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        assert (edition / "datasets/mnist" / name).read_bytes() == (REPO_ROOT / "datasets/mnist" / name).read_bytes()
    assert "datasets/mnist/" in readme and "TKIT_DATA_DIR" in readme and "CC BY-SA 3.0" in readme
    assert (edition / "autograder/cli.py").is_file() and (edition / "setup.py").is_file()


def test_the_edition_holds_nothing_reference_only(edition):
    files = [p for p in edition.rglob("*") if p.is_file()]
    rel = [p.relative_to(edition).as_posix() for p in files]
    assert not any(r.startswith(("solutions/", "autograder/mistakes/catalog/", "autograder/suites/hidden/")) for r in rel)
    assert not any(r.startswith(("autograder/release", "autograder/export_", "autograder/stubs")) for r in rel)
    assert not any(r.startswith("tests/") for r in rel)
    regions = [body for _, body in release.solution_regions(SOLUTIONS_DIR) if len(body.strip()) >= 24]
    assert len(regions) > 20
    for path in files:
        text = path.read_bytes().decode("utf-8", "replace")  # .mo catalogs are binary
        assert stubs.BEGIN_MARKER not in text, path
        leaked = [body for body in regions if body in text]
        assert not leaked, f"{path} holds solution code: {leaked[0]!r}"
    assert release.reference_material(edition, SOLUTIONS_DIR) == []


def test_the_edition_does_not_depend_on_instructor_only_packages(edition):
    import ast

    pyproject = (edition / "pyproject.toml").read_text(encoding="utf-8")
    assert "torch" in pyproject and "pytest" in pyproject
    assert "copydetect" in (REPO_ROOT / "pyproject.toml").read_text() and "copydetect" not in pyproject
    for name in release.INSTRUCTOR_DEPENDENCIES:
        assert name not in pyproject
    for path in edition.rglob("*.py"):   # and nothing shipped imports them
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not [n for n in names if n.split(".")[0] in release.INSTRUCTOR_DEPENDENCIES], path


def test_the_scan_finds_planted_reference_material(edition, tmp_path):
    planted = tmp_path / "planted"
    (planted / "autograder" / "mistakes" / "catalog").mkdir(parents=True)
    (planted / "autograder" / "mistakes" / "catalog" / "masks.py").write_text("MUTANTS = []\n", encoding="utf-8")
    (planted / "exercises").mkdir()
    (planted / "exercises" / "masks.py").write_text(
        (SOLUTIONS_DIR / "masks.py").read_text(encoding="utf-8").replace(stubs.BEGIN_MARKER, "# begin"),
        encoding="utf-8")
    problems = release.reference_material(planted, SOLUTIONS_DIR)
    assert "autograder/mistakes/catalog/masks.py: instructor-only path" in problems
    assert "exercises/masks.py: holds solution code from solutions/masks.py" in problems


def test_release_refuses_to_overwrite(edition, tmp_path):
    run = CliRunner().invoke(cli.main, ["release", "--out", str(edition)])
    assert run.exit_code == 1 and "exists and is not empty; use --force" in run.output
    run = CliRunner().invoke(cli.main, ["release", "--out", str(REPO_ROOT / "autograder" / "x")])
    assert run.exit_code == 1 and "inside the kit's own autograder/" in run.output


def test_the_edition_installs_in_a_fresh_venv_and_checks_the_stubs(edition, tmp_path):
    bin_dir = make_venv(tmp_path / "venv", edition)
    env = {k: v for k, v in os.environ.items() if k not in ("TKIT_ROOT", "PYTHONPATH", "TKIT_DATA_DIR")}
    env.update(COLUMNS="120", TKIT_LANG="en")
    where = subprocess.run([str(bin_dir / "python"), "-c", "import autograder.cli, autograder; print(autograder.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    assert where.stdout.strip() == str(edition / "autograder" / "__init__.py")

    helped = subprocess.run([str(bin_dir / "tkit"), "--help"], cwd=tmp_path, env=env, capture_output=True,
                            text=True, check=True)
    listed = [line.split()[0] for line in helped.stdout.split("Commands:")[1].splitlines() if line.strip()]
    assert listed == sorted(release.STUDENT_COMMANDS), helped.stdout
    assert "not available" not in helped.stdout

    run = subprocess.run([str(bin_dir / "tkit"), "check"], cwd=edition, env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert any("Results" in line for line in lines)
    total = [line for line in lines if " total " in line]
    assert total and total[0].split("│")[-2].strip().startswith("0/"), run.stdout
    # untouched stubs: one "a TODO is not implemented yet" cause at the top with its first
    # messages (each stub's once), no per-test messages, the table and total, one summary line
    n = int(lines[-1].split(" of ")[1].split()[0])
    todo = sum("not implemented yet: " in line for line in lines)
    assert todo == 6 and sum("a TODO is not implemented yet" in line for line in lines) == 1, run.stdout
    every = subprocess.run([str(bin_dir / "tkit"), "check", "-v"], cwd=edition, env=env, capture_output=True,
                           text=True, timeout=600)   # every message: one per stub a test reaches
    stubs = {line.strip() for line in every.stdout.splitlines() if line.strip().startswith("not implemented yet: ")}
    assert len(stubs) > 6, every.stdout
    assert n > 30 and lines[-1] == (f"0 of {n} tests passed, {n} not implemented yet, 0 failed. "
                                    f"Run `tkit check -v` to see every message ({len(stubs) - 6} not shown)."), run.stdout
    assert len(lines) < 45 and "__init__ is not implemented yet" not in run.stdout and "아직" not in run.stdout

    verbose = subprocess.run([str(bin_dir / "tkit"), "check", "embedding", "-v"], cwd=edition, env=env,
                             capture_output=True, text=True, timeout=600)
    assert "not implemented yet: embedding: TokenEmbedding.__init__" in verbose.stdout, verbose.stdout
    assert "아직" not in verbose.stdout   # the English report says it once, in English

    hidden = subprocess.run([str(bin_dir / "tkit"), "grade", "exercises", "--out", str(tmp_path / "g")],
                            cwd=edition, env=env, capture_output=True, text=True)
    assert hidden.returncode != 0 and "not available in this edition" in hidden.stderr
