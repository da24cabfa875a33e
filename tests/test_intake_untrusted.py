"""Student ids and student-chosen text are data: folder names, CSV cells, Markdown, terminals."""

import csv
import io

import pytest

from autograder import __version__, exercises
from autograder.intake import untrusted
from autograder.records.class_run import ClassRecords
from autograder.records.gradebook import Gradebook
from autograder.reports import render, summary
from autograder.results.model import error_results, Results

ODD_IDS = ["alice", "Alice", "ALICE", "grades.csv", "gradebook.sqlite-journal", "summary.html", "submissions",
           "a<b>", "star*", 'quote"d', "it's", "김민준", "Ålice", "=cmd|' /C calc'!A0", "+1", "-x", "@sum",
           "\tTab", "..", ".", ".hidden", "con", "NUL.txt", "trail.", "a/b", "a\\b", "a%41", "x" * 300,
           "é" * 100, "é" * 99 + "e", "\x1b[31mred", "rtl\u202egnp.exe"]


def test_safe_ids_are_plain_reversible_and_collision_free_even_ignoring_case():
    names = [untrusted.safe_id(sid) for sid in ODD_IDS]
    assert len({n.casefold() for n in names}) == len(ODD_IDS)
    for sid, name in zip(ODD_IDS, names):
        assert set(name) <= set("abcdefghijklmnopqrstuvwxyz0123456789._-%ABCDEF~"), name
        assert len(name) <= untrusted.MAX_NAME and name not in (".", "..") and not name.startswith(".")
        assert name.split(".")[0] not in untrusted.WINDOWS_RESERVED and not name.endswith(".")
        if "~" not in name:
            assert untrusted.real_id(name) == sid
    assert untrusted.safe_id("alice") == "alice" and untrusted.safe_id("Alice") == "%41lice"
    assert untrusted.safe_id("grades.csv") == "grades.csv"   # harmless: it lives under submissions/
    with pytest.raises(ValueError):
        untrusted.safe_id("")


def test_report_links_lead_to_the_folder_of_the_id(tmp_path):
    from urllib.parse import unquote

    for sid in ("Alice", "김민준", "a b#c?d", "grades.csv"):
        href = untrusted.report_href(sid)
        assert all(c not in href for c in " #?") and href.endswith("/feedback.html")
        assert tmp_path / unquote(href) == untrusted.submission_dir(tmp_path, sid) / "feedback.html"


def test_csv_cells_that_a_spreadsheet_would_run_are_neutralised_and_numbers_stay_numbers():
    assert [untrusted.csv_cell(v) for v in ("=1+2", "+cmd", "-2+3", "@SUM(A1)", "\tx", "\rx")] == \
        ["'=1+2", "'+cmd", "'-2+3", "'@SUM(A1)", "'\tx", "'\rx"]
    assert [untrusted.csv_cell(v) for v in (8.0, 2.5, "8", "-1.5", "", "bob", "a=b")] == \
        ["8", "2.5", "8", "-1.5", "", "bob", "a=b"]


def _results(score: float) -> Results:
    test = {"name": "positional_encoding: table", "score": score, "max_score": 8.0, "output": "",
            "status": "passed" if score == 8 else "failed", "visibility": "visible",
            "tags": ["positional_encoding", "public"], "extra_data": {"nodeid": "public/t.py::test_table"}}
    return Results.from_json({"score": score, "execution_time": 1.0, "tests": [test], "output": "",
            "extra_data": {"kit_version": __version__, "seed": 1, "max_score": 8.0,
                           "exercises": {"positional_encoding": {"score": score, "max_score": 8.0}}}})


def test_grades_csv_keeps_the_real_ids_neutralised_and_the_scores_numeric(tmp_path):
    with Gradebook(tmp_path / "g.sqlite") as book:
        for sid in ("=HYPERLINK(\"http://x\")", "@evil", "bob"):
            book.record(sid, _results(8), content_hash="h")
        book.export_csv(tmp_path / "grades.csv")
    rows = list(csv.reader(io.StringIO((tmp_path / "grades.csv").read_text(encoding="utf-8"))))
    header = rows[0]
    got = {row[0]: dict(zip(header, row)) for row in rows[1:]}
    assert set(got) == {"'=HYPERLINK(\"http://x\")", "'@evil", "bob"}
    assert all(row["positional_encoding"] == "8" and row["total"] == "8" for row in got.values())


