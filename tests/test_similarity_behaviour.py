"""Behaviour evidence: shared rare wrong outputs flag a pair, common named mistakes and
correct students do not, and the signatures stay instructor-side. Unit tests on synthetic
rows and :class:`TestResult` objects; the real graded class is in
``tests/test_similarity_behaviour_graded.py``."""

import csv
import io
import json
import math

import pytest
import torch
from click.testing import CliRunner

import cli
from autograder.mistakes import comparison
from autograder.records import gradebook
from autograder.reports import render
from autograder.results.model import Results, TestResult
from autograder.similarity import behaviour, matcher, report

EXERCISE = "attention"
TESTS = [f"autograder/suites/hidden/test_attention.py::test_{i}" for i in range(6)]


def rows_of(students: dict[str, dict[int, tuple]], graded: list[str]) -> list[tuple]:
    """Gradebook rows: ``students`` maps a student to ``{test index: (signature, mistake)}`` of
    the tests they failed; every student of ``graded`` ran every test of :data:`TESTS`."""
    rows = []
    for sid in graded:
        failed = students.get(sid, {})
        for i, nodeid in enumerate(TESTS):
            sig, mistake = failed.get(i, (None, None))
            rows.append((sid, EXERCISE, nodeid, f"attention: test {i}", "failed" if i in failed else "passed",
                         mistake, sig))
    return rows


def test_two_students_sharing_an_unnamed_wrong_output_are_flagged():
    graded = [f"s{i:02d}" for i in range(30)]
    shared = {0: ("aaaa000000000001", None), 3: ("aaaa000000000002", None)}
    rows = rows_of({"s03": shared, "s17": dict(shared),
                    "s05": {0: ("bbbb000000000001", None)}}, graded)   # s05: another wrong value
    result = behaviour.analyse(rows, source="book")
    flagged = result.flagged
    assert [(p.student_a, p.student_b, p.exercise) for p in flagged] == [("s03", "s17", EXERCISE)]
    assert flagged[0].rarity == pytest.approx(2 * math.log(30 / 2), abs=1e-3)
    assert [t.label for t in flagged[0].shared] == ["test_0", "test_3"]
    assert all(t.mistake is None and t.count == 2 and t.graded == 30 for t in flagged[0].shared)


def test_a_common_named_mistake_made_independently_is_not_flagged():
    graded = [f"s{i:02d}" for i in range(20)]
    named = {i: (f"cccc00000000000{i}", "attention_no_scaling") for i in range(6)}   # fails all six tests
    result = behaviour.analyse(rows_of({sid: dict(named) for sid in graded[:5]}, graded), source="book")
    assert result.pairs, "the five share the mistake's outputs"
    assert all(p.named_only for p in result.pairs)
    assert result.flagged == []
    # the same outputs unnamed would be flagged: the name is what down-weights them
    unnamed = {i: (sig, None) for i, (sig, _) in named.items()}
    assert behaviour.analyse(rows_of({sid: dict(unnamed) for sid in graded[:5]}, graded)).flagged


def test_a_very_common_wrong_output_never_counts():
    graded = [f"s{i:03d}" for i in range(100)]
    common = {i: (f"dddd00000000000{i}", None) for i in range(6)}
    result = behaviour.analyse(rows_of({sid: dict(common) for sid in graded[:30]}, graded))
    assert result.pairs == []


def test_low_information_outputs_count_as_named():
    graded = [f"s{i:02d}" for i in range(30)]
    zeros = {i: (f"c:eeee0000000000{i}", None) for i in range(3)}
    result = behaviour.analyse(rows_of({"s01": zeros, "s02": dict(zeros)}, graded))
    assert result.pairs and result.pairs[0].named_only and not result.flagged
    assert behaviour.LOW_INFORMATION == comparison.LOW_INFORMATION


