"""The grading engine itself: the wire format, the child, the failure kinds, the plugin.

These tests use small hand-written submissions and a tiny suite of their own (written to a
temporary folder), so they do not depend on the exercise suites' details.
"""

from __future__ import annotations

import math
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from autograder.checks import expectations
from autograder.child import wire
from autograder.intake import submission
from autograder.mistakes import implementations
from autograder.sandbox import Limits
from autograder.sandbox.remote import RemoteImpl, RemoteObject, SubmissionError
from grading_runs import run_suites

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


# -- the wire ------------------------------------------------------------------------


def test_wire_roundtrip_keeps_structure_and_tensors():
    value = {"a": (1, 2.5, math.inf), "b": [torch.arange(4).view(2, 2).t(), None, "s"], "c": torch.float64}
    enc = wire.Encoder()
    data = wire.pack({"v": enc.encode(value)}, enc.tensors)
    json_len, blob_len = wire.FRAME.unpack(data[:wire.FRAME.size])
    header, tensors = wire.unpack(data[wire.FRAME.size:wire.FRAME.size + json_len],
                                  data[wire.FRAME.size + json_len:])
    out = wire.decode(header["v"], tensors)
    assert out["a"] == (1, 2.5, math.inf)
    assert torch.equal(out["b"][0], torch.tensor([[0, 2], [1, 3]]))
    assert out["b"][1:] == [None, "s"] and out["c"] is torch.float64


@pytest.mark.parametrize("bad", [
    b'{"v": NaN}', b'[1, 2]', b'{"v": {"t": "pickle", "v": "x"}}', b'{"v": [1]}',
    b'{"v": {"t": "ref", "id": 1}}', b'{"v": {"t": "tensor", "k": "t9"}}',
])
def test_wire_refuses_anything_but_tagged_plain_data(bad):
    with pytest.raises(wire.WireError):
        header, tensors = wire.unpack(bad, b"")
        wire.decode(header["v"], tensors)


def test_wire_frame_limits():
    with pytest.raises(wire.WireError, match="exceeds"):
        wire.check_frame(wire.MAX_JSON_BYTES + 1, 0)


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


# -- comparisons and mistakes ----------------------------------------------------------


def test_compare_names_shape_dtype_nan_and_values():
    e = torch.zeros(2, 3)
    with pytest.raises(expectations.Mismatch, match=r"wrong shape: expected \[2, 3\], got \[3, 2\]"):
        expectations.compare(torch.zeros(3, 2), e, what="out")
    with pytest.raises(expectations.Mismatch, match="wrong dtype: expected torch.float32, got torch.float64"):
        expectations.compare(torch.zeros(2, 3, dtype=torch.float64), e, what="out")
    with pytest.raises(expectations.Mismatch, match=r"contains NaN at 1 of 6 positions \(first at \(1, 2\)\)"):
        expectations.compare(torch.tensor([[0, 0, 0], [0, 0, math.nan]]), e, what="out")
    with pytest.raises(expectations.Mismatch, match=r"wrong values at 1 of 6 positions \(first at \(0, 1\), "
                                               r"where you returned 0.5\), largest difference 0.5"):
        expectations.compare(torch.tensor([[0, 0.5, 0], [0, 0, 0]]), e, what="out")
    with pytest.raises(expectations.Mismatch, match="should be a tensor, got tuple"):
        expectations.compare((e,), e, what="out")
    expectations.compare(torch.tensor([[9.0, 0, 0], [0, 0, 0]]), e, what="out",
                    valid=torch.tensor([[False, True, True], [True, True, True]]))


def test_messages_never_show_expected_values():
    expected = torch.full((4,), 123.456)
    with pytest.raises(expectations.Mismatch) as err:
        expectations.compare(torch.zeros(4), expected, what="out")
    assert "123.456" not in str(err.value)


