"""The adversarial suite: submissions that attack the grader, graded in one batch with honest ones.

Every folder of ``tests/attacks/`` is one attack (its docstring says what it tries), mostly on
the ``positional_encoding`` exercise. One batch on two workers grades them all together with
three honest submissions (the reference, the untouched stub, a buggy one with sin/cos swapped),
public and hidden tests of four exercises, and copies of the reference under odd but legal
names (``grades.csv``, ``gradebook.sqlite-journal``, ``<``, ``*``, quotes, Korean, a leading
``=``, a terminal escape), recording them as ``tkit grade`` does (gradebook, feedback,
grades.csv, summary.html); a few more attacks are made here because they cannot be files in the
repository (a sparse 32 GiB module, a zip bomb, a notebook of 16 KB of magics). A second, clean
batch grades the honest ones alone.
Each attack must score no more than the untouched stub (0), except the engine attacks of
:data:`ENGINE_ATTACKS`, which carry correct work that must keep its points; the batch must
finish within :data:`BATCH_BOUND_S` with a result for every submission, each submission
within :data:`SUBMISSION_BOUND_S`, with readable class files; every odd-named copy of the
reference must keep full marks; the honest submissions' results must equal the clean run's,
no process of a child may survive, and the kit's files must be unchanged.

In an attack folder, ``attack_suffix.py`` is appended to the reference ``positional_encoding.py``
and ``suffix_<module>.py`` to the reference ``<module>`` (the right answer delivered the wrong way).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from autograder.intake.untrusted import submission_dir
from autograder.records import gradebook
from autograder.records.class_run import ClassRecords
from autograder.run import batch, grading

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
ATTACKS = REPO / "tests" / "attacks"
EXERCISE = "positional_encoding"
NAMES = [EXERCISE, "feed_forward", "rope", "autoencoder"]  # rope, autoencoder: no import of the others
MEMORY_CAP = 1536 * 1024**2  # below what attacks/shared_memory writes
OPTIONS = dict(visibility=("public", "hidden"), names=NAMES, seed=1234, call_timeout=2.0, time_limit=60.0,
               training=False, memory_limit=MEMORY_CAP)
# One submission: its tests within time_limit (shared out among the exercises), plus at most 3 deaths
# per exercise, each a kill and a fresh child (about a second each on a loaded machine).
SUBMISSION_BOUND_S = OPTIONS["time_limit"] + 3 * len(NAMES) * 2.0
# The whole attacked batch on two workers (about 90 s on an idle 2-core machine): without a deadline
# on writes, attacks/stop_reading alone stalls it for ever; with give-ups for the whole submission,
# attacks/endless_loops costs rope and autoencoder their points.
BATCH_BOUND_S = 600.0
ODD_NAMES = ["grades.csv", "gradebook.sqlite-journal", "summary.html", "submissions", "a<b>&c", "star*",
             "quote\"d'", "김민준", "=SUM(1+1)", "-2+3", "@x", "Honest_Reference", "esc\x1b[2Japed"]
ENGINE_ATTACKS = {"endless_loops", "call_recorder", "grader_error", "stop_reading", "monkeypatch_everything"}
UID_BASE = 100_000_000  # this module's children get uids above it (the workers read it at start)
PROTECTED = [REPO / "solutions" / f"{EXERCISE}.py", REPO / "autograder" / "suites" / "public" / f"test_{EXERCISE}.py"]


def _honest(folder: Path) -> dict[str, Path]:
    reference = (REPO / "solutions" / f"{EXERCISE}.py").read_text()
    buggy = reference.replace("torch.sin(angle)", "SWAP").replace("torch.cos(angle)", "torch.sin(angle)")
    buggy = buggy.replace("SWAP", "torch.cos(angle)")
    assert buggy != reference, "the buggy variant must differ from the reference"
    out = {}
    for sid, source in (("honest_reference", "solutions"), ("honest_buggy", "solutions"), ("honest_stub", "exercises")):
        (folder / sid).mkdir(parents=True)
        for name in NAMES:
            shutil.copyfile(REPO / source / f"{name}.py", folder / sid / f"{name}.py")
        out[sid] = folder / sid
    (folder / "honest_buggy" / f"{EXERCISE}.py").write_text(buggy)
    return out


def _attacks(folder: Path) -> dict[str, Path]:
    """Copy each attack; ``attack_suffix.py`` is appended to the reference solution (the right
    answer delivered the wrong way)."""
    out = {}
    for attack in sorted(p for p in ATTACKS.iterdir() if p.is_dir()):
        dest = folder / f"attack_{attack.name}"
        shutil.copytree(attack, dest)
        suffixes = {f"suffix_{name}.py": f"{name}.py" for name in NAMES}
        suffixes["attack_suffix.py"] = f"{EXERCISE}.py"
        for suffix, module in suffixes.items():
            if (dest / suffix).exists():
                reference = (REPO / "solutions" / module).read_text()
                (dest / module).write_text(reference + "\n\n" + (dest / suffix).read_text())
                (dest / suffix).unlink()
        out[dest.name] = dest
    return out


def _odd_names(folder: Path) -> dict[str, Path]:
    """Copies of the reference solution under odd but legal student ids."""
    out = {}
    for sid in ODD_NAMES:   # the folders carry the names too, as in a class folder
        (folder / sid).mkdir(parents=True)
        for name in NAMES:
            shutil.copyfile(REPO / "solutions" / f"{name}.py", folder / sid / f"{name}.py")
        out[sid] = folder / sid
    return out


def _generated_attacks(folder: Path) -> dict[str, Path]:
    """Attacks on the parent's bounded work that cannot live in the repository as files."""
    import zipfile

    from test_intake_notebooks import write_notebook

    stub = (REPO / "exercises" / f"{EXERCISE}.py").read_text()
    (folder / "sparse").mkdir(parents=True)
    with open(folder / "sparse" / f"{EXERCISE}.py", "wb") as f:
        f.truncate(32 * 2**30)     # 97 s to hash and a 32 GiB copy before the intake limits
    (folder / "magics").mkdir()
    write_notebook(folder / "magics" / f"{EXERCISE}.ipynb",
                   [("code", "\n".join(["%time f()", "x = 1"] * 1000)), ("code", stub)])   # 98 s to clean before
    with zipfile.ZipFile(folder / "bomb.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"{EXERCISE}.py", "#" * (60 * 2**20))
    return {"attack_sparse_32gib": folder / "sparse", "attack_magic_flood": folder / "magics",
            "attack_zip_bomb": folder / "bomb.zip"}


def _grade(todo: dict[str, Path], out: Path) -> tuple[dict[str, object], float]:
    """Grade ``todo`` in one batch on two workers, recorded the way ``tkit grade`` records it;
    returns the results and the batch's wall seconds."""
    got: dict[str, object] = {}
    records = ClassRecords(out, options=OPTIONS)

    def on_result(sid, path, result):
        # the tests read its JSON shape, in the instructor's form (a run's whole time is withheld from students)
        got[sid] = result if isinstance(result, Exception) else result.to_gradescope(instructor=True)
        records.on_result(sid, path, result)

    t0 = time.monotonic()
    try:
        records.plan(sorted(todo.items()), resume=False)
        batch.grade_many(sorted(todo.items()), out, options=OPTIONS, workers=2, on_result=on_result)
        records.finish()
    finally:
        records.close()
    return got, time.monotonic() - t0


def _total_time(results: dict) -> float:
    """A submission's whole grading time (the visible ``execution_time`` counts its public tests)."""
    return results["extra_data"].get("withheld", {}).get("execution_time", results["execution_time"])


def _fingerprint(results: dict) -> list:
    return [(t["name"], t["status"], t["score"], t["output"]) for t in results["tests"]]


def _child_processes() -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.stat(f"/proc/{entry}").st_uid >= UID_BASE:
                pids.append(int(entry))
        except OSError:
            continue
    return pids


def _digest(paths: list[Path]) -> list[str]:
    return [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("adversarial")
    honest = _honest(base / "class")
    attacks = _attacks(base / "class")
    generated = _generated_attacks(base / "generated")
    odd = _odd_names(base / "odd")
    before = _digest(PROTECTED)
    saved = os.environ.get("TKIT_SANDBOX_UID_BASE")
    os.environ["TKIT_SANDBOX_UID_BASE"] = str(UID_BASE)  # tells this batch's children from others'
    try:
        clean, _ = _grade(honest, base / "clean-out")
        attacked, seconds = _grade({**honest, **attacks, **generated, **odd}, base / "attacked-out")
    finally:
        if saved is None:
            os.environ.pop("TKIT_SANDBOX_UID_BASE")
        else:
            os.environ["TKIT_SANDBOX_UID_BASE"] = saved
    return {"honest": honest, "attacks": attacks, "clean": clean, "attacked": attacked, "before": before,
            "out": base / "attacked-out", "generated": generated, "odd": odd, "seconds": seconds}


def test_there_are_at_least_twenty_attacks():
    assert len([p for p in ATTACKS.iterdir() if p.is_dir()]) >= 20


def test_the_batch_grades_every_submission_within_its_bound(runs):
    expected = set(runs["honest"]) | set(runs["attacks"]) | set(runs["generated"]) | set(runs["odd"])
    assert set(runs["attacked"]) == expected
    errors = {sid: str(r) for sid, r in runs["attacked"].items() if isinstance(r, Exception)}
    assert set(errors) == {"attack_sparse_32gib", "attack_zip_bomb"}, errors   # refused at intake
    for sid in set(runs["attacked"]) - set(errors):
        assert (submission_dir(runs["out"], sid) / "results.json").is_file(), sid
    assert runs["seconds"] < BATCH_BOUND_S
    slow = {sid: _total_time(r) for sid, r in runs["attacked"].items()
            if sid not in errors and _total_time(r) > SUBMISSION_BOUND_S}
    assert slow == {}


def test_the_class_files_are_written_with_every_real_id(runs):
    out = runs["out"]
    names = {p.name for p in out.iterdir()}   # a grader-error log only when the kit failed somewhere
    assert {"gradebook.sqlite", "grades.csv", "submissions", "summary.html", "instructor"} <= names
    assert names <= {batch.ERROR_LOG_NAME, "gradebook.sqlite", "grades.csv", "submissions", "summary.html", "instructor"}
    with gradebook.Gradebook(out / "gradebook.sqlite") as book:
        assert book.students() == sorted(runs["attacked"])
    import csv

    with open(out / "grades.csv", encoding="utf-8", newline="") as f:
        ids = [row["student_id"] for row in csv.DictReader(f)]
    assert sorted(i[1:] if i.startswith("'") else i for i in ids) == sorted(runs["attacked"])
    assert "'=SUM(1+1)" in ids and "'-2+3" in ids and "'@x" in ids
    summary = (out / "summary.html").read_text(encoding="utf-8")
    assert "\x1b" not in summary and "a<b>" not in summary


def test_odd_names_keep_full_marks(runs):
    full = runs["clean"]["honest_reference"]["extra_data"]["max_score"]
    assert runs["clean"]["honest_reference"]["score"] == full
    assert {sid: runs["attacked"][sid]["score"] for sid in runs["odd"]} == {sid: full for sid in runs["odd"]}


def test_oversize_material_is_refused_for_that_student_only(runs):
    attacked = runs["attacked"]
    assert "512 KB" in str(attacked["attack_sparse_32gib"])
    assert "times its packed size" in str(attacked["attack_zip_bomb"])
    flood = attacked["attack_magic_flood"]
    assert flood["score"] == 0 and len(flood["extra_data"]["warnings"]) == 1000


def test_the_honest_submissions_score_as_expected(runs):
    clean = runs["clean"]
    assert clean["honest_stub"]["score"] == 0
    assert clean["honest_reference"]["score"] > clean["honest_buggy"]["score"]
    assert clean["honest_reference"]["score"] > 0


# An honest attempt that registers ``pe`` correctly but computes wrong values passes the structure
# test; the NaN/inf/subclass attacks do the same, so that test is the one they may earn. Every value test fails.
# The payment gate (autograder/run/payment.py) pays a names test only as far as its exercise's value
# tests pass: such a test keeps "passed" at 0 points (attacks/hidden_leak registers ``pe`` correctly
# too), so what counts here is a test that earned points, not its status.
STRUCTURE_ONLY = {"nan_outputs", "inf_outputs", "tensor_subclass"}
STRUCTURE_TEST = "test_pe_is_a_persistent_buffer"


@pytest.mark.parametrize("attack", sorted(p.name for p in ATTACKS.iterdir()
                                           if p.is_dir() and p.name not in ENGINE_ATTACKS))
def test_an_attack_scores_no_more_than_an_honest_attempt(runs, attack):
    result = runs["attacked"][f"attack_{attack}"]
    passed = [t for t in result["tests"] if t["status"] == "passed"]
    earned = [t for t in passed if t["score"] > 0]
    allowed = {STRUCTURE_TEST} if attack in STRUCTURE_ONLY else set()
    assert {t["extra_data"]["nodeid"].rsplit("::", 1)[-1] for t in earned} <= allowed, \
        [(t["name"], t["status"], t["score"], t["output"][:200]) for t in result["tests"]]
    honest = runs["clean"]["honest_stub"]["score"] + sum(t["max_score"] for t in earned)
    assert result["score"] <= honest
    if not allowed:
        assert result["score"] <= runs["clean"]["honest_stub"]["score"] == 0
    assert result["extra_data"]["max_score"] == runs["clean"]["honest_stub"]["extra_data"]["max_score"]


def test_the_honest_results_equal_a_clean_run(runs):
    for sid in runs["honest"]:
        assert _fingerprint(runs["attacked"][sid]) == _fingerprint(runs["clean"][sid]), sid
        assert runs["attacked"][sid]["score"] == runs["clean"][sid]["score"]


def test_no_child_process_survives_the_batch(runs):
    assert _child_processes() == []


def test_the_kit_files_are_unchanged(runs):
    assert _digest(PROTECTED) == runs["before"]


def test_the_attacks_met_the_sandbox(runs):
    """The failures come from the sandbox, not from luck: the children ran confined, and the
    specific attacks were stopped the way the sandbox stops them."""
    attacked = runs["attacked"]
    box = attacked["honest_reference"]["extra_data"]["child"]["sandbox"]
    assert box["namespaces"] and box["filesystem"] == "private root" and box["rlimits"]
    outputs = {sid: "\n".join(t["output"] for t in r["tests"]) for sid, r in attacked.items()
               if not isinstance(r, Exception)}
    assert "kit files writable: []" in outputs["attack_overwrite_kit"]
    assert "no solutions found" in outputs["attack_read_solutions_walk"]
    assert "no solutions found" in outputs["attack_read_solutions_syspath"]
    assert "nothing found in /proc" in outputs["attack_proc_snoop"]
    assert "connected" not in outputs["attack_network_socket"].replace("Network is unreachable", "")
    assert "timed out after 2 s" in outputs["attack_slow_correct"]
    assert "timed out after 2 s" in outputs["attack_infinite_loop"]
    assert "MB of output" in outputs["attack_stdout_flood"]
    assert "Cannot allocate memory" in outputs["attack_shared_memory"]


def _exercise_scores(results: dict) -> dict[str, float]:
    return {name: entry["score"] for name, entry in results["extra_data"]["exercises"].items()}


def test_a_child_that_stops_reading_is_killed_and_charged_to_its_test(runs):
    """attacks/stop_reading: the grader's write of a batch of images meets a full pipe; the write's
    deadline kills the child, and the test whose request it was fails with a timeout."""
    result = runs["attacked"]["attack_stop_reading"]
    stalled = [t for t in result["tests"] if "stopped reading its requests" in t["output"]]
    assert stalled and all(t["tags"][0] == "autoencoder" and t["score"] == 0 for t in stalled)
    assert all(t["extra_data"].get("failure") in ("timeout", "gave_up") for t in stalled)


def test_dying_children_cost_only_their_own_exercises(runs):
    """attacks/endless_loops: positional_encoding and feed_forward loop for ever; rope and
    autoencoder (correct, importing neither) keep every point, within the submission's bound."""
    result = runs["attacked"]["attack_endless_loops"]
    reference = _exercise_scores(runs["clean"]["honest_reference"])
    scores = _exercise_scores(result)
    assert scores["rope"] == reference["rope"] > 0 and scores["autoencoder"] == reference["autoencoder"] > 0
    assert scores[EXERCISE] == scores["feed_forward"] == 0
    failures = {t["tags"][0]: set() for t in result["tests"]}
    for t in result["tests"]:
        failures[t["tags"][0]].add(t["extra_data"].get("failure"))
    assert "gave_up" in failures[EXERCISE] and "gave_up" in failures["feed_forward"]
    assert _total_time(result) <= SUBMISSION_BOUND_S


def test_monkeypatching_costs_only_its_own_exercise(runs):
    """attacks/monkeypatch_everything: a correct positional encoding that patches torch's C-level
    tables, Tensor, torch.ops, the import system, copyreg, operator and functools at import; the
    exercises graded after it in the same child keep every point."""
    reference = _exercise_scores(runs["clean"]["honest_reference"])
    scores = _exercise_scores(runs["attacked"]["attack_monkeypatch_everything"])
    assert all(scores[name] == reference[name] > 0 for name in NAMES if name != EXERCISE), scores


def _public(results: dict) -> list:
    return [(t["name"], t["status"], t["score"], t["output"]) for t in results["tests"] if t["tags"][1] == "public"]


def test_what_a_student_sees_does_not_depend_on_the_hidden_tests(runs, tmp_path):
    """attacks/call_recorder prints every call it recorded under its failing rope tests: the public
    results are the same whether the hidden tests ran in the same grading or not."""
    attacked = runs["attacked"]["attack_call_recorder"]
    assert any("recorded calls:" in out for _, _, _, out in _public(attacked))  # empty: rope imports its own
    public_only = grading.grade_submission(runs["attacks"]["attack_call_recorder"],
                                           **{**OPTIONS, "visibility": ("public",)}).to_gradescope()
    assert _public(attacked) == _public(public_only)


def test_a_value_that_breaks_the_kits_own_code_is_the_students_failure(runs):
    """attacks/grader_error returns a value that makes the kit's own test code raise a TypeError: the
    same test passes with the reference in its place, so the failure is the student's (a failed
    test saying what the test could not use), never "not graded", and no traceback or suite line
    reaches the student. (A real grader error: tests/test_student_failures.py.)"""
    result = runs["attacked"]["attack_grader_error"]
    assert not result["extra_data"].get("not_graded")
    failed = [t for t in result["tests"] if t["extra_data"].get("failure") == "bad_return"]
    assert failed and all(t["score"] == 0 and "could not use what your code returned" in t["output"] for t in failed)
    for sid in runs["attacked"]:
        if isinstance(runs["attacked"][sid], Exception):
            continue
        text = (submission_dir(runs["out"], sid) / "results.json").read_text()
        assert "Traceback" not in text and "internal_error" not in text, sid
        assert not any(f"test_{name}.py\\\", line" in text for name in NAMES), sid
    assert json.loads((submission_dir(runs["out"], "attack_grader_error") / "results.json").read_text())["score"] == result["score"]
