"""The throughput mechanisms of issue 16 keep grading exactly as it was: the same draws, the same
outputs, the same grades, only computed once or sent in fewer messages."""

from __future__ import annotations

import random
from pathlib import Path

import torch

from autograder.child.runner import seed_everything


def test_seed_everything_gives_the_state_of_torch_manual_seed():
    torch.manual_seed(1234)
    expected_torch = torch.rand(5)
    random.seed(1234)
    expected_random = random.random()
    torch.manual_seed(99)
    random.seed(99)
    seed_everything(1234)
    assert torch.equal(torch.rand(5), expected_torch)
    assert random.random() == expected_random


def test_seed_everything_seeds_numpy_when_imported():
    import numpy as np

    np.random.seed(1234)
    expected = np.random.rand(3)
    np.random.seed(7)
    seed_everything(1234)
    assert (np.random.rand(3) == expected).all()



def test_a_child_starts_with_what_its_seeding_needs_already_imported(tmp_path):
    """numpy.random (a lazy submodule of numpy 2, seeded before every test) comes from the
    zygote, not from an import in each child's first test."""
    from autograder.sandbox.remote import RemoteImpl
    from autograder.sandbox import Limits

    (tmp_path / "probe.py").write_text("import sys\nLOADED = sorted(m for m in ('numpy', 'numpy.random', 'torch') "
                                       "if m in sys.modules)\n")
    impl = RemoteImpl(tmp_path, Limits(call_timeout=20))
    try:
        assert impl.probe.LOADED == ["numpy", "numpy.random", "torch"]
    finally:
        impl.close()

# -- autograder.memo: keyed by content, copies out, generators replayed ------------------------
import pytest  # noqa: E402

from autograder import memo  # noqa: E402
from grading_runs import run_suites  # noqa: E402

SHARED = torch.arange(6.0)  # a module global some closures below read


@pytest.fixture
def fresh_memo(monkeypatch):
    monkeypatch.delenv("TKIT_MEMO", raising=False)
    memo.clear()
    yield
    memo.clear()


def _scaled(x, factor):
    def run(impl):
        return x * factor + SHARED[: x.shape[-1]]
    return run


def test_fingerprint_follows_the_content_of_closures_arguments_and_globals(fresh_memo):
    x = torch.ones(2, 3)
    same = memo.fingerprint(_scaled(x, 2.0))
    assert memo.fingerprint(_scaled(x.clone(), 2.0)) == same            # equal content, other objects
    assert memo.fingerprint(_scaled(x, 3.0)) != same                    # a closure number
    changed = x.clone()
    changed[1, 2] = 1.0001
    assert memo.fingerprint(_scaled(changed, 2.0)) != same              # one element
    assert memo.fingerprint(_scaled(x.double(), 2.0)) != same           # the dtype
    assert memo.fingerprint(_scaled(x.t().contiguous().t(), 2.0)) != same  # the strides
    SHARED[0] = 5.0
    try:
        assert memo.fingerprint(_scaled(x, 2.0)) != same                # a global the code reads
    finally:
        SHARED[0] = 0.0
    assert memo.fingerprint(_scaled(x, 2.0)) == same
    assert memo.fingerprint({"a": 1, "b": 2}) != memo.fingerprint({"b": 2, "a": 1})  # order counts


def test_fingerprint_refuses_what_it_cannot_read(fresh_memo):
    gen = torch.Generator().manual_seed(1)

    def draws(impl):
        return torch.randn(2, generator=gen)

    relu = torch.nn.ReLU()

    def module_in_closure(impl):
        return relu(impl)

    for value in (draws, module_in_closure, torch.nn.Linear(2, 2), object()):
        with pytest.raises(memo.Unmemoizable):
            memo.fingerprint(value)


def test_cached_computes_once_per_content_and_hands_out_copies(fresh_memo):
    calls = []

    def compute(x):
        calls.append(1)
        return {"out": x * 2, "shape": tuple(x.shape)}

    x = torch.arange(4.0)
    first = memo.cached(lambda: compute(x), "k", x)
    first["out"][0] = 100.0                                  # the caller changes what it got
    second = memo.cached(lambda: compute(x), "k", x.clone())
    assert len(calls) == 1 and second["out"].tolist() == [0.0, 2.0, 4.0, 6.0]
    second["out"][1] = -1.0
    assert memo.cached(lambda: compute(x), "k", x)["out"].tolist() == [0.0, 2.0, 4.0, 6.0]
    memo.cached(lambda: compute(x + 1), "k", x + 1)             # other content: computed
    assert len(calls) == 2 and memo.stats()["hits"] == 2