def test_variants_are_isolated_from_sys_modules():
    before = {k: sys.modules.get(k) for k in ("masks", "attention", "positional_encoding")}
    ref = implementations.reference()
    assert {k: sys.modules.get(k) for k in before} == before
    mask = ref.masks.make_causal_mask(3)
    assert mask.tolist() == [[False, True, True], [False, False, True], [False, False, False]]
    # the attention module uses the masks module of its own set
    assert ref.attention.masked_softmax is ref.masks.masked_softmax


# -- the plugin and results.json ------------------------------------------------------------

SUITE = '''
import pytest, torch
from autograder.checks.expectations import check

pytestmark = pytest.mark.exercise("masks")


@pytest.mark.points(2)
def test_causal(student):
    """the causal mask of size 3"""
    expected = torch.triu(torch.ones(3, 3, dtype=torch.bool), diagonal=1)
    check(lambda impl: impl.masks.make_causal_mask(3), student, expected=expected, what="make_causal_mask(3)")


@pytest.mark.points(1)
def test_seeded(student, seed, partial):
    """half credit, and the seed"""
    partial.award(0.5, "half")
    assert isinstance(seed, int)
'''


def run_toy_suite(tmp_path: Path, submission: Path, seed: int = 7) -> dict:
    suite = write(tmp_path / "suite" / "public", {"test_toy.py": SUITE})
    return run_suites(submission, files=[suite / "test_toy.py"], seed=seed)


def test_results_follow_the_gradescope_schema(tmp_path):
    sub = write(tmp_path / "alice", {"masks.py": """
        import torch
        def make_causal_mask(size, device=None):
            return torch.tril(torch.ones(size, size, dtype=torch.bool), diagonal=-1)
    """})
    results = run_toy_suite(tmp_path, sub)
    assert set(results) >= {"score", "execution_time", "output", "tests"}
    assert results["score"] == 0.5 and results["extra_data"]["seed"] == 7
    first, second = results["tests"]
    assert set(first) >= {"name", "score", "max_score", "status", "output", "visibility", "tags"}
    assert first["name"] == "masks: the causal mask of size 3"
    assert (first["score"], first["max_score"], first["status"]) == (0.0, 2.0, "failed")
    assert first["tags"][0] == "masks" and first["visibility"] == "visible"
    assert "make_causal_mask(3) has wrong values at 6 of 9 positions" in first["output"]
    assert (second["score"], second["status"], second["output"]) == (0.5, "failed", "half")


def test_a_submission_conftest_and_ini_cannot_force_a_pass(tmp_path):
    sub = write(tmp_path / "mallory", {
        "masks.py": "def make_causal_mask(size, device=None):\n    raise NotImplementedError('masks: todo')\n",
        "conftest.py": """
            import pytest
            @pytest.hookimpl(hookwrapper=True)
            def pytest_runtest_makereport(item, call):
                outcome = yield
                outcome.get_result().outcome = "passed"
        """,
        "pytest.ini": "[pytest]\naddopts = -p no:autograder.run.plugin\n",
    })
    results = run_toy_suite(tmp_path, sub)
    assert results["tests"][0]["status"] == "failed"
    assert "not implemented yet" in results["tests"][0]["output"]


# -- red-team regressions --------------------------------------------------------------


def test_a_dict_key_that_cannot_be_hashed_is_a_wire_error():
    # a tuple subclass holding a list: the child tags it as a tuple key, the parent cannot hash it
    body = b'{"v": {"t": "dict", "v": [[{"t": "tuple", "v": [{"t": "list", "v": [1]}]}, 1]]}}'
    header, tensors = wire.unpack(body, b"")
    with pytest.raises(wire.WireError, match="malformed value"):
        wire.decode(header["v"], tensors)
    for bad in ({"t": "float", "v": []}, {"t": "tensor", "k": ["t0"]}):
        with pytest.raises(wire.WireError):
            wire.decode(bad, {})


