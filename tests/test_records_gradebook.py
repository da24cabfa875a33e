"""The SQLite gradebook: atomic records, resume decisions, grades.csv, merging shards, the CLI."""

import sqlite3

import pytest
from click.testing import CliRunner

from autograder.results.model import Results
from autograder import __version__, exercises
from autograder.cli import main
from autograder.records import gradebook
from autograder.records.gradebook import Gradebook, GradebookError


def results(score_pe: float, score_masks: float, seed: int = 1) -> Results:
    """Results shaped like the plugin's, with two tests."""
    tests = [
        {"name": "positional_encoding: table", "score": score_pe, "max_score": 8.0,
         "status": "passed" if score_pe == 8 else "failed", "output": "", "visibility": "visible",
         "tags": ["positional_encoding", "public"],
         "extra_data": {"nodeid": "public/test_positional_encoding.py::test_table",
                        **({} if score_pe == 8 else {"mistake": "pe_sin_cos_swapped"})}},
        {"name": "masks: causal", "score": score_masks, "max_score": 8.0,
         "status": "passed" if score_masks == 8 else "failed", "output": "", "visibility": "after_published",
         "tags": ["masks", "hidden"], "extra_data": {"nodeid": "hidden/test_masks.py::test_causal"}},
    ]
    return Results.from_json({"score": score_pe + score_masks, "execution_time": 2.5, "tests": tests,
            "extra_data": {"kit_version": __version__, "seed": seed, "max_score": 16.0,
                           "exercises": {"positional_encoding": {"score": score_pe, "max_score": 8.0},
                                         "masks": {"score": score_masks, "max_score": 8.0}}}})


def test_record_writes_a_row_per_submission_and_test(tmp_path):
    with Gradebook(tmp_path / "g.sqlite") as book:
        book.record("alice", results(8, 4), content_hash="h1")
        book.record("alice", results(0, 8), content_hash="h2")       # regraded: replaces
        book.record("bob", results(8, 8), content_hash="h3")
        rows = book.conn.execute("SELECT student_id, score FROM submissions ORDER BY 1").fetchall()
        tests = book.conn.execute("SELECT student_id, exercise, status, mistake FROM tests ORDER BY 1, 2").fetchall()
    assert rows == [("alice", 8.0), ("bob", 16.0)]
    assert tests == [("alice", "masks", "passed", None), ("alice", "positional_encoding", "failed", "pe_sin_cos_swapped"),
                     ("bob", "masks", "passed", None), ("bob", "positional_encoding", "passed", None)]


def test_a_failed_write_leaves_the_previous_grading(tmp_path, monkeypatch):
    path = tmp_path / "g.sqlite"
    with Gradebook(path) as book:
        book.record("alice", results(8, 4), content_hash="h1")
        calls = []

        def broken(student_id, test):   # the second test row fails halfway through the transaction
            calls.append(test)
            if len(calls) == 2:
                raise RuntimeError("killed")
            return real(student_id, test)

        real = gradebook._test_row
        monkeypatch.setattr(gradebook, "_test_row", broken)
        with pytest.raises(RuntimeError):
            book.record("alice", results(0, 0), content_hash="h2")
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT score, content_hash FROM submissions").fetchall() == [(12.0, "h1")]
    assert conn.execute("SELECT count(*) FROM tests").fetchone() == (2,)
    conn.close()


def test_stored_gives_what_resume_compares(tmp_path):
    with Gradebook(tmp_path / "g.sqlite") as book:
        assert book.stored("alice") is None
        book.record("alice", results(8, 4), content_hash="h1", options="o", fingerprint="f1",
                    outputs={"results.json": "d1"})
        stored = book.stored("alice")
    assert (stored["content_hash"], stored["options"], stored["fingerprint"], stored["outputs"], stored["score"]) == \
        ("h1", "o", "f1", {"results.json": "d1"}, 12.0)


def test_a_gradebook_of_an_earlier_kit_gets_the_new_columns_empty(tmp_path):
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    schema = gradebook.SCHEMA.replace(",\n    fingerprint TEXT NOT NULL DEFAULT '',\n    outputs TEXT NOT NULL DEFAULT ''", "")
    schema = schema.replace(",\n    signature TEXT", "")
    conn.executescript(schema)
    conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    conn.execute("INSERT INTO submissions (student_id, content_hash, kit_version, score, max_score, graded_at, "
                 "results_json) VALUES ('ann', 'h', '0.0.9', 1, 2, 0, '{}')")
    conn.commit()
    conn.close()
    with Gradebook(path) as book:
        stored = book.stored("ann")
        assert (stored["fingerprint"], stored["outputs"]) == ("", {})   # --resume regrades it: no fingerprint matches
        assert "signature" in {row[1] for row in book.conn.execute("PRAGMA table_info(tests)")}


def test_content_hash_sees_only_what_is_graded(tmp_path):
    (tmp_path / "masks.py").write_text("x = 1\n")
    first = gradebook.content_hash(tmp_path)
    (tmp_path / "notes.txt").write_text("ignored")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "masks.py").write_text("ignored")
    assert gradebook.content_hash(tmp_path) == first
    (tmp_path / "masks.py").write_text("x = 2\n")
    assert gradebook.content_hash(tmp_path) != first
    with pytest.raises(FileNotFoundError, match="does not exist"):
        gradebook.content_hash(tmp_path / "nope")


