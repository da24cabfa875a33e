"""Helpers for the kit's tests that install a kit (an edition, a Gradescope bundle) in a fresh venv.

Reinstalling torch would take minutes, so the fresh venv (made by the interpreter that made
``.venv``, without pip) gets ``.pth`` lines pointing at ``.venv``'s site-packages (and the system's, for a venv made
with ``--system-site-packages``) for the dependencies, and the kit under test is installed into it with ``pip install --no-deps -e``.
Only ``.venv``'s *files* are visible that way: its own editable install of this checkout is not
activated (``.pth`` files inside an added path are not processed), so ``import autograder`` in
the fresh venv finds the installed kit, never this checkout.
"""

from __future__ import annotations

import site as site_module
import subprocess
import sys
import sysconfig
from pathlib import Path


def dependency_paths() -> list[str]:
    """The site-packages folders the running interpreter imports the kit's dependencies from:
    its own venv's and, for a venv made with ``--system-site-packages``, the system's."""
    paths = [sysconfig.get_paths()["purelib"]] + list(site_module.getsitepackages())
    return list(dict.fromkeys(p for p in paths if Path(p).is_dir()))


def make_venv(where: Path, kit: Path) -> Path:
    """Create a venv at ``where`` with ``kit`` installed editable; returns its ``bin/`` folder."""
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(where)], check=True)
    site = where / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    (site / "_kit_dependencies.pth").write_text("\n".join(dependency_paths()) + "\n", encoding="utf-8")
    subprocess.run([str(where / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-build-isolation", "--no-index", "-e", str(kit)], check=True)
    return where / "bin"


def make_wheel_venv(where: Path, wheel: Path) -> Path:
    """Create a venv at ``where`` with the built ``wheel`` installed (not editable, no
    dependencies: they come from the running interpreter's site-packages, as in
    :func:`make_venv`); returns its ``bin/`` folder."""
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(where)], check=True)
    site = where / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    (site / "_kit_dependencies.pth").write_text("\n".join(dependency_paths()) + "\n", encoding="utf-8")
    subprocess.run([str(where / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                    str(wheel)], check=True)
    return where / "bin"


def build_wheel(source: Path, out: Path) -> Path:
    """``pip wheel`` of the project in ``source`` into ``out`` (no dependencies, no index, the
    running interpreter's setuptools); returns the ``.whl``."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "-w", str(out), str(source)], check=True)
    wheels = sorted(Path(out).glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]
