"""The adversarial suite: submissions that attack the grader, graded in one batch with honest ones.

Every folder of ``tests/attacks/`` is one attack on the ``positional_encoding`` exercise (its
docstring says what it tries). One batch on two workers grades them all together with three
honest submissions (the reference, the untouched stub, a buggy one with sin/cos swapped);
a second, clean batch grades the honest ones alone. Each attack must score no more than the
untouched stub (0), the batch must finish with a result for every submission, the honest
submissions' results must equal the clean run's, no process of a child may survive, and the
kit's files must be unchanged.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from autograder import batch

REPO = Path(__file__).resolve().parent.parent
ATTACKS = REPO / "tests" / "attacks"
EXERCISE = "positional_encoding"
OPTIONS = dict(visibility=("public",), names=[EXERCISE], seed=1234, call_timeout=2.0, time_limit=40.0,
               training=False)
UID_BASE = 100_000_000  # this module's children get uids above it (the workers read it at start)
PROTECTED = [REPO / "solutions" / f"{EXERCISE}.py", REPO / "autograder" / "suites" / "public" / f"test_{EXERCISE}.py"]


def _honest(folder: Path) -> dict[str, Path]:
    reference = (REPO / "solutions" / f"{EXERCISE}.py").read_text()
    buggy = reference.replace("torch.sin(angle)", "SWAP").replace("torch.cos(angle)", "torch.sin(angle)")
    buggy = buggy.replace("SWAP", "torch.cos(angle)")
    assert buggy != reference, "the buggy variant must differ from the reference"
    sources = {"honest_reference": reference, "honest_buggy": buggy,
               "honest_stub": (REPO / "exercises" / f"{EXERCISE}.py").read_text()}
    out = {}
    for sid, text in sources.items():
        (folder / sid).mkdir(parents=True)
        (folder / sid / f"{EXERCISE}.py").write_text(text)
        out[sid] = folder / sid
    return out


def _attacks(folder: Path) -> dict[str, Path]:
    """Copy each attack; ``attack_suffix.py`` is appended to the reference solution (the right
    answer delivered the wrong way)."""
    out = {}
    for attack in sorted(p for p in ATTACKS.iterdir() if p.is_dir()):
        dest = folder / f"attack_{attack.name}"
        shutil.copytree(attack, dest)
        suffix = dest / "attack_suffix.py"
        if suffix.exists():
            reference = (REPO / "solutions" / f"{EXERCISE}.py").read_text()
            (dest / f"{EXERCISE}.py").write_text(reference + "\n\n" + suffix.read_text())
            suffix.unlink()
        out[dest.name] = dest
    return out


def _grade(todo: dict[str, Path], out: Path) -> dict[str, object]:
    got: dict[str, object] = {}
    batch.grade_many(sorted(todo.items()), out, options=OPTIONS, workers=2,
                     on_result=lambda sid, path, result: got.__setitem__(sid, result))
    return got


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
    before = _digest(PROTECTED)
    saved = os.environ.get("TKIT_SANDBOX_UID_BASE")
    os.environ["TKIT_SANDBOX_UID_BASE"] = str(UID_BASE)  # tells this batch's children from others'
    try:
        clean = _grade(honest, base / "clean-out")
        attacked = _grade({**honest, **attacks}, base / "attacked-out")
    finally:
        if saved is None:
            os.environ.pop("TKIT_SANDBOX_UID_BASE")
        else:
            os.environ["TKIT_SANDBOX_UID_BASE"] = saved
    return {"honest": honest, "attacks": attacks, "clean": clean, "attacked": attacked, "before": before,
            "out": base / "attacked-out"}


def test_there_are_at_least_twenty_attacks():
    assert len([p for p in ATTACKS.iterdir() if p.is_dir()]) >= 20


def test_the_batch_grades_every_submission(runs):
    assert set(runs["attacked"]) == set(runs["honest"]) | set(runs["attacks"])
    errors = {sid: r for sid, r in runs["attacked"].items() if isinstance(r, Exception)}
    assert errors == {}
    for sid in runs["attacked"]:
        assert (runs["out"] / sid / "results.json").is_file(), sid


def test_the_honest_submissions_score_as_expected(runs):
    clean = runs["clean"]
    assert clean["honest_stub"]["score"] == 0
    assert clean["honest_reference"]["score"] > clean["honest_buggy"]["score"]
    assert clean["honest_reference"]["score"] > 0


# An honest attempt that registers ``pe`` correctly but computes wrong values passes the structure
# test; the NaN/inf/subclass attacks do the same, so that test is the one they may pass. Every value test fails.
STRUCTURE_ONLY = {"nan_outputs", "inf_outputs", "tensor_subclass"}
STRUCTURE_TEST = "test_pe_is_a_persistent_buffer"


@pytest.mark.parametrize("attack", sorted(p.name for p in ATTACKS.iterdir() if p.is_dir()))
def test_an_attack_scores_no_more_than_an_honest_attempt(runs, attack):
    result = runs["attacked"][f"attack_{attack}"]
    passed = [t for t in result["tests"] if t["status"] == "passed"]
    allowed = {STRUCTURE_TEST} if attack in STRUCTURE_ONLY else set()
    assert {t["extra_data"]["nodeid"].rsplit("::", 1)[-1] for t in passed} <= allowed, \
        [(t["name"], t["status"], t["output"][:200]) for t in result["tests"]]
    honest = runs["clean"]["honest_stub"]["score"] + sum(t["max_score"] for t in passed)
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
    outputs = {sid: "\n".join(t["output"] for t in r["tests"]) for sid, r in attacked.items()}
    assert "kit files writable: []" in outputs["attack_overwrite_kit"]
    assert "no solutions found" in outputs["attack_read_solutions_walk"]
    assert "no solutions found" in outputs["attack_read_solutions_syspath"]
    assert "nothing found in /proc" in outputs["attack_proc_snoop"]
    assert "connected" not in outputs["attack_network_socket"].replace("Network is unreachable", "")
    assert "timed out after 2 s" in outputs["attack_slow_correct"]
    assert "timed out after 2 s" in outputs["attack_infinite_loop"]
    assert "MB of output" in outputs["attack_stdout_flood"]
