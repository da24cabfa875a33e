"""The mistake catalog: known mistakes as mutants of the reference solutions.

Each exercise has a module ``autograder/mistakes/catalog/<exercise>.py`` with a list
``MUTANTS`` of :class:`Mutant`, the functions and methods its student writes (``SIGNATURES``, what
:mod:`autograder.mistakes.adversaries` wraps; ``NO_TEMPLATES``, the templates that make no sense
there) and its hand-written degenerate implementations (``DEGENERATES``, :class:`Degenerate`): one
file holds an exercise's known wrong code. A mutant is a small text patch on
``solutions/<module>.py``; :meth:`Mutant.impl` loads the patched reference set in
the parent (see :mod:`autograder.mistakes.implementations`). Two uses:

* when a test fails, the student's output is compared with each mutant's output on
  the same input, and the closest match names the likely mistake
  (:func:`autograder.checks.expectations.identify`);
* ``tkit validate`` grades every mutant as a submission: each must lose points on its
  own exercise and be named as itself.

Mutants taken from public code say where the mistake was seen (a bug report, an erratum, a
forum thread) in a comment above them. Two mutants of one exercise may be named together
(:mod:`autograder.mistakes.matching`). A *family* of mistakes (:mod:`autograder.mistakes.families`:
every activation, scale, mask placement, rotary share ... public code uses at one site) is written
once as a table and made into mutants by :func:`generated`, so the catalog, the student edition's
diagnosis and the hints agree on each variant.

The catalog is instructor-only material (it is the reference with one bug): the
student edition does not ship it, and :func:`all_mutants` is then empty; there,
:mod:`autograder.mistakes.diagnosis` names the mistakes the public formulas can express, under the
same ids.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from functools import lru_cache

from autograder import exercises, paths
from autograder.i18n import _, authored
from autograder.mistakes import implementations


class CatalogError(Exception):
    """A mutant's patch no longer applies to the reference (its text was not found once)."""


@dataclass(frozen=True)
class Mutant:
    """One known mistake.

    ``replace`` holds ``(old, new)`` text pairs applied in order to
    ``solutions/<module>.py`` (``module`` defaults to ``exercise``); each ``old`` must
    occur exactly once. ``convention`` marks a real but different convention (e.g.
    rotate-half RoPE), whose hint says so instead of calling the maths wrong.
    """

    id: str
    exercise: str
    hint_en: str
    hint_ko: str
    replace: tuple[tuple[str, str], ...]
    module: str | None = None
    convention: bool = False
    tags: tuple[str, ...] = field(default=())

    @property
    def target(self) -> str:
        return self.module or self.exercise

    def source(self, text: str | None = None) -> str:
        """The patched source of ``solutions/<target>.py`` (or of ``text``, a source of that
        module already patched by other mutants); CatalogError if a patch misses."""
        if text is None:
            text = _solution_source(self.target)
        for old, new in self.replace:
            count = text.count(old)
            if count != 1:
                raise CatalogError(f"mutant {self.id}: {old!r} occurs {count} times in {self.target}.py")
            text = text.replace(old, new)
        return text

    def impl(self):
        """The reference set with this mutant's module patched (a LocalImpl)."""
        return implementations.variant(((self.target, self.source()),), self.id)

    def hint(self) -> str:
        """The hint in the current language (:func:`autograder.i18n.authored`)."""
        return authored(self.hint_en, self.hint_ko)


@dataclass(frozen=True)
class Combined:
    """Catalog mistakes found together (two, as pairs are tried), named ``"<first id>+<second id>"``.

    Named by :func:`autograder.mistakes.matching.pair_trials` and looked up by :func:`by_id`.
    Offers what :class:`autograder.checks.expectations.Mismatch` and the plugin read from a mutant:
    ``id``, ``exercise``, ``convention`` (True only when both parts are conventions) and
    :meth:`hint`, the two hints joined.
    """

    parts: tuple

    @property
    def id(self) -> str:
        return "+".join(part.id for part in self.parts)

    @property
    def exercise(self) -> str:
        return self.parts[0].exercise

    @property
    def convention(self) -> bool:
        return all(part.convention for part in self.parts)

    def impl(self):
        """The reference with both mistakes applied (see :func:`combined_impl`)."""
        return combined_impl(self.parts)

    def hint(self) -> str:
        """Both hints in the current language, joined ("; and " in English)."""
        return _("; and ").join(part.hint() for part in self.parts)


