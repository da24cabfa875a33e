"""The stub generator (autograder/exports/stubs.py) and the committed student stubs in exercises/."""

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autograder import exercises
from autograder.exports.stubs import check_in_sync, generate_exercises, generate_stub, stub_file_text

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"
MODULES = sorted(p.stem for p in SOLUTIONS.glob("*.py") if not p.name.startswith("_"))
NOTE = "is not implemented yet (아직 구현되지 않았습니다)"


def test_every_registered_exercise_has_a_solution_and_nothing_else():
    assert MODULES == sorted(exercises.NAMES) and len(MODULES) >= 11


def test_exercises_are_in_sync_with_solutions():
    assert check_in_sync(SOLUTIONS, EXERCISES) == []


# A child process imports the stubs (their module names clash with solutions/ in this process),
# calls every public function, constructor and method with dummy arguments and reports what it raised.
_PROBE = r"""
import inspect, json, sys
import torch
from torch import nn
sys.path.insert(0, sys.argv[1])
report = []

def dummies(func, skip_self):
    params = list(inspect.signature(func).parameters.values())[1 if skip_self else 0:]
    return [None for p in params if p.default is inspect.Parameter.empty
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]

def attempt(label, call):
    try:
        call()
    except BaseException as exc:
        report.append([label, type(exc).__name__, str(exc)])
    else:
        report.append([label, None, ""])

for name in sys.argv[2:]:
    module = __import__(name)
    seen = set()
    for attr, obj in sorted(vars(module).items()):
        if attr.startswith("_") or getattr(obj, "__module__", None) != name or id(obj) in seen:
            continue
        seen.add(id(obj))
        if inspect.isfunction(obj):
            attempt(f"{name}:{obj.__qualname__}", lambda: obj(*dummies(obj, False)))
        elif inspect.isclass(obj):
            attempt(f"{name}:{obj.__qualname__}.__init__", lambda: obj(*dummies(obj.__init__, True)))
            for meth_name, meth in vars(obj).items():
                if not inspect.isfunction(meth) or (meth_name.startswith("_") and meth_name != "__init__"):
                    continue
                if meth_name == "__init__":
                    continue
                instance = obj.__new__(obj)
                if issubclass(obj, nn.Module):
                    nn.Module.__init__(instance)
                bound = getattr(instance, meth_name)
                attempt(f"{name}:{meth.__qualname__}", lambda: bound(*dummies(meth, True)))
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def probe_report():
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, str(EXERCISES), *MODULES],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_every_stub_function_and_method_raises_not_implemented(probe_report):
    defined = sum(
        1
        for module in MODULES
        for _ in _function_bodies(ast.parse((SOLUTIONS / f"{module}.py").read_text(encoding="utf-8")))
    )
    assert len(probe_report) == defined >= 36  # every function and method of the modules (36 in the first eleven)
    for label, exc_type, message in probe_report:
        exercise, qualname = label.split(":", 1)
        assert exc_type == "NotImplementedError", f"{label} raised {exc_type}: {message}"
        assert message == f"{exercise}: {qualname} {NOTE}", label
    labels = {label for label, _, _ in probe_report}
    for expected in (
        "embedding:TokenEmbedding.__init__",
        "positional_encoding:sinusoidal_table",
        "positional_encoding:PositionalEncoding.forward",
        "masks:masked_softmax",
        "masks:combine_masks",
        "attention:scaled_dot_product_attention",
        "multi_head_attention:split_heads",
        "multi_head_attention:MultiHeadAttention.forward",
        "encoder:Encoder.forward",
        "decoder:DecoderLayer.forward",
        "transformer:Transformer.greedy_decode",
        "transformer:Transformer.encode",
        "rope:apply_rope",
        "autoencoder:ConvAutoEncoder.decode",
        "autoencoder:train_autoencoder",
    ):
        assert expected in labels


def _function_bodies(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


@pytest.mark.parametrize("module", MODULES)
def test_stub_bodies_hold_no_solution_code(module):
    """Every stub body is: docstring, optionally ``super().__init__()``, then the raise."""
    tree = ast.parse((EXERCISES / f"{module}.py").read_text(encoding="utf-8"))
    count = 0
    for func in _function_bodies(tree):
        body = list(func.body)
        assert isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant), func.name
        body = body[1:]
        if func.name == "__init__":
            assert ast.unparse(body[0]) == "super().__init__()", func.name
            body = body[1:]
        assert len(body) == 1 and isinstance(body[0], ast.Raise), f"{module}.{func.name}"
        assert ast.unparse(body[0].exc.func) == "NotImplementedError"
        count += 1
    assert count >= 1


@pytest.mark.parametrize("module", MODULES)
def test_solution_conventions(module):
    """Imports at the top, siblings by plain name, one hinted region per function, docstrings."""
    source = (SOLUTIONS / f"{module}.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    assert ast.get_docstring(tree)
    for func in _function_bodies(tree):
        assert not [n for n in ast.walk(func) if isinstance(n, (ast.Import, ast.ImportFrom))], func.name
        assert ast.get_docstring(func), f"{module}.{func.name} has no docstring"
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0 and not (node.module or "").startswith("solutions")
    lines = source.splitlines()
    begins = [i for i, line in enumerate(lines) if line.strip() == "### BEGIN SOLUTION"]
    assert len(begins) == len(list(_function_bodies(tree)))  # one region per function
    for i in begins:
        assert lines[i + 1].strip().startswith("# HINT: "), f"{module}.py:{i + 2}"
        assert lines[i + 2].strip().startswith("# 힌트: "), f"{module}.py:{i + 3}"


def test_attention_docstrings_warn_about_the_mask_convention():
    for module in ("masks", "attention", "multi_head_attention"):
        text = (EXERCISES / f"{module}.py").read_text(encoding="utf-8")
        assert "F.scaled_dot_product_attention" in text and "opposite" in text, module
        assert "nn.MultiheadAttention" in text, module


# ----------------------------------------------------------------------------- generate_stub itself

SAMPLE = textwrap.dedent(
    '''\
    """Module doc."""

    import math


    def area(r):
        """Area of a circle."""
        ### BEGIN SOLUTION
        # HINT: pi r squared.
        # 힌트: 원의 넓이.
        return math.pi * r * r
        ### END SOLUTION


    class Shape:
        """A shape."""

        def __init__(self, n):
            """Build."""
            super().__init__()
            ### BEGIN SOLUTION
            self.n = n
            ### END SOLUTION

        def outer(self):
            """Outer."""
            ### BEGIN SOLUTION
            # HINT: nested helpers stay inside the region.
            def helper(x):
                return x + 1
            return helper(self.n)
            ### END SOLUTION

    ALIAS = Shape
    '''
)

SAMPLE_STUB = textwrap.dedent(
    '''\
    """Module doc."""

    import math


    def area(r):
        """Area of a circle."""
        # TODO: pi r squared.
        # 할 일: 원의 넓이.
        raise NotImplementedError("geo: area is not implemented yet (아직 구현되지 않았습니다)")


    class Shape:
        """A shape."""

        def __init__(self, n):
            """Build."""
            super().__init__()
            raise NotImplementedError("geo: Shape.__init__ is not implemented yet (아직 구현되지 않았습니다)")

        def outer(self):
            """Outer."""
            # TODO: nested helpers stay inside the region.
            raise NotImplementedError("geo: Shape.outer is not implemented yet (아직 구현되지 않았습니다)")

    ALIAS = Shape
    '''
)


def test_generate_stub_exact_output():
    assert generate_stub(SAMPLE, "geo") == SAMPLE_STUB


def test_generate_stub_keeps_crlf_and_nested_qualnames():
    source = SAMPLE.replace("\n", "\r\n")
    assert generate_stub(source, "geo") == SAMPLE_STUB.replace("\n", "\r\n")
    nested = textwrap.dedent(
        """\
        def f():
            def g():
                ### BEGIN SOLUTION
                return 1
                ### END SOLUTION
            return g
        """
    )
    assert 'NotImplementedError("n: f.<locals>.g is not' in generate_stub(nested, "n")


def test_generate_stub_no_regions_is_identity():
    source = "x = 1\n\n\ndef f():\n    return x\n"
    assert generate_stub(source, "plain") == source


@pytest.mark.parametrize(
    "source, match",
    [
        ("def f():\n    ### BEGIN SOLUTION\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n",
         r"bad\.py:3: nested"),
        ("def f():\n    return 1\n    ### END SOLUTION\n", r"bad\.py:3: unbalanced"),
        ("def f():\n    ### BEGIN SOLUTION\n    return 1\n", r"bad\.py:2: unbalanced"),
        ("### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n", r"bad\.py:1: .*outside a function"),
        ("class C:\n    ### BEGIN SOLUTION\n    x = 1\n    ### END SOLUTION\n", r"bad\.py:2: .*outside a function"),
        ("def f():\n    ### BEGIN SOLUTION\n    return 1\n\n\ndef g():\n    ### END SOLUTION\n    return 2\n",
         r"bad\.py:7: .*same function"),
        ("def f():\n    ### BEGIN SOLUTION\n    if True:\n        return 1\n        ### END SOLUTION\n",
         r"bad\.py:5: .*indentation"),
        ("def f():\n    ### BEGIN SOLUTION extra\n    return 1\n    ### END SOLUTION\n", r"bad\.py:2: malformed"),
        ("def f():\n    x = 1  ### BEGIN SOLUTION\n    return x\n", r"bad\.py:2: .*own line"),
        ("def f(:\n    pass\n", r"bad\.py:1: cannot parse"),
    ],
    ids=["nested", "end-without-begin", "begin-never-closed", "module-level", "class-level",
         "across-functions", "different-indent", "trailing-text", "inline-marker", "syntax-error"],
)
def test_generate_stub_rejects_malformed_markers(source, match):
    with pytest.raises(ValueError, match=match):
        generate_stub(source, "bad")


def test_markers_inside_strings_are_not_regions():
    source = 'def f():\n    """\n    ### BEGIN SOLUTION\n    """\n    return 1\n'
    assert generate_stub(source, "s") == source


