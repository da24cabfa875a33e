"""What grades a submission, as one digest: the gradebook stores it with every grading, and
``tkit grade --resume`` regrades whatever another digest graded.

A kit's version string says nothing about a tolerance or a hidden test corrected mid-term, so
the fingerprint hashes the *contents* of what decides a grade, in parts (each a SHA-256 of
relative path and bytes of its files, sorted):

* ``suites``: the suite files the run selects (public and/or hidden, the chosen exercises; or
  the test files that replace them) and the suites' ``pytest.ini``; their ``points`` markers
  are the rubric;
* ``solutions``: the reference solutions (``solutions/*.py``), the values the tests compare with;
* ``catalog``: the mistake catalog (``autograder/mistakes/catalog/``), which names mistakes;
* ``code``: the kit's grading code, the stages a grade passes through (:data:`GRADING_CODE`:
  intake, results, sandbox, child, mistakes, checks, run, and the shared modules at the top of
  ``autograder/``). The stages after grading (``reports``, ``records``, ``similarity``,
  ``exports``, ``commands``) and the locale and templates change how a grade is shown, not the
  grade, and are left out, so a reworded report does not regrade a term;
* ``data``: the dataset manifest (which MNIST files the training checks read);
* ``version``: the kit's version string.

Not in it: the grading secret (never stored, not even hashed: a low-entropy secret's hash
could be searched) and the seed (the gradebook keeps the run's seed; ``--seed`` with another
value regrades nothing by itself).
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from autograder import __version__, paths

PACKAGE_DIR = paths.PACKAGE_DIR
# the stage packages a grade passes through (imported by grading); the top-level modules count too
GRADING_CODE = ("intake", "results", "sandbox", "child", "mistakes", "checks", "run")
PARTS = ("suites", "solutions", "catalog", "code", "data", "version")


@dataclass(frozen=True)
class Fingerprint:
    """``digest``: SHA-256 (hex) of ``parts``, a dict ``{part: digest}`` of :data:`PARTS`."""

    digest: str
    parts: dict

    def changed(self, other_parts: dict | None) -> list[str]:
        """The parts that differ from ``other_parts`` (all of them when it is unknown)."""
        other_parts = other_parts or {}
        return [name for name in PARTS if self.parts.get(name) != other_parts.get(name)]


def files_digest(root: Path, files) -> str:
    """SHA-256 of each file's path relative to ``root`` (or its name, outside it) and bytes, in
    sorted order."""
    digest = hashlib.sha256()
    named = []
    for file in files:
        file = Path(file)
        try:
            rel = file.resolve().relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            rel = file.name
        named.append((rel, file))
    for rel, file in sorted(named):
        digest.update(rel.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()


def _code_files() -> list[Path]:
    files = [p for p in PACKAGE_DIR.glob("*.py")]
    for stage in GRADING_CODE:
        files += [p for p in (PACKAGE_DIR / stage).rglob("*.py")
                  if "catalog" not in p.relative_to(PACKAGE_DIR).parts]
    return files


@functools.lru_cache(maxsize=8)
def _of(visibility: tuple, names: tuple | None, files: tuple | None) -> Fingerprint:
    from autograder.run.grading import suite_files   # imports pytest: only when a run grades

    suites = list(files) if files is not None else suite_files(visibility, names)
    ini = paths.suites_dir() / "pytest.ini"
    solutions = paths.solutions_dir()
    manifest = paths.datasets_dir() / "manifest.json"
    parts = {
        "suites": files_digest(paths.suites_dir(), suites + ([ini] if ini.is_file() else [])),
        "solutions": files_digest(solutions, sorted(solutions.glob("*.py"))) if solutions else "",
        "catalog": files_digest(PACKAGE_DIR, sorted((PACKAGE_DIR / "mistakes" / "catalog").glob("*.py"))),
        "code": files_digest(PACKAGE_DIR, _code_files()),
        "data": files_digest(paths.datasets_dir(), [manifest] if manifest.is_file() else []),
        "version": __version__,
    }
    return Fingerprint(hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest(), parts)


def of_grading(visibility=("public", "hidden"), names=None, files=None) -> Fingerprint:
    """The fingerprint of a run grading ``visibility`` suites of the exercises ``names`` (None:
    all), or the test ``files`` that replace the kit's suites (as
    :class:`autograder.options.GradingOptions` has them). Computed once per process and
    selection (a few hundred files, milliseconds); a file changed while a run grades is seen by
    the next run.

    Raises:
        ValueError: an unknown exercise name.
    """
    return _of(tuple(visibility), tuple(names) if names else None,
               tuple(Path(f) for f in files) if files is not None else None)
