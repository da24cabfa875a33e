"""The Gradescope autograder (``tkit export gradescope --out autograder.zip``).

Gradescope unpacks the zip into ``/autograder/source``, runs ``setup.sh`` once to build the
image, then ``run_autograder`` for each submission, which must leave
``/autograder/results/results.json``
(https://gradescope-autograders.readthedocs.io/en/latest/specs/). The zip holds:

* ``setup.sh`` and ``run_autograder``, rendered from ``templates/gradescope/``;
* ``kit/``: the instructor kit (:data:`KIT_ENTRIES`: the engine, all suites, the mistake
  catalog, ``solutions/`` for the hidden tests). It runs on Gradescope's servers, never on a
  student's machine, and student code still runs only in the sandboxed child.

``setup.sh`` installs the kit and its dependencies into ``/autograder/venv``; ``run_autograder``
calls :func:`run_autograder` (``python -m autograder.exports.gradescope``), which copies
``/autograder/submission`` to a scratch folder, grades it with the public and hidden suites
and writes ``results.json``. The ``/autograder`` root can be moved with the environment
variable ``AUTOGRADER_ROOT`` (tests run the zip in a temporary folder that way).

Two choices the instructor makes when exporting travel in ``run_autograder``'s arguments:

* **visibility**: each test's Gradescope ``visibility`` (``visible``, ``hidden``,
  ``after_due_date``, ``after_published``): public tests are ``visible`` and hidden tests
  ``after_published`` unless a rule ``PATTERN=VISIBILITY`` says otherwise
  (:func:`apply_visibility`; the last matching rule wins). What a hidden test's record
  *contains* is decided when it is graded, not here;
* **leaderboard**: the training checks' held-out figures (the AutoEncoder's held-out MSE, the
  Transformer's held-out exact-match rate; the tests attach them as ``leaderboard`` data) as
  results.json's ``leaderboard`` entries (:func:`autograder.run.credit.take_leaderboard`). Off
  unless asked for: the figures
  are measured on the run's secret draws, and Gradescope shows the leaderboard to the class.
  Without it the figures are removed from the records all the same.
"""

from __future__ import annotations

import fnmatch
import os
import shlex
import shutil
import stat
import tempfile
import zipfile
from pathlib import Path

import click

from autograder import exercises, paths
from autograder.intake.textfiles import write_json_atomic
from autograder.results.model import error_results

DEFAULT_ROOT = "/autograder"
# What of the instructor kit goes into the zip's kit/ folder (relative to the kit root).
KIT_ENTRIES = ("pyproject.toml", "setup.py", "README.md", "cli.py", "autograder", "solutions", "templates", "datasets",
               "exercises", "docs")
# Never bundled from the kit folder: caches and data files (MNIST is added, verified, by mnist_files).
SKIP_PARTS = frozenset({"__pycache__", ".pytest_cache", ".ipynb_checkpoints"})
SKIP_SUFFIXES = (".pyc", ".gz", ".idx", ".ubyte")
SCRIPTS = ("setup.sh", "run_autograder")
# pip arguments of setup.sh: CPU-only torch wheels (Gradescope has no GPU; they are much smaller).
DEFAULT_PIP_ARGS = "--extra-index-url https://download.pytorch.org/whl/cpu"
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")   # Gradescope's test visibilities


def parse_visibility(rules) -> list[tuple[str, str]]:
    """``["PATTERN=VISIBILITY", ...]`` -> ``[(pattern, visibility)]``. A pattern is ``public`` or
    ``hidden`` (the suite), an exercise name, or a glob on a test's node id or name
    (``hidden/test_masks.py::*``). Raises ValueError for a rule without ``=`` or an unknown visibility."""
    parsed = []
    for rule in rules or ():
        pattern, sep, value = str(rule).rpartition("=")
        if not sep or not pattern or value not in VISIBILITIES:
            raise ValueError(f"a visibility rule is PATTERN=VISIBILITY with VISIBILITY one of "
                             f"{', '.join(VISIBILITIES)}; got {rule!r}")
        parsed.append((pattern, value))
    return parsed


