"""Error-message checks (:mod:`autograder.checks.contract_errors`) accept any wording that names
the argument and the offending values (`key width 6 != query width 4` must not lose points for not
saying `d_k`)."""

from pathlib import Path

import pytest

from autograder import paths
from autograder.checks.contract_errors import message_problem
from autograder.checks.expectations import Mismatch, expect_raises
from grading_runs import run_suites

D_K = dict(names=("d_k", "query", "key", "q", "k"), values=(4, 6))


@pytest.mark.parametrize("message", [
    "key width 6 != query width 4",
    "query and key must have the same last dimension d_k, got query.shape=(1, 3, 4), key.shape=(1, 5, 6)",
    "d_k mismatch: 4 vs 6",
    "q.shape[-1]=4 but k.shape[-1]=6",
    "Query/Key feature sizes differ (4.0 and 6.0)",
    "keys have 6 features, queries 4",
    "shape mismatch between Q torch.Size([1, 3, 4]) and K torch.Size([1, 5, 6])",
])
def test_legitimate_wordings_pass(message):
    assert message_problem(message, **D_K) is None


@pytest.mark.parametrize("message, missing", [
    ("shapes do not match", "argument"),
    ("bad input: 4 and 6", "argument"),              # values but no argument named
    ("query and key must have the same width", "values"),
    ("key width 6 is wrong", "values"),              # one of the two values
    ("key width 16 != query width 14", "values"),    # the digits inside other numbers do not count
    ("keyword 6 != 4", "argument"),                  # 'key' inside another word does not count
])
def test_messages_naming_nothing_fail(message, missing):
    problem = message_problem(message, **D_K)
    assert problem is not None and missing in problem


def test_negative_and_fractional_values():
    assert message_problem("size must be >= 0, got size=-1", ("size",), (-1,)) is None
    assert message_problem("size must be >= 0, got 1", ("size",), (-1,)) is not None
    assert message_problem("dropout must be in [0, 1], got 1.5", ("dropout",), (1.5,)) is None
    assert message_problem("dropout must be in [0, 1], got 1.55", ("dropout",), (1.5,)) is not None
    assert message_problem("max_len=5 < S=6", ("max_len",), (6, 5)) is None


def _raise(message):
    def call():
        raise ValueError(message)
    return call


def test_expect_raises_applies_the_rule():
    assert expect_raises(_raise("key width 6 != query width 4"), what="sdpa", **D_K) == \
        "key width 6 != query width 4"
    with pytest.raises(Mismatch, match="should name the argument"):
        expect_raises(_raise("shapes do not match"), what="sdpa", **D_K)
    with pytest.raises(Mismatch, match="should raise ValueError, but it returned normally"):
        expect_raises(lambda: None, what="sdpa", **D_K)


def test_every_suite_message_check_uses_the_rule():
    """No suite checks a contract error's wording with a regular expression (``match=``): each
    uses ``names``/``values``, so one rule decides every message check."""
    files = sorted(Path(paths.suites_dir()).rglob("test_*.py"))
    assert len(files) >= 20
    offenders = [f.name for f in files if "match=" in f.read_text(encoding="utf-8")]
    assert not offenders, offenders
    uses = sum(f.read_text(encoding="utf-8").count("names=(") for f in files)
    assert uses >= 14  # the bad arguments exercises/README.md lists ("Bad arguments")


@pytest.mark.parametrize("names, values, message", [
    (("S_k", "key", "value", "k", "v"), (5, 6), "value length 6 != key length 5"),
    (("mask", "scores"), (3, 4), "cannot broadcast a mask of shape (3,) to scores of shape (2, 4)"),
    (("S_k", "attn_mask", "key_padding_mask", "mask"), (4, 5), "key_padding_mask covers 5 keys, attn_mask 4"),
    (("size",), (-1,), "size -1 is negative"),
    (("num_heads", "d_model", "heads"), (10, 4), "10 is not divisible by 4 heads"),
    (("key_padding_mask", "padding mask", "mask", "S_k"), (4, 5), "padding mask (2, 4) does not cover the 5 keys"),
    (("d_model",), (7,), "odd d_model (7) is not supported"),
    (("max_len", "S", "seq_len", "sequence length", "length"), (6, 5), "a sequence of length 6 exceeds max_len 5"),
    (("vocab_size", "vocab"), (0,), "vocab_size 0 < 1"),
    (("head_dim", "x"), (5,), "head_dim 5 is odd"),
    (("max_len",), (0,), "max_len=0; need at least 1"),
    (("dropout",), (1.5,), "dropout probability 1.5 not in [0, 1]"),
])
def test_each_suite_check_accepts_another_wording(names, values, message):
    """One other legitimate wording for each kind of check the suites make."""
    assert message_problem(message, names, values) is None
    assert message_problem("invalid argument", names, values) is not None


REWORDED = {   # masks.py's two shape errors the public test checks, in other words that name the same values
    "f\"mask must be broadcastable to scores, got mask.shape={tuple(mask.shape)}, \"\n            "
    "f\"scores.shape={tuple(scores.shape)}\"": "f\"cannot apply a mask {tuple(mask.shape)} to scores {tuple(scores.shape)}\"",
    "f\"attn_mask and key_padding_mask must have the same S_k, \"\n            f\"got attn_mask.shape={tuple(attn_mask.shape)}, \"\n"
    "            f\"key_padding_mask.shape={tuple(key_padding_mask.shape)}\"":
        "f\"the masks cover {attn_mask.shape[-1]} and {key_padding_mask.shape[-1]} keys\"",
}


@pytest.mark.parametrize("wording, passes", [("issue", True), ("nothing", False)])
def test_the_public_masks_test_takes_any_wording_that_names_the_values(tmp_path, wording, passes):
    source = (paths.solutions_dir() / "masks.py").read_text(encoding="utf-8")
    for old, new in REWORDED.items():
        assert source.count(old) == 1
        source = source.replace(old, new if wording == "issue" else '"bad shapes"')
    (tmp_path / "masks.py").write_text(source, encoding="utf-8")
    results = run_suites(tmp_path, names=["masks"], visibility=("public",), seed=1, training=False)
    test = next(t for t in results["tests"] if "test_bad_masks_raise_value_error" in t["extra_data"]["nodeid"])
    assert (test["status"] == "passed") is passes, test["output"]
    others = [t for t in results["tests"] if t is not test]
    assert others and all(t["status"] == "passed" for t in others)
