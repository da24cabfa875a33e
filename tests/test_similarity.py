"""The class similarity report: copydetect's winnowing on the graded code, stubs as boilerplate."""

import csv
import io
import re
import textwrap
import zipfile

import nbformat
import pytest
from click.testing import CliRunner
from nbformat import v4

import cli
from autograder.intake import limits
from autograder.similarity import matcher, report

from conftest import REPO_ROOT

STUBS = REPO_ROOT / "exercises"


@pytest.fixture(autouse=True)
def flag_small_classes(monkeypatch):
    """These tests prove the flagging rules on classes of two or three students; a class that
    small is ranked, not flagged, in real use (``matcher.SMALL_CLASS``: tests/test_similarity_small_class.py)."""
    monkeypatch.setattr(matcher, "SMALL_CLASS", 0)

ATTENTION = """
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = torch.nan_to_num(weights, nan=0.0)
    if dropout_p > 0.0:
        weights = torch.nn.functional.dropout(weights, p=dropout_p)
    return torch.matmul(weights, value), weights
"""
MASKS_A = {
    "make_padding_mask": "return (token_ids != pad_id).unsqueeze(1).unsqueeze(2)",
    "make_causal_mask": "upper = torch.triu(torch.ones(size, size, dtype=torch.bool, device=device), diagonal=1)\n"
                        "return ~upper",
}
MASKS_B = {
    "make_padding_mask": "keep = token_ids.ne(pad_id)\nreturn keep[:, None, None, :]",
    "make_causal_mask": "rows = torch.arange(size, device=device)[:, None]\n"
                        "cols = torch.arange(size, device=device)[None, :]\nreturn cols <= rows",
}
PE_A = """
    pe = torch.zeros(max_len, d_model)
    position = torch.arange(0, max_len).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe
"""
PE_B = """
    if d_model % 2:
        raise ValueError("d_model must be even")
    freqs = 1.0 / (10000 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model))
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    div_term = freqs
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe.float()
"""


def filled(exercise: str, bodies: dict[str, str]) -> str:
    """The stub of ``exercise`` with the TODO of each function in ``bodies`` replaced by its body,
    the way a student edits it."""
    code = (STUBS / f"{exercise}.py").read_text(encoding="utf-8")
    for func, body in bodies.items():
        line = re.search(rf"^( +)raise NotImplementedError\(\"{exercise}: {func} .*$", code, re.M)
        assert line, (exercise, func)
        indent = line.group(1)
        code = code.replace(line.group(0), textwrap.indent(textwrap.dedent(body).strip(), indent))
    return code


def rename(code: str, names: dict[str, str]) -> str:
    for old, new in names.items():
        code = re.sub(rf"\b{old}\b", new, code)
    return code


def student(folder, sid: str, modules: dict[str, str]):
    sub = folder / sid
    sub.mkdir(parents=True)
    for name, code in modules.items():
        (sub / f"{name}.py").write_text(code, encoding="utf-8")
    return sid, sub


def student_pairs(result):
    return {(p.student_a, p.student_b, p.exercise) for p in result.pairs if p.flagged and p.student_b}


def test_a_copied_exercise_with_renamed_variables_is_flagged_on_that_exercise_only(tmp_path):
    attention_a = filled("attention", {"scaled_dot_product_attention": ATTENTION})
    attention_b = rename(attention_a, {"scores": "logits", "weights": "probs", "d_k": "width"})
    attention_b = attention_b.replace("dim=-1)", "dim=-1)  # softmax over the keys")
    assert attention_b != attention_a
    entries = [student(tmp_path, "ann", {"attention": attention_a, "masks": filled("masks", MASKS_A)}),
               student(tmp_path, "bob", {"attention": attention_b, "masks": filled("masks", MASKS_B)})]
    result = matcher.compare_class(entries)
    assert result.complete and not result.refused
    assert student_pairs(result) == {("ann", "bob", "attention")}
    copied = next(p for p in result.pairs if p.student_b == "bob" and p.exercise == "attention")
    assert copied.similarity == 1.0 and copied.share_a == copied.share_b == 1.0
    masks = [p for p in result.pairs if p.student_b == "bob" and p.exercise == "masks"]
    assert all(p.similarity < matcher.FLAG_THRESHOLD for p in masks)