def apply_visibility(results, rules: list[tuple[str, str]]) -> None:
    """Set each test's visibility by the last rule of ``rules`` (:func:`parse_visibility`) that
    matches it; a test no rule matches keeps the grading's (public ``visible``, hidden
    ``after_published``)."""
    for test in results.tests:
        keys = [*(test.tags or [])[:2], test.nodeid or "", test.name]
        for pattern, value in rules:
            if any(fnmatch.fnmatchcase(key, pattern) for key in keys if key):
                test.visibility = value


def kit_files(root: Path | None = None) -> list[Path]:
    """The files of the instructor kit to bundle, relative to the kit root, sorted."""
    root = Path(root or paths.kit_root())
    found = []
    for entry in KIT_ENTRIES:
        path = root / entry
        candidates = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for p in candidates:
            rel = p.relative_to(root)
            if SKIP_PARTS.isdisjoint(rel.parts) and not p.name.endswith(SKIP_SUFFIXES):
                found.append(rel)
    return sorted(found)


def render_scripts(names=None, *, pip_args: str = DEFAULT_PIP_ARGS, visibility=(), with_leaderboard: bool = False
                   ) -> dict[str, str]:
    """``{script name: text}`` of ``setup.sh`` and ``run_autograder`` (jinja2 templates in
    ``templates/gradescope/``). ``names``: the exercises to grade (default: all); ``visibility``
    and ``with_leaderboard``: see the module's text (ValueError for a bad rule)."""
    import jinja2

    selected = list(names) if names else []
    for name in selected:
        exercises.get(name)  # ValueError on an unknown name
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(paths.templates_dir() / "gradescope")),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    options = [f"--visibility {shlex.quote(f'{p}={v}')}" for p, v in parse_visibility(visibility)]
    options += ["--leaderboard"] if with_leaderboard else []
    context = dict(default_root=DEFAULT_ROOT, exercises=selected, pip_args=pip_args, options=options)
    return {name: env.get_template(f"{name}.j2").render(**context) for name in SCRIPTS}


def build_zip(out: Path, names=None, *, pip_args: str = DEFAULT_PIP_ARGS, visibility=(),
              with_leaderboard: bool = False) -> list[str]:
    """Write the Gradescope autograder zip to ``out``; returns the member names.

    Args:
        out: the ``.zip`` to write (replaced if it exists).
        names: exercises to grade (default: every exercise).
        pip_args: extra ``pip install`` arguments for ``setup.sh``.
        visibility: ``PATTERN=VISIBILITY`` rules (:func:`parse_visibility`).
        with_leaderboard: put the training checks' held-out figures on Gradescope's leaderboard.

    Raises:
        FileNotFoundError: when this kit has no ``solutions/`` (a student edition cannot
            build an autograder).
        ValueError: for an unknown exercise name, a bad visibility rule or an ``out`` that does
            not end in ``.zip``.
    """
    root = paths.kit_root()
    if paths.solutions_dir() is None:
        raise FileNotFoundError("no solutions/ here: export the autograder from the instructor kit")
    out = Path(out)
    if out.suffix != ".zip":
        raise ValueError(f"--out must name a .zip file, got {out}")
    scripts = render_scripts(names, pip_args=pip_args, visibility=visibility, with_leaderboard=with_leaderboard)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    members = []
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in scripts.items():
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.external_attr = (stat.S_IFREG | 0o755) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, text)
            members.append(name)
        for rel in kit_files(root):
            arcname = "kit/" + rel.as_posix()
            zf.write(root / rel, arcname)
            members.append(arcname)
        for path in mnist_files(names):
            arcname = f"kit/datasets/mnist/raw/{path.name}"
            zf.write(path, arcname)
            members.append(arcname)
    os.replace(tmp, out)
    return members