def test_correct_students_share_no_wrong_output_and_are_not_flagged():
    graded = [f"s{i:02d}" for i in range(12)]
    result = behaviour.analyse(rows_of({}, graded))
    assert result.pairs == [] and result.students == graded


# -- the signature -----------------------------------------------------------------------------

def test_signature_is_short_hex_and_ignores_float_noise_but_not_a_different_value():
    torch.manual_seed(0)
    out = torch.randn(2, 5, 8)
    weights = torch.softmax(torch.randn(2, 5, 5), dim=-1)
    sig = comparison.signature((out, weights))
    assert len(sig) == 16 and int(sig, 16) >= 0
    noisy = (out * (1 + 1e-7 * torch.randn_like(out)), weights + 1e-9)
    assert comparison.signature(noisy) == sig
    other = out.clone()
    other[1, 2, 3] += 0.2   # 3.41 -> 3.61, more than the rounding step (at most 3.1 %)
    assert comparison.signature((other, weights)) != sig
    assert comparison.signature((out.double(), weights)) != sig          # the dtype counts
    assert comparison.signature((out.reshape(10, 8), weights)) != sig    # and the shape


def test_signature_ignores_positions_outside_valid():
    out = torch.randn(2, 4)
    valid = torch.tensor([[True, True, False, False], [True, True, True, False]])
    garbage = out.clone()
    garbage[~valid] = torch.randn(int((~valid).sum()))
    assert comparison.signature(garbage, valid) == comparison.signature(out, valid)
    assert comparison.signature(garbage) != comparison.signature(out)
    wrong_shape = torch.randn(3, 5)   # valid does not broadcast to it: still a signature
    assert comparison.signature(wrong_shape, valid) == comparison.signature(wrong_shape)


def test_signature_marks_low_information_outputs():
    assert comparison.signature(torch.zeros(3, 4)).startswith(comparison.LOW_INFORMATION)
    assert comparison.signature(torch.full((3, 4), float("nan"))).startswith(comparison.LOW_INFORMATION)
    assert comparison.signature(torch.eye(4, dtype=torch.bool)).startswith(comparison.LOW_INFORMATION)
    assert comparison.signature(3).startswith(comparison.LOW_INFORMATION)
    assert not comparison.signature(torch.arange(12.0)).startswith(comparison.LOW_INFORMATION)


def test_signature_of_an_unknown_object_is_its_type_and_of_a_bad_value_none():
    class Handle:
        pass

    assert comparison.signature(Handle()) == comparison.signature(Handle())
    deep = []
    for _ in range(30):
        deep = [deep]
    assert comparison.signature(deep) is None


# -- instructor-side only ----------------------------------------------------------------------

SECRET_SIG = "5ec7e75ec7e75ec7"


def results_with_signature() -> Results:
    test = TestResult(name="attention: the output", score=0.0, max_score=2.0, status="failed",
                      output="attention(q, k, v) differs", visibility="visible", tags=["attention", "public"],
                      nodeid=TESTS[0], signature=SECRET_SIG)
    return Results(score=0.0, tests=[test], max_score=2.0, kit_version="x", seed=1, exercises={})


def test_the_signature_never_reaches_what_a_student_sees(tmp_path):
    results = results_with_signature()
    data = results.to_gradescope()
    assert SECRET_SIG not in json.dumps(data)
    assert "signature" not in json.dumps(data)
    assert Results.from_json(data).tests[0].signature is None
    render.write_feedback(results, tmp_path, student="s1")
    for name in ("feedback.md", "feedback.html"):
        assert SECRET_SIG not in (tmp_path / name).read_text(encoding="utf-8")
    assert SECRET_SIG not in repr(results)


