"""Behaviour evidence on a really graded class: ``tkit grade --similarity`` on copies of
one unnamed attention bug, rewritten three ways (the issue's rewrite classes), beside three
students who made a catalog mistake independently and correct students. The copies are
flagged by their shared wrong outputs; the catalog mistake and the correct students are not;
no signature reaches results.json, the feedback or the Gradescope results."""

import csv
import io
import json
import shutil
import sqlite3

import pytest
from click.testing import CliRunner

import cli
from autograder.mistakes import catalog

from conftest import REPO_ROOT

pytestmark = pytest.mark.slow   # a class batch graded (about 20-30 s)

SOLUTIONS = REPO_ROOT / "solutions"
ALICE = REPO_ROOT / "examples" / "sample_class" / "alice"
ORIGINAL = """    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    weights = masked_softmax(scores, mask, dim=-1)
"""
BUGGY = """    scores = torch.matmul(query, key.transpose(-2, -1)) / (math.sqrt(d_k) + 1.0)
    weights = masked_softmax(scores, mask, dim=-1)
"""
REWRITES = {
    # equivalent API calls and keyword arguments
    "copy_api": """    scores = torch.einsum("...qd,...kd->...qk", query, key).div(1.0 + d_k ** 0.5)
    weights = masked_softmax(scores=scores, mask=mask, dim=-1)
""",
    # one operation per statement, a dead statement between statements
    "copy_3addr": """    kt = key.transpose(-2, -1)
    unused = len(kt.shape)
    raw = torch.matmul(query, kt)
    root = math.sqrt(d_k)
    unused = root * 2
    denom = root + 1.0
    unused = denom - 1
    scores = raw / denom
    weights = masked_softmax(scores, mask, dim=-1)
""",
    # the helper inlined, tuple unpacking
    "copy_inline": """    (n_k, d) = key.shape[-2:]
    scores = query @ key.transpose(-2, -1) / (1.0 + math.sqrt(d))
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
""",
}
COPIES = ["copy_orig", *REWRITES]
NAMED = ["nos_1", "nos_2", "nos_3"]        # attention_no_scaling, made independently
CORRECT = ["ref_1", "ref_2", "alice"]
SEED = 20240901


def write_student(root, sid, attention: str, masks_from=SOLUTIONS):
    folder = root / sid
    folder.mkdir(parents=True)
    shutil.copy(masks_from / "masks.py", folder / "masks.py")
    (folder / "attention.py").write_text(attention, encoding="utf-8")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from autograder import sandbox

    root = tmp_path_factory.mktemp("behaviour")
    reference = (SOLUTIONS / "attention.py").read_text(encoding="utf-8")
    assert ORIGINAL in reference
    write_student(root / "class", "copy_orig", reference.replace(ORIGINAL, BUGGY))
    for sid, body in REWRITES.items():
        write_student(root / "class", sid, reference.replace(ORIGINAL, body))
    no_scaling = catalog.by_id("attention_no_scaling").source()
    for sid in NAMED:
        write_student(root / "class", sid, no_scaling)
    for sid in ("ref_1", "ref_2"):
        write_student(root / "class", sid, reference)
    write_student(root / "class", "alice", (ALICE / "attention.py").read_text(encoding="utf-8"), masks_from=ALICE)
    out = root / "out"
    mp = pytest.MonkeyPatch()
    mp.setattr(sandbox, "protection_warning", lambda: None)
    try:
        run = CliRunner().invoke(cli.main, ["grade", "--class-dir", str(root / "class"), "--out", str(out),
                                            "--exercise", "masks", "--exercise", "attention", "--seed", str(SEED),
                                            "--no-pictures", "--workers", "1", "--similarity"])
    finally:
        mp.undo()
    assert run.exit_code == 0, run.output
    return root, out


def behaviour_rows(out):
    return list(csv.DictReader(io.StringIO((out / "similarity-behaviour.csv").read_text(encoding="utf-8"))))


def test_copies_rewritten_three_ways_are_flagged_by_their_shared_wrong_outputs(graded):
    _, out = graded
    rows = behaviour_rows(out)
    flagged = {(r["student_a"], r["student_b"]) for r in rows if r["exercise"] == "attention"}
    expected = {(a, b) for i, a in enumerate(sorted(COPIES)) for b in sorted(COPIES)[i + 1:]}
    assert flagged == expected, rows
    for r in rows:
        assert float(r["rarity"]) >= 5.0 and "[" not in r["shared_wrong_tests"]   # unnamed
    html = (out / "similarity.html").read_text(encoding="utf-8")
    assert "Shared wrong behaviour" in html and "copy_3addr" in html


def test_the_common_catalog_mistake_and_correct_students_are_not_flagged(graded):
    _, out = graded
    students = {s for r in behaviour_rows(out) for s in (r["student_a"], r["student_b"])}
    assert not students & set(NAMED) and not students & set(CORRECT)
    with sqlite3.connect(out / "gradebook.sqlite") as conn:
        named = conn.execute("SELECT COUNT(*) FROM tests WHERE student_id LIKE 'nos_%' AND signature IS NOT NULL "
                             "AND mistake = 'attention_no_scaling'").fetchone()[0]
        correct = conn.execute("SELECT COUNT(*) FROM tests WHERE student_id IN ('ref_1', 'ref_2', 'alice') "
                               "AND signature IS NOT NULL").fetchone()[0]
    assert named >= 3 * 2, "the named mistake's wrong outputs are recorded (and down-weighted)"
    assert correct == 0


def test_no_signature_reaches_what_students_see(graded, tmp_path):
    root, out = graded
    with sqlite3.connect(out / "gradebook.sqlite") as conn:
        signatures = {row[0] for row in conn.execute("SELECT signature FROM tests WHERE signature IS NOT NULL")}
        stored = [row[0] for row in conn.execute("SELECT results_json FROM submissions")]
    assert len(signatures) >= 4
    student_files = [p for p in (out / "submissions").rglob("*") if p.is_file()]
    assert {p.name for p in student_files} >= {"results.json", "feedback.html", "feedback.md"}
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in student_files] + stored
    for sig in signatures:
        bare = sig.split(":")[-1]
        assert not any(bare in text for text in texts), sig
    assert not any('"signature"' in text for text in texts)
    # the Gradescope autograder's results.json
    from autograder.exports import gradescope

    (tmp_path / "submission").mkdir()
    for name in ("masks.py", "attention.py"):
        shutil.copy(root / "class" / "copy_orig" / name, tmp_path / "submission" / name)
    data = gradescope.run_autograder(tmp_path, ["masks", "attention"], seed=SEED)
    text = json.dumps(data)
    assert data["score"] < data["extra_data"]["max_score"]
    assert '"signature"' not in text and not any(sig.split(":")[-1] in text for sig in signatures)
