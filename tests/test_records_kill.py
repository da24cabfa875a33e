"""A real ``tkit grade`` killed at random moments (Ctrl-C to its process group, ``kill -9`` to its
main process), 20 times, then ``--resume``: every student's outputs are complete and identical to
an uninterrupted run's, timestamps aside.

A class of small hand-ins graded with ``--exercise masks --public-only`` (a reference, a stub, a
mistake, a near-miss file name, a nested folder, a composed/decomposed Korean id, an unreadable
zip) plus one full hand-in (the sample class's alice), so that a run takes seconds and a kill
lands anywhere: starting up, grading, writing a student's files or the gradebook, writing the
class files. A third of the runs grade everything again (no ``--resume``), so kills also land
while a finished student's files are being overwritten. Measured: about 4 minutes on 2 shared
cores (3 min 21 s measured; CHANGELOG).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
KILLS = 20
# what differs between two uninterrupted runs: durations, and the sandbox's per-run report (a
# random uid, the memory torch mapped at start)
RUN_SPECIFIC = {"execution_time", "duration", "child"}


def make_class(folder: Path) -> None:
    sample = REPO / "examples" / "sample_class"
    shutil.copytree(sample / "alice", folder / "alice")
    reference = (REPO / "solutions" / "masks.py").read_text(encoding="utf-8")
    mistaken = (sample / "chen" / "masks.py").read_text(encoding="utf-8")
    hand_ins = {"ref": ("masks.py", reference), "stub": ("masks.py", (REPO / "exercises" / "masks.py").read_text()),
                "chen": ("masks.py", mistaken), "nearmiss": ("Masks (1).py", reference),
                "nested": ("hw/masks.py", mistaken), unicodedata.normalize("NFD", "김민수"): ("masks.py", reference)}
    for sid, (name, text) in hand_ins.items():
        (folder / sid / name).parent.mkdir(parents=True)
        (folder / sid / name).write_text(text, encoding="utf-8")
    (folder / "badzip.zip").write_bytes(b"PK\x03\x04 a truncated zip")


def _strip(value):
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in RUN_SPECIFIC}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def outputs(out: Path) -> dict[str, str]:
    """Every file of a run but the gradebook, timings and the sandbox's report taken out."""
    found = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file() and p.name != "gradebook.sqlite"):
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".json":
            text = json.dumps(_strip(json.loads(text)), sort_keys=True)
        else:
            text = re.sub(r"<h2>Slowest submissions</h2>.*?</table>", "", text, flags=re.S)   # ordered by time
            text = re.sub(r"\d+\.\d s\b", "#.# s", text)
        found[path.relative_to(out).as_posix()] = text
    return found


def _group_gone(pgid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def grade(out: Path, klass: Path, *extra: str) -> list[str]:
    return [sys.executable, str(REPO / "cli.py"), "grade", "--class-dir", str(klass), "--out", str(out),
            "--exercise", "masks", "--public-only", "--seed", "7", *extra]


def test_twenty_random_kills_then_resume_leave_the_uninterrupted_outputs(tmp_path):
    klass = tmp_path / "class"
    make_class(klass)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    t0 = time.monotonic()
    reference = subprocess.run(grade(tmp_path / "reference", klass, "--workers", "1"), cwd=REPO, env=env,
                               capture_output=True, text=True, timeout=600)
    whole = time.monotonic() - t0
    assert reference.returncode == 1 and "could not be graded: badzip" in reference.stdout + reference.stderr
    expected = outputs(tmp_path / "reference")
    assert len([k for k in expected if k.endswith("/feedback.md")]) == 8

    rng = random.Random(20240901)
    out, kills, attempts = tmp_path / "killed", [], 0
    while len(kills) < KILLS and attempts < 3 * KILLS:
        attempts += 1
        resume = ["--resume"] if attempts % 3 else []   # every third run grades everything again
        log = tmp_path / f"run-{attempts}.log"
        with open(log, "wb") as sink:
            run = subprocess.Popen(grade(out, klass, *resume, "--workers", str(rng.choice([1, 2]))), cwd=REPO,
                                   env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            run.wait(timeout=rng.uniform(0.3, whole))
            continue   # finished before the kill: not counted
        except subprocess.TimeoutExpired:
            pass
        if rng.random() < 0.5:
            os.killpg(run.pid, signal.SIGINT)   # Ctrl-C at a terminal reaches the whole foreground group
            kills.append(("SIGINT", run.wait(timeout=120), log.read_text(errors="replace")))
        else:
            os.kill(run.pid, signal.SIGKILL)
            kills.append(("SIGKILL", run.wait(timeout=60), ""))
        assert _group_gone(run.pid, 60), "a worker or sandboxed child outlived the killed run"
    assert len(kills) == KILLS, f"only {len(kills)} of {attempts} runs were still running when killed"
    # Ctrl-C: exit 130 with "every finished result is kept" (or Python's own SIGINT exit while it starts
    # up), never a traceback; a run already past its last line when the signal came ends as it would have
    interrupted = [(code, text) for kind, code, text in kills if kind == "SIGINT"]
    finished = re.compile(r"^wrote .*grades\.csv", re.M)   # the run's last lines were out already
    assert [(code, text) for code, text in interrupted if "Traceback" in text or code not in (130, -signal.SIGINT)
            and not (code in (0, 1) and finished.search(text))] == [], "Ctrl-C ended a run badly"

    final = subprocess.run(grade(out, klass, "--resume", "--workers", "1"), cwd=REPO, env=env,
                           capture_output=True, text=True, timeout=600)
    assert final.returncode == 1, final.stdout + final.stderr   # badzip could not be graded, as in the reference
    got = outputs(out)
    assert sorted(got) == sorted(expected)
    assert {name: text for name, text in got.items() if text != expected[name]} == {}
    assert not [p for p in out.rglob("*.tmp")]
    again = subprocess.run(grade(out, klass, "--resume", "--workers", "1"), cwd=REPO, env=env,
                           capture_output=True, text=True, timeout=600)
    assert "resume: 8 unchanged submission(s) kept from the gradebook" in again.stdout
