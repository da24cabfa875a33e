"""The memo (:mod:`autograder.memo`): keyed by content, copies handed out, generators replayed;
grading gives the same draws, outputs and grades with it as without it, only computed once."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from autograder import memo
from grading_runs import run_suites

SHARED = torch.arange(6.0)  # a module global some closures below read


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


def test_expect_reference_never_reuses_an_expected_value_for_other_inputs(fresh_memo):
    from autograder.checks import expectations
    from autograder.mistakes import implementations

    reference = implementations.reference()
    for scale in (1.0, 2.0, 1.0, 3.0):
        scores = torch.tensor([[2.0, 1.0, 0.5, 3.0]]) * scale

        def run(impl, scores=scores):
            return impl.masks.masked_softmax(scores, None)

        got = expectations.expect_reference(run, reference, what="masked_softmax")   # a stale value would fail here
        assert torch.allclose(got, torch.softmax(scores, -1))
    assert memo.stats()["hits"] == 1 and memo.stats()["misses"] == 3


def _outcomes(results: dict) -> list:
    return [(t["name"], t["score"], t["status"], t["output"], t.get("extra_data", {}).get("mistake"))
            for t in results["tests"]]


@pytest.mark.slow
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
