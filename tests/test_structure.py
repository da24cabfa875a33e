"""The engine's shape: imports flow one way, no module is over 400 lines, and the
child package (copied into the sandbox as ``_tkit_child``) imports nothing of the kit.

The import graph counts every ``autograder`` import, at the top of a module or inside a function:
an import hidden in a function still ties the two modules together. A package's ``__init__`` is
not counted as imported by its own submodules (Python runs it first, whichever is imported).
"""

import ast
import graphlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "autograder"
MAX_LINES = 400


def module_files(package: Path) -> dict[str, Path]:
    """``{dotted module name: file}`` of every ``.py`` file under ``package``."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _known(name: str, modules: dict) -> str | None:
    """The longest prefix of ``name`` that is a module of the package (``a.b.func`` -> ``a.b``)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, path: Path, modules: dict) -> set[str]:
    """The package's modules that ``module`` imports anywhere in its file (absolute or relative
    imports, at the top or inside functions), its own parent packages left out."""
    base_package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(_known(alias.name, modules) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base_package.split(".")[: len(base_package.split(".")) - node.level + 1]
                source = ".".join(anchor + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:  # ``from pkg import sub`` imports the submodule ``pkg.sub``
                found.add(_known(f"{source}.{alias.name}", modules))
    parents = {module.rsplit(".", i)[0] for i in range(1, module.count(".") + 1)}
    return {m for m in found if m is not None and m != module and m not in parents}


def import_graph(package: Path) -> dict[str, set[str]]:
    """``{module: modules it imports}`` for every module of ``package``."""
    modules = module_files(package)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle (``[a, b, ..., a]``) of ``graph``, or None."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        return exc.args[1]
    return None


def test_imports_flow_one_way():
    graph = import_graph(PACKAGE)
    assert len(graph) > 50 and "autograder.sandbox.handles" in graph["autograder.sandbox.remote"]
    assert graph["autograder.sandbox.process"] >= {"autograder.sandbox.policy", "autograder.sandbox.zygote_parent"}
    assert find_cycle(graph) is None, f"import circle: {' -> '.join(find_cycle(graph))}"


def test_the_walker_finds_a_circle_hidden_in_a_function(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from pkg.sub import b\n")
    (package / "a.py").write_text("from pkg.sub.b import f\n")
    (package / "sub" / "b.py").write_text("def f():\n    from .. import a\n    return a\n")
    graph = import_graph(package)
    assert graph == {"pkg": set(), "pkg.a": {"pkg.sub.b"}, "pkg.sub": {"pkg.sub.b"}, "pkg.sub.b": {"pkg.a"}}
    assert sorted(find_cycle(graph)[1:]) == ["pkg.a", "pkg.sub.b"]
    (package / "sub" / "b.py").write_text("def f():\n    return 1\n")
    assert find_cycle(import_graph(package)) is None


def test_the_child_package_imports_nothing_of_the_kit():
    """The child runs from a copy named ``_tkit_child``: an ``autograder`` import would fail there
    (and would pull the kit into the sandbox)."""
    graph = import_graph(PACKAGE)
    child = {m: deps for m, deps in graph.items() if m.startswith("autograder.child")}
    assert "autograder.child.zygote_child" in child and "autograder.child.runner" in child
    assert {m: sorted(d for d in deps if not d.startswith("autograder.child")) for m, deps in child.items()} \
        == {m: [] for m in child}


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_over_400_lines(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(PACKAGE.parent)} has {lines} lines (at most {MAX_LINES})"