@pytest.mark.parametrize("module", MODULES)
def test_hints_are_carried_over(module):
    source = (SOLUTIONS / f"{module}.py").read_text(encoding="utf-8")
    stub = (EXERCISES / f"{module}.py").read_text(encoding="utf-8")
    hints = [line.strip() for line in source.splitlines() if line.strip().startswith(("# HINT:", "# 힌트:"))]
    todos = [line.strip() for line in stub.splitlines() if line.strip().startswith(("# TODO:", "# 할 일:"))]
    assert len(hints) >= 2
    expected = [h.replace("# HINT:", "# TODO:", 1).replace("# 힌트:", "# 할 일:", 1) for h in hints]
    assert todos == expected
    assert "### BEGIN SOLUTION" not in stub and "# HINT:" not in stub


# ----------------------------------------------------------------------------- generate_exercises / check_in_sync


def test_generate_exercises_and_check_in_sync(tmp_path):
    solutions = tmp_path / "solutions"
    solutions.mkdir()
    (solutions / "geo.py").write_text(SAMPLE, encoding="utf-8")
    (solutions / "_private.py").write_text("X = 1\n", encoding="utf-8")
    out = tmp_path / "exercises"
    written = generate_exercises(solutions, out)
    assert written == [out / "geo.py"]
    text = (out / "geo.py").read_text(encoding="utf-8")
    header, rest = text.split("\n", 1)
    assert header.startswith("# Generated from solutions/geo.py by tkit") and "TODO" in header
    assert rest == SAMPLE_STUB
    assert text == stub_file_text(SAMPLE, "geo")
    assert check_in_sync(solutions, out) == []

    (out / "geo.py").write_text(text + "# edited\n", encoding="utf-8")
    assert check_in_sync(solutions, out) == ["geo.py"]
    (out / "geo.py").unlink()
    assert check_in_sync(solutions, out) == ["geo.py"]
    generate_exercises(solutions, out)
    (out / "stale.py").write_text("", encoding="utf-8")
    (out / "__init__.py").write_text("", encoding="utf-8")
    assert check_in_sync(solutions, out) == ["stale.py"]


def test_generated_header_follows_a_coding_line():
    text = stub_file_text("# -*- coding: utf-8 -*-\nx = 1\n", "c")
    lines = text.splitlines()
    assert lines[0] == "# -*- coding: utf-8 -*-" and lines[1].startswith("# Generated from solutions/c.py")
    assert lines[2] == "x = 1"
