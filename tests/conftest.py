"""Shared fixtures for the kit's own tests.

``ref`` gives the reference solutions in ``solutions/``, imported by their plain module names
(``masks``, ``attention``, ...) the way the modules import each other.

The training checks' draws mix the run seed with the instructor's grading secret, which a
checkout makes at random on first use (``solutions/.grading-secret``): the kit's own tests fix it
instead (:data:`TEST_SECRET` in ``TKIT_GRADING_SECRET``, set before any test runs and inherited
by the ``tkit`` processes the tests start), so every checkout and CI run draws the same digits,
transforms and symbol codes. Tests of the secret file itself unset it with ``monkeypatch``.
"""

import importlib
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS_DIR = REPO_ROOT / "solutions"
if str(REPO_ROOT) not in sys.path:  # ``autograder`` importable even without an installed kit
    sys.path.insert(0, str(REPO_ROOT))
from autograder.exercises import NAMES as REFERENCE_MODULES  # noqa: E402  (the registry's order)
from autograder.checks.draws import ENV_VAR as SECRET_ENV_VAR  # noqa: E402

TEST_SECRET = "transformer-kit tests: a fixed grading secret"
os.environ[SECRET_ENV_VAR] = TEST_SECRET


@pytest.fixture
def one_thread():
    """Train with one torch thread, as the grading child does; restore afterwards."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def isolated_kit(tmp_path, monkeypatch):
    """A kit root with only the data manifest (``TKIT_ROOT``; no ``TKIT_DATA_DIR``), so the default
    folders hold no MNIST."""
    import shutil

    root = tmp_path / "kit"
    (root / "datasets").mkdir(parents=True)
    shutil.copyfile(REPO_ROOT / "datasets" / "manifest.json", root / "datasets" / "manifest.json")
    monkeypatch.setenv("TKIT_ROOT", str(root))
    monkeypatch.delenv("TKIT_DATA_DIR", raising=False)
    return root


@pytest.fixture(scope="session")
def ref():
    """The reference modules as attributes: ``ref.masks``, ``ref.multi_head_attention``, ...

    ``solutions/`` goes first on ``sys.path``; a module of the same name already imported from
    elsewhere is dropped from ``sys.modules`` first, so every name resolves to ``solutions/``.
    """
    if str(SOLUTIONS_DIR) not in sys.path:
        sys.path.insert(0, str(SOLUTIONS_DIR))
    for name in REFERENCE_MODULES:
        module = sys.modules.get(name)
        if module is not None and Path(getattr(module, "__file__", "") or "").parent != SOLUTIONS_DIR:
            del sys.modules[name]
    modules = {name: importlib.import_module(name) for name in REFERENCE_MODULES}
    for name, module in modules.items():
        assert Path(module.__file__).parent == SOLUTIONS_DIR, f"{name} resolved to {module.__file__}"
    return SimpleNamespace(**modules)


@pytest.fixture
def fresh_memo(monkeypatch):
    """An empty memo (:mod:`autograder.memo`), on (``TKIT_MEMO`` unset); emptied again afterwards."""
    from autograder import memo

    monkeypatch.delenv("TKIT_MEMO", raising=False)
    memo.clear()
    yield
    memo.clear()