def test_cached_keeps_neither_errors_nor_objects_and_can_be_turned_off(fresh_memo, monkeypatch):
    calls = []

    def fails():
        calls.append(1)
        raise ValueError("no")

    for _ in range(2):
        with pytest.raises(ValueError):
            memo.cached(fails, "e")
    assert len(calls) == 2
    module = memo.cached(lambda: torch.nn.Linear(1, 1), "m")
    assert memo.cached(lambda: torch.nn.Linear(1, 1), "m") is not module and memo.stats()["entries"] == 0
    monkeypatch.setenv("TKIT_MEMO", "0")
    memo.cached(lambda: calls.append(1), "off")
    memo.cached(lambda: calls.append(1), "off")
    assert len(calls) == 4


@memo.once
def _drawn_setup(rng, width):
    layer = torch.nn.Linear(width, width)  # built from the global generator, then redrawn from rng
    with torch.no_grad():
        layer.weight.copy_(torch.randn(width, width, generator=rng))
    return {"w": layer.weight.detach().clone(), "x": torch.randn(2, width, generator=rng)}


def test_once_replays_the_generator_and_leaves_the_global_one_alone(fresh_memo):
    results, nexts, globals_after = [], [], []
    for _ in range(3):   # a miss, then two hits
        torch.manual_seed(123)
        rng = torch.Generator().manual_seed(7)
        results.append(_drawn_setup(rng, 3))
        nexts.append(torch.randn(4, generator=rng))   # the caller's next draw
        globals_after.append(torch.rand(2))           # the caller's global generator
    plain_rng = torch.Generator().manual_seed(7)
    plain = _drawn_setup.__wrapped__(plain_rng, 3)
    plain_next = torch.randn(4, generator=plain_rng)
    assert memo.stats()["hits"] == 2
    for got, after, global_draw in zip(results, nexts, globals_after):
        assert torch.equal(got["w"], plain["w"]) and torch.equal(got["x"], plain["x"])
        assert torch.equal(after, plain_next)
        assert torch.equal(global_draw, globals_after[0])
    torch.manual_seed(123)
    assert torch.equal(torch.rand(2), globals_after[0])  # the helper did not move the caller's generator
    other = _drawn_setup(torch.Generator().manual_seed(8), 3)  # another generator state: computed
    assert not torch.equal(other["w"], plain["w"]) and memo.stats()["misses"] == 2


def test_check_never_reuses_an_expected_value_for_other_inputs(fresh_memo):
    from autograder.checks import expectations
    from autograder.mistakes import implementations

    reference = implementations.reference()
    for scale in (1.0, 2.0, 1.0, 3.0):
        scores = torch.tensor([[2.0, 1.0, 0.5, 3.0]]) * scale

        def run(impl, scores=scores):
            return impl.masks.masked_softmax(scores, None)

        got = expectations.check(run, reference, what="masked_softmax")   # a stale value would fail here
        assert torch.allclose(got, torch.softmax(scores, -1))
    assert memo.stats()["hits"] == 1 and memo.stats()["misses"] == 3


def _outcomes(results: dict) -> list:
    return [(t["name"], t["score"], t["status"], t["output"], t.get("extra_data", {}).get("mistake"))
            for t in results["tests"]]


def test_grades_and_named_mistakes_are_the_same_with_and_without_the_cache(fresh_memo, monkeypatch):
    """chen: two mistakes (the PE table, the padding mask) and their composites; graded with the
    cache off, then twice with it on (the second run answered from it)."""
    from autograder.run import grading

    chen = Path(__file__).resolve().parent.parent / "examples" / "sample_class" / "chen"
    names = ["positional_encoding", "masks", "encoder", "transformer"]
    monkeypatch.setenv("TKIT_MEMO", "0")
    plain = run_suites(chen, names=names, seed=11, training=False)
    monkeypatch.setenv("TKIT_MEMO", "1")
    first = run_suites(chen, names=names, seed=11, training=False)
    hits = memo.stats()["hits"]
    second = run_suites(chen, names=names, seed=11, training=False)
    assert memo.stats()["hits"] > hits + 20
    assert _outcomes(plain) == _outcomes(first) == _outcomes(second)
    named = {t.get("extra_data", {}).get("mistake") for t in second["tests"]}
    assert {"pe_sin_cos_swapped", "mask_padding_inverted"} <= named
    assert 0 < second["score"] < sum(t["max_score"] for t in second["tests"])