def test_the_gradebook_keeps_the_signature_out_of_results_json(tmp_path):
    with gradebook.Gradebook(tmp_path / "gb.sqlite") as book:
        book.record("s1", results_with_signature(), content_hash="h")
        assert [r[-1] for r in book.signatures()] == [SECRET_SIG]
        stored = book.conn.execute("SELECT results_json FROM submissions").fetchone()[0]
        assert SECRET_SIG not in stored
        assert book.results("s1").tests[0].signature is None
    gradebook.merge([tmp_path / "gb.sqlite"], tmp_path / "merged.sqlite")   # shards keep it
    with gradebook.Gradebook(tmp_path / "merged.sqlite") as book:
        assert [r[-1] for r in book.signatures()] == [SECRET_SIG]


def test_an_earlier_gradebook_gets_the_column_and_merges(tmp_path):
    import sqlite3

    old = tmp_path / "old.sqlite"
    with gradebook.Gradebook(old) as book:
        book.record("s1", results_with_signature(), content_hash="h")
    conn = sqlite3.connect(old)   # the tests table of a gradebook without the column
    conn.executescript("CREATE TABLE t2 AS SELECT student_id, nodeid, exercise, name, visibility, status, score, "
                       "max_score, mistake, failure, duration FROM tests; DROP TABLE tests; "
                       "ALTER TABLE t2 RENAME TO tests;")
    conn.close()
    gradebook.merge([old], tmp_path / "merged.sqlite")
    with gradebook.Gradebook(tmp_path / "merged.sqlite") as book:
        assert [r[-1] for r in book.signatures()] == [None]
    with gradebook.Gradebook(old) as book:
        assert [r[-1] for r in book.signatures()] == [None]


# -- the report --------------------------------------------------------------------------------

HOSTILE = '=HYPERLINK("x")<script>alert(1)</script>'


def hostile_behaviour() -> behaviour.BehaviourResult:
    graded = [HOSTILE, "s02"] + [f"s{i:02d}" for i in range(3, 30)]
    shared = {0: ("aaaa000000000001", None), 1: ("aaaa000000000003", None),
              3: ("aaaa000000000002", "attention_no_scaling")}
    return behaviour.analyse(rows_of({HOSTILE: shared, "s02": dict(shared)}, graded), source="book")


def test_behaviour_csv_columns_and_hostile_ids():
    evidence = hostile_behaviour()
    assert evidence.flagged
    rows = list(csv.reader(io.StringIO(report.behaviour_csv_text(evidence))))
    assert rows[0] == ["student_a", "student_b", "exercise", "shared_wrong_tests", "rarity"]
    (a, b, exercise, tests, rarity), = rows[1:]
    assert a == "'" + HOSTILE and b == "s02" and exercise == EXERCISE
    assert tests == "test_0; test_1; test_3 [attention_no_scaling]"
    assert float(rarity) == pytest.approx(evidence.flagged[0].rarity, abs=0.01)
    assert report.behaviour_csv_text(None).strip() == ",".join(report.BEHAVIOUR_COLUMNS)


def test_html_says_which_evidence_flagged_each_pair():
    evidence = hostile_behaviour()
    code = matcher.Result(students=sorted(evidence.students), pairs=[
        matcher.Pair(HOSTILE, "s02", EXERCISE, 0.9, 0.9, 0.9, 500),      # both kinds
        matcher.Pair("s03", "s04", EXERCISE, 0.8, 0.8, 0.8, 500)],       # code only
        sources={s: {EXERCISE: "x = 1\n"} for s in evidence.students})
    html = report.render_html(code, evidence)
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert report.evidence_of(code, evidence) == {(HOSTILE, "s02", EXERCISE): "code + behaviour",
                                                  ("s03", "s04", EXERCISE): "code"}
    assert "Shared wrong behaviour" in html and "attention_no_scaling" in html and "aaaa0000" not in html
    no_book = report.render_html(code, behaviour.BehaviourResult())
    assert "No gradebook was read" in no_book