@pytest.mark.slow
def test_exercises_compared_in_worker_processes_give_the_same_result(tmp_path):
    attention = filled("attention", {"scaled_dot_product_attention": ATTENTION})
    entries = [student(tmp_path, "ann", {"attention": attention, "masks": filled("masks", MASKS_A)}),
               student(tmp_path, "bob", {"attention": rename(attention, {"scores": "s"}),
                                         "masks": filled("masks", MASKS_B)})]
    alone = matcher.compare_class(entries, workers=1)
    shared = matcher.compare_class(entries, workers=2)
    assert shared.complete and len(alone.pairs) >= 3
    assert [(p.student_a, p.student_b, p.exercise, p.similarity, p.matched) for p in shared.pairs] == [
        (p.student_a, p.student_b, p.exercise, p.similarity, p.matched) for p in alone.pairs]
    assert [p.slices[0].tolist() for p in shared.pairs if p.flagged] == [
        p.slices[0].tolist() for p in alone.pairs if p.flagged]


def test_the_same_pe_formula_written_independently_is_not_flagged(tmp_path):
    entries = [student(tmp_path, sid, {"positional_encoding": filled("positional_encoding", {"sinusoidal_table": body})})
               for sid, body in (("ann", PE_A), ("bob", PE_B))]
    result = matcher.compare_class(entries)
    pair = [p for p in result.pairs if p.student_b == "bob"]
    assert pair, "the two PE lines they share are found"
    assert 0.05 <= pair[0].similarity < matcher.FLAG_THRESHOLD and not pair[0].flagged
    assert not [p for p in result.pairs if p.flagged]


def test_the_stubs_alone_score_zero_against_each_other_and_the_reference(tmp_path):
    stubs = {path.stem: path.read_text(encoding="utf-8") for path in STUBS.glob("*.py")}
    entries = [student(tmp_path, "ann", stubs), student(tmp_path, "bob", stubs)]
    result = matcher.compare_class(entries)
    assert result.students == ["ann", "bob"] and result.pairs == []
    fp = matcher.fingerprint(stubs["masks"], None)
    boilerplate = matcher.exercise_fingerprints("masks", {"x": stubs["masks"]}, stubs["masks"], 1)
    assert fp.hashes and not boilerplate["x"].hashes and boilerplate["x"].token_coverage == 0


def test_a_leaked_reference_solution_is_reported_with_an_empty_student_b(tmp_path):
    reference = (REPO_ROOT / "solutions" / "masks.py").read_text(encoding="utf-8")
    entries = [student(tmp_path, "ann", {"masks": rename(reference, {"token_ids": "toks", "scores": "s"})}),
               student(tmp_path, "bob", {"masks": filled("masks", MASKS_B)})]
    result = matcher.compare_class(entries)
    leaked = [p for p in result.pairs if p.flagged and p.student_b is None]
    assert [(p.student_a, p.exercise, p.similarity) for p in leaked] == [("ann", "masks", 1.0)]
    rows = list(csv.reader(io.StringIO(report.csv_text(result))))
    assert rows[0] == ["student_a", "student_b", "exercise", "similarity"]
    assert ["ann", "", "masks", "1.0000"] in rows
    assert all(float(row[3]) >= matcher.CSV_MIN for row in rows[1:])


