"""The sandboxed child as the parent sees it (:mod:`autograder.sandbox.remote`): calls and
handles, the failure kinds, module limits, and the deaths and time charged to each exercise.

These tests use small hand-written submissions (written to a temporary folder), so they do not
depend on the exercise suites' details.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import pytest
import torch

from autograder.checks import expectations
from autograder.child import wire
from autograder.sandbox import Limits
from autograder.sandbox.remote import RemoteImpl, RemoteObject, SubmissionError

REPO = Path(__file__).resolve().parent.parent


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


TOY = """
import os, signal, sys, time
import torch

def double(x):
    print("doubling", tuple(x.shape))
    return x * 2

def boom():
    raise ValueError("bad value 42")

def todo():
    raise NotImplementedError("toy: todo is not implemented yet")

def hang():
    while True:
        pass

def sleepy():
    time.sleep(60)

def die():
    os._exit(3)

def segfault():
    os.kill(os.getpid(), signal.SIGSEGV)

def leave():
    sys.exit(0)

def flood():
    for _ in range(20000):
        print("x" * 100)
    return 1

class Sub(torch.Tensor):
    def __eq__(self, other):
        return True

def subclass():
    return torch.zeros(3).as_subclass(Sub)

def complex_value():
    return torch.zeros(2, dtype=torch.complex64)

def obj():
    return object()

def nested():
    return {"a": (1, 2.5, float("nan")), "b": [torch.ones(2), None, "s"], "c": torch.float64}

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)

    def forward(self, x):
        return self.lin(x)