def test_symlinks_are_never_followed_even_beside_a_notebook(tmp_path):
    import nbformat

    
    folder = tmp_path / "linky"
    folder.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    nbformat.write(nb, folder / "masks.ipynb")
    (folder / "positional_encoding.py").symlink_to(REPO / "solutions" / "positional_encoding.py")
    with submission.prepared(folder) as prepared:
        assert sorted(p.name for p in prepared.iterdir()) == ["masks.py"]


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


def test_control_characters_never_reach_the_reports():
    from autograder.intake.textfiles import clean_text
    from autograder.reports.render import code_fence

    assert clean_text("a\x1b]0;owned\x07b\x1b[2Jc\td\n") == "a\\x1b]0;owned\\x07b\\x1b[2Jc\td\n"
    assert clean_text("x\u202eexe.txt\x9b\r") == "x\\u202eexe.txt\\x9b\\x0d"   # as student ids: untrusted.shown
    assert code_fence("no ticks") == "```" and code_fence("x ````` y") == "``````"


def test_a_failing_report_step_does_not_stop_the_batch(tmp_path, monkeypatch):
    from autograder.run import batch, grading

    monkeypatch.setattr(grading, "grade_submission", lambda path, out, **o: {"score": 1.0, "who": path.name})
    seen = []

    def on_result(sid, path, result):
        seen.append(sid)
        if sid == "a":
            raise TypeError("a drawing step tripped on odd data")

    todo = [(name, tmp_path / name) for name in ("a", "b", "c")]
    batch.grade_many(todo, tmp_path / "out", options={}, on_result=on_result, workers=1)
    assert seen == ["a", "b", "c"]


# -- issue 12: time shares per exercise, grader errors ------------------------------------------

SHARES_SUITE = '''
import pytest

@pytest.mark.exercise("masks")
@pytest.mark.points(1)
@pytest.mark.parametrize("i", range(4))
def test_slow(student, i):
    """a slow call"""
    assert student.masks.slow() == 1

@pytest.mark.exercise("embedding")
@pytest.mark.points(1)
@pytest.mark.parametrize("i", range(3))
def test_fast(student, i):
    """a fast call"""
    assert student.embedding.fast() == 2
'''


def test_an_exercise_that_uses_up_its_time_share_costs_no_other(tmp_path):
    """masks (8 points) and embedding (5 points) share 2.6 s: masks' calls of 0.6 s each use up
    its 1.6 s; embedding, graded after it, keeps all its points."""
    suite = write(tmp_path / "suite" / "public", {"test_shares.py": SHARES_SUITE})
    sub = write(tmp_path / "slowpoke", {"masks.py": "import time\ndef slow():\n    time.sleep(0.6)\n    return 1\n",
                                        "embedding.py": "def fast():\n    return 2\n"})
    results = run_suites(sub, files=[suite / "test_shares.py"], seed=1, time_limit=2.6, call_timeout=2.0)
    by_exercise = {}
    for t in results["tests"]:
        by_exercise.setdefault(t["tags"][0], []).append(t)
    assert [t["status"] for t in by_exercise["embedding"]] == ["passed"] * 3
    assert [t["status"] for t in by_exercise["masks"]][:2] == ["passed", "passed"]
    last = by_exercise["masks"][-1]
    assert last["extra_data"]["failure"] == "time_limit"
    assert "the time limit for masks (1.6 s of the submission's 2.6 s) was reached" in last["output"]


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


THREADS_SUITE = """
import pytest
import torch

@pytest.mark.exercise("masks")
@pytest.mark.points(1)
def test_threads(student):
    assert torch.get_num_threads() == 1, torch.get_num_threads()
"""