# -- autograder.run.pytest_session: one pytest session for many submissions -------------------------
SAMPLE = Path(__file__).resolve().parent.parent / "examples" / "sample_class"


def test_a_kept_session_grades_each_submission_as_a_session_of_its_own():
    """alice (correct), chen (two mistakes), bob (stubs), then alice again, through one runner:
    every result as grading each alone gives, in the same order, nothing carried over."""
    from autograder.run import grading, pytest_session
    from autograder.options import GradingOptions

    options = GradingOptions(names=("masks", "attention", "encoder"), seed=3, training=False)
    files = grading.suite_files(options.visibility, options.names)
    runner = pytest_session.SuiteRunner(options, files)
    try:
        for name in ("alice", "chen", "bob", "alice"):
            warm = runner.grade(SAMPLE / name, options).to_gradescope()
            alone = run_suites(SAMPLE / name, options)
            assert _outcomes(warm) == _outcomes(alone), name
        assert runner.alive
    finally:
        runner.close()
    assert not runner.alive


def test_keep_warm_routes_grade_folder_through_one_runner_per_collection(monkeypatch):
    from autograder.run import grading, pytest_session

    monkeypatch.setattr(pytest_session, "_WARM", {"enabled": False, "runner": None})
    pytest_session.keep_warm()
    try:
        first = run_suites(SAMPLE / "alice", names=["masks"], seed=1, training=False)
        runner = pytest_session._WARM["runner"]
        again = run_suites(SAMPLE / "chen", names=["masks"], seed=1, training=False)
        assert pytest_session._WARM["runner"] is runner            # the same session
        run_suites(SAMPLE / "alice", names=["attention"], seed=1, training=False)
        assert pytest_session._WARM["runner"] is not runner and not runner.alive  # other suites: a new one
        assert first["score"] == sum(t["max_score"] for t in first["tests"]) and again["score"] < first["score"]
    finally:
        pytest_session.keep_warm(False)
    assert pytest_session._WARM["runner"] is None


def test_a_suite_that_does_not_import_is_reported_not_graded(tmp_path):
    from autograder.run import pytest_session
    from autograder.options import GradingOptions

    broken = tmp_path / "test_broken.py"
    broken.write_text("import pytest\npytestmark = pytest.mark.exercise('masks')\ndef test_x(:\n    pass\n")
    with pytest.raises(RuntimeError, match="test_broken.py"):
        pytest_session.SuiteRunner(GradingOptions(files=(broken,), seed=1), [broken])


def test_compare_passes_and_fails_as_before_on_nan_inf_and_masked_values():
    """compare() checks the common all-close case first; what passes and what fails, and why, is
    unchanged."""
    from autograder.mistakes.comparison import Mismatch, compare

    nan, inf = float("nan"), float("inf")
    passing = [([1.0, nan, inf], [1.0 + 1e-7, nan, inf], None),
               ([5.0, 2.0], [1.0, 2.0], torch.tensor([False, True])),   # the wrong value is masked out
               ([-inf, 0.0], [-inf, 0.0], None)]
    failing = [([1.0, nan], [1.0, 2.0], None, "NaN"), ([inf, 0.0], [1.0, 0.0], None, "inf"),
               ([inf], [-inf], None, "wrong values"), ([1.0, 2.1], [1.0, 2.0], None, "wrong values"),
               ([5.0, 2.0], [1.0, 2.0], torch.tensor([True, True]), "wrong values")]
    for got, expected, valid in passing:
        compare(torch.tensor(got), torch.tensor(expected), what="x", valid=valid)
    for got, expected, valid, why in failing:
        with pytest.raises(Mismatch, match=why):
            compare(torch.tensor(got), torch.tensor(expected), what="x", valid=valid)


@pytest.mark.parametrize("kind,num_layers,norm_first", [("encoder", None, False), ("decoder", None, True),
                                                        ("encoder", 2, True), ("decoder", 2, False)])