"""


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    folder = write(tmp_path_factory.mktemp("toy"), {
        "toy.py": TOY,
        "broken.py": "def f(:\n    pass\n",
        "needs.py": "import not_there_module\n",
        "raises_on_import.py": "raise RuntimeError('at import')\n",
        "exits_on_import.py": "import os\nos._exit(0)\n",
        "torch.py": "raise SystemExit('a student torch.py must never be imported')\n",
    })
    impl = RemoteImpl(folder, Limits(call_timeout=3.0))
    yield impl
    impl.close()


# -- the child -----------------------------------------------------------------------


def test_call_returns_plain_values_and_captures_output(toy):
    out = toy.toy.double(torch.ones(2, 3))
    assert type(out) is torch.Tensor and torch.equal(out, torch.full((2, 3), 2.0))
    assert "doubling (2, 3)" in toy.last_output
    nested = toy.toy.nested()
    assert nested["a"][:2] == (1, 2.5) and math.isnan(nested["a"][2])
    assert torch.equal(nested["b"][0], torch.ones(2)) and nested["c"] is torch.float64


def test_modules_are_handles_with_attributes_and_state(toy):
    net = toy.toy.Net()
    assert net.isinstance_of("torch.nn.modules.module.Module")
    state = {"lin.weight": torch.arange(6.0).view(2, 3), "lin.bias": torch.tensor([1.0, -1.0])}
    net.load_state_dict(state)
    assert torch.equal(net(torch.ones(1, 3)), torch.tensor([[4.0, 11.0]]))
    assert net.training is True and net.eval() is not None and net.training is False
    assert set(net.state_dict()) == {"lin.weight", "lin.bias"}
    assert wire.tensor_info(net.lin.weight)["param"] is True


def test_strict_state_dict_names_missing_and_unexpected_keys(toy):
    net = toy.toy.Net()
    with pytest.raises(SubmissionError) as err:
        net.load_state_dict({"lin.weight": torch.zeros(2, 3), "extra": torch.zeros(1)})
    assert err.value.kind == "exception"
    assert "Missing key(s)" in err.value.message and "lin.bias" in err.value.message
    assert "Unexpected key(s)" in err.value.message and "extra" in err.value.message


@pytest.mark.parametrize("module, kind, words", [
    ("nothing_here", "missing_file", "expected nothing_here.py in the submission"),
    ("needs", "missing_file", "expected not_there_module.py in the submission (imported by needs.py)"),
    ("broken", "syntax_error", "syntax error in broken.py, line 1"),
    ("raises_on_import", "import_error", "RuntimeError: at import"),
])
def test_import_failures_are_named(toy, module, kind, words):
    with pytest.raises(SubmissionError) as err:
        toy.module(module)
    assert err.value.kind == kind
    assert words in err.value.message


def test_a_student_torch_py_does_not_shadow_torch(toy):
    assert toy.toy.double(torch.ones(1)).item() == 2.0


@pytest.mark.parametrize("name, kind, words", [
    ("boom", "exception", "raised ValueError: bad value 42"),
    ("todo", "not_implemented", "not implemented yet: toy: todo is not implemented yet"),
    ("leave", "system_exit", "sys.exit(0)"),
    ("complex_value", "encode_error", "cannot send a tensor"),
])
def test_failures_inside_calls_are_named(toy, name, kind, words):
    with pytest.raises(SubmissionError) as err:
        getattr(toy.toy, name)()
    assert err.value.kind == kind
    assert words in err.value.message


def test_exceptions_show_the_students_own_frames_only(toy):
    with pytest.raises(SubmissionError) as err:
        toy.toy.boom()
    frames = err.value.message.splitlines()[1:]
    assert frames == ['  toy.py, line 10, in boom: raise ValueError("bad value 42")']


@pytest.mark.parametrize("name, kind, words", [
    ("hang", "timeout", "did not finish: timed out after 3 s"),
    ("sleepy", "timeout", "did not finish: timed out after 3 s"),
    ("die", "crash", "exited with code 3"),
    ("segfault", "crash", "killed by SIGSEGV"),
])
def test_crashes_and_hangs_fail_the_call_and_a_new_child_takes_over(toy, name, kind, words):
    with pytest.raises(SubmissionError) as err:
        getattr(toy.toy, name)()
    assert err.value.kind == kind and words in err.value.message
    assert toy.toy.double(torch.ones(1)).item() == 2.0  # a fresh child answers


def test_a_module_that_kills_the_child_at_import_fails_fast_afterwards(toy):
    with pytest.raises(SubmissionError) as first:
        toy.module("exits_on_import")
    deaths = toy._deaths
    with pytest.raises(SubmissionError) as second:
        toy.module("exits_on_import")
    assert first.value.kind == "crash" and "exited with code 0" in first.value.message
    assert second.value is first.value and toy._deaths == deaths


def test_output_floods_are_truncated(toy):
    assert toy.toy.flood() == 1
    assert len(toy.last_output) < 20_000 and "bytes of output omitted" in toy.last_output


def test_tensor_subclasses_arrive_as_plain_tensors_and_are_refused(toy):
    got = toy.toy.subclass()
    assert type(got) is torch.Tensor
    with pytest.raises(expectations.Mismatch, match="tensor subclass"):
        expectations.compare(got, torch.ones(3), what="out")


def test_objects_come_back_as_inert_handles(toy):
    handle = toy.toy.obj()
    assert handle.tkit_type == "builtins.object"
    assert type(handle) is RemoteObject  # a parent-side class: nothing of the child's runs here
    with pytest.raises(AttributeError):
        handle.__reduce_ex__hidden__  # dunder-style names are never forwarded
    assert "remote builtins.object" in repr(handle)


def test_child_environment_is_scrubbed(monkeypatch, tmp_path):
    monkeypatch.setenv("TKIT_SECRET_TOKEN", "hunter2")
    folder = write(tmp_path / "env", {"envy.py": """
        import os, sys
        def env():
            return sorted(os.environ)
        def where():
            return os.getcwd(), [p for p in sys.path if 'solutions' in p or 'autograder' in p]
    """})
    impl = RemoteImpl(folder, Limits(call_timeout=5))
    try:
        names = impl.envy.env()
        cwd, leaked = impl.envy.where()
    finally:
        impl.close()
    assert "TKIT_SECRET_TOKEN" not in names and "PYTHONPATH" not in names
    assert leaked == [] and str(REPO) not in cwd


def test_an_oversized_module_fails_its_import_with_a_reason(tmp_path):
    folder = write(tmp_path / "big", {"blob.py": "DATA = " + repr("x" * 300_000) + "\n"})
    impl = RemoteImpl(folder, Limits(call_timeout=5))
    try:
        with pytest.raises(SubmissionError) as err:
            impl.module("blob")
    finally:
        impl.close()
    assert err.value.kind == "import_error"
    assert "blob.py is 292 KB; the grader accepts modules of at most 256 KB" in err.value.message


# -- deaths and time charged to each exercise, requests per call ----------------------------------


def test_a_sibling_child_counts_its_deaths_and_time_with_the_first(tmp_path):
    folder = write(tmp_path / "sub", {"toy.py": TOY})
    impl = RemoteImpl(folder, Limits(call_timeout=5))
    impl.set_budgets({"masks": 100.0}, 100.0)
    impl.begin_test("masks")
    other = impl.sibling()
    try:
        with pytest.raises(SubmissionError):
            other.toy.die()
    finally:
        other.close()
        impl.close()
    assert impl._deaths == {"masks": 1} and impl.spent["masks"] > 0


DIES_ON_DROP = """
import os