def test_export_csv_and_merge_through_the_cli(tmp_path):
    with Gradebook(tmp_path / "a.sqlite") as a:
        a.record("alice", results(8, 4), content_hash="h1")
        a.record("carol", results(0, 0), content_hash="h1")
    with Gradebook(tmp_path / "b.sqlite") as b:
        b.record("bob", results(8, 8), content_hash="h2")
        b.record("carol", results(8, 0), content_hash="h3")   # graded later: wins
    runner = CliRunner()
    merged = runner.invoke(main, ["gradebook", "merge", str(tmp_path / "a.sqlite"), str(tmp_path / "b.sqlite"),
                                  "--out", str(tmp_path / "c.sqlite")])
    assert merged.exit_code == 0, merged.output
    assert "merged 3 submission(s) from 2 gradebook(s)" in merged.output
    exported = runner.invoke(main, ["gradebook", "export-csv", str(tmp_path / "c.sqlite")])
    assert exported.exit_code == 0, exported.output
    lines = (tmp_path / "grades.csv").read_text().splitlines()
    header = lines[0].split(",")
    assert header[0] == "student_id" and header[-3:] == ["total", "not_graded", "not_graded_reason"]
    assert len(header) == len(exercises.NAMES) + 4   # student_id, one column per exercise, total, not_graded(_reason)
    rows = {line.split(",")[0]: dict(zip(header, line.split(","))) for line in lines[1:]}
    assert {sid: (r["positional_encoding"], r["masks"], r["embedding"], r["total"]) for sid, r in rows.items()} == {
        "alice": ("8", "4", "", "12"), "bob": ("8", "8", "", "16"), "carol": ("8", "0", "", "8")}
    with Gradebook(tmp_path / "c.sqlite") as c:
        assert c.conn.execute("SELECT count(*) FROM tests").fetchone() == (6,)


def test_a_file_that_is_not_a_gradebook_is_refused(tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_text("not sqlite at all, just text" * 20)
    with pytest.raises(GradebookError, match="is not a gradebook"):
        Gradebook(bad)
    result = CliRunner().invoke(main, ["gradebook", "export-csv", str(bad)])
    assert result.exit_code == 1 and "is not a gradebook" in result.output


def test_another_programs_sqlite_database_is_refused_and_left_untouched(tmp_path):
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE meta (name TEXT)")
    for argv in (["gradebook", "export-csv", str(other), "--out", str(tmp_path / "g.csv")],
                 ["gradebook", "merge", str(other), "--out", str(tmp_path / "m.sqlite")]):
        result = CliRunner().invoke(main, argv)
        assert result.exit_code == 1 and "is not a gradebook" in result.output, result.output
    with sqlite3.connect(other) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"meta"} and not (tmp_path / "g.csv").exists()
    with Gradebook(tmp_path / "empty.sqlite") as book:          # an empty file becomes a gradebook
        assert book.get_meta("schema_version") == "1"


def test_merge_refuses_shards_graded_with_different_seeds(tmp_path):
    for name, seed, student in (("a", "11", "alice"), ("b", "12", "bob")):
        with Gradebook(tmp_path / f"{name}.sqlite") as book:
            book.set_meta("seed", seed)
            book.record(student, results(8, 4), content_hash="h")
    runner = CliRunner()
    args = ["gradebook", "merge", str(tmp_path / "a.sqlite"), str(tmp_path / "b.sqlite"), "--out", str(tmp_path / "c.sqlite")]
    refused = runner.invoke(main, args)
    assert refused.exit_code == 1
    assert "different seeds" in refused.output and "a.sqlite: 11" in refused.output and "b.sqlite: 12" in refused.output
    assert not (tmp_path / "c.sqlite").exists()   # nothing written
    forced = runner.invoke(main, args + ["--allow-mixed-seeds"])
    assert forced.exit_code == 0, forced.output
    with Gradebook(tmp_path / "c.sqlite") as c:
        assert c.students() == ["alice", "bob"] and c.get_meta("seed") is None


def test_merge_keeps_the_shards_common_seed(tmp_path):
    for name, student in (("a", "alice"), ("b", "bob")):
        with Gradebook(tmp_path / f"{name}.sqlite") as book:
            book.set_meta("seed", "7")
            book.record(student, results(8, 4), content_hash="h")
    gradebook.merge([tmp_path / "a.sqlite", tmp_path / "b.sqlite"], tmp_path / "c.sqlite")
    with Gradebook(tmp_path / "c.sqlite") as c:
        assert c.get_meta("seed") == "7"
    with Gradebook(tmp_path / "d.sqlite") as d:
        d.set_meta("seed", "8")
    with pytest.raises(gradebook.GradebookError, match="different seeds"):   # the output's own seed counts
        gradebook.merge([tmp_path / "a.sqlite"], tmp_path / "d.sqlite")
