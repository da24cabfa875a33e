"""One variant of a family of mistakes (see :mod:`autograder.mistakes.families`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Variant:
    """One choice at a family's site (see the module docstring)."""

    id: str
    exercise: str
    en: str
    ko: str
    code: str = ""
    formula: Callable | None = field(default=None, compare=False)
    convention: bool = False
    params: tuple = ()