def test_an_oracle_case_is_the_oracle_drawn_and_run_directly(fresh_memo, kind, num_layers, norm_first):
    from autograder.checks import oracles, weights

    def direct(rng):
        module = (oracles.torch_layer(kind, 8, 2, 12, norm_first=norm_first, rng=rng) if num_layers is None
                  else oracles.torch_stack(kind, num_layers, 8, 2, 12, norm_first=norm_first, rng=rng))
        return module, torch.randn(2, 3, 8, generator=rng)

    args = (torch.randn(2, 3, 8),) + ((torch.randn(2, 4, 8),) if kind == "decoder" else ())
    module, after = direct(torch.Generator().manual_seed(5))
    expected = oracles.run(module, *args)
    for _ in range(2):  # a miss, then a hit
        rng = torch.Generator().manual_seed(5)
        oracle = oracles.case(kind, 8, 2, 12, args, norm_first=norm_first, rng=rng, num_layers=num_layers)
        assert torch.equal(oracle.expected, expected)
        assert torch.equal(torch.randn(2, 3, 8, generator=rng), after)   # the draws left where they were
        assert weights.kit_state(module).keys() == oracle.state.keys()
        assert all(torch.equal(weights.kit_state(module)[k], v) for k, v in oracle.state.items())
        assert torch.equal(oracles.run(oracle.module(), *args), expected)  # rebuilt for a variant
    assert memo.stats()["hits"] >= 1


def test_a_grader_failure_in_a_kept_session_costs_that_submission_only(monkeypatch):
    """An exception of the grader's own code while a kept session grades one submission is that
    submission's error; the session ends and the next submission is graded by a fresh one."""
    from autograder.run import grading, plugin, pytest_session

    monkeypatch.setattr(pytest_session, "_WARM", {"enabled": False, "runner": None})
    real_prepare, calls = plugin.GradingSession.prepare, []

    def prepare_failing_once(self, items):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a grader bug")
        return real_prepare(self, items)

    monkeypatch.setattr(plugin.GradingSession, "prepare", prepare_failing_once)
    pytest_session.keep_warm()
    try:
        with pytest.raises(RuntimeError, match="a grader bug"):
            run_suites(SAMPLE / "alice", names=["masks"], seed=1, training=False)
        assert pytest_session._WARM["runner"] is None
        after = run_suites(SAMPLE / "alice", names=["masks"], seed=1, training=False)
        assert after["score"] == sum(t["max_score"] for t in after["tests"])
    finally:
        pytest_session.keep_warm(False)