def test_a_notebook_and_a_zip_are_compared_on_their_graded_code(tmp_path):
    code = filled("masks", MASKS_A)
    head, tail = code.split("def make_causal_mask", 1)
    nb_dir = tmp_path / "ann"
    nb_dir.mkdir()
    nb = v4.new_notebook(cells=[v4.new_markdown_cell("# My masks\n" + MASKS_B["make_causal_mask"]),
                                v4.new_code_cell(head), v4.new_code_cell("%timeit 1 + 1"),
                                v4.new_code_cell("def make_causal_mask" + tail)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(nb_dir / "masks.ipynb"))
    with zipfile.ZipFile(tmp_path / "bob.zip", "w") as zf:
        zf.writestr("bob/masks.py", rename(code, {"upper": "above"}))
        zf.writestr("bob/notes.txt", "not code")
    result = matcher.compare_class([("ann", nb_dir), ("bob", tmp_path / "bob.zip")], reference=False)
    assert not result.refused
    assert "%timeit" not in result.sources["ann"]["masks"]
    # the magic became ``pass`` in the graded module, the markdown cell is no code: all else matches
    [pair] = result.pairs
    assert (pair.student_a, pair.student_b, pair.exercise) == ("ann", "bob", "masks")
    assert pair.flagged and pair.similarity > 0.9


def test_an_oversize_or_broken_submission_is_refused_for_that_student_only(tmp_path):
    masks = filled("masks", MASKS_A)
    big = masks + "\n" + "x = 1\n" * (limits.MODULE_MAX_BYTES // 6 + 10)
    (tmp_path / "mal.zip").write_bytes(b"PK\x03\x04 not a zip")
    entries = [student(tmp_path, "ann", {"masks": masks}), student(tmp_path, "bob", {"masks": masks}),
               student(tmp_path, "eve", {"masks": big}), ("mal", tmp_path / "mal.zip")]
    result = matcher.compare_class(entries, reference=False)
    assert set(result.refused) == {"eve", "mal"} and "SubmissionTooLarge" in result.refused["eve"]
    assert "SubmissionFormatError" in result.refused["mal"]
    assert result.students == ["ann", "bob"]
    assert student_pairs(result) == {("ann", "bob", "masks")}


def test_the_run_stops_at_its_time_limit_and_says_so(tmp_path):
    entries = [student(tmp_path, "ann", {"masks": filled("masks", MASKS_A)})]
    result = matcher.compare_class(entries, time_limit=0.0)
    assert not result.complete and result.pairs == []
    html = report.render_html(result)
    assert "Incomplete" in html


@pytest.mark.parametrize("student_id, cell", [("=1+2", "'=1+2"), ("+cmd", "'+cmd"), ("-2+3", "'-2+3"),
                                              ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"), ("\rx", "'\rx"),
                                              ("-1", "-1"), ("ann-1", "ann-1"), ("x\r=1+2", "x\r=1+2")])
def test_csv_cells_follow_the_owasp_rule_of_grades_csv(student_id, cell):
    """The same neutraliser as grades.csv (untrusted.csv_cell): a formula gets a leading quote,
    a number literal stays what a spreadsheet reads anyway, a line break stays inside its cell."""
    result = matcher.Result(pairs=[matcher.Pair(student_id, None, "masks", 0.5, 0.5, 0.4, 90)])
    rows = list(csv.reader(io.StringIO(report.csv_text(result), newline="")))
    assert rows[1:] == [[cell, "", "masks", "0.5000"]]


def test_hostile_student_ids_are_escaped_in_the_html_and_neutralised_in_the_csv(tmp_path):
    masks = filled("masks", MASKS_A) + '\nNOTE = "</pre><script>alert(1)</script>"\n'
    evil_html, evil_csv = "<img src=x onerror=alert(1)>", "=cmd|' calc'!A0"
    [student(tmp_path, evil_html, {"masks": masks}), student(tmp_path, evil_csv, {"masks": masks})]
    out = tmp_path / "out"
    run = CliRunner().invoke(cli.main, ["similarity", "--class-dir", str(tmp_path), "--out", str(out),
                                        "--exercise", "masks"])
    assert run.exit_code == 0, run.output
    html = (out / "similarity.html").read_text(encoding="utf-8")
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<mark>" in html and "<script" not in html and "&lt;/pre&gt;&lt;script&gt;alert(1)" in html
    assert "http" not in html.lower()  # self-contained: nothing fetched from the network
    rows = list(csv.reader(io.StringIO((out / "similarity.csv").read_text(encoding="utf-8"))))
    assert rows[0] == list(report.CSV_COLUMNS)
    assert ["'" + evil_csv, evil_html, "masks", "1.0000"] in rows or [evil_html, "'" + evil_csv, "masks", "1.0000"] in rows
    assert not any(cell.startswith("=") for row in rows for cell in row)


def test_terminal_lines_show_student_chosen_names_escaped(tmp_path):
    """tkit similarity lists duplicate ids and refused submissions like tkit grade: a terminal
    escape in a folder or zip name is shown as text, never sent to the terminal."""
    evil = "ev\x1b[31mil"
    student(tmp_path / "dup", evil, {"masks": filled("masks", MASKS_A)})
    (tmp_path / "dup" / f"{evil}.zip").write_bytes(b"PK")
    run = CliRunner().invoke(cli.main, ["similarity", "--class-dir", str(tmp_path / "dup"), "--out",
                                        str(tmp_path / "out"), "--exercise", "masks"])
    assert run.exit_code == 2 and "same student id: ev\\x1b[31mil" in run.output and "\x1b" not in run.output
    (tmp_path / "dup" / f"{evil}.zip").rename(tmp_path / "dup" / "\x1b]0;pwned\x07.zip")
    run = CliRunner().invoke(cli.main, ["similarity", "--class-dir", str(tmp_path / "dup"), "--out",
                                        str(tmp_path / "out"), "--exercise", "masks", "--no-reference"])
    assert run.exit_code == 0, run.output
    assert "similarity: \\x1b]0;pwned\\x07 not compared:" in run.output
    assert "\x1b" not in run.output and "\x07" not in run.output


def test_side_by_side_pieces_keep_context_around_the_matching_regions():
    import numpy as np

    code = "".join(f"line {i}\n" for i in range(20))
    start = code.index("line 10")
    pieces = report.segments(code, np.array([[start], [start + len("line 10\nline 11")]]), context=2)
    assert [p["gap"] for p in pieces] == [8, 0, 0, 0, 7]
    assert pieces[1:4] == [{"text": "line 8\nline 9\n", "match": False, "gap": 0},
                           {"text": "line 10\nline 11", "match": True, "gap": 0},
                           {"text": "\nline 12\n", "match": False, "gap": 0}]
    assert report.segments("abc", None) == [{"text": "abc", "match": False, "gap": 0}]


def test_tkit_grade_similarity_writes_the_report_beside_the_grades(tmp_path, monkeypatch):
    from autograder import sandbox
    from autograder.run import batch

    masks = filled("masks", MASKS_A)
    student(tmp_path / "class", "ann", {"masks": masks})
    student(tmp_path / "class", "bob", {"masks": masks})
    monkeypatch.setattr(batch, "grade_many", lambda todo, out_dir, **kw: None)  # grading is tested elsewhere
    monkeypatch.setattr(sandbox, "protection_warning", lambda: None)
    out = tmp_path / "out"
    run = CliRunner().invoke(cli.main, ["grade", "--class-dir", str(tmp_path / "class"), "--out", str(out),
                                        "--exercise", "masks", "--similarity", "--seed", "1"])
    # grading is stubbed out, so nothing was recorded: both count as not graded, and the run says so
    assert run.exit_code == 1 and "2 of 2 submission(s) could not be graded: ann, bob" in run.output, run.output
    rows = list(csv.reader(io.StringIO((out / "similarity.csv").read_text(encoding="utf-8"))))
    assert ["ann", "bob", "masks", "1.0000"] in rows
    assert (out / "similarity.html").is_file() and (out / "grades.csv").is_file()