def mnist_files(names=None) -> list[Path]:
    """The MNIST files to bundle when the AutoEncoder is graded: every split found on this
    machine (see :mod:`autograder.mnist`), each checked against the manifest first. Empty when
    the AutoEncoder is not selected or no MNIST is here (``setup.sh`` then downloads it).

    Raises:
        autograder.mnist.ChecksumError: a file found here is corrupted or truncated.
    """
    if names and "autoencoder" not in names:
        return []
    from autograder import mnist  # imports torch: only when the autoencoder is exported

    files = []
    for split in mnist.available_splits():
        for path in mnist.locate(split).values():
            mnist.verify_file(path)
            files.append(path)
    return files


def run_autograder(root: Path, names=None, *, seed: int | None = None, visibility=(),
                   with_leaderboard: bool = False) -> dict:
    """Grade ``root/submission`` with the public and hidden suites into ``root/results/results.json``.

    The submission (``.py`` files or notebooks named after the exercises, possibly inside
    folders, or a single ``.zip``) is copied to a scratch folder first. A submission that cannot
    be graded at all (bad zip, unreadable notebook) still gets a results.json: zero points and
    the reason. ``visibility`` (rules) and ``with_leaderboard``: see the module's text. Returns
    the results written.
    """
    from autograder.intake import submission
    from autograder.run import credit, grading  # here: building the autograder zip imports no torch

    root = Path(root)
    results_path = root / "results" / "results.json"
    with tempfile.TemporaryDirectory(prefix="tkit-gradescope-") as tmp:
        work = Path(tmp) / "submission"
        shutil.copytree(root / "submission", work)
        zips = sorted(work.glob("*.zip"))
        has_modules = any(work.rglob("*.py")) or any(work.rglob("*.ipynb"))
        target = zips[0] if zips and not has_modules else submission.submission_root(work)
        try:
            results = grading.grade_submission(target, visibility=("public", "hidden"),
                                               names=list(names or ()) or None, seed=seed)
        except submission.SubmissionFormatError as exc:
            results = error_results(f"The submission could not be graded: {exc} "
                                    f"(제출물을 채점할 수 없습니다)", names=names, with_tests=True)
    results.submission = "submission"
    apply_visibility(results, parse_visibility(visibility))
    entries = credit.take_leaderboard(results)
    if entries and with_leaderboard:
        results.top[credit.LEADERBOARD] = entries
    data = results.to_gradescope()
    write_json_atomic(results_path, data)
    _print_withheld(results)
    return data


def _print_withheld(results) -> None:
    """What the hidden tests withhold from the student (:mod:`autograder.results.withheld`), as
    JSON on stdout: Gradescope shows the autograder's output to instructors only (results.json
    sets ``stdout_visibility`` to hidden)."""
    import json

    from autograder.results import withheld

    record = withheld.instructor_record(results)
    if record is not None:
        click.echo("instructor only, withheld from the student: " + json.dumps(record, ensure_ascii=False))


@click.command()
@click.option("--root", type=click.Path(file_okay=False, path_type=Path),
              default=lambda: os.environ.get("AUTOGRADER_ROOT", DEFAULT_ROOT), show_default="$AUTOGRADER_ROOT or /autograder",
              help="Gradescope's autograder folder (submission/ in, results/ out).")
@click.option("--exercise", "names", multiple=True, help="Grade only this exercise (repeatable).")
@click.option("--seed", type=int, default=None, help="Seed of the hidden tests (default: a fresh one).")
@click.option("--visibility", "visibility", multiple=True, metavar="PATTERN=VISIBILITY",
              help="A test's Gradescope visibility (repeatable; see tkit export gradescope --help).")
@click.option("--leaderboard", "with_leaderboard", is_flag=True, help="Write the held-out figures as leaderboard entries.")
def main(root, names, seed, visibility, with_leaderboard):
    """Grade ROOT/submission for Gradescope and write ROOT/results/results.json."""
    results = run_autograder(root, names, seed=seed, visibility=visibility, with_leaderboard=with_leaderboard)
    click.echo(f"{results['score']:g} points; results in {Path(root) / 'results' / 'results.json'}")


if __name__ == "__main__":
    main()
