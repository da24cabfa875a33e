"""One exercise costs only itself, also through process-wide state (child/state.py, RemoteImpl.begin_test).

A correct submission whose ``embedding.py`` changes its process at import (default dtype, grad
mode, a monkeypatched ``torch.nn.functional`` function, ``sys.modules``...) may lose points in
embedding and its composite (transformer); every other exercise graded in the same child after
it keeps full marks. ``embedding`` is the first exercise the suites run (their files go in the
order of ``autograder/exercises.py``), so every other exercise of the run is graded after the
change. Without the defence four of them cost other exercises points (default dtype and device,
F.relu, sys.modules: feed_forward, positional_encoding, masks, attention, rope). The other tests
show, in one child, that each change is real (later code of the same exercise sees it) and gone
for the next exercise, and that what cannot be put back (a thread, an operator override) gets
the next exercise a fresh child.
"""

import shutil
import sys
import textwrap
from collections import defaultdict
from pathlib import Path

import pytest

from autograder import exercises
from autograder.run import batch
from autograder.sandbox import Limits
from autograder.sandbox.remote import RemoteImpl

REPO = Path(__file__).resolve().parent.parent
MUTATED = "embedding"
GRADED = ["embedding", "positional_encoding", "masks", "attention", "feed_forward", "rope"]  # run in this order
# name -> (code run at import of the mutated module, the probe's key, its value afterwards)
MUTATORS = {
    "default dtype": ("torch.set_default_dtype(torch.float64)", "dtype", "torch.float64"),
    "grad mode": ("torch.set_grad_enabled(False)", "grad", False),
    "deterministic algorithms": ("torch.use_deterministic_algorithms(True)", "deterministic", True),
    "anomaly mode": ("torch.autograd.set_detect_anomaly(True)", "anomaly", True),
    "threads": ("torch.set_num_threads(3)", "threads", 3),
    "default device": ("torch.set_default_device('meta')", "device", "meta"),
    "matmul precision": ("torch.set_float32_matmul_precision('medium')", "precision", "medium"),
    "monkeypatched F.relu": ("torch.nn.functional.relu = lambda input, inplace=False: input", "relu", False),
    "recursion limit": ("sys.setrecursionlimit(90)", "recursion", 90),
    "sys.modules entry": ("sys.modules['math'] = types.ModuleType('math')", "math", False),
}
# changes whose first call makes torch import modules (torch._dynamo) that register into shared
# registries: putting those back would leave the modules without their registrations
LAZY_IMPORTS = {"deterministic algorithms"}
PROBE = textwrap.dedent('''
    import sys

    import torch
    import torch.nn.functional as F


    def state():
        math = sys.modules.get("math")
        return {"dtype": str(torch.get_default_dtype()), "grad": torch.is_grad_enabled(),
                "deterministic": torch.are_deterministic_algorithms_enabled(),
                "anomaly": torch.is_anomaly_enabled(), "threads": torch.get_num_threads(),
                "device": torch.get_default_device().type, "precision": torch.get_float32_matmul_precision(),
                "relu": F.relu.__module__ == "torch.nn.functional", "recursion": sys.getrecursionlimit(),
                "math": hasattr(math, "sqrt")}
''')