@lru_cache(maxsize=64)
def _solution_source(module: str) -> str:
    """``solutions/<module>.py``, read once per process (the mistake search patches it for every
    candidate: hundreds of reads for a student wrong in a composite)."""
    folder = paths.solutions_dir()
    if folder is None:
        raise CatalogError("no solutions/ in this edition")
    return (folder / f"{module}.py").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Degenerate:
    """One degenerate implementation of ``exercise``: ``solutions/<target>.py`` followed by
    ``postscript`` (Python that rebinds names of that module; ``module`` defaults to ``exercise``)."""

    id: str
    exercise: str
    what: str
    postscript: str
    module: str | None = None

    @property
    def target(self) -> str:
        return self.module or self.exercise

    def source(self) -> str:
        """The reference module with the postscript appended."""
        folder = paths.solutions_dir()
        if folder is None:
            raise FileNotFoundError("degenerate implementations need the reference solutions (solutions/)")
        text = (folder / f"{self.target}.py").read_text(encoding="utf-8")
        return f"{text.rstrip()}\n\n\n# --- tkit validate: degenerate implementation {self.id} ---\n{self.postscript.strip()}\n"


def generated(family: str, variants, patch, *, module: str | None = None) -> list[Mutant]:
    """One mutant per variant of a family (:class:`autograder.mistakes.families.Variant`): its id,
    exercise, hints and convention, the reference patched by ``patch(variant)`` (the ``replace``
    pairs). Tagged ``family:<family>``: :func:`autograder.mistakes.matching.pair_trials` never pairs
    two variants of one family (one site, one choice) and does not count them against its cap."""
    return [Mutant(id=v.id, exercise=v.exercise, hint_en=v.en, hint_ko=v.ko, replace=tuple(patch(v)),
                   module=module, convention=v.convention, tags=(f"family:{family}",)) for v in variants]


def combined_impl(mutants):
    """The reference with several mutants applied at once (a student's mistakes in several
    exercises, or several in one file); CatalogError when their patches collide."""
    sources: dict[str, str] = {}
    for mutant in mutants:
        sources[mutant.target] = mutant.source(sources.get(mutant.target))
    return implementations.variant(tuple(sorted(sources.items())), "+".join(m.id for m in mutants))


@lru_cache(maxsize=1)
def all_mutants() -> tuple[Mutant, ...]:
    """Every mutant of every exercise, in exercise order (empty in a student edition)."""
    if paths.solutions_dir() is None:
        return ()
    found: list[Mutant] = []
    for name in exercises.NAMES:
        try:
            module = importlib.import_module(f"autograder.mistakes.catalog.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"autograder.mistakes.catalog.{name}":
                continue
            raise
        found.extend(module.MUTANTS)
    ids = [m.id for m in found]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        raise CatalogError(f"duplicate mutant ids: {sorted(dupes)}")
    return tuple(found)


@lru_cache(maxsize=1)
def _by_id() -> dict[str, Mutant]:
    return {m.id: m for m in all_mutants()}


def parts_of(mistake_id: str) -> tuple[Mutant, ...]:
    """The catalog mutants a mistake id names: one for a mutant's id, each part of a combined id
    (``"a+b"``, :class:`Combined`), once each in order. Raises
    KeyError naming the first part the catalog does not hold (an empty id included)."""
    found: list[Mutant] = []
    for part in str(mistake_id or "").split("+"):
        mutant = _by_id().get(part)
        if mutant is None:
            raise KeyError(f"no mutant {part!r} in the catalog (mistake {mistake_id!r})")
        if mutant not in found:
            found.append(mutant)
    return tuple(found)


def by_id(mistake_id: str):
    """The :class:`Mutant` of ``mistake_id``, or for a combined id (``"a+b"``) the
    :class:`Combined` of its parts (``id``, ``exercise``,
    ``convention``, ``hint()`` and ``impl()`` alike). KeyError when a part is unknown."""
    parts = parts_of(mistake_id)
    return parts[0] if len(parts) == 1 else Combined(parts)


def find(mistake_id: str | None):
    """:func:`by_id`, or None for no id or an id the catalog does not hold (never raises)."""
    try:
        return by_id(mistake_id) if mistake_id else None
    except KeyError:
        return None


def for_exercises(names) -> list[Mutant]:
    """The mutants whose exercise is in ``names``."""
    wanted = set(names)
    return [m for m in all_mutants() if m.exercise in wanted]
