"""Error-message checks accept any wording that names the argument and the offending values
(issue 14: `key width 6 != query width 4` lost 0.5 for not saying `d_k`)."""

from pathlib import Path

import pytest

from autograder import paths
from autograder.messages import message_problem
from autograder.testing import Mismatch, expect_raises

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
    assert uses >= 15
