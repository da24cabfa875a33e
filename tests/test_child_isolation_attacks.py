"""Isolation that does not depend on a list (:mod:`autograder.child.snapshot`): a correct module
that monkeypatches torch's C-level tables, a function's code, ``torch.Tensor``, ``torch.ops``, the
import system, ``copyreg``, ``operator`` or ``functools`` at import costs only its own exercise.

The in-process tests take the module state, patch, put back and check each patch is gone; the
slow ones grade ``tests/attacks/monkeypatch_everything`` (appended to a correct ``embedding.py``,
the first exercise graded) and the ``torch._VF.dropout`` case alone: every later exercise keeps
full marks.
"""

from __future__ import annotations

import copyreg
import functools
import operator
import shutil
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from autograder.child import snapshot
from fresh_process import run_check

REPO = Path(__file__).resolve().parent.parent
ATTACK = REPO / "tests" / "attacks" / "monkeypatch_everything" / "attack_suffix.py"
LATER = ["positional_encoding", "masks", "attention", "multi_head_attention", "feed_forward", "rope"]


def _in_function_scope():
    """Taken inside a function: put_back restores ``__main__`` and this module's globals too."""
    return snapshot.take()


def _in_a_fresh_process(check: str) -> None:
    run_check("test_child_isolation_attacks", check)


def test_every_patch_of_the_attack_is_put_back():
    _in_a_fresh_process("check_every_patch_is_put_back")


def test_a_closure_cell_and_a_new_class_attribute_are_put_back():
    _in_a_fresh_process("check_a_closure_cell_and_a_class_attribute")


def test_an_object_that_claims_to_equal_what_it_replaced_is_put_back():
    _in_a_fresh_process("check_a_liar")


def check_every_patch_is_put_back():
    state = _in_function_scope()
    before = {"vf": "dropout" in vars(torch._VF), "linear": F.linear, "relu": F.relu.__code__,
              "softmax": vars(torch.Tensor).get("softmax"), "packet": vars(torch.ops.aten.relu).get("default"),
              "copyreg": copyreg.dispatch_table.get(torch.Tensor), "mul": operator.mul, "reduce": functools.reduce,
              "meta_path": list(sys.meta_path), "cache": dict(sys.path_importer_cache), "nn_gelu": torch._C._nn.gelu}
    namespace: dict = {}
    exec(compile(ATTACK.read_text(), str(ATTACK), "exec"), namespace)   # kit test code: the attack's own file
    try:
        assert torch._VF.dropout(torch.ones(3), 0.5, True).tolist() == [1.0, 1.0, 1.0]
        assert F.relu(torch.ones(2)).tolist() == [0.0, 0.0] and operator.mul(2, 3) == 5
        assert snapshot.put_back(state) == []
    finally:
        snapshot.put_back(state)
    after = {"vf": "dropout" in vars(torch._VF), "linear": F.linear, "relu": F.relu.__code__,
             "softmax": vars(torch.Tensor).get("softmax"), "packet": vars(torch.ops.aten.relu).get("default"),
             "copyreg": copyreg.dispatch_table.get(torch.Tensor), "mul": operator.mul, "reduce": functools.reduce,
             "meta_path": list(sys.meta_path), "cache": dict(sys.path_importer_cache), "nn_gelu": torch._C._nn.gelu}
    assert after == before
    assert F.relu(torch.ones(2)).tolist() == [1.0, 1.0] and operator.mul(2, 3) == 6


def check_a_closure_cell_and_a_class_attribute():
    def outer():
        value = 1

        def inner():
            return value
        return inner

    inner = outer()
    sys.modules[__name__].INNER = inner   # reachable: a function of this module
    try:
        state = _in_function_scope()
        inner.__closure__[0].cell_contents = 2
        torch.nn.Linear.extra_behaviour = True
        assert snapshot.put_back(state) == []
        assert inner() == 1 and not hasattr(torch.nn.Linear, "extra_behaviour")
    finally:
        del sys.modules[__name__].INNER


@pytest.mark.parametrize("training", [False, True])
def test_a_new_childs_module_state_is_its_snapshot(tmp_path, training):
    """The zygote walks the module state once and each child re-bases only what its own set-up
    changes (snapshot.SET_UP): nothing else may differ in a new child, else the first restore would
    undo the set-up."""
    from autograder.sandbox import Limits
    from autograder.sandbox.remote import RemoteImpl

    limits = Limits()
    limits.preload_training = training
    impl = RemoteImpl(REPO / "solutions", limits)
    try:
        assert impl.task("module_state_differences") == []
    finally:
        impl.close()


def check_a_liar():
    """Compared by identity: a replacement whose ``__eq__`` says True (or imports modules when
    asked) is seen, and its ``__eq__`` never runs."""
    calls = []

    class Liar:
        def __eq__(self, other):
            calls.append(other)
            return True

        __hash__ = object.__hash__

    relu = F.relu
    state = _in_function_scope()
    F.relu = Liar()
    copyreg.dispatch_table[Liar] = Liar()
    assert snapshot.put_back(state) == []
    assert F.relu is relu and Liar not in copyreg.dispatch_table and calls == []


def _graded(tmp_path: Path, suffix: str) -> dict:
    from grading_runs import run_suites

    folder = tmp_path / "sub"
    shutil.copytree(REPO / "solutions", folder, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    with open(folder / "embedding.py", "a") as f:
        f.write("\n\n" + suffix)
    results = run_suites(folder, names=["embedding", *LATER], seed=20240901, training=False,
                         visibility=("public", "hidden"), pictures=False)
    return results["extra_data"]["exercises"]


@pytest.mark.slow
def test_a_patched_vf_dropout_costs_the_later_exercises_nothing(tmp_path):
    """The case that cost attention 1 point and feed_forward 1 (named ffn_dropout_missing)."""
    exercises = _graded(tmp_path, "import torch as _t\n_t._VF.dropout = lambda input, p, train: input\n")
    for name in LATER:
        assert exercises[name]["score"] == exercises[name]["max_score"], (name, exercises[name])


@pytest.mark.slow
def test_monkeypatching_everything_costs_only_its_own_exercise(tmp_path):
    exercises = _graded(tmp_path, ATTACK.read_text())
    for name in LATER:
        assert exercises[name]["score"] == exercises[name]["max_score"], (name, exercises[name])
