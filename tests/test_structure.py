"""The engine's shape: imports flow one way, no module is over 400 lines, the child package
(copied into the sandbox as ``_tkit_child``) imports nothing of the kit, at most 10 modules sit at
the top of ``autograder/`` beside its stage packages, and the stages stack in at most 10 layers.

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


MAX_TOP_MODULES = 10
MAX_LAYERS = 10


def stage_of(module: str) -> str:
    """The stage a module belongs to: its package right below the top (``autograder.run.plugin``
    -> ``autograder.run``), or the top-level module itself (``autograder.memo``)."""
    return ".".join(module.split(".")[:2])


def stage_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """``{stage: stages it imports}``: ``graph`` with each module replaced by its stage, imports
    inside a stage left out."""
    stages: dict[str, set[str]] = {}
    for module, imported in graph.items():
        stage = stage_of(module)
        stages.setdefault(stage, set()).update(stage_of(m) for m in imported if stage_of(m) != stage)
    return stages


def layers(graph: dict[str, set[str]]) -> dict[str, int]:
    """``{node: layer}`` of a graph without circles: 1 for a node that imports nothing, else one
    more than the highest layer it imports."""
    layer: dict[str, int] = {}
    for node in graphlib.TopologicalSorter(graph).static_order():
        layer[node] = 1 + max((layer[d] for d in graph.get(node, ())), default=0)
    return layer


def test_at_most_ten_modules_sit_at_the_top_of_the_package():
    top = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert "cli.py" in top and "paths.py" in top
    assert len(top) <= MAX_TOP_MODULES, f"{len(top)} modules at the top of autograder/ " \
                                        f"(at most {MAX_TOP_MODULES}; the others belong in a stage): {top}"


def test_the_stages_stack_in_at_most_ten_layers_without_circles():
    stages = stage_graph(import_graph(PACKAGE))
    assert {"autograder.intake", "autograder.sandbox", "autograder.run", "autograder.memo"} <= set(stages)
    assert "autograder.child" in stages["autograder.sandbox"] and "autograder.sandbox" in stages["autograder.run"]
    assert find_cycle(stages) is None, f"stages import each other: {' -> '.join(find_cycle(stages))}"
    layer = layers(stages)
    top = max(layer.values())
    shown = "; ".join(f"{n}: {', '.join(sorted(s for s in layer if layer[s] == n))}" for n in range(top, 0, -1))
    assert top <= MAX_LAYERS, f"{top} layers of stages (at most {MAX_LAYERS}): {shown}"


def test_the_stage_walker_finds_layers_and_a_circle_between_stages(tmp_path):
    """Two stages can import each other without a circle of modules: ``x.low`` imports ``y.b`` and
    ``y.a`` imports ``x.high``; that is a circle of stages all the same."""
    package = tmp_path / "pkg"
    for sub in ("x", "y"):
        (package / sub).mkdir(parents=True)
        (package / sub / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "base.py").write_text("")
    (package / "x" / "low.py").write_text("from pkg import base\n")
    (package / "x" / "high.py").write_text("from pkg.x import low\n")
    (package / "y" / "a.py").write_text("from pkg.x import high\n")
    graph = import_graph(package)
    stages = stage_graph(graph)
    assert stages == {"pkg": set(), "pkg.base": set(), "pkg.x": {"pkg.base"}, "pkg.y": {"pkg.x"}}
    assert layers(stages) == {"pkg": 1, "pkg.base": 1, "pkg.x": 2, "pkg.y": 3}
    (package / "y" / "b.py").write_text("def f():\n    return 1\n")
    (package / "x" / "low.py").write_text("from pkg import base\nfrom pkg.y import b\n")
    graph = import_graph(package)
    assert find_cycle(graph) is None
    assert sorted(find_cycle(stage_graph(graph))[1:]) == ["pkg.x", "pkg.y"]


STAGE_PACKAGES = ("intake", "results", "sandbox", "child", "mistakes", "checks", "reports", "run", "records",
                  "similarity", "exports", "notebook")


@pytest.mark.parametrize("stage", STAGE_PACKAGES)
def test_the_design_and_the_stage_docstring_list_every_module(stage):
    """docs/DESIGN.md's stage table (the child's modules in the sandbox row) and the stage's
    ``__init__`` docstring name every module of the stage, so the map of the engine stays whole."""
    design = (PACKAGE.parent / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    row = next(line for line in design.splitlines()
               if line.startswith(f"| `{'sandbox' if stage == 'child' else stage}/`"))
    folder = PACKAGE / stage
    docstring = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))) or ""
    for path in sorted(folder.glob("*.py")):
        if path.stem == "__init__":
            continue
        assert f"`{path.stem}`" in row or f"`child/{path.stem}`" in row, f"{stage}/{path.stem} not in DESIGN's table"
        assert path.stem in docstring, f"{stage}/{path.stem} not in {stage}/__init__.py's docstring"