class Bomb:
    def __del__(self):
        os._exit(9)

def make():
    return Bomb()

def double(x):
    return x * 2
"""


def test_a_death_while_resetting_counts_against_the_test_that_made_the_handles(tmp_path):
    """The reset is sent between tests and its reply read at the next request: a child that dies
    dropping the previous test's handles is charged to that test's exercise, and the next test
    runs in a fresh child as if nothing happened."""
    folder = write(tmp_path / "sub", {"bomb.py": DIES_ON_DROP})
    impl = RemoteImpl(folder, Limits(call_timeout=5))
    impl.set_budgets({"masks": 100.0, "attention": 100.0}, 200.0)
    try:
        impl.begin_test("masks")
        impl.bomb.make()               # a handle whose __del__ kills the child
        impl.reset(seed=1)             # sent, not waited for
        impl.begin_test("attention")
        assert impl.bomb.double(torch.ones(2)).tolist() == [2.0, 2.0]
        assert impl._gen == 2           # in a second child
    finally:
        impl.close()
    assert impl._deaths == {"masks": 1}
    assert "attention" in impl.spent and impl.spent["masks"] > 0


METHODS = """
import torch

SIZE = 3

class Scaler(torch.nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x):
        return x * self.k

def make(k):
    return Scaler(k)
"""


def test_a_method_call_is_one_round_trip_and_any_other_use_fetches_the_attribute(tmp_path, monkeypatch):
    """The child lists each class's (and module's) callable names once: calling one is a single
    ``callmethod`` request; data attributes and non-call uses of a method are plain ``getattr``."""
    from autograder.sandbox import process

    folder = write(tmp_path / "sub", {"methods.py": METHODS})
    impl = RemoteImpl(folder, Limits(call_timeout=10))
    ops = []
    real_send = process.ChildProcess.send
    monkeypatch.setattr(process.ChildProcess, "send",
                        lambda self, op, *a, **k: ops.append(op) or real_send(self, op, *a, **k))
    try:
        module = impl.methods
        ops.clear()
        scaler = module.make(2)                       # a module's function
        assert scaler(torch.ones(2)).tolist() == [2.0, 2.0]
        assert scaler.forward(torch.ones(1)).tolist() == [2.0]   # a method of its class
        assert ops == ["callmethod", "call", "callmethod"]
        ops.clear()
        assert module.SIZE == 3 and scaler.k == 2     # data: fetched
        assert scaler.forward.tkit_type == "builtins.method"      # a method used as a value: fetched
        assert ops == ["getattr", "getattr", "getattr"]
    finally:
        impl.close()