def test_a_line_break_inside_an_id_cannot_start_a_row_of_grades_csv(tmp_path):
    """A bare CR ends a row for a spreadsheet (and for Python's csv reader): an id holding one is
    quoted, so ``x<CR>=1+2`` stays one cell and never becomes a formula at the start of a row."""
    ids = ["x\r=1+2", "y\n@SUM(A1)", "z\r\n-2+3"]
    with Gradebook(tmp_path / "g.sqlite") as book:
        for sid in ids:
            book.record(sid, _results(8), content_hash="h")
        book.export_csv(tmp_path / "grades.csv")
    text = (tmp_path / "grades.csv").read_bytes().decode("utf-8")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert [row[0] for row in rows] == ["student_id", *ids]
    assert all(row[-3:] == ["8", "", ""] for row in rows[1:])
    empty_exercises = "," * (len(exercises.NAMES) - 2)   # positional_encoding holds the 8
    assert text.endswith(f'"z\r\n-2+3",,8{empty_exercises},8,,\n') and "\r\n" not in text.replace("z\r\n", "")


def test_odd_ids_keep_the_class_files_and_their_own_folders(tmp_path):
    out = tmp_path / "out"
    records = ClassRecords(out, options={"visibility": ("public",), "names": None})
    ids = ["grades.csv", "gradebook.sqlite-journal", "summary.html", "Bob", "bob", "=1+1"]
    for i, sid in enumerate(ids):
        (tmp_path / "in" / str(i)).mkdir(parents=True)
        records.on_result(sid, tmp_path / "in" / str(i), _results(8 if i % 2 else 0))
    csv_path, summary = records.finish()
    records.close()
    assert csv_path.is_file() and (out / "summary.html").is_file() and (out / "gradebook.sqlite").is_file()
    with Gradebook(out / "gradebook.sqlite") as book:
        assert book.students() == sorted(ids)
    for sid in ids:
        folder = untrusted.submission_dir(out, sid)
        assert folder.parent == out / "submissions" and (folder / "feedback.md").is_file()
        assert f"Feedback: {untrusted.markdown(sid)}" in (folder / "feedback.md").read_text(encoding="utf-8")
    assert sorted(p.name for p in out.iterdir()) == ["gradebook.sqlite", "grades.csv", "submissions", "summary.html"]


def test_reports_escape_markup_and_terminal_escapes_from_student_text():
    results = error_results("notes/<img src=x onerror=alert(1)>\x1b[2J**bold**.py: bad zip")
    md = render.render_feedback(results, "md", student="[click](http://evil) \x1b]0;owned\x07<b>", lang="en")
    html = render.render_feedback(results, "html", student="<script>alert(1)</script>\x1b[31m", lang="en")
    assert "\x1b" not in md + html and "\x07" not in md
    assert "[click](" not in md and "\\[click\\]\\(http://evil\\)" in md and "<b>" not in md and "&lt;b&gt;" in md
    # the reason is shown verbatim inside a code fence, where Markdown renders neither markup nor HTML
    assert "```text\nnotes/<img src=x onerror=alert(1)>\\x1b[2J**bold**.py: bad zip\n```" in md
    assert "<script>" not in html and "&lt;script&gt;" in html and "<img src=x" not in html
    page = summary.render_summary({"<i>x</i>\x1b[1m": results}, lang="en")
    assert "<i>x</i>" not in page and "\x1b" not in page and "&lt;i&gt;x&lt;/i&gt;\\x1b[1m" in page


def test_shown_writes_control_characters_as_escapes():
    assert untrusted.shown("a\x1b[2Jb\rc\u202ed\x9b") == "a\\x1b[2Jb\\x0dc\\u202ed\\x9b"
    assert untrusted.shown("line\nnext", one_line=False) == "line\nnext"
    assert untrusted.shown("line\nnext") == "line\\nnext"


def test_control_characters_never_reach_the_reports():
    from autograder.intake.textfiles import clean_text
    from autograder.reports.render import code_fence

    assert clean_text("a\x1b]0;owned\x07b\x1b[2Jc\td\n") == "a\\x1b]0;owned\\x07b\\x1b[2Jc\td\n"
    assert clean_text("x\u202eexe.txt\x9b\r") == "x\\u202eexe.txt\\x9b\\x0d"   # as student ids: untrusted.shown
    assert code_fence("no ticks") == "```" and code_fence("x ````` y") == "``````"