def test_the_grading_process_uses_one_torch_thread_while_it_grades(tmp_path):
    """The parent's torch work is tiny: with several intra-op threads, 2 workers on 2 cores
    wait at barriers (measured 2.5-4x slower per student); the caller's setting comes back."""
    suite = write(tmp_path / "suite" / "public", {"test_threads.py": THREADS_SUITE})
    sub = write(tmp_path / "sub", {"masks.py": "X = 1\n"})
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        results = run_suites(sub, files=[suite / "test_threads.py"], seed=1)
        assert [t["status"] for t in results["tests"]] == ["passed"], results["tests"]
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_cpu_seeded_draws_as_manual_seed_does_and_restores_the_generator():
    from autograder.rng import cpu_seeded

    torch.manual_seed(123)
    after_123 = torch.rand(3)
    torch.manual_seed(5)
    outside = torch.get_rng_state()
    with cpu_seeded(123):
        inside = torch.rand(3)
    assert torch.equal(inside, after_123)
    assert torch.equal(torch.get_rng_state(), outside)
    with pytest.raises(ZeroDivisionError), cpu_seeded(7):
        torch.rand(2)
        1 / 0
    assert torch.equal(torch.get_rng_state(), outside)


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


def test_tensors_are_written_as_safetensors_reads_them():
    """wire.save_tensors writes the safetensors format itself (faster on small tensors): every
    dtype and shape reads back equal through safetensors' own loader, which is what unpack uses."""
    from safetensors.torch import load

    shapes = [(), (0,), (3,), (2, 0, 4), (2, 5, 12)]
    dtypes = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8, torch.int16, torch.int32,
              torch.int64, torch.uint8, torch.bool]
    tensors = {}
    for dtype in dtypes:
        for shape in shapes:
            values = torch.randn(shape, generator=torch.Generator().manual_seed(len(tensors))) * 100
            tensors[f"{dtype}{shape}"] = values > 0 if dtype is torch.bool else values.to(dtype)
    tensors["transposed"] = torch.arange(24.0).reshape(4, 6).t()
    got = load(wire.save_tensors(tensors))
    assert set(got) == set(tensors)
    for name, tensor in tensors.items():
        assert got[name].dtype == tensor.dtype and got[name].shape == tensor.shape, name
        assert torch.equal(got[name], tensor), name
    other = torch.tensor([1, 2, 3]).to(torch.uint16)   # a dtype of its own: safetensors' save writes it
    assert torch.equal(load(wire.save_tensors({"u": other}))["u"], other)


BUMP = """
COUNT = []

def bump():
    COUNT.append(1)
    return len(COUNT)
"""

BUMP_TEST = '''
import pytest
from autograder.checks.expectations import check

@pytest.mark.exercise("masks")
@pytest.mark.points(1)
def test_bump(student):
    """the first call in this process"""
    check(lambda impl: impl.masks.bump(), student, expected=1, what="bump()")
'''


def test_the_hidden_tests_child_is_started_before_the_public_tests_and_shares_nothing(tmp_path, monkeypatch):
    """The hidden tests run in a fresh child started ahead (RemoteImpl.prepare_spare): both
    children exist before the first test, and what the public tests did is not seen."""
    from autograder.sandbox import remote
    from autograder.sandbox import process

    events = []
    real_init = process.ChildProcess.__init__
    monkeypatch.setattr(process.ChildProcess, "__init__",
                        lambda self, *a, **k: events.append("child") or real_init(self, *a, **k))
    real_begin = remote.RemoteImpl.begin_test
    monkeypatch.setattr(remote.RemoteImpl, "begin_test",
                        lambda self, exercise: events.append("test") or real_begin(self, exercise))
    suite = tmp_path / "suite"
    write(suite / "public", {"test_a.py": BUMP_TEST})
    write(suite / "hidden", {"test_b.py": BUMP_TEST})
    sub = write(tmp_path / "sub", {"masks.py": BUMP})
    results = run_suites(sub, files=[suite / "public" / "test_a.py", suite / "hidden" / "test_b.py"], seed=3)
    assert [t["status"] for t in results["tests"]] == ["passed", "passed"]
    assert events == ["child", "child", "test", "test"]
