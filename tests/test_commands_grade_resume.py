"""``kill -9`` of ``tkit grade`` mid-batch, then ``--resume``: every finished student is kept once,
the rest are graded, none twice, and no worker or sandboxed child outlives the killed batch."""

from __future__ import annotations

import csv
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.intake.untrusted import submission_dir
from benchmarks.proctree import process_tree

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
EXERCISE = "positional_encoding"
SLOW_IMPORT = "\nimport time as _time\n_time.sleep(1.0)\n"   # keeps the batch going long enough to kill it


def _tkit() -> list[str]:
    script = Path(sys.executable).parent / "tkit"
    return [str(script)] if script.exists() else [shutil.which("tkit") or "tkit"]


def _class(folder: Path) -> list[str]:
    reference = (REPO / "solutions" / f"{EXERCISE}.py").read_text(encoding="utf-8")
    stub = (REPO / "exercises" / f"{EXERCISE}.py").read_text(encoding="utf-8")
    ids = []
    for i in range(8):
        sid = f"s{i:02d}" if i % 3 else f"S{i:02d} =odd"
        (folder / sid).mkdir(parents=True)
        (folder / sid / f"{EXERCISE}.py").write_text((reference if i % 2 else stub) + SLOW_IMPORT, encoding="utf-8")
        ids.append(sid)
    return ids


def _recorded(db: Path) -> dict[str, float]:
    if not db.exists():
        return {}
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return dict(conn.execute("SELECT student_id, graded_at FROM submissions"))
        finally:
            conn.close()
    except sqlite3.OperationalError:   # the schema is not there yet
        return {}


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    alive.add(pid)
        except OSError:
            pass
    return alive


def test_kill_9_mid_batch_then_resume_keeps_every_finished_student_once(tmp_path):
    ids = _class(tmp_path / "class")
    out, db = tmp_path / "out", tmp_path / "out" / "gradebook.sqlite"
    args = [*_tkit(), "grade", "--class-dir", str(tmp_path / "class"), "--out", str(out), "--exercise", EXERCISE,
            "--public-only", "--no-pictures", "--workers", "2", "--seed", "7"]
    first = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 240
    while len(_recorded(db)) < 2 and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    family = set(process_tree(first.pid)) - {first.pid}
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    kept = _recorded(db)
    assert 2 <= len(kept) < len(ids), f"the batch was not killed mid-way: {sorted(kept)}"
    assert family, "the batch had no worker processes"
    deadline = time.monotonic() + 30
    while _alive(family) and time.monotonic() < deadline:   # orphaned workers notice and exit
        time.sleep(0.2)
    assert _alive(family) == set()

    second = subprocess.run([*args, "--resume"], capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-2000:]
    assert f"resume: {len(kept)} unchanged submission(s) kept" in second.stdout
    graded_again = [line.split()[0] for line in second.stdout.splitlines() if line.endswith(" s)")]
    assert len(graded_again) == len(ids) - len(kept)
    final = _recorded(db)
    assert sorted(final) == sorted(ids)
    assert {sid: final[sid] for sid in kept} == kept   # the finished ones were not graded again
    with open(out / "grades.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert sorted(r["student_id"] for r in rows) == sorted(ids)   # one row each, real ids
    reference_ids = {sid for i, sid in enumerate(ids) if i % 2}
    full = {r["student_id"] for r in rows if float(r["total"]) > 0}
    assert full == reference_ids
    for sid in ids:
        assert (submission_dir(out, sid) / "results.json").is_file()