def test_the_suites_fixtures_say_what_is_missing_without_a_submission():
    """student and seed read the running test's context, not pytest's request (issue 16): run
    without --submission, a suite's tests still stop at the kit's own explanation."""
    import subprocess
    import sys

    from autograder import paths

    suites = paths.suites_dir()
    proc = subprocess.run([sys.executable, "-m", "pytest", str(suites / "public" / "test_masks.py"), "-c",
                           str(suites / "pytest.ini"), "--rootdir", str(suites), "-p", "autograder.run.plugin",
                           "-p", "no:cacheprovider", "-q", "-x"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "these tests grade a submission: run them with --submission DIR" in proc.stdout


def test_a_fingerprint_is_the_digest_of_its_tagged_bytes(fresh_memo):
    """The bytes a fingerprint hashes are a fixed format (length-prefixed tags), so a digest of the
    same content is the same from run to run and version to version of this module."""
    import hashlib
    import struct

    def tag(text):
        data = text.encode()
        return struct.pack("<I", len(data)) + data

    expected = hashlib.blake2b(digest_size=20)
    for part in (memo._torch_settings(), (3, "x")):
        expected.update(tag(f"tuple:{len(part)}"))
        for item in part:
            expected.update(tag(type(item).__name__) + tag(repr(item)))
    assert memo.fingerprint((3, "x")) == expected.digest()


def _oracle_modules():
    from autograder.checks import inputs, oracles

    rng = torch.Generator().manual_seed(11)
    x, memory = torch.randn(3, 5, 8, generator=rng), torch.randn(3, 4, 8, generator=rng)
    x_pad = inputs.padding_mask(torch.tensor([5, 2, 4]), 5)
    memory_pad = inputs.padding_mask(torch.tensor([1, 4, 3]), 4)
    causal = inputs.causal_mask(5)
    additive = torch.randn(5, 4, generator=rng).masked_fill(torch.rand(5, 4, generator=rng) < 0.3, float("-inf"))
    mha = oracles.torch_mha({f"{n}_proj.{p}": torch.randn(8, 8, generator=rng) if p == "weight" else
                             torch.randn(8, generator=rng) for n in ("q", "k", "v", "out") for p in ("weight", "bias")},
                            8, 2)
    layer = {k: oracles.torch_layer(k, 8, 2, 12, norm_first=False, rng=rng) for k in ("encoder", "decoder")}
    stack = {k: oracles.torch_stack(k, 2, 8, 2, 12, norm_first=True, rng=rng) for k in ("encoder", "decoder")}
    return [
        (mha, (x, x, x), dict(key_padding_mask=x_pad)),
        (mha, (x, x, x), dict(key_padding_mask=x_pad, attn_mask=causal, average_attn_weights=False)),
        (mha, (x, memory, memory), dict(key_padding_mask=memory_pad, attn_mask=additive)),
        (mha, (x, memory, memory), dict(key_padding_mask=torch.zeros(3, 4).masked_fill(memory_pad, float("-inf")))),
        (layer["encoder"], (x,), dict(src_key_padding_mask=x_pad)),
        (stack["encoder"], (x,), dict(src_key_padding_mask=x_pad)),
        (stack["encoder"], (x,), dict(mask=causal, src_key_padding_mask=x_pad)),
        (layer["decoder"], (x, memory), dict(tgt_mask=causal, tgt_key_padding_mask=x_pad,
                                             memory_key_padding_mask=memory_pad)),
        (stack["decoder"], (x, memory), dict(tgt_mask=causal, tgt_key_padding_mask=x_pad,
                                             memory_key_padding_mask=memory_pad)),
        (stack["decoder"], (x, memory), dict(memory_mask=additive, memory_key_padding_mask=memory_pad)),
        (stack["decoder"], (x.double(), memory.double()), dict(tgt_key_padding_mask=x_pad)),
    ]


def test_an_oracle_run_with_key_padding_masks_gives_pytorchs_own_numbers_bit_for_bit():
    """run() merges key-padding masks into the attention masks (to skip PyTorch's sympy-importing
    shape check): the outputs, NaN rows included, are those of the module called as given."""
    from autograder.checks import oracles

    for module, args, kwargs in _oracle_modules():
        module = module.to(args[0].dtype)
        with torch.enable_grad():
            out = module(*args, **kwargs)
        direct = tuple(o.detach() for o in out) if isinstance(out, tuple) else out.detach()
        torch.testing.assert_close(oracles.run(module, *args, **kwargs), direct, rtol=0, atol=0, equal_nan=True,
                                   msg=lambda m: f"{type(module).__name__} {list(kwargs)}: {m}")
        module.float()


def test_merged_mask_is_the_sum_pytorch_forms_and_refuses_a_mask_of_the_wrong_rank():
    from autograder.checks import oracles

    pad = torch.tensor([[False, False, True]])
    attn = torch.tensor([[0.0, -1.0, 0.0], [0.0, 0.0, float("-inf")]])
    merged = oracles.merged_mask(attn, pad, 2, 2, torch.float32)
    inf = float("-inf")
    assert merged.shape == (2, 2, 3)
    assert torch.equal(merged[0], torch.tensor([[0.0, -1.0, inf], [0.0, 0.0, inf]]))
    assert torch.equal(merged[1], merged[0])
    with pytest.raises(ValueError, match=r"key_padding_mask must be \(B, S\)"):
        oracles.merged_mask(None, pad[0], 2, 2, torch.float32)


def test_oracle_runs_with_key_padding_masks_never_import_sympy():
    """PyTorch's check of a key-padding mask imports sympy (about 0.4 s) on its first call; the
    oracles never make it, so no grading process pays that import."""
    import subprocess
    import sys

    code = ("import sys\n"
            "sys.path.insert(0, 'tests')\n"
            "from autograder.checks import oracles\n"
            "for module, args, kwargs in __import__('tests.test_memo', fromlist=['x'])._oracle_modules():\n"
            "    oracles.run(module.to(args[0].dtype), *args, **kwargs)\n"
            "print(sorted(m for m in ('sympy', 'torch.fx.experimental.symbolic_shapes') if m in sys.modules))\n")
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
