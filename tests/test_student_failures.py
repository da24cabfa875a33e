"""A student's failure is the student's; "not graded" is the kit's own problem only.

Each way a student's value can reach the kit's trusted code is graded on ``tests/data/
student_failures_suite.py``: ``None`` (a forgotten ``return``), a value of another type, a tuple
of another length, an exception, a missing attribute, an attribute of another kind (which makes
the kit's own code raise: :mod:`autograder.run.origin` tries the test on the reference), a
constructor that returns plain data. Each is a failed test with a short message naming what was
returned, never "not graded" and never a traceback; a test whose own code is broken is "not
graded", its traceback in the instructor's log only. The slow test runs ``tkit check`` on an
attention that forgets its ``return``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.run import grading
from autograder.sandbox import returns

REPO = Path(__file__).resolve().parent.parent
SUITE = REPO / "tests" / "data" / "student_failures_suite.py"
REFERENCE = (REPO / "solutions" / "positional_encoding.py").read_text()
TABLE_RETURN = "    return table.to(torch.float32)"
# submission -> (the code appended or replaced, the failed test, the kind of failure, words of its message)
CASES = {
    "none": ({TABLE_RETURN: "    table.to(torch.float32)"}, "test_table", "bad_return",
             "sinusoidal_table must return a tensor, but it returned None."),
    "int": ({TABLE_RETURN: "    return 3"}, "test_table", "bad_return", "it returned a value of type int"),
    "pair": ({TABLE_RETURN: "    return table, table"}, "test_table", "bad_return", "it returned a tuple of 2 items"),
    "raises": ({TABLE_RETURN: "    raise RuntimeError('my bug')"}, "test_table", "exception", "RuntimeError: my bug"),
    "no_buffer": ("\n\nPositionalEncoding.pe = None\n_init = PositionalEncoding.__init__\n"
                  "def __init__(self, *args, **kwargs):\n    _init(self, *args, **kwargs)\n"
                  "    del self._buffers['pe']\nPositionalEncoding.__init__ = __init__\n"
                  "del PositionalEncoding.pe\n", "test_buffer", "exception", "AttributeError"),
    "list_buffer": ("\n\n_init = PositionalEncoding.__init__\n"
                    "def __init__(self, *args, **kwargs):\n    _init(self, *args, **kwargs)\n"
                    "    del self._buffers['pe']\n    self.pe = [1, 2]\nPositionalEncoding.__init__ = __init__\n",
                    "test_buffer", "bad_return", "was a list of 2 items"),
    "constructor": ("\n\ndef PositionalEncoding(*args, **kwargs):\n    return 3\n", "test_buffer", "bad_return",
                    "PositionalEncoding must return an object of the class, but it returned a value of type int."),
}


def _source(change) -> str:
    if isinstance(change, dict):
        text = REFERENCE
        for old, new in change.items():
            assert old in text
            text = text.replace(old, new)
        return text
    return REFERENCE + change


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    out, log = {}, tmp_path_factory.mktemp("log") / "grader-errors.log"
    for name, (change, *_rest) in {**CASES, "reference": ({},)}.items():
        folder = tmp_path_factory.mktemp(name)
        (folder / "positional_encoding.py").write_text(_source(change))
        out[name] = grading.grade_folder(folder, files=[SUITE], seed=1, lang="en", error_log=log)
    return out, log


def _test(results, name: str):
    return next(t for t in results.tests if t.nodeid.endswith(name))


@pytest.mark.parametrize("case", list(CASES))
def test_each_kind_is_the_students_failed_test(graded, case):
    results, _log = graded
    _change, failing, kind, words = CASES[case]
    test = _test(results[case], failing)
    assert test.status == "failed" and test.score == 0 and not test.not_graded
    assert test.failure == kind and words in test.output, test.output
    assert "Traceback" not in test.output and "student_failures_suite.py" not in test.output
    assert len(test.output.splitlines()) <= 8


def test_a_broken_test_is_not_graded_and_its_traceback_is_the_instructors(graded):
    results, log = graded
    text = log.read_text()
    assert [t.status for t in results["reference"].tests][:2] == ["passed", "passed"]
    for case, result in results.items():
        if case != "reference" and CASES[case][1] != "test_buffer":   # its function fails first: the student's
            assert _test(result, "test_broken_test_code").failure in ("bad_return", "exception")
            continue
        broken = _test(result, "test_broken_test_code")
        assert broken.not_graded == "grader error" and "Traceback" not in broken.output, case
        ref = re.search(r"\(error (E[0-9a-f]{8})\)", broken.output).group(1)
        assert f"grader error {ref}" in text
        assert result.not_graded == ["positional_encoding"]
    assert "Traceback" in text and "a key the kit forgot" in text


@pytest.mark.parametrize("value, kind, problem", [
    (None, returns.Kind("tensor", optional=True), None),
    ((1, 2, 3), returns.Kind("tuple", (returns.Kind("tensor"), returns.Kind("tensor"))), "it returned a tuple of 3 items"),
    ((1, 2), returns.Kind("tuple", (returns.Kind("tensor"), returns.Kind("tensor"))),
     "item 0 of what it returned is wrong: it returned a value of type int"),
    ([None], returns.Kind("tuple", (returns.Kind("tensor"),)), "item 0 of what it returned is wrong: it returned None"),
    ("text", returns.OBJECT, "it returned a value of type str"),
])
def test_return_kinds(value, kind, problem):
    got = returns.problem(value, kind)
    assert got == problem or (problem and problem in got), got


def test_the_contract_is_read_from_the_stubs():
    table = returns.contract()
    assert table[("attention", "scaled_dot_product_attention")].name == "tuple"
    assert table[("multi_head_attention.MultiHeadAttention", "forward")].items[1].optional
    assert table[("masks", "combine_masks")].optional
    assert table[("transformer", "Transformer")] is returns.OBJECT
    assert ("autoencoder", "train_autoencoder") not in table   # list[float]: the loop's tests check it


@pytest.mark.slow
def test_tkit_check_of_a_forgotten_return_shows_a_failed_test_and_no_traceback(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    for path in (REPO / "solutions").glob("*.py"):
        (folder / path.name).write_text(path.read_text())
    attention = (folder / "attention.py").read_text()
    (folder / "attention.py").write_text(attention.replace("    return torch.matmul(weights, value), weights",
                                                           "    output = torch.matmul(weights, value)"))
    run = subprocess.run([sys.executable, "cli.py", "check", "attention", "--path", str(folder),
                          "--json", str(tmp_path / "r.json")], cwd=REPO, capture_output=True, text=True, timeout=600)
    text = run.stdout + run.stderr
    assert run.returncode == 1 and "Traceback" not in text and "not graded" not in text, text
    assert "scaled_dot_product_attention must return a tuple of 2 items" in text
    results = json.loads((tmp_path / "r.json").read_text())
    assert all(t["status"] == "failed" and not t.get("extra_data", {}).get("not_graded") for t in results["tests"])