def test_tkit_similarity_without_a_gradebook_says_so(tmp_path):
    for sid in ("a", "b"):
        (tmp_path / "class" / sid).mkdir(parents=True)
        (tmp_path / "class" / sid / "masks.py").write_text("x = 1\n")
    result = CliRunner().invoke(cli.main, ["similarity", "--class-dir", str(tmp_path / "class"),
                                           "--out", str(tmp_path / "out"), "--workers", "1", "--exercise", "masks"])
    assert result.exit_code == 0, result.output
    assert "no gradebook at" in result.output
    text = (tmp_path / "out" / "similarity-behaviour.csv").read_text(encoding="utf-8")
    assert text.strip() == ",".join(report.BEHAVIOUR_COLUMNS)
    assert "No gradebook was read" in (tmp_path / "out" / "similarity.html").read_text(encoding="utf-8")


def test_a_named_mistake_counts_once_and_never_flags_alone():
    graded = [f"s{i:03d}" for i in range(300)]
    rare_named = {i: (f"ffff00000000000{i}", "attention_no_scaling") for i in range(6)}
    result = behaviour.analyse(rows_of({"s001": rare_named, "s002": dict(rare_named)}, graded))
    (pair,) = result.pairs
    assert pair.rarity == pytest.approx(behaviour.NAMED_WEIGHT * math.log(150), abs=1e-3)
    assert not pair.flagged
    both = {**rare_named, 5: ("ffff0000000000ff", None)}   # one unnamed shared output besides
    (pair,) = behaviour.analyse(rows_of({"s001": both, "s002": dict(both)}, graded)).pairs
    assert pair.flagged and pair.rarity == pytest.approx(1.25 * math.log(150), abs=1e-3)


def test_a_mismatch_keeps_the_outermost_compared_value_for_its_signature():
    got = (torch.ones(2, 3), torch.arange(6.0).reshape(2, 3))
    with pytest.raises(comparison.Mismatch) as info:
        comparison.compare(got, (torch.ones(2, 3), torch.zeros(2, 3)), what="x")
    assert info.value.got is got and info.value.signature is None
    assert comparison.signature(info.value.got, info.value.valid) == comparison.signature(got)


def test_tkit_similarity_reads_the_behaviour_evidence_from_a_gradebook(tmp_path):
    book_path = tmp_path / "elsewhere" / "gradebook.sqlite"
    with gradebook.Gradebook(book_path) as book:
        for i in range(30):
            sid = f"s{i:02d}"
            shared = sid in ("s04", "s11")
            tests = [TestResult(name=f"attention: test {t}", score=0.0 if shared else 1.0, max_score=1.0,
                                status="failed" if shared else "passed", tags=["attention", "hidden"],
                                nodeid=TESTS[t], signature=f"abcd00000000000{t}" if shared else None)
                     for t in range(3)]
            book.record(sid, Results(score=0.0, tests=tests, max_score=3.0), content_hash=sid)
    for sid in ("s04", "s11"):
        (tmp_path / "class" / sid).mkdir(parents=True)
        (tmp_path / "class" / sid / "masks.py").write_text(f"x = {sid!r}\n")
    result = CliRunner().invoke(cli.main, ["similarity", "--class-dir", str(tmp_path / "class"), "--out",
                                           str(tmp_path / "out"), "--workers", "1", "--exercise", "masks",
                                           "--gradebook", str(book_path)])
    assert result.exit_code == 0, result.output
    assert "behaviour evidence of 30 graded submission(s): 1 flagged" in result.output
    rows = list(csv.DictReader(io.StringIO((tmp_path / "out" / "similarity-behaviour.csv").read_text(encoding="utf-8"))))
    assert [(r["student_a"], r["student_b"], r["exercise"]) for r in rows] == [("s04", "s11", "attention")]
    assert float(rows[0]["rarity"]) == pytest.approx(3 * math.log(15), abs=0.01)
    html = (tmp_path / "out" / "similarity.html").read_text(encoding="utf-8")
    assert "<td>behaviour</td>" in html and "abcd0000" not in html
