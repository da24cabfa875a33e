"""Trusted implementations in the parent: the reference solutions and their mutants.

The exercise modules import each other by plain name (``from masks import
masked_softmax``), the way a student's files sit side by side. To hold the reference
and many mutants in one process without them (or anything else) clashing in
``sys.modules``, :func:`load_modules` executes a set of sources with a private
finder: while it runs, ``import masks`` resolves to that set's ``masks``; afterwards
``sys.modules`` is exactly as before, and each loaded module keeps the siblings it
bound at import time. (This is why solution modules import only at the top.)

Only trusted code goes through here: ``solutions/`` and mutants made from it. Student
code never does (it runs in the child, see :mod:`autograder.sandbox`).
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.util
import sys
import threading
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from autograder import paths
from autograder.child import tasks
from autograder.child.runner import seed_everything

_LOCK = threading.Lock()


class _SourceFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, sources: dict[str, str], origin: Path):
        self.sources = sources
        self.origin = origin

    def find_spec(self, fullname, path=None, target=None):
        if fullname in self.sources:
            return importlib.util.spec_from_loader(
                fullname, self, origin=str(self.origin / f"{fullname}.py"))
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        code = _compile(self.sources[module.__name__], module.__spec__.origin)
        exec(code, module.__dict__)


@lru_cache(maxsize=512)
def _compile(source: str, filename: str):
    return compile(source, filename, "exec")


class LocalImpl:
    """A set of exercise modules loaded in this process, addressed like a submission.

    ``impl.positional_encoding.sinusoidal_table(4, 8)`` calls the function directly;
    :class:`autograder.sandbox.remote.RemoteImpl` offers the same attribute access for a
    student's child, so a test body ``run(impl)`` works on both. ``label`` names the
    implementation in messages ("reference", a mutant id).
    """

    def __init__(self, modules: dict[str, ModuleType], label: str, content_key: bytes | None = None):
        self._modules = modules
        self.label = label
        self.content_key = content_key  # a digest of the sources, set by load_modules

    def tkit_memo_key(self):
        """What :mod:`autograder.memo` keys this implementation by: the digest of its sources
        (:func:`load_modules` sets it); None (never cached) for modules loaded otherwise."""
        if self.content_key is None:
            from autograder.memo import Unmemoizable

            raise Unmemoizable(f"{self.label} has no content key")
        return self.content_key

    def __getattr__(self, name: str) -> ModuleType:
        try:
            return self._modules[name]
        except KeyError:
            raise AttributeError(f"{self.label} has no module {name!r}") from None

    def has(self, name: str) -> bool:
        return name in self._modules

    def task(self, name: str, *args, timeout: float | None = None, **kwargs):
        """Run a kit task (see :mod:`autograder.child.tasks`) here, on trusted objects."""
        return tasks.run(name, *args, **kwargs)

    def seed(self, seed: int) -> None:
        seed_everything(seed)


def load_modules(sources: dict[str, str], origin: Path, label: str) -> LocalImpl:
    """Execute ``sources`` (module name -> code) as one isolated set of modules.

    Raises whatever the sources raise on import (trusted code: a bug here is the kit's).
    """
    finder = _SourceFinder(sources, origin)
    with _LOCK:
        saved = {name: sys.modules.pop(name) for name in list(sources) if name in sys.modules}
        sys.meta_path.insert(0, finder)
        loaded: dict[str, ModuleType] = {}
        try:
            for name in sorted(sources):
                loaded[name] = importlib.import_module(name)
        finally:
            sys.meta_path.remove(finder)
            for name in sources:
                sys.modules.pop(name, None)
            sys.modules.update(saved)
    digest = hashlib.blake2b(digest_size=20)
    for name in sorted(sources):
        digest.update(f"{len(name)}:{name}:{len(sources[name])}:".encode())
        digest.update(sources[name].encode("utf-8", "surrogatepass"))
    return LocalImpl(loaded, label, digest.digest())


def read_sources(folder: Path) -> dict[str, str]:
    """The exercise modules of a folder: ``{module name: source}`` for ``*.py`` not starting with ``_``."""
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.py"))
            if not p.name.startswith("_")}


@lru_cache(maxsize=1)
def reference() -> LocalImpl:
    """The reference solutions, loaded once per process. Raises FileNotFoundError in a
    student edition, which has no ``solutions/``."""
    folder = paths.solutions_dir()
    if folder is None:
        raise FileNotFoundError("the reference solutions are not part of this edition of the kit")
    return load_modules(read_sources(folder), folder, "reference")


@lru_cache(maxsize=256)
def variant(replaced: tuple[tuple[str, str], ...], label: str) -> LocalImpl:
    """The reference with each ``(module, source)`` of ``replaced`` swapped in (mutants),
    loaded once per distinct replacement."""
    folder = paths.solutions_dir()
    sources = dict(read_sources(folder))
    sources.update(dict(replaced))
    return load_modules(sources, folder, label)