def _submission(folder: Path, line: str) -> Path:
    shutil.copytree(REPO / "solutions", folder, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    path = folder / f"{MUTATED}.py"
    path.write_text(f"import sys, types\nimport torch\n{line}\n" + path.read_text())
    return folder


def _per_exercise(results) -> dict[str, tuple[float, float]]:
    got = defaultdict(lambda: [0.0, 0.0])
    for test in results.tests:
        got[test.exercise][0] += test.score
        got[test.exercise][1] += test.max_score
    return {name: tuple(v) for name, v in got.items()}


def test_a_side_effect_at_import_costs_only_its_exercise(tmp_path):
    """Each mutator at import of embedding.py: every other graded exercise keeps full marks."""
    todo = [(name.replace(" ", "_").replace(".", "_"), _submission(tmp_path / f"s{i}", line))
            for i, (name, (line, _, _)) in enumerate(MUTATORS.items())]
    done = {}
    batch.grade_many(todo, tmp_path / "out", workers=1, on_result=lambda sid, path, r: done.update({sid: r}),
                     options=dict(names=GRADED, seed=0, training=False))
    assert set(done) == {sid for sid, _ in todo}
    composites = {e.name for e in exercises.EXERCISES if MUTATED in e.depends} | {MUTATED}
    lost = {}
    for sid, results in done.items():
        assert not isinstance(results, Exception), results
        for name, (score, max_score) in _per_exercise(results).items():
            assert max_score == exercises.get(name).points
            if name not in composites and score < max_score:
                lost.setdefault(sid, []).append(f"{name} {score:g}/{max_score:g}")
    assert not lost, f"exercises that do not import {MUTATED}.py lost points: {lost}"


@pytest.fixture(scope="module")
def probe_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("probe")
    (folder / "probe.py").write_text(PROBE)
    return folder


@pytest.mark.parametrize("name", list(MUTATORS))
def test_each_change_reaches_its_exercise_and_not_the_next(probe_folder, tmp_path, name):
    """The change is real (the mutated exercise's later code sees it) and gone once another
    exercise's test starts in the same child, which is put back, not replaced."""
    line, key, changed = MUTATORS[name]
    folder = tmp_path / "sub"
    shutil.copytree(probe_folder, folder)
    (folder / "mutate.py").write_text(f"import sys, types\nimport torch\n{line}\n")
    impl = RemoteImpl(folder, Limits(call_timeout=20))
    try:
        impl.begin_test("attention")
        before = impl.probe.state()
        impl.module("mutate")
        assert before[key] != changed and impl.probe.state()[key] == changed
        child = impl._child
        impl.reset(seed=1)
        impl.begin_test("embedding")
        after = impl.probe.state()
        assert after == before, f"{name}: {key} is {after[key]!r} in the next exercise's test"
        if name in LAZY_IMPORTS:   # replaced where torch had to import them (the zygote may hold them already)
            assert impl.replaced_for in ([], ["shared registries changed while modules were imported"])
        else:
            assert impl._child is child and impl.replaced_for == []
    finally:
        impl.close()


def test_what_cannot_be_put_back_gets_a_fresh_child(tmp_path):
    """A thread a module starts at import outlives any restore: the next exercise's tests get a
    new child (no death counted), and what ran before is gone."""
    (tmp_path / "spinner.py").write_text(textwrap.dedent('''
        import threading, time
        import torch
        STOP = threading.Event()
        threading.Thread(target=lambda: [torch.set_grad_enabled(False) for _ in iter(lambda: STOP.wait(0.001), True)],
                         daemon=True).start()
    '''))
    (tmp_path / "probe.py").write_text(PROBE)
    impl = RemoteImpl(tmp_path, Limits(call_timeout=20))
    try:
        impl.begin_test("attention")
        impl.module("spinner")
        child = impl._child
        impl.reset(seed=1)
        impl.begin_test("embedding")
        assert impl.replaced_for == ["Python threads"]
        assert impl.probe.state()["grad"] is True
        assert impl._child is not child and not impl._deaths
    finally:
        impl.close()


def test_an_operator_override_gets_a_fresh_child(tmp_path):
    """A kernel a module registers for one of torch's operators is not undone by a restore."""
    (tmp_path / "override.py").write_text(
        "import torch\nLIB = torch.library.Library('aten', 'IMPL')\nLIB.impl('relu', lambda x: x * 0, 'CPU')\n")
    (tmp_path / "probe.py").write_text(PROBE + "\n\ndef relu():\n    return torch.relu(torch.ones(2)).tolist()\n")
    impl = RemoteImpl(tmp_path, Limits(call_timeout=20))
    try:
        impl.begin_test("attention")
        impl.module("override")
        assert impl.probe.relu() == [0.0, 0.0]
        impl.reset(seed=1)
        impl.begin_test("embedding")
        assert impl.replaced_for == ["torch operator overrides"]
        assert impl.probe.relu() == [1.0, 1.0]
    finally:
        impl.close()


def test_module_state_of_one_exercise_does_not_reach_another(tmp_path):
    """attacks/call_recorder: positional_encoding.py records every call the grader makes; rope.py
    imports it and prints the record. Rope's tests import their own positional_encoding, afresh:
    the record they print is empty."""
    attack = REPO / "tests" / "attacks" / "call_recorder"
    folder = _submission(tmp_path / "sub", "")
    with open(folder / "positional_encoding.py", "a") as f:
        f.write("\n" + (attack / "attack_suffix.py").read_text())
    shutil.copyfile(attack / "rope.py", folder / "rope.py")
    done = {}
    batch.grade_many([("recorder", folder)], tmp_path / "out", workers=1,
                     on_result=lambda sid, path, r: done.update({sid: r}),
                     options=dict(names=["positional_encoding", "rope"], seed=0, training=False))
    printed = [t.output for t in done["recorder"].tests if t.exercise == "rope" and "recorded calls:" in t.output]
    assert printed and all(out.rstrip().endswith("recorded calls:") for out in printed)


def test_the_state_module_restores_in_a_process():
    """``child/state.py`` on its own, in a fresh interpreter (a whole-state restore here would undo
    what earlier tests left): every item, a monkeypatched function and a replaced ``sys.modules``
    entry come back."""
    from fresh_process import run_check

    run_check("test_child_process_state", "check_the_state_module_restores")


def check_the_state_module_restores():
    import torch
    import torch.nn.functional as F

    from autograder.child import state

    snap = state.capture()
    relu, math_module = F.relu, sys.modules["math"]
    try:
        torch.set_default_dtype(torch.float64)
        torch.set_grad_enabled(False)
        sys.setrecursionlimit(500)
        F.relu = lambda input, inplace=False: input
        torch.nn.Linear.__call__ = lambda self, x: x
        sys.modules["math"] = None
        assert state.restore(snap, deep=True) == []
        assert torch.get_default_dtype() == torch.float32 and torch.is_grad_enabled()
        assert sys.getrecursionlimit() == snap.values["recursion limit"]
        assert F.relu is relu and "__call__" not in vars(torch.nn.Linear)
        assert sys.modules["math"] is math_module
    finally:
        F.relu, sys.modules["math"] = relu, math_module
        vars(torch.nn.Linear).get("__call__") and delattr(torch.nn.Linear, "__call__")
        torch.set_default_dtype(torch.float32)
        torch.set_grad_enabled(True)
